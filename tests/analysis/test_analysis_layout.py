"""the analysis split by job with one loader, render
apart from the analysis, and the shared protocol table, scoring and report formatting."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from blindtest import reportfmt
from blindtest.model import protocols, scoring
from blindtest.model.picks import Pick
from blindtest.stats.similarity import GUESS

from report_runs import (
    balanced_outcomes,
    make_design,
    pair_picks,
    preference_picks,
    triangle_picks,
)

PACKAGE = Path(__file__).resolve().parents[2] / "blindtest"
#: What opening a file looks like in this code base.
FILE_CALLS = {"open", "read_json", "read_jsonl", "read_bytes", "read_text", "exists", "sha256_file"}
#: The stage function (the lock, the outputs claimed and written) sits beside the analysis.
STAGE = "stage.py"


def imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def calls(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            out.add(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
    return out


@pytest.mark.parametrize(
    "module",
    sorted(p.name for p in (PACKAGE / "analysis").glob("*.py") if p.name not in ("load.py", STAGE)),
)
def test_the_pure_analysis_modules_open_no_file(module: str) -> None:
    assert calls(PACKAGE / "analysis" / module) & FILE_CALLS == set()


def test_loading_the_run_directory_happens_in_one_module() -> None:
    loaders = [p.name for p in (PACKAGE / "analysis").glob("*.py") if calls(p) & FILE_CALLS]
    assert sorted(loaders) == ["load.py", STAGE]


def test_render_does_not_import_the_analysis() -> None:
    names = imported(PACKAGE / "present" / "render.py")
    assert not {n for n in names if n.startswith(("blindtest.analy", "blindtest.stats"))}
    assert "blindtest.reportfmt" in names


def test_shared_modules_import_no_stage() -> None:
    stages = ("designing", "generation", "judging", "auditing", "analysis", "planning", "pipeline")
    shared = ("model/protocols.py", "model/scoring.py", "reportfmt.py", "model/picks.py")
    for module in (*shared, "model/bots.py"):
        names = imported(PACKAGE / module)
        assert not {n for n in names if n.split(".")[1:2] in ([s] for s in stages)}, module


def test_the_protocol_table_agrees_with_the_old_constants() -> None:
    # What judge.OPTION_COUNT said before the judge stage read the table, and
    # stats' GUESS until its module does.
    old_option_count = {"triangle": 3, "pair": 2, "preference": 2}
    for name, protocol in protocols.PROTOCOLS.items():
        assert protocol.options == old_option_count[name]
        assert len(protocol.labels) == protocol.options
        if name in GUESS:
            assert math.isclose(protocol.chance, GUESS[name])
    assert protocols.PREFERENCE.picks == ("left", "right", "tie")  # judge.PREFERENCE_PICKS


@pytest.mark.parametrize("protocol", ["triangle", "pair", "preference"])
def test_slot_layout_puts_each_side_where_the_arrangement_says(protocol: str) -> None:
    design = make_design(protocol, 12)
    for entry in design["arrangement"]:
        sides = protocols.protocol_of(design).slot_sides(entry)
        if protocol == "triangle":
            odd = "B" if entry["doubled"] == "A" else "A"
            assert sides[entry["odd_position"] - 1] == odd
            assert sides.count(entry["doubled"]) == 2
        else:
            assert sides == (entry["left"], "B" if entry["left"] == "A" else "A")


def test_scoring_is_the_judge_stages_scoring() -> None:
    # The recorder (the judge stage's hidden stopping rule) scores through blindtest.model.scoring,
    # as the analysis does: no second copy of the rule.
    assert "blindtest.model.scoring" in imported(PACKAGE / "judging" / "recorder.py")
    triangle = make_design("triangle", 12)
    found = {1, 4, 5, 9}
    for record in triangle_picks(triangle, found):
        pick = Pick.from_record(record)
        assert scoring.triangle_correct(triangle, pick.trial, pick.pick) == (pick.trial in found)
    preference = make_design("preference", 12)
    sides = []
    for record in preference_picks(preference, balanced_outcomes(preference, 5, 4)):
        pick = Pick.from_record(record)
        sides.append(scoring.preferred_side(preference, pick.trial, pick.pick))
    assert (sides.count("A"), sides.count("B")) == (5, 4)
    pair = make_design("pair", 12)
    records = pair_picks(pair, {2, 3, 7})
    consistent = scoring.pair_consistent_count(
        pair, ((r["trial"], r["pick"]) for r in records), "Xavier"
    )
    assert consistent == 3


def test_one_percent_formatter_and_it_handles_nan() -> None:
    assert reportfmt.pct(0.534) == "53%"
    assert reportfmt.pct(None) == "?"
    assert reportfmt.pct(math.nan) == "?"
    for module in PACKAGE.rglob("*.py"):
        tree = ast.parse(module.read_text())
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert "_pct" not in defined, module
