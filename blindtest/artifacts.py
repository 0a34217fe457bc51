"""Every byte in a run directory goes through this module.

It owns the run-directory file names, JSON and JSONL reading and writing (orjson), atomic
replacement (temporary file in the same directory, fsync, rename), one-write-per-line JSONL
appends, the torn-line tolerant reader, the ``--force`` guard, schema validation on read and on
write, and SHA-256 over exact bytes. No other module opens run files.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource

from blindtest.errors import BadInput

DESIGN = "design.json"
DESIGN_HASH = "design.sha256"
RESPONSES = "responses.jsonl"
TRIALS = "trials.jsonl"
PICKS = "picks.jsonl"
AUDIT = "audit.json"
REPORT = "report.json"
E_VALUES = "e_values.jsonl"
GENERATION = "generation.json"

#: Files made from a design: once one exists the design may not be replaced.
DOWNSTREAM_OF_DESIGN = (RESPONSES, TRIALS, PICKS, AUDIT, REPORT, GENERATION)

SCHEMA_NAMES = (
    "audit",
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
def _registry() -> Registry[Any]:
    registry: Registry[Any] = Registry()
    for entry in resources.files("blindtest").joinpath("schemas").iterdir():
        if entry.name.endswith(".schema.json"):
            contents = orjson.loads(entry.read_bytes())
            registry = registry.with_resource(contents["$id"], Resource.from_contents(contents))
    return registry.crawl()


@cache
def validator(name: str) -> Draft202012Validator:
    """The cached validator for ``schemas/<name>.schema.json``."""
    schema = _registry().contents(f"{_SCHEMA_BASE}{name}.schema.json")
    return Draft202012Validator(
        schema, registry=_registry(), format_checker=Draft202012Validator.FORMAT_CHECKER
    )


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


def validate(record: Any, name: str, where: str) -> None:
    """Raise ``BadInput`` naming ``where`` and the JSON pointer of the most relevant error."""
    if not isinstance(record, dict):
        raise BadInput(f"{where}: expected a JSON object, found {type(record).__name__}")
    _check_tag(record, name, where)
    error = best_match(validator(name).iter_errors(record))
    if error is not None:
        raise BadInput(f"{where}: {_pointer(error)}: {error.message}")


# --------------------------------------------------------------------------- writing


def refuse_overwrite(path: Path, force: bool) -> None:
    """The ``--force`` guard: call it for every output before writing anything."""
    if path.exists() and not force:
        raise BadInput(f"{path} already exists; use --force to overwrite it")


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(path.parent)


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


def write_json(path: Path, record: JsonObject, name: str, *, force: bool = False) -> bytes:
    """Validate, then atomically write a JSON artifact. Returns the exact bytes written."""
    validate(record, name, path.name)
    refuse_overwrite(path, force)
    data = dump_json(record)
    write_bytes_atomic(path, data)
    return data


def write_jsonl(path: Path, records: Iterable[JsonObject], name: str, *, force: bool) -> None:
    """Validate every record, then atomically write a whole JSONL file."""
    lines = []
    for number, record in enumerate(records, start=1):
        validate(record, name, f"{path.name}:{number}")
        lines.append(dump_line(record))
    refuse_overwrite(path, force)
    write_bytes_atomic(path, b"".join(lines))


class JsonlAppender:
    """Appends validated records to a JSONL file, one ``os.write`` per whole line.

    A line is written with a single ``write(2)`` on an ``O_APPEND`` descriptor, so a crash can
    leave at most one torn final line, which ``read_jsonl`` reports and ``repair_torn_tail``
    removes. ``fsync=True`` makes each record durable before ``append`` returns.
    """

    def __init__(self, path: Path, name: str, *, fsync: bool = True) -> None:
        self.path = path
        self.name = name
        self._fsync = fsync
        path.parent.mkdir(parents=True, exist_ok=True)
        repair_torn_tail(path)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, record: JsonObject) -> None:
        validate(record, self.name, self.path.name)
        line = dump_line(record)
        written = os.write(self._fd, line)
        if written != len(
            line
        ):  # pragma: no cover - a short write on a regular file is a disk error
            raise OSError(f"short write to {self.path}: {written} of {len(line)} bytes")
        if self._fsync:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
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
    record = _decode(read_bytes(path), path.name)
    validate(record, name, path.name)
    result: JsonObject = record
    return result


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


def read_jsonl(path: Path, name: str, *, missing_ok: bool = False) -> JsonlContents:
    """Read and validate a JSONL artifact.

    An unterminated final line that does not parse is a torn append: it is reported in
    ``torn_line`` and ignored. Any other line that does not parse or validate is corruption and
    raises ``BadInput`` naming the file and line.
    """
    if missing_ok and not path.exists():
        return JsonlContents(records=[])
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
        validate(record, name, where)
        records.append(record)
        numbers.append(number)
    return JsonlContents(records=records, torn_line=torn, lines=numbers)


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


def write_design(run_dir: Path, design: JsonObject, *, force: bool = False) -> str:
    """Write ``design.json`` and ``design.sha256`` (the hex SHA-256 of its exact bytes)."""
    design_path = run_dir / DESIGN
    hash_path = run_dir / DESIGN_HASH
    validate(design, "design", DESIGN)
    refuse_overwrite(design_path, force)
    refuse_overwrite(hash_path, force)
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
    design: JsonObject
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
    validate(design, "design", DESIGN)
    return LoadedDesign(design=design, sha256=actual)
