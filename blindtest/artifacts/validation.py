"""Schemas are data, loaded once: every ``schemas/*.schema.json`` in one registry, one cached
validator per schema, and the ``schema`` tag (``blindtest/<name>@<major>``) checked before
anything else; an invalid record is ``BadInput`` naming the place and the JSON pointer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    # jsonschema and referencing load only when a file is validated (start-up).
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

from blindtest.errors import BadInput

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
_TAG = re.compile(r"^blindtest/(?P<name>[a-z_]+)@(?P<major>\d+)$")
_SCHEMA_BASE = "https://blindtest.invalid/schemas/"


def schema_tag(name: str) -> str:
    """The ``schema`` field every artifact of this kind carries, e.g. ``blindtest/design@1``."""
    return f"blindtest/{name}@{MAJOR_VERSION}"


# --------------------------------------------------------------------------- schemas


@cache
def _registry() -> Registry[Any]:
    from referencing import Registry, Resource

    registry: Registry[Any] = Registry()
    for entry in resources.files("blindtest").joinpath("schemas").iterdir():
        if entry.name.endswith(".schema.json"):
            contents = orjson.loads(entry.read_bytes())
            registry = registry.with_resource(contents["$id"], Resource.from_contents(contents))
    return registry.crawl()


@cache
def validator(name: str) -> Draft202012Validator:
    """The cached validator for ``schemas/<name>.schema.json``."""
    from jsonschema import Draft202012Validator

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
    checker = validator(name)
    if checker.is_valid(record):
        return
    from jsonschema.exceptions import best_match

    error = best_match(checker.iter_errors(record))
    if error is not None:
        raise BadInput(f"{where}: {_pointer(error)}: {error.message}")
