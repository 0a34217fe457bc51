"""The compiled schema check (jsonschema-rs) never passes a record jsonschema refuses, and a
refused record gets the same one-line error as with jsonschema alone.

Records near the real ones (every artifact of examples/run, mutated with a seeded generator: a
field dropped, added, retyped, set to a value at one of the schemas' own bounds, a string or
number nudged; and one change at a time at every place, each of its bounds in turn) are put
to both validators, many per schema; the compiled one may be stricter (jsonschema then
decides), never looser. Both directions are counted and printed (``-rP``).
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema.exceptions import best_match

from blindtest.errors import BadInput
from blindtest.rundir.artifacts import validation as artifacts

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "run"

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


SEED = 20261203
#: Mutated records per schema (every kind of artifact, whatever its share of examples/run).
MUTANTS_PER_SCHEMA = 1000

HEX64 = "0123456789abcdef" * 4
ODD_VALUES: list[Any] = [
    None, True, False, 0, 1, -1, 2, 3, 4, 0.0, -0.0, 0.5, 1.0, 1.5, -0.5, 2.0, 1e300, -1e300,
    2**31, 2**53 + 1, 2**63 - 1, 2**64, 2**200, -(2**64), "", "x", "A", "B", "AB", "ok", "error",
    "stop", "\n", "1", "true", HEX64, HEX64 + "\n", HEX64.upper(), HEX64[:-1], "\n" + HEX64,
    "http://x", "https://x/v1", "ftp://x", "HTTP://x", "{prompt}", "say {prompt}\n", "{Prompt}",
    "blindtest/normalize@1", "blindtest/normalize@1\n", "blindtest/identity@1",
    "blindtest/identity@x", "a_b", "_", "9x", "x\n", "x y", "\u00e9", "\U0001f600", "\ud800",
    "\u0661", "K" * 128, "K" * 129, "\U0001f600" * 128, "\U0001f600" * 129, 0.999999, 1.000001,
    1e-300, 5e-324, [], [None], [1, 2], ["x"], ["x", "y"], ["x", "y", "z"], ["x", "y", "z", "w"],
    [{}], {}, {"a": 1}, {"name": "length"}, {"model": 1}, {"temperature": None},
    {"regex": "x"}, {"regex": "x", "equals": "y"}, {"left": True, "right": False}, {"left": 1},
]  # fmt: skip

#: Keys to add besides the schemas' own property names: unknown ones, and the ones a
#: request's extra parameters may not name.
KEYS = ["extra", "x", "", "unit", "model", "messages", "stream", "n", "temp", "\n"]

#: Keywords that can refuse a value (the rest annotate or route; jsonschema leaves ``$ref`` and
#: ``if`` off an error's schema path): each must be seen refusing a mutated record.
ASSERTING = {
    "type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
    "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "enum", "const", "pattern", "anyOf", "oneOf", "allOf", "not", "then", "else",
    "minProperties", "maxProperties", "propertyNames",
}  # fmt: skip


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


def _schema_nodes(node: Any) -> list[dict[str, Any]]:
    """Every subschema (every object) of a schema document."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        found.append(node)
        for value in node.values():
            found += _schema_nodes(value)
    elif isinstance(node, list):
        for item in node:
            found += _schema_nodes(item)
    return found


def _edges(nodes: list[dict[str, Any]]) -> list[Any]:
    """Values at the edges of ``nodes``: each const and enum member; every numeric bound, one
    step and a hair either side; strings and arrays one short of, at and one past each length
    bound."""
    values: list[Any] = []
    for node in nodes:
        if "const" in node:
            values.append(node["const"])
        if isinstance(node.get("enum"), list):
            values += node["enum"]
        for bound in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if isinstance(node.get(bound), (int, float)):
                edge = node[bound]
                values += [edge - 1, edge - 1e-9, edge, edge + 1e-9, edge + 1, float(edge)]
        for bound in ("minLength", "maxLength"):
            if isinstance(node.get(bound), int):
                sizes = [max(0, node[bound] + step) for step in (-1, 0, 1)]
                values += [char * size for char in "k\u00e9" for size in sizes]
        for bound in ("minItems", "maxItems"):
            if isinstance(node.get(bound), int):
                values += [["x"] * max(0, node[bound] + step) for step in (-1, 0, 1)]
    return values


@cache
def _schema_values() -> tuple[list[Any], list[str]]:
    """The edges of every subschema, and every property name the schemas know."""
    nodes = [node for _, schema in artifacts._schema_documents() for node in _schema_nodes(schema)]
    names = {
        key
        for node in nodes
        if isinstance(node.get("properties"), dict)
        for key in node["properties"]
    }
    return _edges(nodes), sorted(names)


def _nudged(value: Any, rng: random.Random) -> Any:
    """A near neighbour of ``value``, of the same kind where there is one."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice([-2, -1, 1, 2]) if rng.random() < 0.5 else float(value)
    if isinstance(value, float):
        return rng.choice([value - 1, -value, value + 1e-9, value * 2, round(value)])
    if isinstance(value, str):
        return rng.choice([value + "\n", value[:-1], value[1:], value.upper(), "", value + " "])
    if isinstance(value, list):
        if value and rng.random() < 0.5:
            return value[: rng.randrange(len(value))]
        return value + value[:1] if value else [None]
    if isinstance(value, dict):
        return {key: item for key, item in value.items() if rng.random() < 0.7}
    return value


def _shortened(value: Any) -> Any:
    """``value`` with every array cut to its first three items (a design's arrangement is one
    place of the schema however long it is, and mutating a copy of all of it is slow)."""
    if isinstance(value, dict):
        return {key: _shortened(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shortened(item) for item in value[:3]]
    return value


@cache
def _by_name() -> dict[str, list[dict[str, Any]]]:
    """The records of examples/run by kind, arrays shortened, each still valid."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for name, record in _examples():
        short = _shortened(record)
        assert artifacts.validator(name).is_valid(short), name
        grouped.setdefault(name, []).append(short)
    return grouped


def _resolve(uri: str) -> Any:
    """The subschema at ``uri`` (a shipped document's ``$id``, ``#`` and a JSON pointer)."""
    document, _, pointer = uri.partition("#")
    node: Any = dict(artifacts._schema_documents())[document]
    for part in filter(None, pointer.split("/")):
        node = node[part]
    return node


def _expanded(node: Any, document: str) -> list[tuple[dict[str, Any], str]]:
    """``node`` and every subschema that applies to the same value with it (``$ref`` followed,
    ``allOf``/``anyOf``/``oneOf``/``then``/``else`` branches), each with its document."""
    if not isinstance(node, dict):
        return []
    found = [(node, document)]
    if isinstance(node.get("$ref"), str):
        target, _, where = node["$ref"].partition("#")
        uri = f"{artifacts._SCHEMA_BASE}{target}" if target else document
        found += _expanded(_resolve(f"{uri}#{where}"), uri)
    for keyword in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(keyword, []):
            found += _expanded(branch, document)
    for keyword in ("then", "else"):
        found += _expanded(node.get(keyword), document)
    return found


def _schemas_at(name: str, path: tuple[Any, ...]) -> list[tuple[dict[str, Any], str]]:
    """The subschemas (with their documents) that apply to the value at ``path`` in a record
    of ``name``."""
    document = f"{artifacts._SCHEMA_BASE}{name}.schema.json"
    here = _expanded(_resolve(f"{document}#"), document)
    for part in path:
        below: list[tuple[dict[str, Any], str]] = []
        for node, uri in here:
            if isinstance(part, int):
                below += _expanded(node.get("items"), uri)
            elif part in node.get("properties", {}):
                below += _expanded(node["properties"][part], uri)
            else:
                below += _expanded(node.get("additionalProperties"), uri)
        here = below
    return here


def _names_at(name: str, path: tuple[Any, ...]) -> list[str]:
    """The property names the schema of ``name`` declares for the object at ``path``."""
    return sorted(
        {key for node, _ in _schemas_at(name, path) for key in node.get("properties", {})}
    )


def _made_at(name: str, path: tuple[Any, ...], rng: random.Random) -> Any:
    """A value for ``path`` in a record of ``name``, made from the schemas there (one of them,
    for a property several branches declare)."""
    node, document = rng.choice(
        [(n, uri) for n, uri in _schemas_at(name, path[:-1]) if path[-1] in n.get("properties", {})]
    )
    return _made(node["properties"][path[-1]], document, rng)


#: A string each of the schemas' patterns matches (a pattern not here gets "x", and the test
#: of the generated values below says so).
MATCHING = {
    "^[0-9a-f]{64}$": HEX64,
    "^https?://": "http://127.0.0.1:1/v1",
    "^[A-Za-z_][A-Za-z0-9_]*$": "OPENAI_API_KEY",
    "\\{prompt\\}": "Answer: {prompt}",
    "^blindtest/normalize@[0-9]+$": "blindtest/normalize@1",
    "^blindtest/identity@[0-9]+$": "blindtest/identity@1",
}


def _made(node: Any, document: str, rng: random.Random, depth: int = 0) -> Any:
    """A value shaped by the subschema ``node``, roughly valid: an optional field added whole
    (required fields, some optional ones, bounds kept) so that later changes reach inside it."""
    options = _expanded(node, document)
    choices = [o["const"] for o, _ in options if "const" in o]
    choices += [item for o, _ in options for item in o.get("enum", [])]
    if choices:
        return copy.deepcopy(rng.choice(choices))
    kinds: list[str] = []
    for option, _ in options:
        kind = option.get("type")
        kinds += kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
        kinds += ["object"] if "properties" in option else []
    kind = rng.choice([k for k in kinds if k != "null"] or kinds or ["null"])
    bound = {k: v for o, _ in options for k, v in o.items() if k.startswith(("min", "max"))}
    if kind == "object" and depth < 4:
        declared = {k: (v, uri) for o, uri in options for k, v in o.get("properties", {}).items()}
        required = {k for o, _ in options for k in o.get("required", [])}
        keep = [k for k in declared if rng.random() < (0.9 if k in required else 0.3)]
        made = {k: _made(declared[k][0], declared[k][1], rng, depth + 1) for k in keep}
        extra = [
            (o["additionalProperties"], uri) for o, uri in options if o.get("additionalProperties")
        ]
        if not declared:  # a map (answers by question, extra parameters): one entry
            made[rng.choice(KEYS)] = _made(*extra[0], rng, depth + 1) if extra else 1
        return made
    if kind == "array" and depth < 4:
        items = [(o["items"], uri) for o, uri in options if isinstance(o.get("items"), dict)]
        size = max(bound.get("minItems", 1), min(bound.get("maxItems", 2), 2))
        return [_made(*items[0], rng, depth + 1) if items else "x" for _ in range(size)]
    if kind == "string":
        edges = [v for v in _edges([o for o, _ in options]) if type(v) is str]
        if edges and rng.random() < 0.3:  # one short of, at or one past a length bound
            return rng.choice(edges)
        patterns = [o["pattern"] for o, _ in options if "pattern" in o]
        return MATCHING.get(patterns[0], "x") if patterns else "x" * bound.get("minLength", 1)
    if kind in ("integer", "number"):
        edges = [v for v in _edges([o for o, _ in options]) if type(v) in (int, float)]
        if edges and rng.random() < 0.3:  # at a bound, or a step or a hair past it
            return rng.choice(edges)
        low = bound.get("minimum", 0)
        return max(low, 1) if kind == "integer" else 0.5 if low < 0.5 else float(low)
    if kind == "boolean":
        return rng.random() < 0.5
    return None


def _filled(name: str, record: Any, rng: random.Random, path: tuple[Any, ...] = ()) -> None:
    """Add to every object in ``record`` about half the properties its schema declares and it
    lacks, each made from its schema: the optional parts examples/run does not have (a model's
    extra parameters, a pick's answers...), for the changes to reach inside."""
    value = _get(record, path)
    if isinstance(value, dict):
        for key in _names_at(name, path):
            if key not in value and rng.random() < 0.5:
                value[key] = _made_at(name, (*path, key), rng)
        for key in list(value):
            _filled(name, record, rng, (*path, key))
    elif isinstance(value, list):
        for index in range(len(value)):
            _filled(name, record, rng, (*path, index))


def _mutant(name: str, rng: random.Random) -> dict[str, Any]:
    """A record of ``name`` from examples/run (half the time with optional parts added) with
    one to four changes."""
    values, names = _schema_values()
    record = copy.deepcopy(rng.choice(_by_name()[name]))
    if rng.random() < 0.5:
        _filled(name, record, rng)
    for _ in range(rng.randint(1, 4)):
        paths = _nodes(record)[1:]
        if not paths:
            break
        # Each place in the schema as likely as another: the 30th trial of the arrangement is
        # the same place as the first, and a design has many more trials than models.
        places: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
        for path in paths:
            places.setdefault(tuple(None if type(p) is int else p for p in path), []).append(path)
        path = rng.choice(places[rng.choice(sorted(places, key=repr))])
        if isinstance(_get(record, path), dict) and rng.random() < 0.3:
            path = (*path, None)  # a change inside this object: an added key
        parent = _get(record, path[:-1])
        key = path[-1]
        how = rng.choice(["drop", "add", "odd", "edge", "sibling", "nudge", "nudge"])
        if key is None or (how == "add" and isinstance(parent, dict)):
            declared = _names_at(name, path[:-1])
            if declared and rng.random() < 0.7:
                added = rng.choice(declared)
                parent[added] = _made_at(name, (*path[:-1], added), rng)
            else:
                added = rng.choice(KEYS + names)
                parent[added] = copy.deepcopy(rng.choice(ODD_VALUES + values))
        elif how == "drop":
            del parent[key]
        elif how == "odd":
            parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))
        elif how == "edge":  # at an edge of this place's own schema, or of any
            here = _edges([node for node, _ in _schemas_at(name, path)])
            parent[key] = copy.deepcopy(rng.choice(here if here and rng.random() < 0.7 else values))
        elif how == "sibling":
            parent[key] = copy.deepcopy(_get(record, rng.choice(paths)))
        else:
            parent[key] = _nudged(parent[key], rng)
    return record


def _swept(name: str, rng: random.Random) -> list[dict[str, Any]]:
    """One change at a time at every place of each record (and of a filled copy of each):
    dropped, set to each edge of its own schema, and for an object an unknown key added. The
    random mutants reach a keyword by chance; this reaches each bound of each place there is."""
    found: list[dict[str, Any]] = []
    shapes: set[frozenset[tuple[Any, ...]]] = set()
    for original in _by_name()[name]:
        shape = frozenset(tuple(None if type(p) is int else p for p in q) for q in _nodes(original))
        if shape in shapes:
            continue  # another row with the same places (most of responses.jsonl)
        shapes.add(shape)
        filled = copy.deepcopy(original)
        _filled(name, filled, rng)
        for base in (original, filled):
            places: dict[tuple[Any, ...], tuple[Any, ...]] = {}
            for path in _nodes(base)[1:]:
                places.setdefault(tuple(None if type(p) is int else p for p in path), path)
            for path in places.values():
                value = _get(base, path)
                changes: list[Any] = [_DROP, *_edges([n for n, _ in _schemas_at(name, path)])]
                changes += [{**value, "x": 1}] if isinstance(value, dict) else []
                for change in changes:
                    record = copy.deepcopy(base)
                    parent = _get(record, path[:-1])
                    if change is _DROP:
                        del parent[path[-1]]
                    else:
                        parent[path[-1]] = copy.deepcopy(change)
                    found.append(record)
    return found


_DROP = object()


def _reachable_keywords(name: str) -> set[str]:
    """The keywords a record of ``name`` meets: its schema's and those of every ``$ref`` it
    reaches, in its own document or in another."""
    documents = dict(artifacts._schema_documents())
    base = artifacts._SCHEMA_BASE
    found: set[str] = set()
    seen: set[str] = set()
    pending = [f"{base}{name}.schema.json#"]
    while pending:
        uri = pending.pop()
        if uri in seen:
            continue
        seen.add(uri)
        document, _, pointer = uri.partition("#")
        node: Any = documents[document]
        for part in filter(None, pointer.split("/")):
            node = node[part]
        _keywords(node if pointer else {k: v for k, v in node.items() if k != "$defs"}, found)
        for sub in _schema_nodes(node):
            if isinstance(sub.get("$ref"), str):
                target, _, where = sub["$ref"].partition("#")
                pending.append(f"{base}{target}#{where}" if target else f"{document}#{where}")
    return found


def _refusing_keywords(checker: Any, record: Any) -> set[str]:
    """Every keyword on the schema path of every error jsonschema finds (nested ones too)."""
    found: set[str] = set()
    pending = list(checker.iter_errors(record))
    while pending:
        error = pending.pop()
        found.update(part for part in error.schema_path if isinstance(part, str))
        found.add(str(error.validator))
        pending += error.context or []
    return found & ASSERTING


def _known_stricter(value: Any) -> bool:
    """Whether ``value`` holds what jsonschema-rs refuses and jsonschema may pass: a string
    ending in a newline (``$`` in Python's ``re`` matches before it) or one with a lone
    surrogate (which it cannot encode)."""
    if isinstance(value, str):
        return value.endswith("\n") or any("\ud800" <= char <= "\udfff" for char in value)
    if isinstance(value, dict):
        return any(_known_stricter(key) or _known_stricter(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_known_stricter(item) for item in value)
    return False


@dataclass
class Tally:
    """How the two validators answered the mutants of one schema."""

    both_valid: int = 0
    both_refused: int = 0
    only_compiled_refused: int = 0  # stricter: jsonschema decides (a cost, not an error)
    only_jsonschema_refused: list[str] = field(default_factory=list)  # looser: a failure
    unexplained_stricter: list[str] = field(default_factory=list)
    other_message: list[str] = field(default_factory=list)
    refusing: set[str] = field(default_factory=set)


@cache
def _tally(name: str) -> Tally:
    rng = random.Random(f"{SEED}:{name}")
    tally = Tally()
    checker = artifacts.validator(name)
    mutants = [_mutant(name, rng) for _ in range(MUTANTS_PER_SCHEMA)]
    swept = _swept(name, rng)
    for record in mutants + swept:
        python = checker.is_valid(record)
        try:
            compiled = artifacts.fast_validator(name).is_valid(record)
        except ValueError:  # a lone surrogate it cannot encode: validate() asks jsonschema
            compiled = False
        shown = repr(record)[:2000]
        if python and compiled:
            tally.both_valid += 1
        elif python:
            tally.only_compiled_refused += 1
            if not _known_stricter(record):
                tally.unexplained_stricter.append(shown)
        elif compiled:
            tally.only_jsonschema_refused.append(shown)
        else:
            tally.both_refused += 1
        if not python:
            tally.refusing |= _refusing_keywords(checker, record)
        if _outcome(artifacts.validate, record, name) != _outcome(_old_validate, record, name):
            tally.other_message.append(shown)
    print(
        f"{name}: {len(mutants)} mutants and {len(swept)} swept: both valid {tally.both_valid}, "
        f"both refused {tally.both_refused}, only jsonschema-rs refused "
        f"{tally.only_compiled_refused}, only jsonschema refused "
        f"{len(tally.only_jsonschema_refused)}"
    )
    return tally


def test_the_schemas_use_only_the_keywords_checked_here() -> None:
    used: set[str] = set()
    for _, schema in artifacts._schema_documents():
        _keywords(schema, used)
    assert used <= CHECKED_KEYWORDS, f"new keywords to check: {used - CHECKED_KEYWORDS}"


def test_no_schema_uses_format() -> None:
    """``format`` is where the two would part: jsonschema checks a format only when an optional
    package for it is installed (rfc3339-validator, rfc3987...), jsonschema-rs checks every one
    it knows. A schema that starts using ``format`` must first be made to check alike."""
    used: set[str] = set()
    for _, schema in artifacts._schema_documents():
        _keywords(schema, used)
    assert "format" not in used


@pytest.mark.parametrize(("name", "record"), _examples())
def test_both_validators_pass_every_example_record(name: str, record: dict[str, Any]) -> None:
    assert artifacts.fast_validator(name).is_valid(record)
    assert artifacts.validator(name).is_valid(record)


@pytest.mark.parametrize("name", sorted({name for name, _ in _examples()}))
def test_the_compiled_check_never_passes_what_jsonschema_refuses(name: str) -> None:
    tally = _tally(name)
    assert not tally.only_jsonschema_refused, (
        f"jsonschema-rs passed {len(tally.only_jsonschema_refused)} {name} records jsonschema "
        f"refuses, e.g. {tally.only_jsonschema_refused[:3]}"
    )
    assert not tally.other_message, f"validate() now answers otherwise: {tally.other_message[:3]}"
    # Where it is stricter, for a known reason only (_known_stricter). Another reason costs
    # speed, not correctness: say it in artifacts.fast_validator's docstring and here.
    assert not tally.unexplained_stricter, f"stricter, new reason: {tally.unexplained_stricter[:3]}"
    # Neither side of the comparison is empty: mutants both pass and both fail.
    assert tally.both_valid >= MUTANTS_PER_SCHEMA // 20
    assert tally.both_refused >= MUTANTS_PER_SCHEMA // 4
    # And the mutants reach every keyword of the schema (and of what it refers to) that can
    # refuse a value: each is seen refusing at least one of them.
    unreached = (_reachable_keywords(name) & ASSERTING) - tally.refusing
    assert not unreached, f"no {name} mutant was refused by {sorted(unreached)}"
