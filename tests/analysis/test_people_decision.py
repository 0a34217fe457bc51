"""A release decision pre-registered beside a people's sample is decided on the people's
prediction-powered estimate of the challenger's mean score (a tie 1/2): shown 0, refuted 4,
not settled 5, a void people's sample 1; no sensitivity check (the people's gates apply), the
screen says the decision was made on the people's estimate, and bt-verify recomputes it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from junitparser import Failure, JUnitXml

from blindtest.model.people_sample import people_trials
from blindtest.model.picks import load_judge_run
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator
from blindtest.stats.decision import interval_outcome
from blindtest.stats.intervals import Interval
from blindtest.stats.multiple import holm

from conftest import Invoke
from judge_runs import write_picks
from llm_runs import llm

PROMPTS = 24
SAMPLE = 12


def _run(invoke: Invoke, tmp_path: Path, url: str, rule: str, *extra: Any) -> Path:
    source = tmp_path / "prompts.txt"
    source.write_text("".join(f"Question {i}: say something about {i}.\n" for i in range(PROMPTS)))
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--prompts", source, "--protocol", "preference", "--trials", PROMPTS,
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", "ppi",
        "--people-sample", SAMPLE, "--decide", rule, *extra,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    generated = invoke("generate", run, "--quiet")
    assert generated.exit_code == 0, generated.output
    judged = llm(
        invoke, run, "sim-judge-fair", "--out", run / "picks-sim-judge-fair.jsonl", url=url
    )
    assert judged.exit_code == 0, judged.output
    return run


def _people(run: Path, script: str, leave_out: int = 0) -> None:
    """A scripted person on the sample: ``script`` is cycled over the sampled comparisons,
    each letter the side preferred (``A``, ``B``), ``=`` for a tie, ``L`` the left answer."""
    loaded = load_judge_run(run)
    sampled = list(people_trials(loaded.design) or ())[: -leave_out or None]
    key = {e["trial"]: e for e in loaded.design["arrangement"]}
    rows = []
    for i, trial in enumerate(sampled):
        wanted = script[i % len(script)]
        if wanted in "=L":  # a tie, or whatever is on the left
            pick = "tie" if wanted == "=" else "left"
        else:
            pick = "left" if key[trial]["left"] == wanted else "right"
        rows.append(
            {"trial": trial, "judge": "ann", "pick": pick, "reason": "read both",
             "judge_kind": "human", "design_sha256": loaded.design_sha256}
        )  # fmt: skip
    write_picks(run / "picks.jsonl", rows)


def _decision(run: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((run / artifacts.REPORT).read_text())["decision"]
    return found


@pytest.mark.parametrize(
    ("rule", "script", "code", "outcome"),
    [
        # people prefer the challenger: not worse by more than the margin
        ("noninferior:0.1", "B", 0, "shown"),
        # people prefer the champion every time: worse beyond the margin
        ("noninferior:0.1", "A", 4, "refuted"),
        # an even split on 12 people's judgements: too wide to call
        ("noninferior:0.1", "AB=", 5, "not_shown"),
        ("superior", "B", 0, "shown"),
        ("equivalent:0.2", "A", 4, "refuted"),
    ],
)
def test_a_decision_on_the_people_estimate_gives_its_exit_code(
    invoke: Invoke,
    tmp_path: Path,
    simulator: Simulator,
    rule: str,
    script: str,
    code: int,
    outcome: str,
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url, rule)
    _people(run, script)
    analysed = invoke("analyze", run)
    assert analysed.exit_code == code, analysed.output
    decision = _decision(run)
    assert decision["estimand"] == "people-mean-score"
    assert decision["outcome"] == outcome
    assert decision["sensitivity"] is None
    assert "the people's gates (position, agreement) apply instead" in decision["sensitivity_note"]
    assert not {w["code"] for w in decision["warnings"]} & {"sensitivity.missing"}
    (item,) = decision["decisions"]
    assert item["challenger"] == "B"
    assert item["interval_level"] == pytest.approx(0.9)
    assert item["people_judged"] == SAMPLE
    assert item["comparisons"] == PROMPTS
    # the interval is the people's estimate's own at the decision's level, for B over A
    record = json.loads((run / artifacts.REPORT).read_text())["people_estimate"]
    assert item["result"] == record["decision"]["B"]
    bounds = item["interval"]
    assert interval_outcome(rule, Interval(bounds["estimate"], bounds["lo"], bounds["hi"])) == (
        outcome
    )
    pair = record["pairs"][0]  # A over B at 95%: B's 90% interval lies inside its mirror
    assert 1 - pair["interval"]["hi"] <= bounds["lo"]
    assert bounds["hi"] <= 1 - pair["interval"]["lo"]
    screen = " ".join(analysed.stdout.split())
    assert f"{rule} on the people's mean score (a tie 1/2), estimated by" in screen
    assert "prediction-powered inference from people on the design's sample" in screen
    assert f"{PROMPTS} comparisons (people judged {SAMPLE}, the judge all)" in screen
    assert f"exit {code}:" in screen
    verified = invoke("verify", run)
    assert verified.exit_code == 0, verified.output


def test_a_void_people_sample_leaves_the_decision_without_a_result(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url, "noninferior:0.1")
    _people(run, "B", leave_out=1)
    analysed = invoke("analyze", run)
    assert analysed.exit_code == 1, analysed.output
    decision = _decision(run)
    assert (decision["outcome"], decision["exit_code"]) == ("no_result", 1)
    assert decision["estimand"] == "people-mean-score"


def test_without_the_judge_the_people_decision_has_no_result(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url, "superior")
    (run / "picks-sim-judge-fair.jsonl").unlink()
    _people(run, "B")
    analysed = invoke("analyze", run)
    assert analysed.exit_code == 1, analysed.output
    (item,) = _decision(run)["decisions"]
    assert item["outcome"] == "no_result"
    assert "no prediction-powered estimate of the people's score" in item["reasons"][0]


def test_without_the_people_picks_the_people_decision_says_they_are_what_is_missing(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url, "superior")
    analysed = invoke("analyze", run, "--picks", run / "picks-sim-judge-fair.jsonl")
    assert analysed.exit_code == 1, analysed.output
    (item,) = _decision(run)["decisions"]
    assert item["outcome"] == "no_result"
    assert "no people's picks on the sample" in item["reasons"][0]
    assert "--against" not in item["reasons"][0].split(":", 2)[1]


def test_under_the_bound_rule_the_decision_reads_the_worst_case_interval(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url, "noninferior:0.1", "--people-missing", "bound")
    _people(run, "B", leave_out=1)
    analysed = invoke("analyze", run)
    decision = _decision(run)
    (item,) = decision["decisions"]
    record = json.loads((run / artifacts.REPORT).read_text())["people_estimate"]["decision"]["B"]
    assert record["status"] == "bounded"
    assert item["estimate"] is None
    assert item["people_judged"] == SAMPLE - 1
    assert "bounded by the worst case" in item["note"]
    bounds = item["interval"]
    expected = interval_outcome("noninferior:0.1", Interval(math.nan, bounds["lo"], bounds["hi"]))
    assert item["outcome"] == expected
    assert analysed.exit_code in (0, 5)  # the serious estimate.bounded warning is no gate
    assert (
        "people's mean score, bounded by the worst case, prediction-powered, 90% interval"
        in " ".join(analysed.stdout.split())
    )


def test_bt_verify_names_a_changed_people_decision(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url, "noninferior:0.1")
    _people(run, "A")
    assert invoke("analyze", run).exit_code == 4
    report = json.loads((run / artifacts.REPORT).read_text())
    report["decision"]["decisions"][0]["outcome"] = "shown"
    (run / artifacts.REPORT).write_text(json.dumps(report))
    verified = invoke("verify", run)
    assert verified.exit_code == 1
    assert "report.json/decision" in verified.stdout + verified.stderr


def test_a_people_gate_that_fails_leaves_the_decision_without_a_result(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url, "noninferior:0.1")
    _people(run, "L")  # a person who always picks the left answer: the position gate fails
    analysed = invoke("analyze", run)
    assert analysed.exit_code == 1, analysed.output
    decision = _decision(run)
    assert decision["outcome"] == "no_result"
    people_gates = decision["gates"][1]
    assert people_gates["gate"].startswith("the people's gates")
    assert not people_gates["passed"]


def test_junit_reports_the_people_decision_with_its_headline(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url, "noninferior:0.1")
    _people(run, "AB=")
    out = tmp_path / "decision.xml"
    assert invoke("analyze", run, "--junit", out, "--quiet").exit_code == 5
    (suite,) = list(JUnitXml.fromfile(str(out)))
    (case,) = list(suite)
    assert str(case.name) == "noninferior:0.1: B against A"
    (failure,) = [r for r in case.result if isinstance(r, Failure)]
    assert "NOT SHOWN, nor its opposite (people's mean score 50%, prediction-powered" in str(
        failure.message
    )


def _three(invoke: Invoke, tmp_path: Path, url: str) -> Path:
    """Champion x against challengers y and z, a people's sample of 12 of 24 prompts."""
    source = tmp_path / "prompts.txt"
    source.write_text("".join(f"Question {i}: say something about {i}.\n" for i in range(PROMPTS)))
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--prompts", source, "--candidate", "x=sim-large", "--candidate",
        "y=sim-small", "--candidate", "z=sim-small", "--pairs", "reference:x", "--url", url,
        "--seed", "ppi3", "--people-sample", SAMPLE, "--decide", "noninferior:0.1",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    picks = run / "picks-sim-judge-fair.jsonl"
    judged = llm(invoke, run, "sim-judge-fair", "--out", picks, url=url)
    assert judged.exit_code == 0, judged.output
    loaded = load_judge_run(run)
    sides = {e["trial"]: e for e in loaded.design["arrangement"]}
    rows = []
    for trial in people_trials(loaded.design) or ():
        left, right = sides[trial]["left"], sides[trial]["right"]
        wanted = "z" if "z" in (left, right) else "x"  # people prefer z to x, and x to y
        rows.append(
            {"trial": trial, "judge": "ann", "pick": "left" if left == wanted else "right",
             "reason": "read both", "judge_kind": "human",
             "design_sha256": loaded.design_sha256}
        )  # fmt: skip
    write_picks(run / "picks.jsonl", rows)
    return run


def test_several_challengers_on_the_people_estimate_are_decided_by_holm(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _three(invoke, tmp_path, simulator.base_url)
    analysed = invoke("analyze", run)
    assert analysed.exit_code == 4, analysed.output  # the worst of the two: y is refuted
    decision = _decision(run)
    items = {item["challenger"]: item for item in decision["decisions"]}
    assert (items["y"]["outcome"], items["z"]["outcome"]) == ("refuted", "shown")
    record = json.loads((run / artifacts.REPORT).read_text())["people_estimate"]["decision"]
    raw = [record[name]["p_value"] for name in ("y", "z")]
    refute = [record[name]["p_refute"] for name in ("y", "z")]
    for j, name in enumerate(("y", "z")):
        item = items[name]
        assert item["adjustment"] == "holm:2"
        assert item["interval_level"] == pytest.approx(0.9)  # unadjusted, as every decision's
        assert item["p_value"] == pytest.approx(holm(raw)[j], rel=1e-12)
        assert item["p_value_unadjusted"] == pytest.approx(raw[j], rel=1e-12)
        assert item["p_refute"] == pytest.approx(holm(refute)[j], rel=1e-12)
        assert record[name]["method"] == "people-exact"  # 12 people's judgements: a p all the same
    assert "(Holm across challengers)" in " ".join(analysed.stdout.split())
    assert invoke("verify", run).exit_code == 0
    report = json.loads((run / artifacts.REPORT).read_text())
    report["decision"]["decisions"][1]["adjustment"] = "bonferroni:2"
    (run / artifacts.REPORT).write_text(json.dumps(report))
    verified = invoke("verify", run)
    assert verified.exit_code == 1
    assert "report.json/decision" in verified.stdout + verified.stderr
