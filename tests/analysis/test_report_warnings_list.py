"""A preference report's top-level ``warnings``: every warning the report says anywhere, in one
list with a stable code (docs/formats.md lists them all), a severity, the message as its section
says it, and the judge it concerns; serious ones first."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from blindtest.analysis.warnings import CODES, SERIOUS
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke
from llm_runs import llm
from llm_runs import make_run as make_llm_run
from report_runs import load, make_run, preference_picks, read_report, write_picks

ROOT = Path(__file__).resolve().parents[2]


def test_every_code_is_listed_in_the_docs_and_every_listed_code_exists() -> None:
    table = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    listed = dict(re.findall(r"^\| `([a-z_]+\.[a-z_]+)` \| (serious|notice) \|", table, re.M))
    assert listed == {code: severity for code, (severity, _) in CODES.items()}


def _analyze(invoke: Invoke, run: Path, *args: Any) -> tuple[int, dict[str, Any]]:
    result = invoke("analyze", run, "--force", *args)
    return result.exit_code, read_report(run)


def test_a_failed_position_gate_heads_the_list_and_an_unbounded_lean_is_a_notice(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = make_run(tmp_path, "preference", 20)
    design = load(run)
    # Every pick on the left: the left share is shown beyond the margin, the run says nothing.
    write_picks(run / artifacts.PICKS, [dict(p, pick="left") for p in preference_picks(
        design, dict.fromkeys(range(1, 21), "A"))])  # fmt: skip
    code, report = _analyze(invoke, run)
    assert code == 1
    assert report["verdict"] == "unusable"
    (gate,) = [w for w in report["warnings"] if w["code"].startswith("gate.")]
    assert gate == {
        "code": "gate.position",
        "severity": SERIOUS,
        "title": CODES["gate.position"][1],
        "message": report["gates_failed"][0],
    }
    assert report["warnings"][0] == gate
    # Left 10 of 16 untied (62%) over 16 comparisons: no lean shown (sign-flip p = 0.45) and
    # too few comparisons to bound it within the margin: a notice, and the result stands.
    picks = preference_picks(design, dict.fromkeys(range(1, 21), "A"))
    rights = [n for n, p in enumerate(picks) if p["pick"] == "right"]
    for n in rights[6:]:
        picks[n] = dict(picks[n], pick="tie")
    write_picks(run / artifacts.PICKS, picks)
    code, report = _analyze(invoke, run)
    assert code == 0
    bias = report["position_bias"]
    assert (bias["left"], bias["right"], bias["comparisons"]) == (10, 6, 16)
    assert (bias["verdict"], bias["significant"]) == ("warn", False)
    (notice,) = report["warnings"]
    assert notice["code"] == "position.margin"
    assert notice["severity"] == "notice"
    assert notice["message"] == bias["statement"]
    assert notice["message"].startswith("Position: left chosen in 62.5% of untied picks over 16")
    assert "a note, not a fault" in notice["message"]
    assert all(w["severity"] != SERIOUS for w in report["warnings"])


def test_an_llm_judge_that_follows_length_is_a_serious_warning_at_the_top_naming_it(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = make_llm_run(invoke, simulator.base_url, tmp_path / "run", "preference", trials=12)
    out = run / "picks-longer.jsonl"
    judged = llm(invoke, run, "sim-judge-longer", "--out", out, url=simulator.base_url)
    assert judged.exit_code == 0, judged.output
    _, report = _analyze(invoke, run, "--picks", out)
    (diagnostics,) = report["llm_judges"]["judges"]
    said = next(w for w in diagnostics["warnings"] if w.startswith("length:"))
    found = [w for w in report["warnings"] if w["code"] == "llm.length"]
    assert found == [
        {
            "code": "llm.length",
            "severity": SERIOUS,
            "title": CODES["llm.length"][1],
            "message": said,
            "judge": diagnostics["judge"],
        }
    ]
    assert set(CODES) >= {w["code"] for w in report["warnings"]}
    severities = [w["severity"] for w in report["warnings"]]
    assert severities == sorted(severities, key=lambda s: s != SERIOUS)
