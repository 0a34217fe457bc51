"""The ranking of several candidates: Davidson-Bradley-Terry fits against mpmath and choix,
the bootstrap over prompts against an independent re-derivation, the cases said in words,
the groups rule, and the timing shape at 45,000 comparisons."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from blindtest.model.rng import IndexStream
from blindtest.stats.ranking import (
    DAVIDSON,
    Outcomes,
    _fit_failed,
    _groups,
    _problem,
    davidson_fit,
    outcomes,
    rank_candidates,
)

REFERENCE = json.loads((Path(__file__).parents[1] / "data" / "ranking_reference.json").read_text())


def from_pairs(candidates: list[str], pairs: list[list[int]]) -> Outcomes:
    """One prompt per comparison (the point fit depends on the pair counts only)."""
    rows: list[tuple[str, str, str, str | None]] = []
    for i, j, wins, losses, ties in pairs:
        a, b = candidates[i], candidates[j]
        for outcome, count in ((a, wins), (b, losses), (None, ties)):
            for _ in range(count):
                rows.append((f"p{len(rows):05d}", a, b, outcome))
    return outcomes(candidates, rows)


def estimates(result: Any) -> dict[str, float]:
    return {s.candidate: s.strength.estimate for s in result.strengths}


@pytest.mark.parametrize("case", ["four", "star", "six"])
def test_davidson_fit_matches_mpmath(case: str) -> None:
    ref = REFERENCE["davidson"][case]
    result = rank_candidates(from_pairs(ref["candidates"], ref["pairs"]), rng=None)
    assert result.problem is None
    assert result.model == DAVIDSON
    got = estimates(result)
    for name, value in zip(ref["candidates"], ref["strengths"], strict=True):
        assert got[name] == pytest.approx(value, abs=1e-9)
    assert result.tie_parameter == pytest.approx(ref["nu"], rel=1e-9)
    assert result.log_likelihood == pytest.approx(ref["log_likelihood"], rel=1e-12)
    assert result.interval_problem == "no resampling was asked for, so there are no intervals"


def test_a_named_anchor_shifts_every_strength_by_the_same_amount() -> None:
    ref = REFERENCE["davidson"]["star"]
    result = rank_candidates(from_pairs(ref["candidates"], ref["pairs"]), rng=None, anchor="ref")
    got = estimates(result)
    base = ref["strengths"][0]
    for name, value in zip(ref["candidates"], ref["strengths"], strict=True):
        assert got[name] == pytest.approx(value - base, abs=1e-9)
    assert result.anchor == "ref"
    with pytest.raises(ValueError, match="anchor 'nobody' is not a candidate"):
        rank_candidates(from_pairs(ref["candidates"], ref["pairs"]), rng=None, anchor="nobody")


def test_without_ties_it_is_plain_bradley_terry_as_choix_fits_it() -> None:
    ref = REFERENCE["no_ties"]
    result = rank_candidates(from_pairs(ref["candidates"], ref["pairs"]), rng=None)
    assert result.model.startswith("bradley-terry")
    assert result.tie_parameter == 0.0
    got = estimates(result)
    for n, name in enumerate(ref["candidates"]):
        assert got[name] == pytest.approx(ref["strengths"][n], abs=1e-9)  # mpmath
        assert got[name] == pytest.approx(ref["choix"]["ilsr"][n], abs=1e-9)
        assert got[name] == pytest.approx(ref["choix"]["opt"][n], abs=1e-7)


def test_a_difference_reads_as_the_untied_preference_probability() -> None:
    ref = REFERENCE["davidson"]["four"]
    result = rank_candidates(from_pairs(ref["candidates"], ref["pairs"]), rng=None)
    got = estimates(result)
    for diff in result.differences:
        d = got[diff.first] - got[diff.second]
        assert diff.difference.estimate == pytest.approx(d, abs=1e-12)
        assert diff.p_first_preferred == pytest.approx(1 / (1 + math.exp(-d)), abs=1e-12)
    # Under Davidson's model that is exactly P(first | not a tie) = pi_i / (pi_i + pi_j).
    nu = result.tie_parameter
    a, b = math.exp(got["a"]), math.exp(got["b"])
    den = a + b + nu * math.sqrt(a * b)
    untied = (a / den) / (a / den + b / den)
    first = next(x for x in result.differences if (x.first, x.second) == ("a", "b"))
    assert first.p_first_preferred == pytest.approx(untied, abs=1e-12)


def test_bootstrap_over_prompts_matches_an_independent_rederivation() -> None:
    ref = REFERENCE["bootstrap"]
    rows = [(p, left, right, winner) for p, left, right, winner in ref["comparisons"]]
    data = outcomes(ref["candidates"], rows)
    stream = IndexStream(ref["seed"], ref["label"])
    assert stream.take(3, len(data.prompt_ids)).tolist() == ref["first_draws"]
    result = rank_candidates(
        data,
        rng=IndexStream(ref["seed"], ref["label"]),
        resamples=ref["resamples"],
        confidence_level=ref["confidence_level"],
    )
    assert result.failed_resamples == ref["failed"]
    assert result.unit == "prompt"
    assert result.prompts == 30
    assert result.comparisons == 300
    by_name = {s.candidate: s.strength for s in result.strengths}
    for n, name in enumerate(ref["candidates"]):
        assert by_name[name].estimate == pytest.approx(ref["estimate"][n], abs=1e-8)
        assert by_name[name].lo == pytest.approx(ref["lo"][n], abs=1e-7)
        assert by_name[name].hi == pytest.approx(ref["hi"][n], abs=1e-7)
    assert math.isnan(result.critical_value)  # retired: claims come from the pair tests
    for p, diff in enumerate(result.differences):
        assert diff.difference.lo == pytest.approx(ref["difference_percentile_lo"][p], abs=1e-6)
        assert diff.difference.hi == pytest.approx(ref["difference_percentile_hi"][p], abs=1e-6)
    # bt-verify's recomputation: the same stream gives the same bounds, to the bit.
    again = rank_candidates(data, rng=IndexStream(ref["seed"], ref["label"]), resamples=300)
    assert again.to_dict() == result.to_dict()
    other = rank_candidates(data, rng=IndexStream("another seed", ref["label"]), resamples=300)
    assert other.strengths[0].strength.lo != result.strengths[0].strength.lo


def test_groups_start_at_the_first_candidate_separated_from_the_groups_first() -> None:
    sep = np.zeros((5, 5), dtype=bool)
    # order 0 > 1 > 2 > 3 > 4: 0 is separated from 2, 3, 4; 2 from 4 only.
    for a, b in [(0, 2), (0, 3), (0, 4), (2, 4)]:
        sep[a, b] = sep[b, a] = True
    assert _groups([0, 1, 2, 3, 4], sep) == [[0, 1], [2, 3], [4]]
    assert _groups([0, 1, 2], np.zeros((3, 3), dtype=bool)) == [[0, 1, 2]]


def test_real_differences_make_groups_and_rank_ranges() -> None:
    # Two clearly separated tiers of two near-equal candidates each, over 60 prompts.
    gen = np.random.default_rng(5)
    names = ["top1", "top2", "low1", "low2"]
    truth = [1.2, 1.1, -1.1, -1.2]
    rows: list[tuple[str, str, str, str | None]] = []
    for p in range(60):
        for i, j in itertools.combinations(range(4), 2):
            a, b, tie = (
                math.exp(truth[i]),
                math.exp(truth[j]),
                0.5 * math.exp((truth[i] + truth[j]) / 2),
            )
            u = gen.random() * (a + b + tie)
            winner = names[i] if u < a else names[j] if u < a + b else None
            rows.append((f"q{p}", names[i], names[j], winner))
    result = rank_candidates(
        outcomes(names, rows), rng=IndexStream("tiers", "ranking"), resamples=500
    )
    assert [set(g) for g in result.groups] == [{"top1", "top2"}, {"low1", "low2"}]
    ranks = {s.candidate: (s.rank_best, s.rank_worst) for s in result.strengths}
    assert ranks["top1"] == ranks["top2"] == (1, 2)
    assert ranks["low1"] == ranks["low2"] == (3, 4)
    separated = {(d.first, d.second) for d in result.differences if d.separated}
    assert ("top1", "top2") not in separated
    assert ("top1", "low1") in separated
    text = json.dumps(result.to_dict())
    assert '"candidate": "top1"' in text
    assert '"strength": {"estimate"' in text


@pytest.mark.parametrize(
    ("candidates", "pairs", "words"),
    [
        (["a", "b", "c"], [[0, 1, 5, 0, 0], [0, 2, 4, 0, 0], [1, 2, 3, 3, 1]],
         "a won every comparison it was in"),
        (["a", "b", "c"], [[0, 1, 5, 0, 0], [0, 2, 4, 3, 1], [1, 2, 0, 3, 0]],
         "b lost every comparison it was in"),
        (["a", "b", "c", "d"], [[0, 1, 5, 2, 1], [2, 3, 4, 3, 1]],
         "never compared, directly or through others, with the rest: {a, b} | {c, d}"),
        (["a", "b"], [[0, 1, 0, 0, 7]], "every comparison was a tie"),
        (["a", "b", "c", "d"], [[0, 1, 3, 2, 0], [0, 2, 2, 1, 0], [1, 2, 1, 2, 1],
                                [0, 3, 4, 0, 0], [1, 3, 3, 0, 0], [2, 3, 5, 0, 0]],
         "d lost every comparison it was in"),
        # Wins and ties but no loss, and nothing else to pin the tie rate: the maximum is at
        # infinity though the graph of wins and ties is connected both ways.
        (["a", "b"], [[0, 1, 3, 0, 2]],
         "{a} never lost to {b} (their meetings were wins and ties only)"),
        # A group ahead of another without a loss, ties inside each group only.
        (["a", "b", "c", "d"], [[0, 1, 2, 2, 1], [2, 3, 2, 2, 1], [0, 2, 3, 0, 0],
                                [1, 3, 2, 0, 0]],
         "{a, b} never lost to {c, d} (their meetings were wins and ties only)"),
    ],
)  # fmt: skip
def test_a_fit_that_cannot_be_stood_behind_is_said_in_words(
    candidates: list[str], pairs: list[list[int]], words: str
) -> None:
    result = rank_candidates(from_pairs(candidates, pairs), rng=IndexStream("w", "ranking"))
    assert result.problem is not None
    assert words in result.problem
    assert all(math.isnan(s.strength.estimate) for s in result.strengths)
    assert result.groups == ()
    plain = result.to_dict()
    assert all(s["strength"]["estimate"] is None for s in plain["strengths"])
    assert not any(d["separated"] for d in plain["differences"])


def random_counts(gen: np.random.Generator, k: int) -> np.ndarray:
    m = k * (k - 1) // 2
    counts = gen.integers(0, 4, size=3 * m).astype(np.float64)
    counts[gen.random(3 * m) < 0.5] = 0.0  # many empty cells, so many fits do not exist
    return counts


def test_the_exact_check_and_the_newton_divergence_rule_agree() -> None:
    # The bootstrap relies on cheap checks (connected, some decisive outcome) and on Newton
    # running off past the divergence bound exactly where the linear programme says the
    # maximum does not exist: 400 seeded sparse tables, 2 to 5 candidates, counts scaled up
    # to 29-fold, fitted as one batch as the bootstrap fits them. (Offline, 3,000 such
    # tables with 2 to 6 candidates: no disagreement.)
    gen = np.random.default_rng(11)
    kinds = {"exists": 0, "none": 0}
    for k in (2, 3, 4, 5):
        tables = np.array([random_counts(gen, k) * gen.integers(1, 30) for _ in range(100)])
        _, _, ok, _ = davidson_fit(tables, k)
        failed = _fit_failed(tables, k) | ~ok
        for counts, fail in zip(tables, failed, strict=True):
            problem = _problem([f"c{i}" for i in range(k)], counts)
            assert (problem is None) == (not fail), (counts.tolist(), problem)
            kinds["exists" if problem is None else "none"] += 1
    assert kinds["exists"] > 80
    assert kinds["none"] > 80


def test_bad_rows_are_one_line_value_errors() -> None:
    with pytest.raises(ValueError, match="unknown candidate"):
        outcomes(["a", "b"], [("p", "a", "z", "a")])
    with pytest.raises(ValueError, match="compared with itself"):
        outcomes(["a", "b"], [("p", "a", "a", None)])
    with pytest.raises(ValueError, match="was not in the comparison"):
        outcomes(["a", "b", "c"], [("p", "a", "b", "c")])
    with pytest.raises(ValueError, match="two or more distinct candidates"):
        outcomes(["a", "a"], [])
    data = outcomes(["a", "b"], [("p", "a", "b", "a"), ("q", "b", "a", "a"), ("r", "a", "b", "b")])
    with pytest.raises(ValueError, match="resamples must be an integer >= 1"):
        rank_candidates(data, rng=None, resamples=0)
    with pytest.raises(ValueError, match="confidence_level"):
        rank_candidates(data, rng=None, confidence_level=1.0)


def test_many_failed_resamples_leave_bounds_unbounded_and_say_so() -> None:
    # Six prompts, one comparison each: many resamples lose every win of one side.
    rows = [(f"p{n}", "a", "b", "a" if n < 4 else "b") for n in range(6)]
    result = rank_candidates(
        outcomes(["a", "b"], rows), rng=IndexStream("few", "ranking"), resamples=400
    )
    assert result.problem is None
    assert result.failed_resamples > 10  # P(both of b's wins drop out) = (4/6)^6 = 8.8%
    assert result.interval_problem is not None
    assert "unbounded" in result.interval_problem
    assert math.isinf(result.strengths[0].strength.hi)
    assert result.to_dict()["strengths"][0]["strength"]["hi"] is None
    anchored = rank_candidates(
        outcomes(["a", "b"], rows), rng=IndexStream("few", "ranking"), anchor="b", resamples=400
    )
    by_name = {s.candidate: s.strength for s in anchored.strengths}
    assert (by_name["b"].lo, by_name["b"].hi) == (0.0, 0.0)
    assert math.isinf(by_name["a"].hi)
