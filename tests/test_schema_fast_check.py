"""The compiled schema check (jsonschema-rs) never passes a record jsonschema refuses, and a
refused record gets the same one-line error as with jsonschema alone.

Records near the real ones (every artifact of examples/run, mutated: a field dropped, added,
retyped, a string or number nudged) are put to both validators; the compiled one may be
stricter (jsonschema then decides), never looser.
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema.exceptions import best_match

from blindtest import artifacts
from blindtest.errors import BadInput

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "run"

#: The schema keywords whose agreement this file checks. A schema that starts using another
#: (``format``, ``uniqueItems``, ``patternProperties``...) must be looked at here first.
CHECKED_KEYWORDS = {
    "$schema", "$id", "$ref", "$defs", "title", "description", "type", "properties",
    "required", "additionalProperties", "items", "minItems", "minLength", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "enum", "const", "pattern", "anyOf",
    "oneOf", "allOf", "not", "if", "then", "else", "maxLength", "maxItems", "minProperties",
    "maxProperties", "propertyNames",
}  # fmt: skip


def _keywords(node: Any, found: set[str], *, names: bool = False) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if not names:
                found.add(key)
            _keywords(value, found, names=not names and key in ("properties", "$defs"))
    elif isinstance(node, list):
        for item in node:
            _keywords(item, found)


@cache
def _examples() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(schema name, record) for every record in examples/run."""
    found: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(EXAMPLES.iterdir()):
        if path.suffix == ".json":
            records = [orjson.loads(path.read_bytes())]
        elif path.suffix == ".jsonl":
            records = [orjson.loads(line) for line in path.read_bytes().splitlines() if line]
        else:
            continue
        for record in records:
            found.append((record["schema"].split("/")[1].split("@")[0], record))
    return tuple(found)


def _old_validate(record: Any, name: str, where: str) -> None:
    """``artifacts.validate`` as it was with jsonschema alone."""
    if not isinstance(record, dict):
        raise BadInput(f"{where}: expected a JSON object, found {type(record).__name__}")
    artifacts._check_tag(record, name, where)
    checker = artifacts.validator(name)
    if checker.is_valid(record):
        return
    error = best_match(checker.iter_errors(record))
    if error is not None:
        raise BadInput(f"{where}: {artifacts._pointer(error)}: {error.message}")


def _outcome(check: Any, record: Any, name: str) -> str:
    try:
        check(record, name, "x.jsonl:7")
    except BadInput as error:
        return str(error)
    return "valid"


HEX64 = "0123456789abcdef" * 4
ODD_VALUES: list[Any] = [
    None, True, False, 0, 1, -1, 2, 3, 4, 0.0, -0.0, 0.5, 1.0, 1.5, -0.5, 2.0, 1e300, -1e300,
    2**31, 2**53 + 1, 2**63 - 1, "", "x", "A", "B", "AB", "ok", "error", "stop", "\n", "1",
    "true", HEX64, HEX64 + "\n", HEX64.upper(), HEX64[:-1], "http://x", "https://x/v1",
    "ftp://x", "{prompt}", "say {prompt}\n", "blindtest/normalize@1", "blindtest/normalize@1\n",
    "blindtest/identity@1", "blindtest/identity@x", "a_b", "_", "9x", "x\n", "\u00e9", "\U0001f600",
    "K" * 128, "K" * 129, "\U0001f600" * 128, "\U0001f600" * 129, 0.999999, 1.000001, 1e-300,
    [], [None], [1, 2], ["x"], [{}], {}, {"a": 1}, {"name": "length"},
]  # fmt: skip


#: Keys to add: unknown ones, and the ones a request's extra parameters may not name.
KEYS = ["extra", "x", "", "schema", "trial", "unit", "model", "messages", "stream", "n", "temp"]


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``value`` (the root included)."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _nodes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _nodes(item, (*path, index))
    return found


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _nudged(value: Any, draw: st.DrawFn) -> Any:
    """A near neighbour of ``value``, of the same kind where there is one."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        step = draw(st.sampled_from([-2, -1, 1, 2]))
        return value + step if draw(st.booleans()) else float(value)
    if isinstance(value, float):
        return draw(st.sampled_from([value - 1, -value, value + 1e-9, value * 2, round(value)]))
    if isinstance(value, str):
        return draw(st.sampled_from([value + "\n", value[:-1], value[1:], value.upper(), ""]))
    if isinstance(value, list):
        shorten: bool = draw(st.booleans())
        if value and shorten:
            return value[: draw(st.integers(0, len(value) - 1))]
        return value + value[:1] if value else [None]
    return value


@cache
def _by_name() -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for name, record in _examples():
        grouped.setdefault(name, []).append(record)
    return grouped


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, Any]:
    """A record of examples/run (each kind as likely as another) with one to three changes."""
    name = draw(st.sampled_from(sorted(_by_name())))
    original = draw(st.sampled_from(_by_name()[name]))
    record = copy.deepcopy(original)
    for _ in range(draw(st.integers(1, 3))):
        paths = _nodes(record)
        path = draw(st.sampled_from(paths[1:] if len(paths) > 1 else paths))
        if not path:
            break
        parent = _get(record, path[:-1])
        key = path[-1]
        how = draw(st.sampled_from(["drop", "add", "odd", "sibling", "nudge"]))
        if how == "drop":
            del parent[key]
        elif how == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(KEYS))] = copy.deepcopy(draw(st.sampled_from(ODD_VALUES)))
        elif how == "odd":
            parent[key] = copy.deepcopy(draw(st.sampled_from(ODD_VALUES)))
        elif how == "sibling":
            parent[key] = copy.deepcopy(_get(record, draw(st.sampled_from(paths))))
        else:
            parent[key] = _nudged(parent[key], draw)
    return name, record


def test_the_schemas_use_only_the_keywords_checked_here() -> None:
    used: set[str] = set()
    for _, schema in artifacts._schema_documents():
        _keywords(schema, used)
    assert used <= CHECKED_KEYWORDS, f"new keywords to check: {used - CHECKED_KEYWORDS}"


@pytest.mark.parametrize(("name", "record"), _examples())
def test_both_validators_pass_every_example_record(name: str, record: dict[str, Any]) -> None:
    assert artifacts.fast_validator(name).is_valid(record)
    assert artifacts.validator(name).is_valid(record)


@settings(max_examples=3000, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_the_compiled_check_never_passes_what_jsonschema_refuses(case: tuple[str, Any]) -> None:
    name, record = case
    python = artifacts.validator(name).is_valid(record)
    compiled = artifacts.fast_validator(name).is_valid(record)
    assert python or not compiled, f"jsonschema-rs passed a {name} record jsonschema refuses"
    assert _outcome(artifacts.validate, record, name) == _outcome(_old_validate, record, name)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"slot": 4}, "responses.jsonl:3: /slot: 4 is greater than the maximum of 3"),
        ({"trial": 0}, "responses.jsonl:3: /trial: 0 is less than the minimum of 1"),
        ({"side": "C"}, "responses.jsonl:3: /side: 'C' is not one of ['A', 'B']"),
        ({"text": None}, "responses.jsonl:3: /text: None is not of type 'string'"),
        ({"status": 5}, "responses.jsonl:3: /: 'error' is a required property"),
    ],
)  # fmt: skip
def test_a_refused_row_gets_the_one_line_error_jsonschema_writes(
    changes: dict[str, Any], message: str
) -> None:
    name, row = next(item for item in _examples() if item[0] == "responses")
    bad = row | changes
    assert not artifacts.fast_validator(name).is_valid(bad)
    with pytest.raises(BadInput) as caught:
        artifacts.validate(bad, name, "responses.jsonl:3")
    assert str(caught.value) == message
    assert _outcome(artifacts.validate, bad, name) == _outcome(_old_validate, bad, name)


def test_a_tuple_for_an_array_is_refused_as_before() -> None:
    """jsonschema-rs takes a Python tuple for an array; jsonschema does not, and decides."""
    name, design = next(item for item in _examples() if item[0] == "design")
    arrays = [path for path in _nodes(design) if path and isinstance(_get(design, path), list)]
    assert arrays
    bad = copy.deepcopy(design)
    path = arrays[0]
    _get(bad, path[:-1])[path[-1]] = tuple(_get(design, path))
    assert artifacts.fast_validator(name).is_valid(bad)  # why the walk exists
    assert not artifacts.validator(name).is_valid(bad)
    assert _outcome(artifacts.validate, bad, name) == _outcome(_old_validate, bad, name)
    assert _outcome(artifacts.validate, bad, name) != "valid"


def test_a_stricter_compiled_check_defers_to_jsonschema() -> None:
    """A ``$`` in a pattern matches before a final newline in Python only: jsonschema-rs
    refuses such a hash, jsonschema passes it, and the record is valid as it was before."""
    name, picks = next(item for item in _examples() if item[0] == "picks")
    odd = picks | {"design_sha256": picks["design_sha256"] + "\n"}
    assert not artifacts.fast_validator(name).is_valid(odd)
    assert artifacts.validator(name).is_valid(odd)
    assert _outcome(artifacts.validate, odd, name) == "valid"


def test_schemas_are_never_fetched() -> None:
    import jsonschema_rs

    with pytest.raises(jsonschema_rs.ValidationError, match="never fetched"):
        jsonschema_rs.validator_for(
            {"$ref": "https://example.invalid/other.schema.json"},
            registry=jsonschema_rs.Registry(
                artifacts._schema_documents(), retriever=artifacts._no_retrieval
            ),
            retriever=artifacts._no_retrieval,
        )
