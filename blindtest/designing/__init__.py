"""bt-design: the design built (``build``), the options resolved (``request``), the stage function
(``stage``), a several-candidate plan (``candidate_plan``) and a sides file (``sides_file``)."""

from __future__ import annotations

from blindtest import _moved


def __getattr__(name: str) -> object:
    # The names this was a module of before it was a package (for one release).
    return _moved.moved_name(__name__, name)
