"""People on the design's sample, an LLM judge on every comparison: bt-analyze estimates what
people prefer (prediction-powered), says it on the screen and the page, keeps the judge's flaws
as warnings, never drops a sampled comparison people left unjudged, and bt-verify recomputes
it all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from blindtest.analysis.people_estimate import people_estimate
from blindtest.analysis.warnings import CODES, SERIOUS
from blindtest.model.people_sample import people_trials, predicted_score
from blindtest.model.picks import load_judge_run, read_picks
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator
from blindtest.stats.ppi import ppi_preference

from conftest import Invoke
from judge_runs import write_picks
from llm_runs import llm

PEOPLE_FILE = "picks.jsonl"


def _run(
    invoke: Invoke, tmp_path: Path, url: str, *design: Any, prompts: int = 24, sample: int = 10
) -> Path:
    source = tmp_path / "prompts.txt"
    source.write_text("".join(f"Question {i}: say something about {i}.\n" for i in range(prompts)))
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--prompts", source, "--protocol", "preference", "--trials", prompts,
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", "ppi",
        "--people-sample", sample, *design,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    generated = invoke("generate", run, "--quiet")
    assert generated.exit_code == 0, generated.output
    return run


def _people(run: Path, leave_out: int = 0) -> list[int]:
    """A scripted person on the sample: prefers A three times in four, else a tie."""
    loaded = load_judge_run(run)
    sampled = list(people_trials(loaded.design) or ())[: -leave_out or None]
    key = {e["trial"]: e for e in loaded.design["arrangement"]}
    rows = []
    for i, trial in enumerate(sampled):
        a_left = key[trial]["left"] == "A"
        pick = "tie" if i % 4 == 3 else "left" if a_left else "right"
        rows.append(
            {"trial": trial, "judge": "ann", "pick": pick, "reason": "read both",
             "judge_kind": "human", "design_sha256": loaded.design_sha256}
        )  # fmt: skip
    write_picks(run / PEOPLE_FILE, rows)
    return sampled


def _judge(invoke: Invoke, run: Path, url: str, model: str = "sim-judge-fair") -> Path:
    out = run / f"picks-{model}.jsonl"
    judged = llm(invoke, run, model, "--out", out, url=url)
    assert judged.exit_code == 0, judged.output
    return out


def _report(run: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((run / artifacts.REPORT).read_text())
    return report


def test_the_people_estimate_is_in_the_report_the_screen_and_the_page_and_verifies(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    _people(run)
    _judge(invoke, run, simulator.base_url)
    analysed = invoke("analyze", run, "--html", tmp_path / "page.html")
    assert analysed.exit_code == 0, analysed.output
    assert "reading the LLM judge's picks beside the people's: picks-sim-judge-fair.jsonl" in (
        analysed.output
    )
    report = _report(run)
    section = report["people_estimate"]
    assert section["status"] == "complete"
    assert section["judge"] == "sim-judge-fair"
    assert section["sample"] | {} == {
        "size": 10, "by": "uniform", "comparisons": 10, "judged": 10, "outside": 0,
    }  # fmt: skip
    assert report["against_files"] == ["picks-sim-judge-fair.jsonl"]
    (pair,) = section["pairs"]
    assert (pair["first"], pair["second"], pair["n_sampled"]) == ("A", "B", 10)
    assert pair["result"]["n_unsampled"] == 14
    assert section["calibration"]["n"] == 10
    screen = " ".join(analysed.stdout.split())
    assert "24 comparisons (people judged 10, the judge all)" in screen
    assert "What people prefer, estimated from 10 of the 10 comparisons people judged" in screen
    assert "Why the judge cannot bias it" in screen
    assert "The judge against people on the sample: the same verdict on" in screen
    page = (tmp_path / "page.html").read_text()
    assert 'id="people-estimate"' in page
    assert set(CODES) >= {w["code"] for w in report["warnings"]}
    verified = invoke("verify", run)
    assert verified.exit_code == 0, verified.output
    assert "report.json from its inputs" in verified.stdout


def test_the_estimate_is_the_statistics_own_on_the_same_scores(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    sampled = _people(run)
    judge_file = _judge(invoke, run, simulator.base_url)
    loaded = load_judge_run(run)
    people = read_picks(run / PEOPLE_FILE, loaded.view).picks
    judge = read_picks(judge_file, loaded.view).picks
    section = people_estimate(loaded.design, people, judge)
    assert section is not None
    key = {e["trial"]: e for e in loaded.design["arrangement"]}

    def score(pick: Any) -> float:
        if pick.pick == "tie":
            return 0.5
        return float((key[pick.trial]["left"] == "A") == (pick.pick == "left"))

    mine = {p.trial: score(p) for p in people}
    theirs = {p.trial: predicted_score(score(p), None, "verdict") for p in judge}
    order = {prompt: i for i, prompt in enumerate(loaded.design["people_sample"]["prompts"])}
    drawn = sorted(sampled, key=lambda t: order[key[t]["prompt_id"]])
    rest = [t for t in sorted(key) if t not in set(sampled)]
    expected = ppi_preference(
        [mine[t] for t in drawn], [theirs[t] for t in drawn], [theirs.get(t, 0.5) for t in rest]
    ).to_dict()
    assert section["pairs"][0]["result"] == expected


def test_a_sampled_comparison_left_unjudged_voids_the_report_under_the_void_rule(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    _people(run, leave_out=1)
    _judge(invoke, run, simulator.base_url)
    analysed = invoke("analyze", run)
    assert analysed.exit_code == 1
    report = _report(run)
    assert report["verdict"] == "void"
    assert report["statement"].startswith(
        "Void: only 9 of the people's sample's 10 trials were judged."
    )
    assert "people_estimate" not in report


def test_under_the_bound_rule_a_missing_judgement_bounds_the_estimate_and_says_so(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url, "--people-missing", "bound")
    _people(run, leave_out=2)
    _judge(invoke, run, simulator.base_url)
    invoke("analyze", run)
    report = _report(run)
    (pair,) = report["people_estimate"]["pairs"]
    assert pair["status"] == "bounded"
    assert pair["n_missing"] == 2
    assert pair["interval"]["estimate"] is None
    low, high = pair["as_losses"]["interval"], pair["as_wins"]["interval"]
    assert pair["interval"]["lo"] == pytest.approx(min(low["lo"], high["lo"]))
    assert pair["interval"]["hi"] == pytest.approx(max(low["hi"], high["hi"]))
    bounded = [w for w in report["warnings"] if w["code"] == "estimate.bounded"]
    assert len(bounded) == 1
    assert bounded[0]["severity"] == SERIOUS
    assert "bounded by the worst case" in bounded[0]["message"]


def test_a_judge_that_follows_length_is_a_warning_on_the_estimate_never_a_gate(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    _people(run)
    judge_file = _judge(invoke, run, simulator.base_url, "sim-judge-longer")
    analysed = invoke("analyze", run, "--against", judge_file)
    report = _report(run)
    section = report["people_estimate"]
    assert section["judge_flaws"]
    assert section["status"] == "complete"
    assert not any("LLM judge" in g for g in report["gates_failed"])
    flaws = [w for w in report["warnings"] if w["code"] == "estimate.judge_flaw"]
    assert flaws
    assert {w["severity"] for w in flaws} == {"notice"}
    assert {w["judge"] for w in flaws} == {"sim-judge-longer"}
    assert "a warning, not a gate" in " ".join(analysed.stdout.split())


def test_without_a_judge_the_report_says_what_to_give(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    _people(run)
    analysed = invoke("analyze", run)
    report = _report(run)
    assert report["people_estimate"]["status"] == "no judge"
    assert [w["code"] for w in report["warnings"] if w["code"].startswith("estimate.")] == [
        "estimate.no_judge"
    ]
    assert "give the LLM judge's picks with --against FILE" in " ".join(analysed.stdout.split())


def test_the_llm_judge_analysed_alone_gets_no_peoples_estimate(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    judge_file = _judge(invoke, run, simulator.base_url)
    analysed = invoke("analyze", run, "--picks", judge_file)
    assert analysed.exit_code == 0, analysed.output
    report = _report(run)
    assert report["verdict"] != "void"
    assert "people_estimate" not in report
