"""The verification: recompute a run directory from its raw materials and list every
difference. It writes nothing, so it takes no lock (a run can be verified while a judge is
still judging into another file)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindtest.pipeline.recompute import Difference, VerifyResult

__all__ = ["Verification", "verify"]


@dataclass(frozen=True, slots=True)
class Verification:
    """What :func:`verify` found: the files ``checked``, the ``differences`` (recorded vs
    recomputed), what the run ``missing`` (it cannot be verified whole), the lines
    ``skipped``. ``ok`` (exit 0) only for a whole run that recomputes."""

    run_dir: Path
    checked: tuple[str, ...]
    differences: tuple[Difference, ...]
    missing: tuple[str, ...]
    skipped: tuple[str, ...]

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def ok(self) -> bool:
        return not self.differences and not self.missing

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def to_dict(self) -> dict[str, Any]:
        """``bt-verify --json``'s document."""
        return VerifyResult(
            list(self.checked), list(self.differences), list(self.missing), list(self.skipped)
        ).to_dict()


def verify(
    run_dir: str | os.PathLike[str],
    *,
    allow_commands: bool = False,
    reports: Sequence[str | os.PathLike[str]] = (),
) -> Verification:
    """Recompute RUN's hashes, arrangement, answer texts, blinded view, audit and report
    (``bt-verify``); ``allow_commands`` re-runs the prompts' shell-command checks too;
    ``reports``: reports written outside RUN (``bt-analyze --out``), recomputed as well."""
    from blindtest.model.checks import subprocess_runner
    from blindtest.pipeline.recompute import verify_run

    run = Path(run_dir)
    found = verify_run(
        run,
        runner=subprocess_runner() if allow_commands else None,
        reports=[Path(r) for r in reports],
    )
    return Verification(
        run,
        tuple(found.checked),
        tuple(found.differences),
        tuple(found.missing),
        tuple(found.skipped),
    )
