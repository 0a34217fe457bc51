"""Schemas are data, loaded once: every ``schemas/*.schema.json`` in one registry, one cached
validator per schema, and the ``schema`` tag (``blindtest/<name>@<major>``) checked before
anything else; an invalid record is ``BadInput`` naming the place and the JSON pointer.

Each major version of an artifact is its own schema file, never an edited one:
``<name>.schema.json`` holds major 1, ``<name>@<major>.schema.json`` each later one
(``report@2.schema.json``: a preference report, for any number of candidates). A reader takes
every major version ``SCHEMA_MAJORS`` lists and refuses any other in one line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    # jsonschema, referencing and jsonschema_rs load only when a file is validated (start-up).
    import jsonschema_rs
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

from blindtest.errors import BadInput
from blindtest.rundir.artifacts.encoding import JsonObject

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
    "web_links",
)
MAJOR_VERSION = 1
#: The major versions this blindtest reads (and writes) of each artifact: the first for all,
#: and report@2, the shape of a preference report for every number of candidates.
SCHEMA_MAJORS: dict[str, tuple[int, ...]] = {name: (MAJOR_VERSION,) for name in SCHEMA_NAMES} | {
    "report": (1, 2)
}
_TAG = re.compile(r"^blindtest/(?P<name>[a-z_]+)@(?P<major>\d+)$")
_SCHEMA_BASE = "https://blindtest.invalid/schemas/"


def schema_tag(name: str, major: int = MAJOR_VERSION) -> str:
    """The ``schema`` field every artifact of this kind carries, e.g. ``blindtest/design@1``."""
    if major not in SCHEMA_MAJORS[name]:
        raise ValueError(f"blindtest has no {name}@{major} schema")
    return f"blindtest/{name}@{major}"


def schema_file(name: str, major: int = MAJOR_VERSION) -> str:
    """The file of one major version of a schema: ``report.schema.json`` (major 1),
    ``report@2.schema.json``."""
    return f"{name}.schema.json" if major == MAJOR_VERSION else f"{name}@{major}.schema.json"


def tag_major(record: Mapping[str, Any]) -> int | None:
    """The major version a record's ``schema`` tag names (None without a readable tag)."""
    found = record.get("schema")
    match = _TAG.match(found) if isinstance(found, str) else None
    return int(match["major"]) if match is not None else None


# --------------------------------------------------------------------------- schemas


@cache
def _schema_documents() -> tuple[tuple[str, JsonObject], ...]:
    """``($id, schema)`` for every schema shipped in ``blindtest/schemas/``."""
    documents = []
    for entry in resources.files("blindtest").joinpath("rundir/schemas").iterdir():
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
def validator(name: str, major: int = MAJOR_VERSION) -> Draft202012Validator:
    """The cached validator for one major version of a schema (``schema_file``)."""
    from jsonschema import Draft202012Validator

    schema = _registry().contents(f"{_SCHEMA_BASE}{schema_file(name, major)}")
    return Draft202012Validator(
        schema, registry=_registry(), format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def _no_retrieval(uri: str) -> Any:
    raise ValueError(f"{uri} is not a blindtest schema; schemas are never fetched")


@cache
def fast_validator(name: str, major: int = MAJOR_VERSION) -> jsonschema_rs.Validator:
    """The compiled (jsonschema-rs) check for ``schemas/<name>.schema.json``: the same schemas,
    their ``$ref`` resolved from the shipped files only (any other URI is refused, never
    fetched), ``format`` checked. Trusted only when it says valid: where it is stricter than
    ``validator`` (a ``$`` in a ``pattern`` does not match before a final newline, NaN fails
    ``minimum``, a string with a lone surrogate cannot be taken at all) the record goes on to
    ``validator``, which decides."""
    import jsonschema_rs

    registry = jsonschema_rs.Registry(_schema_documents(), retriever=_no_retrieval)
    schema = dict(_schema_documents())[f"{_SCHEMA_BASE}{schema_file(name, major)}"]
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


def _fast_yes(record: Mapping[str, Any], name: str, major: int, parsed: bool) -> bool:
    """True when the compiled check passes ``record``; False means "ask jsonschema"."""
    if not (parsed or _json_native(record)):
        return False
    try:
        return fast_validator(name, major).is_valid(record)
    except (ValueError, TypeError, OverflowError):  # a value it cannot convert: jsonschema decides
        return False


def _pointer(error: ValidationError) -> str:
    return "/" + "/".join(str(part) for part in error.absolute_path)


def _check_tag(record: Mapping[str, Any], name: str, where: str) -> int:
    """The major version of ``record``'s tag, one this blindtest reads; else BadInput."""
    found = record.get("schema")
    known = [schema_tag(name, major) for major in SCHEMA_MAJORS[name]]
    expected = '" or "'.join(known)
    if not isinstance(found, str):
        raise BadInput(f'{where}: missing "schema" tag; expected "{expected}"')
    match = _TAG.match(found)
    if match is None or match["name"] != name:
        raise BadInput(f'{where}: schema tag "{found}" is not a {name} artifact ("{expected}")')
    major = int(match["major"])
    if major not in SCHEMA_MAJORS[name]:
        raise BadInput(
            f'{where}: schema tag "{found}" is not supported; this blindtest reads "{expected}"'
        )
    return major


def validate(record: Any, name: str, where: str, *, parsed: bool = False) -> None:
    """Raise ``BadInput`` naming ``where`` and the JSON pointer of the most relevant error.

    jsonschema (Python) is the judge of validity and the author of every message; the compiled
    check (``fast_validator``) only lets a record it finds valid through without asking it.
    ``parsed`` says the record is straight from ``orjson.loads`` (JSON types only), which spares
    the walk that keeps anything else (a tuple, an enum, a numpy number) off the fast check.
    """
    if not isinstance(record, dict):
        raise BadInput(f"{where}: expected a JSON object, found {type(record).__name__}")
    major = _check_tag(record, name, where)
    if _fast_yes(record, name, major, parsed):
        return
    checker = validator(name, major)
    if checker.is_valid(record):
        return
    from jsonschema.exceptions import best_match

    error = best_match(checker.iter_errors(record))
    if error is not None:
        raise BadInput(f"{where}: {_pointer(error)}: {error.message}")
