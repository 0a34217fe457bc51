"""the artifacts at the JSON boundary are TypedDicts that mirror the schemas.

Every property of each schema is a key of its TypedDict and every key a property (required
ones required, optional ones optional), so a field added to one and not the other fails here.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from blindtest.rundir import types

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def _schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMAS / f"{name}.schema.json").read_text("utf-8"))
    if name == "report":  # one TypedDict for both majors: report@1 and a preference report@2
        later = json.loads((SCHEMAS / "report@2.schema.json").read_text("utf-8"))
        required = set(loaded["required"]) & set(later["required"])
        loaded = {
            **loaded,
            "properties": {**loaded["properties"], **later["properties"]},
            "required": sorted(required),
        }
    return loaded


def _object(name: str, *path: str) -> dict[str, Any]:
    """The object schema at ``path`` inside schema ``name`` (``$defs`` and ``properties``)."""
    node = _schema(name)
    for step in path:
        node = node[step]
    return node


#: (schema object, its TypedDict)
MIRRORS = [
    (("design",), types.DesignRecord),
    (("design", "properties", "judging"), types.DesignJudging),
    (("design", "properties", "arrangement", "items"), types.ArrangementEntry),
    (("responses",), types.ResponseRow),
    (("common", "$defs", "usage"), types.UsageRecord),
    (("common", "$defs", "interval"), types.IntervalRecord),
    (("trials",), types.TrialRecord),
    (("picks",), types.PickRecord),
    (("audit",), types.AuditRecord),
    (("generation",), types.GenerationRecord),
    (("report",), types.ReportRecord),
]


@pytest.mark.parametrize(("where", "typed"), MIRRORS, ids=[typed.__name__ for _, typed in MIRRORS])
def test_every_schema_property_is_a_key_of_its_typeddict_and_back(
    where: tuple[str, ...], typed: Any
) -> None:
    schema = _object(*where)
    properties = set(schema["properties"])
    required = set(schema.get("required", ()))
    keys = set(typed.__required_keys__) | set(typed.__optional_keys__)
    assert sorted(properties - keys) == [], f"in the schema, not in {typed.__name__}"
    assert sorted(keys - properties) == [], f"in {typed.__name__}, not in the schema"
    assert set(typed.__required_keys__) == required, "required keys differ"


def test_every_artifact_schema_has_a_typeddict() -> None:
    mirrored = {where[0] for where, _ in MIRRORS if len(where) == 1}
    # batches.json, e_values.jsonl and web-links.jsonl are written and read by one module each.
    unmirrored = {"common", "batches", "e_values", "web_links"}
    names = {
        p.name.removesuffix(".schema.json").split("@")[0] for p in SCHEMAS.glob("*.schema.json")
    }
    assert names - unmirrored == mirrored


def test_mypy_strict_catches_a_misspelt_key(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    code = textwrap.dedent(
        """
        from blindtest.rundir.types import DesignRecord, PickRecord

        def question(design: DesignRecord) -> str:
            return design["judging"]["questoin"]

        def pick(record: PickRecord) -> bool:
            return record["corection"] is True
        """
    )
    source = tmp_path / "misspelt.py"
    source.write_text(code, encoding="utf-8")
    out, _, status = api.run(
        ["--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), str(source)]
    )
    assert status == 1
    assert '"DesignJudging" has no key "questoin"' in out
    assert '"PickRecord" has no key "corection"' in out


def test_mypy_strict_catches_a_misspelt_report_key(tmp_path: Path) -> None:
    """build_report-like code: a protocol's fields, the report built from them, a key set later,
    one read by the result screen; each misspelling is a mypy error. (``.get`` with an unknown
    key is not one: mypy types it ``object``.)"""
    api = pytest.importorskip("mypy.api")
    code = textwrap.dedent(
        """
        from blindtest.rundir.types import AnalysisFields, ReportRecord

        def analysis(n: int) -> AnalysisFields:
            return {"n": n, "verdict": "void", "statement": "s.", "p_valeu": None}

        def report(fields: AnalysisFields) -> ReportRecord:
            built: ReportRecord = {
                "schema": "blindtest/report@1",
                "design_sha256": "0" * 64,
                "inputs": {},
                "protocol": "triangle",
                "n": fields["n"],
                "verdict": fields["verdict"],
                "statement": fields["statement"],
                "chanels_closed": [],
            }
            built["picks_verdcit"] = built["verdict"]
            return built

        def screen(report: ReportRecord) -> list[str]:
            return report["chanels_open"]
        """
    )
    source = tmp_path / "misspelt_report.py"
    source.write_text(code, encoding="utf-8")
    out, _, status = api.run(
        ["--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), str(source)]
    )
    assert status == 1
    assert 'Extra key "p_valeu" for TypedDict "AnalysisFields"' in out
    assert 'Extra key "chanels_closed" for TypedDict "ReportRecord"' in out
    assert '"ReportRecord" has no key "picks_verdcit"' in out
    assert '"ReportRecord" has no key "chanels_open"' in out
