"""The stages as library functions: each takes the lock the command takes, claims its
outputs, writes its files and returns a frozen result naming what it wrote.

``blindtest.design``, ``generate``, ``judge``, ``audit``, ``analyze``, ``verify`` and ``plan``
are these functions (loaded on first use); the ``bt-*`` commands are their options, one call
and a summary. One module per stage, and no stage imports another: :mod:`blindtest.pipeline.run`
chains them for ``blindtest run``.
"""
