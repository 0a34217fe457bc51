"""Reading a run's JSON documents: a file's bytes (a missing one named), a document parsed
and validated (once per content in a process), and the design's recorded hash.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from blindtest.errors import BadInput
from blindtest.rundir.artifacts.encoding import JsonObject, sha256_bytes
from blindtest.rundir.artifacts.names import DESIGN_HASH
from blindtest.rundir.artifacts.validation import validate


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


def read_design_hash(run_dir: Path) -> str:
    text = read_bytes(run_dir / DESIGN_HASH).decode("ascii", errors="replace").strip()
    if not re.fullmatch(r"[0-9a-f]{64}", text):
        raise BadInput(f"{DESIGN_HASH}: expected 64 hex digits, found {text[:80]!r}")
    return text
