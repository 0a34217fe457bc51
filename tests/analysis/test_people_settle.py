"""The n that would settle a decision on the people's estimate: the people's judgements, the
judge on every comparison, planned by the people's-sample planner (itself tested in
tests/stats/test_stats_ppi_plan.py) at the observed values: these tests check the planner is
asked with the observed estimate, agreement and tie rates, the right boundary and direction,
and the decision's own one-sided alpha; and that the screen says it is a plan, not a promise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from blindtest.analysis.people_settle import people_settle
from blindtest.model.people_sample import people_trials
from blindtest.model.picks import load_judge_run
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator
from blindtest.stats.decision import parse_rule
from blindtest.stats.ppi_core import MIN_DEGREES_OF_FREEDOM
from blindtest.stats.ppi_plan import people_sample_row, plan_people_sample

from conftest import Invoke
from judge_runs import write_picks
from llm_runs import llm

#: 60 sampled comparisons people judged: the judge's side the people's on 42, people tied 9,
#: the judge 6; of 400 comparisons, at the 90% interval (one-sided alpha 0.05).
OBSERVED = {"n": 60, "agreed": 42, "people_ties": 9, "judge_ties": 6}
INPUTS: dict[str, Any] = {
    "total": 400,
    "agreement": 0.7,
    "people_tie_rate": 0.15,
    "judge_tie_rate": 0.1,
}


def _settle(rule: str, estimate: float, **more: Any) -> dict[str, Any]:
    found = people_settle(
        parse_rule(rule),
        estimate,
        alpha=more.pop("alpha", 0.05),
        power=0.8,
        comparisons=400,
        people_judged=60,
        observed=more.pop("observed", OBSERVED),
    )
    assert found is not None
    return found


def test_a_claim_above_its_boundary_is_planned_at_the_observed_values() -> None:
    found = _settle("noninferior:0.1", 0.46)
    plan = plan_people_sample(score=0.46, margin=0.1, power=0.8, alpha=0.05, **INPUTS)
    assert found["n"] == plan.n
    assert found["settles"] == "shown"
    assert (found["agreement"], found["ties"], found["judge_ties"]) == (0.7, 0.15, 0.1)
    assert found["true"] == 0.46
    assert found["alpha"] == pytest.approx(0.05)


def test_an_estimate_below_its_boundary_is_planned_as_the_mirror_s_test() -> None:
    """Refuting "not worse by more than 0.1" at 0.33: showing the score below 0.40 is showing
    the mirror image's (1 - score) above 0.60, a margin of -0.1."""
    found = _settle("noninferior:0.1", 0.33)
    plan = plan_people_sample(score=0.67, margin=-0.1, power=0.8, alpha=0.05, **INPUTS)
    assert (found["n"], found["settles"]) == (plan.n, "refuted")


def test_superiority_is_planned_at_a_boundary_of_one_half() -> None:
    found = _settle("superior", 0.56)
    plan = plan_people_sample(score=0.56, margin=0.0, power=0.8, alpha=0.05, **INPUTS)
    assert (found["n"], found["settles"]) == (plan.n, "shown")
    below = _settle("superior", 0.44)
    assert below["n"] == plan.n  # the mirror image of 0.56: the same n, the other way
    assert below["settles"] == "refuted"


def test_several_challengers_plan_at_holm_s_first_step() -> None:
    found = _settle("noninferior:0.1", 0.5, alpha=0.05 / 3)
    plan = plan_people_sample(score=0.5, margin=0.1, power=0.8, alpha=0.05 / 3, **INPUTS)
    assert found["n"] == plan.n
    assert found["n"] > _settle("noninferior:0.1", 0.5)["n"]


def test_equivalence_is_the_smallest_n_where_both_one_sided_tests_reject() -> None:
    found = _settle("equivalent:0.15", 0.55)
    n = found["n"]
    assert found["settles"] == "shown"

    def both(k: int) -> tuple[float, float]:
        low = people_sample_row(k, score=0.55, margin=0.15, alpha=0.05, **INPUTS)
        high = people_sample_row(k, score=0.45, margin=0.15, alpha=0.05, **INPUTS)
        return low.power + high.power - 1, low.expected_df

    power, df = both(n)
    assert power >= 0.8
    assert df >= MIN_DEGREES_OF_FREEDOM
    before, before_df = both(n - 1)
    assert before < 0.8 or before_df < MIN_DEGREES_OF_FREEDOM
    outside = _settle("equivalent:0.15", 0.71)  # past 0.65: refuted by one one-sided test
    plan = plan_people_sample(score=0.71, margin=-0.15, power=0.8, alpha=0.05, **INPUTS)
    assert (outside["n"], outside["settles"]) == (plan.n, "refuted")


@pytest.mark.parametrize(("rule", "estimate"), [("superior", 0.5), ("noninferior:0.1", 0.4),
                                                ("equivalent:0.2", 0.7)])  # fmt: skip
def test_an_estimate_on_the_boundary_has_no_size_that_settles_it(
    rule: str, estimate: float
) -> None:
    found = _settle(rule, estimate)
    assert (found["n"], found["reason"], found["settles"]) == (None, "boundary", None)


def test_a_sample_that_cannot_grow_enough_asks_for_more_comparisons() -> None:
    found = _settle("superior", 0.505)  # 0.005 above 1/2: no sample of 400 comparisons shows it
    assert (found["n"], found["reason"]) == (None, "more comparisons")
    whole = people_settle(parse_rule("superior"), 0.56, alpha=0.05, power=0.8, comparisons=60,
                          people_judged=60, observed=OBSERVED)  # fmt: skip
    assert whole is not None
    assert (whole["n"], whole["reason"]) == (None, "more comparisons")


def test_no_estimate_no_plan() -> None:
    assert people_settle(parse_rule("superior"), None, alpha=0.05, power=0.8, comparisons=400,
                         people_judged=60, observed=OBSERVED) is None  # fmt: skip


# ------------------------------------------------------------------ through bt-analyze


def _run(invoke: Invoke, tmp_path: Path, url: str, script: str, prompts: int, sample: int) -> Path:
    """A people's-sample design deciding noninferior:0.1, the fair judge on every comparison and
    a scripted person on the sample: ``script`` cycled over it, each letter the side preferred
    (``A``, ``B``), ``=`` a tie, ``J`` the judge's own verdict."""
    source = tmp_path / "prompts.txt"
    source.write_text("".join(f"Question {i}: say something about {i}.\n" for i in range(prompts)))
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--prompts", source, "--protocol", "preference", "--trials", prompts,
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", "ppi",
        "--people-sample", sample, "--decide", "noninferior:0.1",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    judged = llm(invoke, run, "sim-judge-fair", "--out", run / "picks-judge.jsonl", url=url)
    assert judged.exit_code == 0, judged.output
    loaded = load_judge_run(run)
    key = {e["trial"]: e for e in loaded.design["arrangement"]}
    judge = {
        r["trial"]: r["pick"]
        for r in map(json.loads, (run / "picks-judge.jsonl").read_text().splitlines())
        if r.get("pass", 1) == 1 and "pick" in r
    }
    rows = []
    for i, trial in enumerate(people_trials(loaded.design) or ()):
        wanted = script[i % len(script)]
        pick = (
            judge.get(trial, "tie")
            if wanted == "J"
            else "tie"
            if wanted == "="
            else "left"
            if key[trial]["left"] == wanted
            else "right"
        )
        rows.append(
            {"trial": trial, "judge": "ann", "pick": pick, "reason": "read both",
             "judge_kind": "human", "design_sha256": loaded.design_sha256}
        )  # fmt: skip
    write_picks(run / "picks.jsonl", rows)
    return run


def _observed_by_hand(run: Path) -> dict[str, int]:
    """The sides on the sample, read from the files: the person's pick and the judge's pass-1
    verdict (its swap combined), each a side of the arrangement or a tie."""
    design = json.loads((run / artifacts.DESIGN).read_text())
    key = {e["trial"]: e for e in design["arrangement"]}

    def side(record: dict[str, Any]) -> str:
        if record["pick"] == "tie":
            return "="
        left = key[record["trial"]]["left"]
        return left if record["pick"] == "left" else "B" if left == "A" else "A"

    lines = (run / "picks.jsonl").read_text().splitlines()
    people = {r["trial"]: side(r) for r in map(json.loads, lines)}
    judge = {}
    for record in map(json.loads, (run / "picks-judge.jsonl").read_text().splitlines()):
        if record.get("pass", 1) == 1 and "pick" in record and not record.get("excluded"):
            judge[record["trial"]] = side(record)
    return {
        "n": len(people),
        "agreed": sum(judge.get(t, "=") == s for t, s in people.items()),
        "people_ties": sum(s == "=" for s in people.values()),
        "judge_ties": sum(judge.get(t, "=") == "=" for t in people),
    }


@pytest.mark.parametrize(
    ("prompts", "sample", "script"),
    [
        (80, 20, "JJJB"),  # a sample of 20 among 80: a larger one would settle it
        (24, 12, "AB="),  # 12 among 24, at an even split: more comparisons are needed
    ],
)
def test_an_unsettled_people_decision_gives_the_people_s_judgements_that_would_settle_it(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, prompts: int, sample: int, script: str
) -> None:
    run = _run(invoke, tmp_path, simulator.base_url, script, prompts, sample)
    analysed = invoke("analyze", run)
    assert analysed.exit_code == 5, analysed.output
    report = json.loads((run / artifacts.REPORT).read_text())
    observed = _observed_by_hand(run)
    assert report["people_estimate"]["decision_sample"] == {"B": observed}
    (item,) = report["decision"]["decisions"]
    settle = item["settle"]
    n = observed["n"]
    assert settle["true"] == item["estimate"]
    assert settle["agreement"] == observed["agreed"] / n
    assert (settle["ties"], settle["judge_ties"]) == (observed["people_ties"] / n,
                                                      observed["judge_ties"] / n)  # fmt: skip
    assert (settle["power"], settle["alpha"]) == (0.8, pytest.approx(0.05))
    assert (settle["comparisons"], settle["people_judged"]) == (prompts, sample)
    estimate = float(item["estimate"])
    assert estimate > 0.4  # above the boundary: the claim is what a larger sample would show
    plan = plan_people_sample(
        total=prompts, agreement=observed["agreed"] / n, score=estimate, margin=0.1,
        people_tie_rate=observed["people_ties"] / n, judge_tie_rate=observed["judge_ties"] / n,
        power=0.8, alpha=0.05,
    )  # fmt: skip
    assert (settle["n"], settle["settles"]) == (plan.n, "shown")
    screen = " ".join(analysed.stdout.split())
    said = (
        f"{round(100 * estimate)}%) and the judge agrees with people as often as here "
        f"({observed['agreed']} of {n},"
    )
    assert said in screen
    if plan.n is not None:
        assert "a plan at the observed values, not a promise: if the people's mean score" in screen
        assert (
            f"about {plan.n} people's judgements of the {prompts} comparisons (now {sample})"
            in screen
        )
    else:
        assert settle["reason"] == "more comparisons"
        assert f"no people's sample among these {prompts} comparisons would settle it" in screen
        assert "more comparisons are needed" in screen
    assert invoke("verify", run).exit_code == 0


def _screen(settle: dict[str, Any]) -> str:
    from blindtest.present.decision import decision_lines

    item = {"challenger": "B", "headline": "B ...: NOT SHOWN", "outcome": "not_shown",
            "exit_code": 5, "reasons": [], "settle": settle}  # fmt: skip
    report = {"decision": {"rule": "superior", "margin": 0.0, "alpha": 0.05, "champion": "A",
                           "estimand": "people-mean-score", "decisions": [item],
                           "exit_code": 5}}  # fmt: skip
    return " ".join(" ".join(decision_lines(report)).split())


@pytest.mark.parametrize(
    ("estimate", "words"),
    [
        (0.56, "a plan at the observed values, not a promise: if the people's mean score is what "
               "it looks like (56%) and the judge agrees with people as often as here (42 of 60, "
               "70%, its verdict on the side of the people's mean score; ties: people 15%, the "
               "judge 10%), about {n} people's judgements of the 400 "
               "comparisons (now 60), the judge on all, would settle it (show it, power 0.8)"),
        (0.5, "the people's mean score sits on the boundary (50%): at that value no number of "
              "people's judgements would settle it"),
        (0.505, "no people's sample among these 400 comparisons would settle it: more comparisons "
                "are needed (a plan at the observed values, not a promise)"),
    ],
)  # fmt: skip
def test_the_screen_says_the_settling_people_s_judgements_are_a_plan(
    estimate: float, words: str
) -> None:
    settle = _settle("superior", estimate)
    assert words.format(n=settle["n"]) in _screen(settle)


def test_with_several_challengers_the_plan_is_at_holm_s_first_step(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    """Champion x against y and z, people splitting evenly: neither is settled, and each
    plan is at alpha / 2, as Holm's first step tests (and as the other decisions plan)."""
    url = simulator.base_url
    source = tmp_path / "prompts.txt"
    source.write_text("".join(f"Question {i}: say something about {i}.\n" for i in range(24)))
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--prompts", source, "--candidate", "x=sim-large", "--candidate",
        "y=sim-small", "--candidate", "z=sim-small", "--pairs", "reference:x", "--url", url,
        "--seed", "ppi3", "--people-sample", 12, "--decide", "noninferior:0.1",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    judged = llm(invoke, run, "sim-judge-fair", "--out", run / "picks-judge.jsonl", url=url)
    assert judged.exit_code == 0, judged.output
    loaded = load_judge_run(run)
    rows = [
        {"trial": trial, "judge": "ann", "pick": ("left", "right", "tie")[i % 3],
         "reason": "read both", "judge_kind": "human", "design_sha256": loaded.design_sha256}
        for i, trial in enumerate(people_trials(loaded.design) or ())
    ]  # fmt: skip
    write_picks(run / "picks.jsonl", rows)
    analysed = invoke("analyze", run)
    assert analysed.exit_code == 5, analysed.output
    report = json.loads((run / artifacts.REPORT).read_text())
    for item in report["decision"]["decisions"]:
        assert item["outcome"] == "not_shown"
        assert item["adjustment"] == "holm:2"
        assert item["settle"]["alpha"] == pytest.approx(0.025)
        assert (
            item["settle"]["sample"]
            == report["people_estimate"]["decision_sample"][item["challenger"]]["n"]
        )
