"""Who may write into a run while a stage runs: the run's lock and the picks file's claim.

Every stage function (:mod:`blindtest.pipeline`) takes one of these before it reads or writes
anything, so a Python caller gets the same protection as the ``bt-*`` commands: a second
process is refused with :class:`~blindtest.errors.BadInput` (exit 2 at the command line)
naming the holder's PID. The holding process may re-enter (``blindtest run`` holds the run's
lock while it calls each stage). The locks themselves (``RUN/.lock``, ``.picks.jsonl.lock``)
are taken here on :mod:`blindtest.rundir.oslock`'s two calls. No click here: the errors are the
library's.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from blindtest.errors import BadInput
from blindtest.rundir import artifacts, oslock
from blindtest.rundir.artifacts import LOCK, cannot_write, make_dir
from blindtest.rundir.artifacts.atomic import _BINARY

__all__ = ["file_lock", "holding_picks", "holding_run", "run_holder", "run_lock"]

# --------------------------------------------------------------------------- locks

_held: dict[str, list[int]] = {}  # lock path -> [fd, depth]: re-entry by the holding process


def _holder(lock_path: Path) -> str:
    for _ in range(50):  # the holder writes its PID just after taking the lock
        try:
            text = lock_path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            text = ""
        if text:
            pid, _, label = text.partition(" ")
            return f"process {pid}" + (f" ({label})" if label else "")
        time.sleep(0.01)
    return "another process"


#: The errors that say a directory cannot be written at all (a read-only mount, no permission).
_UNWRITABLE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def _take(
    lock_path: Path, what: Path, label: str, unlocked: Callable[[str], None] | None
) -> int | None:
    while True:
        try:
            # Not inherited by child processes (Python's default for every descriptor).
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | _BINARY, 0o666)
        except OSError as error:
            if unlocked is not None and error.errno in _UNWRITABLE:
                reason = error.strerror or str(error)
                unlocked(f"{what} cannot be written ({reason}), so it is read without its lock")
                return None
            raise cannot_write(lock_path.parent, error) from None
        try:
            taken = oslock.try_lock(fd)
        except OSError as error:
            os.close(fd)
            raise cannot_write(lock_path, error) from None
        if not taken:
            os.close(fd)
            raise BadInput(f"{what} is in use by {_holder(lock_path)}; wait for it or stop it")
        # A holder that was releasing may have unlinked the file we opened: lock the new one.
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(lock_path))
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)
            continue
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()} {label}\n".encode())
        except OSError as error:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(lock_path)
            raise cannot_write(lock_path, error) from None
        return fd


@contextlib.contextmanager
def _lock(
    lock_path: Path,
    what: Path,
    label: str,
    create: bool = True,
    unlocked: Callable[[str], None] | None = None,
) -> Iterator[None]:
    if not create and not lock_path.parent.is_dir():
        yield  # nothing there to protect: the command says what is missing
        return
    key = os.path.abspath(lock_path)
    if key in _held:  # this process already holds it (``blindtest run`` calling a stage)
        _held[key][1] += 1
        try:
            yield
        finally:
            _held[key][1] -= 1
        return
    created = make_dir(lock_path.parent)
    try:
        fd = _take(lock_path, what, label, unlocked)
    except BaseException:
        _remove_empty(created)
        raise
    if fd is None:  # the directory cannot be written, and the caller writes nothing there
        yield
        return
    _held[key] = [fd, 1]
    try:
        yield
    finally:
        del _held[key]
        # Unlink while still holding it (a waiter re-checks the inode), then let go. Windows
        # refuses to unlink an open file: the lock file stays there, unlocked, for the next.
        with contextlib.suppress(OSError):
            os.unlink(lock_path)
        with contextlib.suppress(OSError):
            oslock.unlock(fd)
        os.close(fd)
        _remove_empty(created)


def _remove_empty(created: Sequence[Path]) -> None:
    """Remove the directories a lock created when the command left nothing in them."""
    for directory in reversed(created):
        try:
            directory.rmdir()
        except OSError:
            return


def _label(label: str | None) -> str:
    return label or os.path.basename(sys.argv[0]) or "blindtest"


def run_lock(
    run_dir: Path,
    label: str | None = None,
    *,
    create: bool = True,
    unlocked: Callable[[str], None] | None = None,
) -> contextlib.AbstractContextManager[None]:
    """Hold the run directory's lock (``RUN/.lock``, locked through :mod:`blindtest.rundir.oslock`;
    the OS lets go when the process dies, so a kill -9 never leaves a stale lock). A second
    process is refused with ``BadInput`` naming the holder's PID and ``label``; the holding
    process may re-enter. With ``create`` the directory is made if needed (and removed again
    if the command left it empty); without, a missing directory is not locked, and the
    command reports it missing. ``unlocked``: for a command that writes nothing into the run
    (``bt-analyze --out`` elsewhere): when the lock file cannot be made because the directory
    cannot be written (a read-only mount, an archive without write permission), the command
    goes on without the lock and ``unlocked`` gets the reason (the lock keeps two commands
    from writing into one run at once; this one writes nothing there, and a stage that
    could not make the lock file could not write into the run either)."""
    return _lock(run_dir / LOCK, run_dir, _label(label), create, unlocked)


def run_holder(run_dir: Path) -> str | None:
    """Who holds RUN's lock now ("process 4242 (bt-generate)"), or None when nobody does (or
    this process does). Only asks: the lock is let go at once when it was free."""
    lock_path = run_dir / LOCK
    if os.path.abspath(lock_path) in _held:
        return None
    try:
        fd = os.open(lock_path, os.O_RDWR | _BINARY)
    except OSError:
        return None  # no lock file: nobody holds it (a holder makes it first)
    try:
        if oslock.try_lock(fd):
            oslock.unlock(fd)
            return None
        return _holder(lock_path)
    except OSError:
        return None
    finally:
        os.close(fd)


def file_lock(path: Path, label: str | None = None) -> contextlib.AbstractContextManager[None]:
    """Like ``run_lock`` for one file (a judge's picks file): the lock file sits beside it."""
    return _lock(path.with_name(f".{path.name}.lock"), path, _label(label))


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
    return run_lock(run_dir, holder, create=create, unlocked=unlocked)


@contextlib.contextmanager
def holding_picks(run_dir: Path, out: Path, holder: str | None = None) -> Iterator[None]:
    """Claim and lock the picks file a judge writes (not the run: a panel judging into
    separate files can judge at once). Refused, ``force`` or not, when ``out`` is another kind
    of artifact or one of the run's inputs."""
    inputs = [run_dir / artifacts.DESIGN, run_dir / artifacts.TRIALS]
    artifacts.claim_output(out, "picks", force=True, inputs=inputs, same_inputs=True)
    with file_lock(out, holder):
        yield
