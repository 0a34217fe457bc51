"""The people's estimate for several candidates (per pair, Holm across the pairs), for a panel
(a comparison's score is its people's mean) and for a sample stratified by tag: the section
hands the statistics exactly the scores the picks say."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest

from blindtest.analysis.people_estimate import decision_level, people_estimate
from blindtest.model.candidates import comparison_sides
from blindtest.model.people_sample import people_trials, sampled_prompts
from blindtest.model.picks import Pick, load_judge_run
from blindtest.stats.multiple import holm
from blindtest.stats.ppi import ppi_decision, ppi_preference

from candidate_runs import candidates_design
from judge_runs import make_run


def _design(tmp_path: Path, trials: int = 40, size: int = 16) -> dict[str, Any]:
    run = make_run(tmp_path, "preference", trials, people_sample=size)
    return copy.deepcopy(dict(load_judge_run(run).design))


def _picks(
    design: dict[str, Any], judge: str, kind: str, trials: list[int], seed: int
) -> list[Pick]:
    rng = random.Random(seed)
    return [
        Pick(trial=t, judge=judge, pick=rng.choice(["left", "left", "right", "tie"]),
             judge_kind=kind)
        for t in trials
    ]  # fmt: skip


def _score(design: dict[str, Any], pick: Pick, first: str) -> float:
    entry = next(e for e in design["arrangement"] if e["trial"] == pick.trial)
    left, right = comparison_sides(entry)
    if pick.pick == "tie":
        return 0.5
    return float((left if pick.pick == "left" else right) == first)


def _drawn(design: dict[str, Any], trials: list[int]) -> list[int]:
    place = {p: i for i, p in enumerate(sampled_prompts(design))}
    prompt = {e["trial"]: e["prompt_id"] for e in design["arrangement"]}
    return sorted(trials, key=lambda t: (place[prompt[t]], t))


def test_three_candidates_get_one_estimate_per_pair_with_holm_across_them(
    tmp_path: Path,
) -> None:
    design = candidates_design(_design(tmp_path), {"x": {}, "y": {}, "z": {}})
    sampled = list(people_trials(design) or ())
    every = [e["trial"] for e in design["arrangement"]]
    people = _picks(design, "ann", "human", sampled, 1)
    judge = _picks(design, "judge", "llm", every, 2)
    section = people_estimate(design, people, judge)  # type: ignore[arg-type]
    assert section is not None
    pairs = section["pairs"]
    assert [(p["first"], p["second"]) for p in pairs] == [("x", "y"), ("x", "z"), ("y", "z")]
    assert all(p["n_sampled"] == 16 for p in pairs)  # every pair meets on every prompt
    p_values = [p["result"]["p_value"] for p in pairs]
    assert [p["p_holm"] for p in pairs] == pytest.approx(list(holm(p_values)))
    # The first pair, by hand: its sampled comparisons in draw order, the rest unsampled.
    x_y = [e["trial"] for e in design["arrangement"] if set(comparison_sides(e)) == {"x", "y"}]
    mine = {p.trial: _score(design, p, "x") for p in people}
    theirs = {p.trial: _score(design, p, "x") for p in judge}
    inside = _drawn(design, [t for t in x_y if t in mine])
    outside = [t for t in x_y if t not in mine]
    expected = ppi_preference(
        [mine[t] for t in inside], [theirs[t] for t in inside], [theirs[t] for t in outside]
    )
    assert pairs[0]["result"] == expected.to_dict()


def test_a_panels_comparison_scores_its_peoples_mean(tmp_path: Path) -> None:
    design = _design(tmp_path)
    sampled = list(people_trials(design) or ())
    every = [e["trial"] for e in design["arrangement"]]
    people = [
        *_picks(design, "ann", "human", sampled, 3),
        *_picks(design, "bob", "human", sampled, 4),
    ]
    judge = _picks(design, "judge", "llm", every, 5)
    section = people_estimate(design, people, judge)  # type: ignore[arg-type]
    assert section is not None
    mean = {t: sum(_score(design, p, "A") for p in people if p.trial == t) / 2 for t in sampled}
    theirs = {p.trial: _score(design, p, "A") for p in judge}
    inside = _drawn(design, sampled)
    expected = ppi_preference(
        [mean[t] for t in inside],
        [theirs[t] for t in inside],
        [theirs[t] for t in every if t not in mean],
        score_values=(0.0, 0.25, 0.5, 0.75, 1.0),
    )
    assert section["pairs"][0]["result"] == expected.to_dict()
    assert section["calibration"]["n"] == len(sampled)


def test_a_sample_by_tag_is_estimated_within_each_tag(tmp_path: Path) -> None:
    design = _design(tmp_path)
    for i, prompt in enumerate(design["prompts"]):
        prompt["tags"] = ["code" if i % 2 else "prose"]
    design["people_sample"]["by"] = "tag"
    sampled = list(people_trials(design) or ())
    every = [e["trial"] for e in design["arrangement"]]
    section = people_estimate(
        design,  # type: ignore[arg-type]
        _picks(design, "ann", "human", sampled, 6),
        _picks(design, "judge", "llm", every, 7),
    )
    assert section is not None
    strata = section["pairs"][0]["result"]["strata"]
    assert sorted(s["name"] for s in strata) == ["code", "prose"]
    assert sum(s["share"] for s in strata) == pytest.approx(1.0)


def test_people_outside_the_sample_are_counted_and_not_used(tmp_path: Path) -> None:
    design = _design(tmp_path)
    sampled = list(people_trials(design) or ())
    every = [e["trial"] for e in design["arrangement"]]
    extra = next(t for t in every if t not in sampled)
    people = _picks(design, "ann", "human", [*sampled, extra], 8)
    judge = _picks(design, "judge", "llm", every, 9)
    section = people_estimate(design, people, judge)  # type: ignore[arg-type]
    alone = people_estimate(design, people[:-1], judge)  # type: ignore[arg-type]
    assert section is not None
    assert alone is not None
    assert section["sample"]["outside"] == 1
    assert section["pairs"] == alone["pairs"]


def test_a_decision_on_the_people_estimate_adjusts_the_challengers_by_holm(
    tmp_path: Path,
) -> None:
    design = candidates_design(_design(tmp_path, 160, 80), {"x": {}, "y": {}, "z": {}})
    design["decision"] = {
        "rule": "noninferior", "margin": 0.1, "alpha": 0.05, "estimand": "people-mean-score",
        "champion": "y", "planning": {"true": 0.5, "ties": 0.0, "power": 0.8},
        "sensitivity": None, "sequential": False,
    }  # fmt: skip
    assert decision_level(design) == pytest.approx(0.9)  # type: ignore[arg-type]
    sampled = list(people_trials(design) or ())
    every = [e["trial"] for e in design["arrangement"]]
    people = _picks(design, "ann", "human", sampled, 1)
    judge = _picks(design, "judge", "llm", every, 2)
    section = people_estimate(design, people, judge)  # type: ignore[arg-type]
    assert section is not None
    assert sorted(section["decision"]) == ["x", "z"]  # the challengers, never the champion
    # x against the champion y, oriented to the challenger x, at the unadjusted 1 - 2 alpha
    x_y = [e["trial"] for e in design["arrangement"] if set(comparison_sides(e)) == {"x", "y"}]
    mine = {p.trial: _score(design, p, "x") for p in people}
    theirs = {p.trial: _score(design, p, "x") for p in judge}
    inside = _drawn(design, [t for t in x_y if t in mine])
    outside = [t for t in x_y if t not in mine]
    expected = ppi_decision(
        [mine[t] for t in inside], [theirs[t] for t in inside], [theirs[t] for t in outside],
        "noninferior:0.1", confidence_level=0.9,
    )  # fmt: skip
    record = section["decision"]["x"]
    assert record["confidence_level"] == pytest.approx(0.9)
    assert expected.interval is not None
    assert record["interval"] == expected.interval.to_dict()
    assert record["p_value"] == pytest.approx(expected.p_value, rel=1e-12)
    # z against y: the pair is (y, z), so z's score is read from z's side, not y's
    z_record = section["decision"]["z"]
    (y_z,) = [p for p in section["pairs"] if (p["first"], p["second"]) == ("y", "z")]
    assert z_record["interval"]["estimate"] == pytest.approx(1 - y_z["result"]["estimate"])
    # Holm by hand over the two claims, and over the two refutations
    for key, adjusted in (("p_value", "p_adjusted"), ("p_refute", "p_refute_adjusted")):
        low, high = sorted((record[key], z_record[key]))
        first = min(1.0, 2 * low)
        by_hand = {low: first, high: max(first, high)}
        assert record[adjusted] == pytest.approx(by_hand[record[key]], rel=1e-12)
        assert z_record[adjusted] == pytest.approx(by_hand[z_record[key]], rel=1e-12)
    assert record["adjustment"] == z_record["adjustment"] == "holm:2"
