"""The LLM judge's flaws on a people's-sample run: each is a warning, never a gate, and says
what it cost the people's interval in width (points of the score, and people's judgements),
measured on the comparisons' own variable (the side the first candidate was shown on, which
answer was longer, the verdicts left out for leakage); bt-verify recomputes it; a bounded
estimate says it is a bound on every line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from blindtest.model.people_sample import people_trials
from blindtest.model.picks import load_judge_run, read_picks
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator
from blindtest.stats.ppi_flaws import ppi_flaw_cost

from conftest import Invoke
from judge_runs import write_picks
from llm_runs import llm

PEOPLE_FILE = "picks.jsonl"


def _run(
    invoke: Invoke,
    tmp_path: Path,
    url: str,
    *design: Any,
    prompts: int = 40,
    sample: int = 16,
    sides: tuple[str, str] = ("sim-large", "sim-small"),
) -> Path:
    source = tmp_path / "prompts.txt"
    source.write_text("".join(f"Question {i}: say something about {i}.\n" for i in range(prompts)))
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--prompts", source, "--protocol", "preference", "--trials", prompts,
        "--a", sides[0], "--b", sides[1], "--a-url", url, "--b-url", url, "--seed", "flaws",
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


def _judged(invoke: Invoke, run: Path, url: str, model: str, *extra: Any) -> dict[str, Any]:
    out = run / f"picks-{model}.jsonl"
    judged = llm(invoke, run, model, "--out", out, *extra, url=url)
    assert judged.exit_code == 0, judged.output
    analysed = invoke("analyze", run, "--html", run / "page.html")
    report: dict[str, Any] = json.loads((run / artifacts.REPORT).read_text())
    report["_screen"] = " ".join(analysed.stdout.split())
    return report


def _flaw(report: dict[str, Any], kind: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [
        f for f in report["people_estimate"]["flaw_costs"] if f["kind"] == kind
    ]
    assert len(found) == 1, report["people_estimate"]["flaw_costs"]
    return found[0]


def test_a_single_pass_judge_that_answers_by_position_costs_width_said_on_screen_and_page(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    _people(run)
    report = _judged(invoke, run, simulator.base_url, "sim-judge-first", "--no-swap")
    flaw = _flaw(report, "position")
    assert flaw["said"] == "The judge preferred the left side"
    assert flaw["variable"] == "the side the first candidate was shown on"
    (pair,) = flaw["pairs"]
    assert pair["measured"] is True
    assert pair["width_cost"] >= 0
    assert pair["explained"] == pytest.approx(1.0)  # all it did was follow position
    assert not any("LLM judge" in g for g in report["gates_failed"])
    line = next(s for s in report["people_estimate"]["lines"] if s.startswith("The judge pre"))
    assert line.startswith("The judge preferred the left side (position bias: ")
    assert "a warning, not a gate" in line
    assert "The side the first candidate was shown on explains 100% of the judge's scores" in (line)
    assert line.split(" (")[0] in report["_screen"]
    page = (run / "page.html").read_text()
    assert "The side the first candidate was shown on explains 100%" in page


def test_the_cost_is_the_statistics_own_on_the_sides_the_first_candidate_was_shown(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url, prompts=80, sample=30)
    sampled = _people(run)
    report = _judged(invoke, run, simulator.base_url, "sim-judge-leaning", "--no-swap")
    (pair,) = _flaw(report, "position")["pairs"]
    loaded = load_judge_run(run)
    key = {e["trial"]: e for e in loaded.design["arrangement"]}
    people = {p.trial: p for p in read_picks(run / PEOPLE_FILE, loaded.view).picks}
    judge = {p.trial: p for p in read_picks(run / "picks-sim-judge-leaning.jsonl",
                                            loaded.view).picks}  # fmt: skip

    def score(pick: Any) -> float:
        if pick.pick == "tie":
            return 0.5
        return float((key[pick.trial]["left"] == "A") == (pick.pick == "left"))

    def side(trial: int) -> float:
        return 1.0 if key[trial]["left"] == "A" else -1.0

    order = {prompt: i for i, prompt in enumerate(loaded.design["people_sample"]["prompts"])}
    drawn = sorted(sampled, key=lambda t: order[key[t]["prompt_id"]])
    rest = [t for t in sorted(key) if t not in set(sampled)]
    expected = ppi_flaw_cost(
        [score(people[t]) for t in drawn],
        [score(judge[t]) for t in drawn],
        [score(judge[t]) for t in rest],
        [side(t) for t in drawn],
        [side(t) for t in rest],
    ).to_dict()
    assert {k: pair[k] for k in expected} == expected
    assert pair["judge_slope"] > 0  # the first candidate scores higher when shown on the left


def test_a_fair_judges_flaws_without_a_variable_are_said_not_measured(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    _people(run)
    report = _judged(invoke, run, simulator.base_url, "sim-judge-fair")
    kinds = {f["kind"] for f in report["people_estimate"]["flaw_costs"]}
    assert kinds == {"family", "endpoint"}  # the simulator serves the sides and the judge
    family = _flaw(report, "family")
    assert family["pairs"] == []
    assert family["not_measured"].startswith(
        "nothing in the data says where a judge favoured its own family"
    )
    assert (
        "The judge is of the same family as a candidate (the judge model sim-judge-fair"
        in (report["_screen"])
    )
    assert "its cost in width is not measured: nothing in the data says" in report["_screen"]


def test_a_judge_that_follows_length_says_what_length_cost(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    # One model on both sides (temperature 1): either answer may be the longer one.
    run = _run(invoke, tmp_path, simulator.base_url, sides=("sim-large", "sim-large"))
    _people(run)
    report = _judged(invoke, run, simulator.base_url, "sim-judge-longer")
    flaw = _flaw(report, "length")
    assert flaw["said"] == "The judge preferred the longer answer"
    (pair,) = flaw["pairs"]
    assert pair["measured"] is True
    assert pair["judge_slope"] > 0
    assert pair["explained"] > 0.5  # the judge's verdict is the longer answer
    assert (
        "The judge preferred the longer answer (length: its verdicts go with" in (report["_screen"])
    )
    assert "The longer answer (in words) explains " in report["_screen"]


def test_length_that_never_changes_sides_cannot_be_told_from_the_candidates(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)  # sim-large always writes more
    _people(run)
    report = _judged(invoke, run, simulator.base_url, "sim-judge-longer")
    (pair,) = _flaw(report, "length")["pairs"]
    assert pair["measured"] is False
    assert pair["reason"] == (
        "one candidate's answer was the longer on every comparison, so length cannot be told "
        "apart from the candidates"
    )
    assert (
        "its cost in width cannot be measured: one candidate's answer was the longer"
        in (report["_screen"])
    )


def test_leaked_verdicts_are_a_flaw_whose_cost_counts_them_back(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    _people(run)
    report = _judged(invoke, run, simulator.base_url, "sim-judge-leaky")
    flaw = _flaw(report, "leakage")
    assert flaw["flaw"].startswith("identity leakage: the judge named or recognised a candidate")
    (pair,) = flaw["pairs"]
    assert pair["measured"] is True
    assert pair["judge_slope"] is None
    notices = [w for w in report["warnings"] if w["code"] == "estimate.judge_flaw"]
    assert any(w["message"].startswith("identity leakage") for w in notices)
    assert {w["severity"] for w in notices} == {"notice"}


def test_bt_verify_recomputes_the_cost_and_names_a_changed_one(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url)
    _people(run)
    _judged(invoke, run, simulator.base_url, "sim-judge-first", "--no-swap")
    assert invoke("verify", run).exit_code == 0
    path = run / artifacts.REPORT
    report = json.loads(path.read_text())
    flaws = report["people_estimate"]["flaw_costs"]
    index = next(i for i, f in enumerate(flaws) if f["kind"] == "position")
    flaws[index]["pairs"][0]["width_cost"] += 0.01
    path.write_text(json.dumps(report))
    verified = invoke("verify", run)
    assert verified.exit_code == 1
    where = f"report.json/people_estimate/flaw_costs/{index}/pairs/0/width_cost"
    assert where in verified.stdout


def test_every_line_of_a_bounded_estimate_says_it_is_a_bound(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url, "--people-missing", "bound")
    _people(run, leave_out=2)
    report = _judged(invoke, run, simulator.base_url, "sim-judge-fair")
    section = report["people_estimate"]
    assert section["status"] == "bounded"
    (pair_line,) = [s for s in section["lines"] if s.startswith("A (sim-large) over")]
    assert pair_line.startswith("A (sim-large) over B (sim-small): a bound, between ")
    summary = report["summary"]
    assert summary["verdict"].startswith(
        "A bound, not a result on the whole sample: 2 of the people's 16 sampled comparisons "
        "have no judgement and could go either way. On the 14 judged: "
    )
    assert (
        "(the 14 judged only: a bound; with the 2 missing all won by B (sim-small), p = "
        in (summary["sure"])
    )
    assert summary["size"].endswith("(the 14 judged only: a bound).")
    assert report["statement"].startswith("A bound, not a result on the whole sample")
    assert "On the 14 judged: " in report["_screen"]
    assert _flaw(report, "family")["pairs"] == []
