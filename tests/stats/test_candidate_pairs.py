"""Several candidates pair by pair and against a reference: tallies, Wilson intervals and
exact tests checked against scipy.stats.binomtest, Holm across the family."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from blindtest.stats.pairwise import Tally, pair_table, reference_table, tally


def test_tally_counts_each_pair_in_the_candidates_order() -> None:
    rows = [
        ("b", "a", "a"),
        ("a", "b", None),
        ("a", "b", "b"),
        ("c", "a", "c"),
        ("a", "c", "a"),
        ("a", "c", "c"),
    ]
    got = tally(["a", "b", "c"], rows)
    assert got == (Tally("a", "b", 1, 1, 1), Tally("a", "c", 1, 2, 0))
    with pytest.raises(ValueError, match="unknown candidate 'z'"):
        tally(["a", "b"], [("a", "z", None)])
    with pytest.raises(ValueError, match="was not in the comparison"):
        tally(["a", "b", "c"], [("a", "b", "c")])


def test_pair_figures_match_scipy_binomtest() -> None:
    gen = np.random.default_rng(3)
    tallies = [
        Tally(f"x{n}", f"y{n}", int(w), int(lo), int(t))
        for n, (w, lo, t) in enumerate(gen.integers(0, 60, size=(40, 3)))
    ]
    table = pair_table(tallies)
    assert table.unit == "comparison"
    assert table.adjustment == "holm"
    for t, record in zip(tallies, table.pairs, strict=True):
        n = t.wins + t.losses
        assert record.n == n
        if n == 0:
            assert math.isnan(record.win_rate.estimate)
            assert record.p_value == 1.0
            continue
        reference = stats.binomtest(t.wins, n, 0.5)
        assert record.p_value == pytest.approx(reference.pvalue, rel=1e-12)
        ci = reference.proportion_ci(0.95, method="wilson")
        assert record.win_rate.lo == pytest.approx(ci.low, abs=1e-12)
        assert record.win_rate.hi == pytest.approx(ci.high, abs=1e-12)
        assert record.win_rate.estimate == pytest.approx(t.wins / n)


def test_holm_steps_down_across_the_pairs() -> None:
    # Exact p-values 20/0 -> 1.9e-6, 12/3 -> 0.0352, 9/4 -> 0.267; Holm multiplies by 3, 2, 1
    # in order of size and keeps the running maximum.
    tallies = [Tally("a", "b", 12, 3, 2), Tally("a", "c", 20, 0, 0), Tally("b", "c", 9, 4, 5)]
    table = pair_table(tallies, alpha=0.05)
    raw = [stats.binomtest(w, w + lo).pvalue for w, lo in ((12, 3), (20, 0), (9, 4))]
    expected = [max(3 * raw[1], 2 * raw[0]), 3 * raw[1], min(1.0, max(2 * raw[0], raw[2]))]
    for record, want in zip(table.pairs, expected, strict=True):
        assert record.p_holm == pytest.approx(want, rel=1e-12)
    assert [r.significant for r in table.pairs] == [False, True, False]  # 0.0704 > 0.05


def test_against_the_reference_each_candidate_counts_its_own_wins() -> None:
    tallies = [
        Tally("ref", "x", 10, 20, 4),  # x beat ref 20 times
        Tally("ref", "y", 15, 15, 0),
        Tally("x", "y", 9, 9, 9),  # not against the reference: ignored
        Tally("z", "ref", 25, 5, 1),
    ]
    table = reference_table(tallies, "ref")
    assert table.family == "against ref"
    assert [(r.first, r.second, r.wins, r.losses, r.ties) for r in table.pairs] == [
        ("x", "ref", 20, 10, 4),
        ("y", "ref", 15, 15, 0),
        ("z", "ref", 25, 5, 1),
    ]
    raw = [stats.binomtest(w, 30).pvalue for w in (20, 15, 25)]
    assert table.pairs[2].p_holm == pytest.approx(3 * raw[2], rel=1e-12)
    assert table.pairs[0].p_holm == pytest.approx(2 * raw[0], rel=1e-12)
    assert table.pairs[1].p_holm == 1.0
    assert table.to_dict()["pairs"][0]["win_rate"]["estimate"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="no comparison against the reference 'w'"):
        reference_table(tallies, "w")
