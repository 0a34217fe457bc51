"""bt-audit: not built yet (issue 6); exists so the command set is complete and says so."""

from __future__ import annotations

from pathlib import Path

from blindtest.cli._common import command, not_built, run_argument


@command("audit")
@run_argument
def audit(run_dir: Path) -> None:
    """Not built yet: exits 2 and says so."""
    not_built("bt-audit", "issue 6")()
