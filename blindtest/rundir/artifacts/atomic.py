"""Atomic files: a temporary file in the same directory, synced, then renamed over the
target, so a reader sees the old file or the new one, never half. Every file gets the same
mode (0666 less the umask), and an OS error while writing is ``BadInput`` naming the path and
the reason.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from blindtest.errors import BadInput
from blindtest.rundir.artifacts.encoding import dump_json
from blindtest.rundir.artifacts.guard import claim_output
from blindtest.rundir.artifacts.validation import validate

#: Windows opens a descriptor in text mode (newlines translated) unless asked for bytes.
_BINARY: int = getattr(os, "O_BINARY", 0)


def file_mode() -> int:
    """The mode every file of a run gets: ``0666`` less the umask, as ``open(2)`` would give
    (``mkstemp`` alone would make atomic writes ``0600`` beside ``0644`` appends)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def cannot_write(path: Path, error: OSError) -> BadInput:
    """The one-line refusal for an OS error while writing: the path and the OS's reason."""
    reason = error.strerror or str(error)
    return BadInput(f"cannot write {path}: {reason}")


def make_dir(directory: Path) -> list[Path]:
    """``mkdir -p`` that maps OS errors to ``BadInput``; returns the directories it created,
    outermost first, so a caller can remove them again when it wrote nothing."""
    missing: list[Path] = []
    for candidate in (directory, *directory.parents):
        if candidate.exists() or candidate.is_symlink():
            break
        missing.append(candidate)
    if directory.exists() and not directory.is_dir():
        raise BadInput(f"cannot write in {directory}: it is a file, not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        reason = error.strerror or str(error)
        raise BadInput(f"cannot create {directory}: {reason}") from None
    return list(reversed(missing))


@contextlib.contextmanager
def _replacing(path: Path, buffering: int = -1) -> Iterator[BinaryIO]:
    """A temporary file beside ``path`` that replaces it, synced, when the block ends; any
    error (an invalid record, a full disk) removes it and leaves ``path`` as it was. An OS
    error is ``BadInput`` naming the path and the reason."""
    make_dir(path.parent)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as error:
        raise cannot_write(path, error) from None
    try:
        if hasattr(os, "fchmod"):  # not on Windows, whose files have no such mode
            os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb", buffering=buffering) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        if isinstance(error, OSError):
            raise cannot_write(path, error) from None
        raise
    _fsync_dir(path.parent)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old file or the new one, never half.

    An OS error (no such directory, read-only or full disk) is ``BadInput`` naming the path and
    the reason, and leaves no temporary file behind.
    """
    with _replacing(path) as handle:
        handle.write(data)


def _fsync_dir(directory: Path) -> None:
    # The rename is only durable once the directory entry is on disk; not every OS allows it.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_json(path: Path, record: Mapping[str, Any], name: str, *, force: bool = False) -> bytes:
    """Validate, then atomically write a JSON artifact. Returns the exact bytes written."""
    validate(record, name, path.name)
    claim_output(path, name, force=force)
    data = dump_json(record)
    write_bytes_atomic(path, data)
    return data
