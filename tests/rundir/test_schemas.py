"""The artifact schemas: well-formed, shipped with the package, and strict where it matters."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from blindtest.errors import BadInput
from blindtest.rundir import artifacts

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILES = sorted((ROOT / "schemas").glob("*.schema.json"))


def _name_and_major(path: Path) -> tuple[str, int]:
    """``report.schema.json`` -> ("report", 1); ``report@2.schema.json`` -> ("report", 2)."""
    name, _, major = path.name.removesuffix(".schema.json").partition("@")
    return name, int(major or 1)


def test_every_artifact_has_a_schema() -> None:
    # Each major version its own file (a new major version is a new file, never an edited one).
    found = {_name_and_major(p) for p in SCHEMA_FILES}
    expected = {
        (name, major) for name, majors in artifacts.SCHEMA_MAJORS.items() for major in majors
    }
    assert found == {*expected, ("common", 1)}
    for name, major in expected:
        assert artifacts.schema_file(name, major) in {p.name for p in SCHEMA_FILES}


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_schema_is_valid_2020_12_with_id_and_version_const(path: Path) -> None:
    schema = orjson.loads(path.read_bytes())
    Draft202012Validator.check_schema(schema)
    assert schema["$id"].endswith(f"/schemas/{path.name}")
    if path.name != "common.schema.json":
        name, major = _name_and_major(path)
        assert schema["properties"]["schema"] == {"const": f"blindtest/{name}@{major}"}


def test_the_installed_package_reads_the_schemas_dir_itself() -> None:
    # schemas/ is the one source: the package reaches it through a link
    # (blindtest/rundir/schemas -> ../../schemas), which a wheel build follows, so no copy is
    # kept by hand.
    shipped = resources.files("blindtest").joinpath("rundir/schemas")
    names = sorted(entry.name for entry in shipped.iterdir() if entry.name.endswith(".json"))
    assert names == [p.name for p in SCHEMA_FILES]
    for path in SCHEMA_FILES:
        assert shipped.joinpath(path.name).read_bytes() == path.read_bytes(), path.name
    assert os.readlink(ROOT / "blindtest" / "rundir" / "schemas") == "../../schemas"
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"rundir/schemas/*.json"' in pyproject


RESPONSE_OK: dict[str, Any] = {
    "schema": "blindtest/responses@1",
    "trial": 1,
    "slot": 2,
    "side": "A",
    "model": "m",
    "status": "ok",
    "text": "hello",
    "finish_reason": "stop",
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    "latency_ms": 12.5,
    "attempts": 1,
}
TRIAL: dict[str, Any] = {
    "schema": "blindtest/trials@1",
    "trial": 1,
    "prompt": "p",
    "options": ["x", "y", "z"],
}
PICK: dict[str, Any] = {"schema": "blindtest/picks@1", "trial": 3, "judge": "ana", "pick": 2}

VALID = [
    ("responses", RESPONSE_OK),
    ("responses", RESPONSE_OK | {"status": "failed", "text": None, "error": "HTTP 500"}),
    ("responses", RESPONSE_OK | {"side": "alpha"}),
    ("trials", TRIAL),
    ("trials", TRIAL | {"options": ["x", "y"]}),
    ("picks", PICK),
    ("picks", PICK | {"pick": "tie", "reason": "both fine", "confidence": 0.5}),
    ("picks", PICK | {"pick": "Bolt", "nicknames": ["Bolt", "Moss"]}),
]
INVALID = [
    ("responses", RESPONSE_OK | {"status": "failed"}, "'error' is a required"),
    ("responses", RESPONSE_OK | {"status": "ok", "text": None}, "/text"),
    # A side is A, B or a candidate's name (which of them a row may name is its design's to
    # say: bt-generate refuses a row whose side its design does not have).
    ("responses", RESPONSE_OK | {"side": "C D"}, "/side"),
    ("responses", RESPONSE_OK | {"side": "-x"}, "/side"),
    ("responses", RESPONSE_OK | {"slot": 4}, "/slot"),
    ("trials", TRIAL | {"side": "A"}, "Additional properties"),
    ("trials", TRIAL | {"model": "gpt"}, "Additional properties"),
    ("trials", TRIAL | {"options": ["only one"]}, "/options"),
    ("picks", PICK | {"pick": 0}, "/pick"),
    ("picks", PICK | {"trial": 0}, "/trial"),
    ("picks", PICK | {"confidence": 1.5}, "/confidence"),
    ("picks", {k: v for k, v in PICK.items() if k != "judge"}, "judge"),
]


@pytest.mark.parametrize(("name", "record"), VALID)
def test_valid_examples_pass(name: str, record: dict[str, Any]) -> None:
    artifacts.validate(record, name, name)


@pytest.mark.parametrize(("name", "record", "fragment"), INVALID)
def test_invalid_examples_fail_naming_the_field(
    name: str, record: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(BadInput) as caught:
        artifacts.validate(record, name, f"{name}.jsonl:4")
    message = str(caught.value)
    assert message.startswith(f"{name}.jsonl:4: ")
    assert fragment in message
