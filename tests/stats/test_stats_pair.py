"""Pair mode: two-sided exact test of nickname consistency against 1/2, and 2AFC d'."""

from __future__ import annotations

import math

import mpmath
import pytest

from blindtest.stats import (
    Interval,
    clopper_pearson,
    pair_dprime_from_pc,
    pair_pc_from_dprime,
    pair_pd,
    pair_test,
)

from data.binomial_reference import TWO_SIDED_HALF
from data.pair_pd_reference import PAIR_PD

# Reference values: tests/data/binomial_reference.py (exact rational sums; see its header).


def test_p_value_is_the_r_two_sided_exact_test() -> None:
    misses = [
        (n, k)
        for n, k, p in TWO_SIDED_HALF
        if n <= 200 and pair_test(k, n).p_value != pytest.approx(p, rel=1e-9)
    ]
    assert misses == []


def test_inverted_labels_count_as_discrimination() -> None:
    # Spec 000 FAQ: "tested two-sided since systematically inverted labels are discrimination".
    assert pair_test(3, 20).p_value == pair_test(17, 20).p_value
    assert pair_test(3, 20).p_value < 0.05


def test_dprime_is_signed_2afc_of_the_consistency_rate() -> None:
    # d' = sqrt(2) Phi^-1(Pc); reference by mpmath (erfinv), mp.dps = 30:
    #   mpmath.sqrt(2) * mpmath.sqrt(2) * mpmath.erfinv(2 * 0.75 - 1)
    mpmath.mp.dps = 30
    expected = float(2 * mpmath.erfinv(mpmath.mpf(2) * mpmath.mpf("0.75") - 1))
    result = pair_test(15, 20)
    assert result.dprime.estimate == pytest.approx(expected, rel=1e-12)
    assert pair_test(5, 20).dprime.estimate == pytest.approx(-expected, rel=1e-12)
    assert pair_test(10, 20).dprime.estimate == 0.0


def test_dprime_interval_is_the_mapped_clopper_pearson_interval() -> None:
    result = pair_test(15, 20)
    cp = clopper_pearson(15, 20)
    assert result.pc == cp
    assert result.dprime.lo == pytest.approx(
        math.sqrt(2) * pair_dprime_from_pc(cp.lo) / math.sqrt(2)
    )
    assert pair_pc_from_dprime(result.dprime.hi) == pytest.approx(cp.hi, rel=1e-12)


def test_unanimous_runs_have_infinite_dprime_written_as_null() -> None:
    all_consistent, none_consistent = pair_test(12, 12), pair_test(0, 12)
    assert all_consistent.dprime.estimate == math.inf
    assert none_consistent.dprime.estimate == -math.inf
    assert all_consistent.to_dict()["dprime"]["estimate"] is None
    assert none_consistent.to_dict()["dprime"]["lo"] is None


def test_single_trial_cannot_reject() -> None:
    assert pair_test(1, 1).p_value == 1.0
    assert pair_test(0, 1).p_value == 1.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pair_test(13, 12), r"consistent must be in \[0, n\] = \[0, 12\], got 13"),
        (lambda: pair_test(1, 0), r"n must be an integer >= 1, got 0"),
        (lambda: pair_dprime_from_pc(-0.1), r"pc must be in \[0, 1\], got -0.1"),
    ],
)
def test_bad_arguments_are_refused(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


# pd = |2 Pc - 1|. Reference: tests/data/pair_pd_reference.py, the image of the
# mpmath Clopper-Pearson interval under the fold, with the exact two-sided p at 1/2 (see its
# header for the command that regenerates it).


def test_pair_pd_is_the_fold_of_clopper_pearson_against_reference_values() -> None:
    misses = []
    for n, k, estimate, lo, hi, _ in PAIR_PD:
        pd = pair_test(k, n).pd
        got, want = (pd.estimate, pd.lo, pd.hi), (estimate, lo, hi)
        if any(g != pytest.approx(w, rel=1e-9, abs=1e-15) for g, w in zip(got, want, strict=True)):
            misses.append((n, k, got, want))
    assert misses == []


def test_pair_pd_interval_excludes_zero_exactly_when_the_two_sided_test_rejects() -> None:
    # The convention's point: the interval and the two-sided test at 0.05 never disagree.
    disagree = [(n, k) for n, k, _, lo, _, p in PAIR_PD if (lo > 0) != (p <= 0.05)]
    assert disagree == []
    assert any(lo > 0 for _, _, _, lo, _, _ in PAIR_PD)


def test_inverted_nicknames_give_the_same_pd_as_consistent_ones() -> None:
    assert pair_test(3, 20).pd == pair_test(17, 20).pd
    assert pair_test(10, 20).pd.estimate == 0.0
    assert pair_test(10, 20).pd.lo == 0.0


def test_pair_pd_refuses_an_interval_that_does_not_hold_its_estimate() -> None:
    with pytest.raises(ValueError, match="lo <= estimate <= hi"):
        pair_pd(Interval(0.9, 0.1, 0.5))
    with pytest.raises(ValueError, match=r"pc.hi must be in \[0, 1\], got 1.5"):
        pair_pd(Interval(0.5, 0.1, 1.5))
