"""JSONL files: written whole (atomically), appended one ``write(2)`` per whole line, and
read back with a reader that ignores a torn final line but names any other corrupt line.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from blindtest.errors import BadInput
from blindtest.rundir.artifacts.atomic import (
    _BINARY,
    _replacing,
    cannot_write,
    make_dir,
    write_bytes_atomic,
)
from blindtest.rundir.artifacts.documents import read_bytes
from blindtest.rundir.artifacts.encoding import JsonObject, dump_line
from blindtest.rundir.artifacts.guard import claim_output
from blindtest.rundir.artifacts.validation import validate


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any]], name: str, *, force: bool) -> int:
    """Validate every record, then atomically write a whole JSONL file; return the count.

    Records are written one at a time into the temporary file that replaces ``path`` (so a
    generator of 30,000 trials is never held whole); an invalid one removes it and leaves
    ``path`` as it was."""
    claim_output(path, name, force=force)
    count = 0
    with _replacing(path, buffering=1 << 16) as handle:
        for count, record in enumerate(records, start=1):
            validate(record, name, f"{path.name}:{count}")
            handle.write(dump_line(record))
    return count


class JsonlAppender:
    """Appends validated records to a JSONL file, one ``os.write`` per whole line.

    A line is written with a single ``write(2)`` on an ``O_APPEND`` descriptor, so a crash can
    leave at most one torn final line, which ``read_jsonl`` reports and ``repair_torn_tail``
    removes. Every line is in the kernel when ``append`` returns, so a killed process (kill -9)
    loses nothing written. ``fsync=True`` makes each record durable before ``append`` returns;
    ``grouped=True`` syncs in groups instead: when ``SYNC_ROWS`` rows or ``SYNC_SECONDS`` have
    passed since the last sync, and on close. A power loss then can cost the rows of the last
    group (asked again by a rerun), never a torn or duplicated row (a torn tail is cut on the
    next open; a row is the whole record or nothing).
    """

    SYNC_ROWS = 500
    SYNC_SECONDS = 0.1

    def __init__(self, path: Path, name: str, *, fsync: bool = True, grouped: bool = False) -> None:
        self.path = path
        self.name = name
        self._fsync = fsync
        self._group_rows = self.SYNC_ROWS if grouped else 1
        self._fd = -1
        self._size = 0
        self._unsynced = 0
        self._synced_at = time.monotonic()
        claim_output(path, name, force=False, same_inputs=True)  # append only to our own kind
        make_dir(path.parent)
        repair_torn_tail(path)
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _BINARY, 0o666)
            self._size = os.fstat(self._fd).st_size
        except OSError as error:
            raise cannot_write(path, error) from None

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one record."""
        self.add(record)

    def add(self, record: Mapping[str, Any]) -> int:
        """Append one record; return the byte offset its line starts at (the writer holds the
        run lock, so no one else appends meanwhile)."""
        validate(record, self.name, self.path.name)
        line = dump_line(record)
        try:
            offset = self._size
            written = os.write(self._fd, line)
            if written != len(line):  # a short write on a regular file is a disk error
                raise OSError(errno.ENOSPC, f"short write: {written} of {len(line)} bytes")
            self._size += written
            self._unsynced += 1
            if self._fsync and (
                self._unsynced >= self._group_rows
                or time.monotonic() - self._synced_at >= self.SYNC_SECONDS
            ):
                self.sync()
        except OSError as error:
            raise cannot_write(self.path, error) from None
        return offset

    def sync(self) -> None:
        """Make every appended row durable now."""
        if self._fd >= 0 and self._unsynced:
            os.fsync(self._fd)
        self._unsynced = 0
        self._synced_at = time.monotonic()

    def close(self) -> None:
        if self._fd >= 0:
            try:
                if self._fsync:
                    self.sync()
            except OSError as error:
                raise cannot_write(self.path, error) from None
            finally:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class JsonlContents:
    """Records of a JSONL file, the 1-based line number of each record (``lines``), and the
    number of a torn final line if one was ignored."""

    records: list[JsonObject]
    torn_line: int | None = None
    lines: list[int] = field(default_factory=list)


def iter_lines(data: bytes) -> Iterator[tuple[int, bytes, bool]]:
    """Yield ``(line_number, line, is_last)`` for non-empty lines; ``is_last`` marks an
    unterminated final line (the only place a torn write can be)."""
    lines = data.split(b"\n")
    unterminated = lines[-1] != b""
    if not unterminated:
        lines.pop()
    for number, line in enumerate(lines, start=1):
        is_last = unterminated and number == len(lines)
        if line.strip():
            yield number, line, is_last


#: JSONL files already read inside `reading_once`, by (path, schema, size, mtime, inode).
_READ_ONCE: dict[tuple[str, str, int, int, int], JsonlContents] | None = None


@contextlib.contextmanager
def reading_once() -> Iterator[None]:
    """Inside, a JSONL artifact read again unchanged (same path, schema, size, mtime and inode)
    gives the records read the first time, not a second parse and check: for a read-only pass
    such as bt-verify, whose checks and recomputed report read the same inputs.
    The records are shared: nothing inside may change them."""
    global _READ_ONCE
    outer = _READ_ONCE
    _READ_ONCE = {} if outer is None else outer
    try:
        yield
    finally:
        _READ_ONCE = outer


def read_jsonl(path: Path, name: str, *, missing_ok: bool = False) -> JsonlContents:
    """Read and validate a JSONL artifact.

    An unterminated final line that does not parse is a torn append: it is reported in
    ``torn_line`` and ignored. Any other line that does not parse or validate is corruption and
    raises ``BadInput`` naming the file and line.
    """
    if missing_ok and not path.exists():
        return JsonlContents(records=[])
    if _READ_ONCE is None:
        return _read_jsonl(path, name)
    try:
        stat = path.stat()
    except OSError:
        return _read_jsonl(path, name)  # which names the problem
    key = (str(path.resolve()), name, stat.st_size, stat.st_mtime_ns, stat.st_ino)
    if key not in _READ_ONCE:
        _READ_ONCE[key] = _read_jsonl(path, name)
    return _READ_ONCE[key]


def _read_jsonl(path: Path, name: str) -> JsonlContents:
    records: list[JsonObject] = []
    numbers: list[int] = []
    torn: int | None = None
    data = read_bytes(path)
    # A byte order mark (Windows editors add one) is not part of the first record.
    data = data.removeprefix(b"\xef\xbb\xbf")
    for number, line, is_last in iter_lines(data):
        where = f"{path.name}:{number}"
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            if is_last:
                torn = number
                continue
            raise BadInput(f"{where}: not valid JSON ({error})") from None
        validate(record, name, where, parsed=True)
        records.append(record)
        numbers.append(number)
    return JsonlContents(records=records, torn_line=torn, lines=numbers)


def iter_jsonl(
    path: Path, name: str, *, missing_ok: bool = False
) -> Iterator[tuple[int, JsonObject]]:
    """``read_jsonl`` one line at a time: yield ``(byte offset, record)`` for every record,
    holding one line in memory, with the same checks and errors (a torn final line is
    skipped, any other bad line raises naming the file and line)."""
    if missing_ok and not path.exists():
        return
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInput(f"{path}: is a directory, expected a file") from None
    with handle:
        offset = 0
        for number, line in enumerate(handle, start=1):
            start, offset = offset, offset + len(line)
            body = line.removeprefix(b"\xef\xbb\xbf") if number == 1 else line
            if not body.strip():
                continue
            where = f"{path.name}:{number}"
            try:
                record = orjson.loads(body)
            except orjson.JSONDecodeError as error:
                if not line.endswith(b"\n"):
                    continue  # a torn final line
                raise BadInput(f"{where}: not valid JSON ({error})") from None
            validate(record, name, where, parsed=True)
            yield start + len(line) - len(body), record


class LineReader:
    """Reads single records back from a JSONL file by the byte offset of their line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = -1

    def __call__(self, offset: int) -> JsonObject:
        line = self._line(offset)
        if line is None:  # the file was replaced (a torn tail cut) since it was opened
            self.close()
            line = self._line(offset)
        if line is None:
            raise BadInput(f"{self.path.name}: no whole line at byte {offset}")
        record: JsonObject = orjson.loads(line)
        return record

    def _line(self, offset: int) -> bytes | None:
        if self._fd < 0:
            self._fd = os.open(self.path, os.O_RDONLY | _BINARY)
        os.lseek(self._fd, offset, os.SEEK_SET)
        chunk = os.read(self._fd, 4096)
        while b"\n" not in chunk:
            more = os.read(self._fd, 1 << 16)
            if not more:
                return None
            chunk += more
        return chunk.partition(b"\n")[0]

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> LineReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def repair_torn_tail(path: Path) -> bool:
    """Cut an unterminated final line off a JSONL file so appends start on a fresh line.

    A final line that parses but lacks its newline is kept and terminated; one that does not
    parse is a torn write and is removed. Returns True when the file was changed.
    """
    if not path.exists():
        return False
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return False
    head, _, tail = data.rpartition(b"\n")
    try:
        orjson.loads(tail)
    except orjson.JSONDecodeError:
        repaired = head + b"\n" if head else b""
    else:
        repaired = data + b"\n"
    write_bytes_atomic(path, repaired)
    return True
