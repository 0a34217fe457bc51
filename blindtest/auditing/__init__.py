"""bt-audit: the tell bots replayed and the census taken (``build``), and the stage function
(``stage``)."""

from __future__ import annotations

from blindtest import _moved


def __getattr__(name: str) -> object:
    # The names this was a module of before it was a package (for one release).
    return _moved.moved_name(__name__, name)
