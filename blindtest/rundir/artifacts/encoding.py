"""The bytes of an artifact: the one serializer for JSON documents and JSONL lines (fixed
options, so the bytes are a pure function of the value, which the design hash needs), and
SHA-256 over exact bytes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson

JsonObject = dict[str, Any]


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
