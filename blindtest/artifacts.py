"""Every byte in a run directory goes through this module.

It owns the run-directory file names, JSON and JSONL reading and writing (orjson), atomic
replacement (temporary file in the same directory, fsync, rename), one-write-per-line JSONL
appends, the torn-line tolerant reader, the output guard (``claim_output``: no file of another
kind, no input, nothing that is not an artifact is ever written over, ``--force`` or not), the
run and picks-file locks, schema validation on read and on write, and SHA-256 over exact bytes.
Every file it writes gets the same mode (0666 less the umask), and an OS error while writing is
``BadInput`` naming the path and the reason. No other module opens run files.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import sys
import tempfile
import time
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

import orjson

if TYPE_CHECKING:
    # jsonschema, referencing and jsonschema_rs load only when a file is validated (start-up).
    import jsonschema_rs
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

from blindtest import oslock
from blindtest.artifact_types import DesignRecord
from blindtest.errors import BadInput, BlindtestError

DESIGN = "design.json"
DESIGN_HASH = "design.sha256"
RESPONSES = "responses.jsonl"
TRIALS = "trials.jsonl"
PICKS = "picks.jsonl"
AUDIT = "audit.json"
REPORT = "report.json"
E_VALUES = "e_values.jsonl"
GENERATION = "generation.json"
#: bt-generate --batch: the batches submitted for this run (their ids are the resume state).
BATCHES = "batches.json"

#: Files made from a design: once one exists the design may not be replaced.
DOWNSTREAM_OF_DESIGN = (RESPONSES, TRIALS, PICKS, AUDIT, REPORT, GENERATION, BATCHES)

#: The lock file of a run directory (``run_lock``); it exists only while a stage holds it.
LOCK = ".lock"

#: What each of the run directory's own file names holds: no stage writes another kind there.
RUN_FILE_KINDS = {
    DESIGN: "design",
    DESIGN_HASH: "design hash",
    RESPONSES: "responses",
    TRIALS: "trials",
    PICKS: "picks",
    AUDIT: "audit",
    REPORT: "report",
    E_VALUES: "e_values",
    GENERATION: "generation",
    BATCHES: "batches",
}

#: The ``kind`` of the standalone HTML page bt-analyze writes (see ``claim_output``).
HTML = "html"

SCHEMA_NAMES = (
    "audit",
    "batches",
    "design",
    "e_values",
    "generation",
    "picks",
    "report",
    "responses",
    "trials",
)
MAJOR_VERSION = 1
_TAG = re.compile(r"^blindtest/(?P<name>[a-z_]+)@(?P<major>\d+)$")
_SCHEMA_BASE = "https://blindtest.invalid/schemas/"

JsonObject = dict[str, Any]


def e_values_name(report_name: str) -> str:
    """The e-values file that goes with a report: ``report.json`` -> ``e_values.jsonl``,
    ``report-bob.json`` -> ``e_values-bob.jsonl``."""
    stem = report_name.removesuffix(".json")
    suffix = stem.removeprefix("report")
    return f"e_values{suffix}.jsonl" if suffix != stem else f"{stem}.e_values.jsonl"


def schema_tag(name: str) -> str:
    """The ``schema`` field every artifact of this kind carries, e.g. ``blindtest/design@1``."""
    return f"blindtest/{name}@{MAJOR_VERSION}"


# --------------------------------------------------------------------------- hashing


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return sha256_bytes(text.encode("utf-8"))


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


# --------------------------------------------------------------------------- serialization


def dump_json(obj: Any) -> bytes:
    """The one serializer for JSON documents: sorted keys, 2-space indent, trailing newline.

    Fixed options make the bytes a pure function of the value, which the design hash needs.
    """
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def dump_line(obj: Any) -> bytes:
    """One JSONL record: compact, sorted keys, exactly one trailing newline."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS) + b"\n"


# --------------------------------------------------------------------------- schemas


@cache
def _schema_documents() -> tuple[tuple[str, JsonObject], ...]:
    """``($id, schema)`` for every schema shipped in ``blindtest/schemas/``."""
    documents = []
    for entry in resources.files("blindtest").joinpath("schemas").iterdir():
        if entry.name.endswith(".schema.json"):
            contents = orjson.loads(entry.read_bytes())
            documents.append((contents["$id"], contents))
    return tuple(sorted(documents, key=lambda document: document[0]))


@cache
def _registry() -> Registry[Any]:
    from referencing import Registry, Resource

    registry: Registry[Any] = Registry()
    for uri, contents in _schema_documents():
        registry = registry.with_resource(uri, Resource.from_contents(contents))
    return registry.crawl()


@cache
def validator(name: str) -> Draft202012Validator:
    """The cached validator for ``schemas/<name>.schema.json``."""
    from jsonschema import Draft202012Validator

    schema = _registry().contents(f"{_SCHEMA_BASE}{name}.schema.json")
    return Draft202012Validator(
        schema, registry=_registry(), format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def _no_retrieval(uri: str) -> Any:
    raise ValueError(f"{uri} is not a blindtest schema; schemas are never fetched")


@cache
def fast_validator(name: str) -> jsonschema_rs.Validator:
    """The compiled (jsonschema-rs) check for ``schemas/<name>.schema.json``: the same schemas,
    their ``$ref`` resolved from the shipped files only (any other URI is refused, never
    fetched), ``format`` checked. Trusted only when it says valid: where it is stricter than
    ``validator`` (a ``$`` in a ``pattern`` does not match before a final newline, NaN fails
    ``minimum``, a string with a lone surrogate cannot be taken at all) the record goes on to
    ``validator``, which decides."""
    import jsonschema_rs

    registry = jsonschema_rs.Registry(_schema_documents(), retriever=_no_retrieval)
    schema = dict(_schema_documents())[f"{_SCHEMA_BASE}{name}.schema.json"]
    return jsonschema_rs.validator_for(
        schema, registry=registry, retriever=_no_retrieval, validate_formats=True
    )


def _json_native(value: Any) -> bool:
    """Whether ``value`` is built of exactly the types ``orjson.loads`` returns. jsonschema-rs
    takes a tuple for an array, where jsonschema does not: such values skip the fast check."""
    kind = type(value)
    if kind is dict:
        return all(type(key) is str and _json_native(item) for key, item in value.items())
    if kind is list:
        return all(_json_native(item) for item in value)
    return kind is str or kind is int or kind is float or kind is bool or value is None


def _fast_yes(record: Mapping[str, Any], name: str, parsed: bool) -> bool:
    """True when the compiled check passes ``record``; False means "ask jsonschema"."""
    if not (parsed or _json_native(record)):
        return False
    try:
        return fast_validator(name).is_valid(record)
    except (ValueError, TypeError, OverflowError):  # a value it cannot convert: jsonschema decides
        return False


def _pointer(error: ValidationError) -> str:
    return "/" + "/".join(str(part) for part in error.absolute_path)


def _check_tag(record: Mapping[str, Any], name: str, where: str) -> None:
    found = record.get("schema")
    expected = schema_tag(name)
    if not isinstance(found, str):
        raise BadInput(f'{where}: missing "schema" tag; expected "{expected}"')
    match = _TAG.match(found)
    if match is None or match["name"] != name:
        raise BadInput(f'{where}: schema tag "{found}" is not a {name} artifact ("{expected}")')
    if int(match["major"]) != MAJOR_VERSION:
        raise BadInput(
            f'{where}: schema tag "{found}" is not supported; this blindtest reads "{expected}"'
        )


def validate(record: Any, name: str, where: str, *, parsed: bool = False) -> None:
    """Raise ``BadInput`` naming ``where`` and the JSON pointer of the most relevant error.

    jsonschema (Python) is the judge of validity and the author of every message; the compiled
    check (``fast_validator``) only lets a record it finds valid through without asking it.
    ``parsed`` says the record is straight from ``orjson.loads`` (JSON types only), which spares
    the walk that keeps anything else (a tuple, an enum, a numpy number) off the fast check.
    """
    if not isinstance(record, dict):
        raise BadInput(f"{where}: expected a JSON object, found {type(record).__name__}")
    _check_tag(record, name, where)
    if _fast_yes(record, name, parsed):
        return
    checker = validator(name)
    if checker.is_valid(record):
        return
    from jsonschema.exceptions import best_match

    error = best_match(checker.iter_errors(record))
    if error is not None:
        raise BadInput(f"{where}: {_pointer(error)}: {error.message}")


# --------------------------------------------------------------------------- writing


def refuse_overwrite(path: Path, force: bool) -> None:
    """The ``--force`` guard: call it for every output before writing anything."""
    if path.exists() and not force:
        raise BadInput(f"{path} already exists; use --force to overwrite it")


# --------------------------------------------------------------------------- the output guard

#: ``artifact_kind`` of a file whose only line is an unfinished append: it may be our own.
TORN = "torn"
_HTML_START = re.compile(rb"^\s*<!doctype html", re.IGNORECASE)


def artifact_kind(path: Path) -> str | None:
    """What an existing file holds: the schema name of its first record (``"design"``,
    ``"picks"``...), ``"html"`` for a page blindtest rendered, ``"design hash"`` for a
    ``design.sha256``, ``""`` for an empty file, ``TORN`` for a lone unfinished JSONL append,
    and None for anything that is not a blindtest artifact."""
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 16)
            document = head.lstrip().startswith(b"{\n")  # an indented JSON document
            if document:
                head += handle.read()
            elif b"\n" not in head:
                head += handle.readline()  # a JSONL record longer than the first read
    except OSError:
        return None
    if not head.strip():
        return ""
    if _HTML_START.match(head):
        start = head[:8192]
        ours = b'name="generator"' in start and b"blindtest" in start
        return HTML if ours or b"blindtest report" in start else None
    if path.name == DESIGN_HASH and re.fullmatch(rb"[0-9a-f]{64}\s*", head):
        return "design hash"
    text = head.lstrip()
    first = text if document else text.split(b"\n", 1)[0]
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError:
        lone = b"\n" not in text  # one unterminated line: an append a crash cut short
        return TORN if lone and text.startswith(b'{"') else None
    tag = record.get("schema") if isinstance(record, dict) else None
    match = _TAG.match(tag) if isinstance(tag, str) else None
    return match["name"] if match is not None else None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _kind_words(kind: str) -> str:
    return {"design hash": "design hash", HTML: "HTML report"}.get(kind, f"{kind} file")


def claim_output(
    path: Path,
    kind: str,
    *,
    force: bool,
    inputs: Iterable[Path] = (),
    same_inputs: bool = False,
) -> None:
    """The output guard: call it for every output before writing anything.

    Refuses (``BadInput``, exit 2, naming the file), ``--force`` or not, to write over an input
    of the command (same file by inode), a file of another kind (told by the ``schema`` tag of
    its first record, and by the run directory's own file names), or a file that is not a
    blindtest artifact at all. ``force`` replaces only a file of the command's own ``kind``;
    ``same_inputs`` replaces one made from the same inputs without ``force``.
    """
    if path.is_dir():
        raise BadInput(f"{path} is a directory; give a file name")
    for source in inputs:
        if _same_file(path, source):
            raise BadInput(
                f"{path} is an input of this command; refusing to overwrite it, "
                "--force or not: choose another output file"
            )
    reserved = RUN_FILE_KINDS.get(path.name)
    if reserved is not None and reserved != kind:
        raise BadInput(
            f"{path}: {path.name} is the name of a run's {_kind_words(reserved)}; refusing to "
            f"write a {_kind_words(kind)} there, --force or not: choose another name"
        )
    if not path.exists():
        return
    found = artifact_kind(path)
    if found is None:
        raise BadInput(
            f"{path} is not a blindtest {_kind_words(kind)}; refusing to overwrite it, "
            "--force or not: choose another name"
        )
    if found not in ("", TORN, kind):
        raise BadInput(
            f"{path} is a {_kind_words(found)} (another stage's artifact); refusing to "
            f"overwrite it with a {_kind_words(kind)}, --force or not: choose another name"
        )
    if force or same_inputs:
        return
    raise BadInput(f"{path} already exists; use --force to overwrite it")


# --------------------------------------------------------------------------- locks

#: Windows opens a descriptor in text mode (newlines translated) unless asked for bytes.
_BINARY: int = getattr(os, "O_BINARY", 0)
_held: dict[str, list[int]] = {}  # lock path -> [fd, depth]: re-entry by the holding process


def claim_report(
    run_dir: Path,
    picks: Sequence[Path],
    picks_names: Sequence[str],
    report_path: Path,
    e_values_path: Path,
    html_path: Path | None,
    force: bool,
) -> None:
    """bt-analyze's output guard: its report, e-values and HTML may replace only their own
    kind, never an input; a report made from the same inputs (same design, same picks file
    names: a void report before the last picks) is replaced without --force. ``picks_names``
    names the ``picks`` files as the report does."""
    if html_path is not None and os.path.abspath(html_path) == os.path.abspath(report_path):
        raise BadInput(f"--html {html_path} is the report's own file; give the page another name")
    inputs = [
        *picks,
        *(run_dir / name for name in (DESIGN, DESIGN_HASH)),
        *(run_dir / name for name in (RESPONSES, TRIALS)),
        *(run_dir / name for name in (AUDIT, GENERATION)),
    ]
    same = _same_report_inputs(report_path, run_dir, list(picks_names))
    claim_output(report_path, "report", force=force, inputs=inputs, same_inputs=same)
    claim_output(e_values_path, "e_values", force=True, inputs=inputs)
    if html_path is not None:
        claim_output(html_path, HTML, force=force, inputs=inputs, same_inputs=same)


def _same_report_inputs(report_path: Path, run_dir: Path, picks_names: list[str]) -> bool:
    try:
        recorded = orjson.loads(report_path.read_bytes())
        design_sha256 = read_design_hash(run_dir)
    except (OSError, ValueError, BlindtestError):
        return False
    if not isinstance(recorded, dict) or recorded.get("design_sha256") != design_sha256:
        return False
    names = recorded.get("picks_files")
    if not isinstance(names, list):
        known = set(RUN_FILE_KINDS) - {PICKS}
        names = [name for name in recorded.get("inputs") or {} if name not in known]
    return sorted(names) == sorted(picks_names)


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


def _take(lock_path: Path, what: Path, label: str) -> int:
    while True:
        try:
            # Not inherited by child processes (Python's default for every descriptor).
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | _BINARY, 0o666)
        except OSError as error:
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
def _lock(lock_path: Path, what: Path, label: str, create: bool = True) -> Iterator[None]:
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
        fd = _take(lock_path, what, label)
    except BaseException:
        _remove_empty(created)
        raise
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
    run_dir: Path, label: str | None = None, *, create: bool = True
) -> contextlib.AbstractContextManager[None]:
    """Hold the run directory's lock (``RUN/.lock``, locked through :mod:`blindtest.oslock`;
    the OS lets go when the process dies, so a kill -9 never leaves a stale lock). A second
    process is refused with ``BadInput`` naming the holder's PID and ``label``; the holding
    process may re-enter. With ``create`` the directory is made if needed (and removed again
    if the command left it empty); without, a missing directory is not locked, and the
    command reports it missing."""
    return _lock(run_dir / LOCK, run_dir, _label(label), create)


def file_lock(path: Path, label: str | None = None) -> contextlib.AbstractContextManager[None]:
    """Like ``run_lock`` for one file (a judge's picks file): the lock file sits beside it."""
    return _lock(path.with_name(f".{path.name}.lock"), path, _label(label))


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


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class JsonlContents:
    """Records of a JSONL file, the 1-based line number of each record (``lines``), and the
    number of a torn final line if one was ignored."""

    records: list[JsonObject]
    torn_line: int | None = None
    lines: list[int] = field(default_factory=list)


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInput(f"{path}: is a directory, expected a file") from None


def _decode(data: bytes, where: str) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise BadInput(f"{where}: not valid JSON ({error})") from None


def read_json(path: Path, name: str) -> JsonObject:
    """Read and validate a JSON artifact."""
    data = read_bytes(path)
    record = _decode(data, path.name)
    _validate_document(record, data, name, path.name)
    result: JsonObject = record
    return result


#: (schema name, SHA-256) of the documents already found valid in this process: a stage that
#: reads the design (or an audit) twice checks it once (bt-verify read it three times).
_VALID_DOCUMENTS: set[tuple[str, str]] = set()


def _validate_document(record: Any, data: bytes, name: str, where: str) -> None:
    key = (name, sha256_bytes(data))
    if key not in _VALID_DOCUMENTS:
        validate(record, name, where, parsed=True)
        _VALID_DOCUMENTS.add(key)


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


# --------------------------------------------------------------------------- the design


#: Design fields that record how a design was made, not what it is: a rerun may differ there.
PROVENANCE_FIELDS = ("provenance",)


class DesignDiffers(BadInput):
    """``design.json`` exists and the command asks for a different design."""

    def __init__(self, path: Path, difference: str) -> None:
        super().__init__(
            f"{path} already exists; use --force to overwrite it ({DESIGN} differs: {difference})"
        )
        self.path = path
        self.difference = difference


def _shown_value(value: Any) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= 60 else text[:57] + "..."


def _dict_difference(
    recorded: Mapping[str, Any], wanted: Mapping[str, Any], where: str
) -> str | None:
    for key in [*wanted, *(k for k in recorded if k not in wanted)]:
        inner = f"{where}.{key}" if where else str(key)
        if key not in recorded:
            return f"{inner} is not recorded, the command asks for {_shown_value(wanted[key])}"
        if key not in wanted:
            return f"{inner} is {_shown_value(recorded[key])}, the command leaves it out"
        found = _first_difference(recorded[key], wanted[key], inner)
        if found is not None:
            return found
    return None


def _first_difference(recorded: Any, wanted: Any, where: str) -> str | None:
    if isinstance(recorded, dict) and isinstance(wanted, dict):
        return _dict_difference(recorded, wanted, where)
    if isinstance(recorded, list) and isinstance(wanted, list):
        for index, (old, new) in enumerate(zip(recorded, wanted, strict=False)):
            found = _first_difference(old, new, f"{where}[{index}]")
            if found is not None:
                return found
        if len(recorded) != len(wanted):
            return f"{where} has {len(recorded)} entries, the command asks for {len(wanted)}"
        return None
    if recorded == wanted and type(recorded) is type(wanted):
        return None
    return f"{where} is {_shown_value(recorded)}, the command asks for {_shown_value(wanted)}"


def design_difference(recorded: Mapping[str, Any], wanted: Mapping[str, Any]) -> str | None:
    """The first field where two designs differ, in words (``trials is 20, the command asks
    for 30``), ignoring provenance (versions, git state); None when they are the same design."""
    strip = {k: v for k, v in recorded.items() if k not in PROVENANCE_FIELDS}
    want = {k: v for k, v in wanted.items() if k not in PROVENANCE_FIELDS}
    as_json = orjson.loads(dump_json(want))  # compare as JSON: tuples are lists, keys strings
    want = {key: as_json[key] for key in want}  # in the order the design lists its fields
    return _first_difference(strip, want, "")


def write_design(run_dir: Path, design: Mapping[str, Any], *, force: bool = False) -> str:
    """Write ``design.json`` and ``design.sha256`` (the hex SHA-256 of its exact bytes).

    The same design again (provenance aside) writes nothing and returns the recorded hash, so a
    rerun of the same command resumes; a different one is refused with ``DesignDiffers`` naming
    the first difference unless ``force`` (and never once later stages built on the old one).
    """
    design_path = run_dir / DESIGN
    hash_path = run_dir / DESIGN_HASH
    validate(design, "design", DESIGN)
    if design_path.exists():
        claim_output(design_path, "design", force=True)
        try:
            recorded: LoadedDesign | None = load_design(run_dir)
        except BadInput:
            recorded = None
        difference = None if recorded is None else design_difference(recorded.design, design)
        if recorded is not None and difference is None:
            return recorded.sha256
        if not force:
            if difference is not None:
                raise DesignDiffers(design_path, difference)
            refuse_overwrite(design_path, force)
    claim_output(hash_path, "design hash", force=force)
    # --force may replace a design, never one that later stages already built on.
    downstream = [name for name in DOWNSTREAM_OF_DESIGN if (run_dir / name).exists()]
    if downstream:
        raise BadInput(
            f"{run_dir} already holds {downstream[0]} made from the current design; "
            "use a new run directory"
        )
    data = dump_json(design)
    digest = sha256_bytes(data)
    write_bytes_atomic(design_path, data)
    write_bytes_atomic(hash_path, (digest + "\n").encode())
    return digest


@dataclass(frozen=True, slots=True)
class LoadedDesign:
    design: DesignRecord
    sha256: str


def read_design_hash(run_dir: Path) -> str:
    text = read_bytes(run_dir / DESIGN_HASH).decode("ascii", errors="replace").strip()
    if not re.fullmatch(r"[0-9a-f]{64}", text):
        raise BadInput(f"{DESIGN_HASH}: expected 64 hex digits, found {text[:80]!r}")
    return text


def load_design(run_dir: Path) -> LoadedDesign:
    """Read ``design.json`` and refuse it unless its bytes still match ``design.sha256``."""
    if not run_dir.is_dir():
        raise BadInput(f"{run_dir}: not a run directory (run bt-design first)")
    data = read_bytes(run_dir / DESIGN)
    actual = sha256_bytes(data)
    recorded = read_design_hash(run_dir)
    if actual != recorded:
        raise BadInput(
            f"{DESIGN} no longer matches {DESIGN_HASH} (sha256 {actual[:12]}..., recorded "
            f"{recorded[:12]}...): the design was edited after it was hashed; make a new design"
        )
    design = _decode(data, DESIGN)
    _validate_document(design, data, "design", DESIGN)
    return LoadedDesign(design=cast(DesignRecord, design), sha256=actual)


# --------------------------------------------------------------------------- the design, lean

#: The lists of a design that grow with it (one entry per trial, per prompt).
LONG_LISTS = ("arrangement", "prompts")
#: A column keeps a table of its distinct values while it has at most this many.
_INTERN_MAX = 256


class _Column:
    """One key of a list of JSON objects: a code per entry (-1: key absent) into a table of
    values; a value that repeats is held once while the column has few distinct values."""

    __slots__ = ("_seen", "codes", "values")

    def __init__(self) -> None:
        self.codes = array("i")
        self.values: list[Any] = []
        self._seen: dict[Any, int] | None = {}

    def set(self, position: int, value: Any) -> None:
        if len(self.codes) < position:
            self.codes.extend(array("i", [-1]) * (position - len(self.codes)))
        seen = self._seen
        if seen is not None and (value is None or type(value) in (str, int, float, bool)):
            key = (type(value), value)
            code = seen.get(key)
            if code is None:
                code = seen[key] = len(self.values)
                self.values.append(value)
                if len(seen) > _INTERN_MAX:
                    self._seen = None  # many distinct values: no table, one value per entry
            self.codes.append(code)
            return
        self.codes.append(len(self.values))
        self.values.append(value)


class Columns(Sequence[JsonObject]):
    """A long list of small JSON objects (a design's arrangement or prompts) held by column.

    Reads back as a list of dicts equal to the ones appended (a fresh dict per access, keys in
    sorted order, as ``dump_json`` writes them): at 30,000 trials this holds a few dozen bytes
    per entry besides its strings, where a list of dicts holds several hundred."""

    def __init__(self, entries: Iterable[Mapping[str, Any]] = ()) -> None:
        self._size = 0
        self._by_key: dict[str, _Column] = {}
        self._columns: list[tuple[str, _Column]] = []
        self._index: dict[str, dict[Any, int]] = {}
        for entry in entries:
            self.append(entry)

    def append(self, entry: Mapping[str, Any]) -> None:
        for key, value in entry.items():
            column = self._by_key.get(key)
            if column is None:
                column = self._by_key[key] = _Column()
                self._columns = sorted(self._by_key.items())
            column.set(self._size, value)
        self._size += 1

    def __len__(self) -> int:
        return self._size

    def _entry(self, position: int) -> JsonObject:
        entry: JsonObject = {}
        for key, column in self._columns:
            codes = column.codes
            code = codes[position] if position < len(codes) else -1
            if code >= 0:
                entry[key] = column.values[code]
        return entry

    def __getitem__(self, position: Any) -> Any:
        if isinstance(position, slice):
            return [self._entry(i) for i in range(*position.indices(self._size))]
        if position < 0:
            position += self._size
        if not 0 <= position < self._size:
            raise IndexError(position)
        return self._entry(position)

    def __iter__(self) -> Iterator[JsonObject]:
        for position in range(self._size):
            yield self._entry(position)

    def has_key(self, key: str) -> bool:
        """Whether any entry has ``key``."""
        return key in self._by_key

    def value(self, position: int, key: str, default: Any = None) -> Any:
        """One entry's value for ``key`` without building the entry."""
        column = self._by_key.get(key)
        if column is None or position >= len(column.codes) or column.codes[position] < 0:
            return default
        return column.values[column.codes[position]]

    def position(self, key: str, value: Any, *, last: bool = False) -> int:
        """The position of the first (``last``: the last) entry whose ``key`` is ``value``
        (an index built once per key and choice); KeyError when there is none."""
        index = self._index.get(f"{last}:{key}")
        if index is None:
            index = {}
            for position in range(self._size):
                if last:
                    index[self.value(position, key)] = position
                else:
                    index.setdefault(self.value(position, key), position)
            self._index[f"{last}:{key}"] = index
        return index[value]


def load_design_lean(run_dir: Path) -> LoadedDesign:
    """``load_design`` for a stage that holds the design for a long run (bt-generate): the
    same checks and errors, then its arrangement and prompts held as :class:`Columns`, so a
    30,000-trial design costs a few MiB for the rest of the run, not several hundred bytes
    per entry."""
    loaded = load_design(run_dir)
    design: dict[str, Any] = dict(loaded.design)
    for key in LONG_LISTS:
        design[key] = Columns(design[key])
    return LoadedDesign(design=cast(DesignRecord, design), sha256=loaded.sha256)
