"""Who may write into a run while a stage runs: the run's lock and the picks file's claim.

Every stage function (:mod:`blindtest.stages`) takes one of these before it reads or writes
anything, so a Python caller gets the same protection as the ``bt-*`` commands: a second
process is refused with :class:`~blindtest.errors.BadInput` (exit 2 at the command line)
naming the holder's PID. The holding process may re-enter (``blindtest run`` holds the run's
lock while it calls each stage). No click here: the errors are the library's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from blindtest import artifacts

__all__ = ["holding_picks", "holding_run"]


def holding_run(
    run_dir: Path,
    holder: str | None = None,
    *,
    create: bool = False,
    unlocked: Callable[[str], None] | None = None,
) -> contextlib.AbstractContextManager[None]:
    """Hold RUN's lock while a stage writes into it. ``create``: make the directory (only the
    design stage starts a run; the others need one that exists and report it missing).
    ``holder`` names the holder in a refusal (default: the program's name). ``unlocked``:
    only for a stage that writes nothing into RUN; a RUN that cannot be written (a read-only
    archive) is then read without the lock, and ``unlocked`` is told why."""
    return artifacts.run_lock(run_dir, holder, create=create, unlocked=unlocked)


@contextlib.contextmanager
def holding_picks(run_dir: Path, out: Path, holder: str | None = None) -> Iterator[None]:
    """Claim and lock the picks file a judge writes (not the run: a panel judging into
    separate files can judge at once). Refused, ``force`` or not, when ``out`` is another kind
    of artifact or one of the run's inputs."""
    inputs = [run_dir / artifacts.DESIGN, run_dir / artifacts.TRIALS]
    artifacts.claim_output(out, "picks", force=True, inputs=inputs, same_inputs=True)
    with artifacts.file_lock(out, holder):
        yield
