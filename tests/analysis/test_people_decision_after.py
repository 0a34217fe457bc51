"""A decision given to bt-analyze after the fact on a design with a people's sample is made as
a pre-registered one is: on the people's prediction-powered estimate (the LLM judge on every
comparison), not on the people's picks of the sample alone; it is labelled not pre-registered
(exit 5 at best), refused with what to type when no LLM judge's picks are there, and bt-verify
recomputes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from blindtest.model.people_sample import people_trials
from blindtest.model.picks import load_judge_run
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator
from blindtest.stats.decision import decide, interval_outcome
from blindtest.stats.intervals import Interval

from conftest import Invoke
from judge_runs import write_picks
from llm_runs import llm

PROMPTS = 24
SAMPLE = 12
JUDGE = "picks-sim-judge-fair.jsonl"


def _run(
    invoke: Invoke, tmp_path: Path, url: str, prompts: int = PROMPTS, sample: int = SAMPLE
) -> Path:
    """A design with a people's sample and no decision; the LLM judge on every comparison."""
    source = tmp_path / "prompts.txt"
    source.write_text("".join(f"Question {i}: say something about {i}.\n" for i in range(prompts)))
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--prompts", source, "--protocol", "preference", "--trials", prompts,
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", "ppi",
        "--people-sample", sample,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    judged = llm(invoke, run, "sim-judge-fair", "--out", run / JUDGE, url=url)
    assert judged.exit_code == 0, judged.output
    return run


def _people(run: Path, script: str, leave_out: int = 0) -> None:
    """A scripted person on the sample: ``script`` cycled over the sampled comparisons, each
    letter the side preferred (``A``, ``B``), ``=`` a tie, ``J`` the LLM judge's verdict."""
    loaded = load_judge_run(run)
    sampled = list(people_trials(loaded.design) or ())[: -leave_out or None]
    key = {e["trial"]: e for e in loaded.design["arrangement"]}
    judge = {
        r["trial"]: r["pick"]
        for r in map(json.loads, (run / JUDGE).read_text().splitlines())
        if r.get("pass", 1) == 1 and "pick" in r
    }
    rows = []
    for i, trial in enumerate(sampled):
        wanted = script[i % len(script)]
        if wanted in "J=":
            pick = judge[trial] if wanted == "J" else "tie"
        else:
            pick = "left" if key[trial]["left"] == wanted else "right"
        rows.append(
            {"trial": trial, "judge": "ann", "pick": pick, "reason": "read both",
             "judge_kind": "human", "design_sha256": loaded.design_sha256}
        )  # fmt: skip
    write_picks(run / "picks.jsonl", rows)


def _report(run: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((run / artifacts.REPORT).read_text())
    return found


def _people_alone(run: Path, rule: str) -> set[str]:
    """What bt-analyze --decide used to decide on such a design: the people's picks of the
    sample alone, on B's untied share (its default) or its mean score (exact tests)."""
    loaded = load_judge_run(run)
    key = {e["trial"]: e for e in loaded.design["arrangement"]}
    scores = []
    for line in (run / "picks.jsonl").read_text().splitlines():
        pick = json.loads(line)
        left = key[pick["trial"]]["left"]
        if pick["pick"] == "tie":
            scores.append(0.5)
        else:
            scores.append(float((left == "B") == (pick["pick"] == "left")))
    return {
        decide(scores, rule, alpha=0.05, estimand=estimand).outcome
        for estimand in ("untied-share", "mean-score")
    }


def test_a_decision_after_the_fact_follows_the_prediction_powered_estimate(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    # 30 of 80 judged by a person who gives the judge's verdict four times in five and B the
    # fifth: on the person's 30 alone B's score (50%) is too uncertain to clear 40%; the
    # prediction-powered estimate, with the judge on the 50 others, shows it.
    run = _run(invoke, tmp_path, simulator.base_url, prompts=80, sample=30)
    _people(run, "JJJJB")
    analysed = invoke("analyze", run, "--decide", "noninferior:0.1")
    report = _report(run)
    decision = report["decision"]
    assert decision["pre_registered"] is False
    assert decision["estimand"] == "people-mean-score"
    (item,) = decision["decisions"]
    assert item["result"] == report["people_estimate"]["decision"]["B"]
    assert item["interval_level"] == pytest.approx(0.9)
    assert item["people_judged"] == 30
    assert item["result"]["method"] == "ppi-normal"
    assert _people_alone(run, "noninferior:0.1") == {"not_shown"}
    assert (item["outcome"], item["exit_code"]) == ("shown", 5)  # shown, not pre-registered
    assert interval_outcome("noninferior:0.1", Interval(**item["interval"])) == "shown"
    assert analysed.exit_code == 5, analysed.output
    screen = " ".join(analysed.stdout.split())
    assert "Decision (NOT PRE-REGISTERED): noninferior:0.1 on the people's mean score" in screen
    assert "exit 5: shown, but not pre-registered: a lead to pre-register" in screen
    assert "prediction-powered" in screen
    assert "decision.not_pre_registered" in {w["code"] for w in decision["warnings"]}
    assert invoke("verify", run).exit_code == 0


@pytest.mark.parametrize(
    ("rule", "script", "outcome", "code"),
    [
        ("noninferior:0.1", "B", "shown", 5),  # shown, but what was not designed exits 5
        ("noninferior:0.1", "A", "refuted", 4),
        ("noninferior:0.1", "AB=", "not_shown", 5),
    ],
)
def test_a_decision_after_the_fact_on_the_people_estimate_exits_as_any_such_decision(
    invoke: Invoke,
    tmp_path: Path,
    simulator: Simulator,
    rule: str,
    script: str,
    outcome: str,
    code: int,
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    _people(run, script)
    analysed = invoke("analyze", run, "--decide", rule)
    assert analysed.exit_code == code, analysed.output
    (item,) = _report(run)["decision"]["decisions"]
    assert (item["outcome"], item["exit_code"]) == (outcome, code)
    assert "NOT PRE-REGISTERED" in item["headline"]
    verified = invoke("verify", run)
    assert verified.exit_code == 0, verified.output


def test_a_void_people_sample_leaves_a_decision_after_the_fact_without_a_result(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    _people(run, "B", leave_out=1)
    analysed = invoke("analyze", run, "--decide", "noninferior:0.1")
    assert analysed.exit_code == 1, analysed.output
    decision = _report(run)["decision"]
    assert (decision["outcome"], decision["estimand"]) == ("no_result", "people-mean-score")


def test_without_a_judge_a_decision_after_the_fact_is_refused_with_what_to_type(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    _people(run, "B")
    (run / JUDGE).unlink()
    analysed = invoke("analyze", run, "--decide", "superior")
    assert analysed.exit_code == 2
    (line,) = analysed.stderr.strip().splitlines()
    assert "needs an LLM judge's picks on every comparison" in line
    assert f"add --against {run / 'picks-JUDGE.jsonl'}" in line
    assert "bt-judge" in line
    assert not (run / artifacts.REPORT).exists()


def test_another_estimand_after_the_fact_is_refused_on_a_people_sample(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    _people(run, "B")
    analysed = invoke("analyze", run, "--decide", "superior", "--estimand", "untied-share")
    assert analysed.exit_code == 2
    line = analysed.stderr.strip().splitlines()[-1]  # after "reading the LLM judge's picks"
    assert "--estimand untied-share: this design draws a people's sample" in line
    assert "drop --estimand" in line
    assert not (run / artifacts.REPORT).exists()


def test_bt_verify_names_a_changed_decision_after_the_fact(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    _people(run, "A")
    assert invoke("analyze", run, "--decide", "noninferior:0.1").exit_code == 4
    report = _report(run)
    assert report["analysis_options"]["decide"] == "noninferior:0.1"
    report["decision"]["decisions"][0]["interval"]["lo"] = 0.45
    (run / artifacts.REPORT).write_text(json.dumps(report))
    verified = invoke("verify", run)
    assert verified.exit_code == 1
    assert "report.json/decision" in verified.stdout + verified.stderr
