"""bt-generate's library, by job (the stage itself is :mod:`blindtest.generating`)."""
