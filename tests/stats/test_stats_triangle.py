"""Triangle test: p-value, Pc, pd and Thurstonian d' against spec 000 and mpmath."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from blindtest.stats import (
    Interval,
    dprime_from_pc,
    pc_from_dprime,
    pc_from_pd,
    pd_from_pc,
    power_row,
    triangle_test,
    upper_tail,
)

from data.triangle_reference import DPRIME_FROM_PC, PC_FROM_DPRIME, TRIANGLE_CASES

# Reference values: tests/data/triangle_reference.py (mpmath, mp.dps = 50; see its header).
P_RTOL = 1e-9  # p-values and interval bounds
D_RTOL = 1e-6  # d'


def close(actual: float, expected: float, rtol: float) -> bool:
    return actual == expected or abs(actual - expected) <= rtol * abs(expected)


# --- spec 000, quoted verbatim ---


def test_nine_of_twenty_is_p_0_19_with_pd_upper_bound_53_percent() -> None:
    # Spec 000: "9 of 20 gives p = 0.19 and a pd interval of 0% to 53%".
    result = triangle_test(9, 20)
    assert f"{result.p_value:.2f}" == "0.19"
    assert f"{100 * result.pd.lo:.0f}%" == "0%"
    assert f"{100 * result.pd.hi:.0f}%" == "53%"


def test_fourteen_of_twenty_is_p_0_0009_and_pd_55_percent_19_to_82() -> None:
    # Spec 000: "14 of 20, p = 0.0009"; "pd = 55% ... with a 95% interval of 19% to 82%".
    result = triangle_test(14, 20)
    assert f"{result.p_value:.4f}" == "0.0009"
    assert f"{100 * result.pd.estimate:.0f}%" == "55%"
    assert f"{100 * result.pd.lo:.0f}%" == "19%"
    assert f"{100 * result.pd.hi:.0f}%" == "82%"


# --- psychometric function ---


def test_chance_is_one_third_at_zero_dprime() -> None:
    assert pc_from_dprime(0.0) == 1 / 3
    assert pc_from_dprime(1e-300) == pytest.approx(1 / 3, rel=1e-15)
    assert pc_from_dprime(math.inf) == 1.0


def test_pc_from_dprime_matches_mpmath() -> None:
    misses = [(d, pc) for d, pc in PC_FROM_DPRIME if not close(pc_from_dprime(d), pc, P_RTOL)]
    assert misses == []


def test_pc_from_dprime_matches_the_noncentral_f_identity() -> None:
    # Independent formula: Pc(d') = P(F(1, 1, 2 d'^2 / 3) > 3) (David and Trivedi, 1962).
    for d in (0.2, 0.7, 1.0, 1.9, 3.3, 5.0, 7.5):
        assert pc_from_dprime(d) == pytest.approx(stats.ncf.sf(3, 1, 1, 2 * d * d / 3), rel=1e-10)


def test_dprime_from_pc_matches_mpmath() -> None:
    misses = [(pc, d) for pc, d in DPRIME_FROM_PC if not close(dprime_from_pc(pc), d, D_RTOL)]
    assert misses == []


@pytest.mark.parametrize("d", [1e-5, 1e-3, 0.02, 0.4, 1.0, 2.2, 4.0, 8.0, 14.0])
def test_dprime_round_trips_through_pc(d: float) -> None:
    assert dprime_from_pc(pc_from_dprime(d)) == pytest.approx(d, rel=1e-6)


def test_dprime_is_zero_at_or_below_chance_and_infinite_at_one() -> None:
    assert dprime_from_pc(0.0) == 0.0
    assert dprime_from_pc(1 / 3) == 0.0
    assert dprime_from_pc(0.2) == 0.0
    assert dprime_from_pc(1.0) == math.inf
    assert 0 < dprime_from_pc(1 - 1e-15) < 40


def test_pd_is_the_guessing_correction_clipped_to_the_unit_interval() -> None:
    assert pd_from_pc(0.7) == pytest.approx(0.55, rel=1e-15)
    assert pd_from_pc(0.2) == 0.0
    assert pd_from_pc(1.0) == 1.0
    assert pc_from_pd(0.4) == pytest.approx(0.6, rel=1e-15)
    assert pc_from_pd(0.0) == 1 / 3


# --- full results ---


def test_triangle_results_match_mpmath() -> None:
    misses = []
    for n, k, p, pc_lo, pc_hi, pd, pd_lo, pd_hi, d, d_lo, d_hi in TRIANGLE_CASES:
        r = triangle_test(k, n)
        checks = [
            close(r.p_value, p, P_RTOL),
            close(r.pc.lo, pc_lo, P_RTOL),
            close(r.pc.hi, pc_hi, P_RTOL),
            close(r.pd.estimate, pd, P_RTOL),
            close(r.pd.lo, pd_lo, P_RTOL),
            close(r.pd.hi, pd_hi, P_RTOL),
            close(r.dprime.estimate, d, D_RTOL),
            close(r.dprime.lo, d_lo, D_RTOL),
            close(r.dprime.hi, d_hi, D_RTOL),
        ]
        if not all(checks):
            misses.append((n, k, checks))
    assert misses == []


def test_all_correct_gives_infinite_dprime_written_as_null() -> None:
    result = triangle_test(20, 20)
    assert result.dprime.estimate == math.inf
    assert result.dprime.hi == math.inf
    payload = result.to_dict()
    assert payload["dprime"]["estimate"] is None
    assert payload["dprime"]["hi"] is None
    assert payload["dprime"]["lo"] == pytest.approx(3.3671565858972, rel=1e-9)
    json.dumps(payload, allow_nan=False)


def test_zero_correct_has_p_one_and_no_discrimination() -> None:
    result = triangle_test(0, 20)
    assert result.p_value == 1.0
    assert result.pd == Interval(0.0, 0.0, result.pd.hi)
    assert result.dprime.estimate == 0.0
    assert result.dprime.lo == 0.0


def test_single_trial_edges() -> None:
    right, wrong = triangle_test(1, 1), triangle_test(0, 1)
    assert right.p_value == pytest.approx(1 / 3, rel=1e-15)
    assert wrong.p_value == 1.0
    assert right.pc.lo == pytest.approx(0.025, rel=1e-12)
    assert right.pc.hi == 1.0
    assert wrong.pc.lo == 0.0


def test_confidence_one_spans_everything() -> None:
    result = triangle_test(12, 20, confidence_level=1.0)
    assert (result.pc.lo, result.pc.hi) == (0.0, 1.0)
    assert (result.pd.lo, result.pd.hi) == (0.0, 1.0)
    assert (result.dprime.lo, result.dprime.hi) == (0.0, math.inf)


def test_result_echoes_inputs() -> None:
    result = triangle_test(14, 20, confidence_level=0.9)
    assert (result.correct, result.n, result.confidence_level) == (14, 20, 0.9)
    assert result.statistic == 0.7
    assert result.interval_method == "clopper-pearson"
    assert set(result.to_dict()) >= {"correct", "n", "p_value", "pc", "pd", "dprime"}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: triangle_test(21, 20), r"correct must be in \[0, n\] = \[0, 20\], got 21"),
        (lambda: triangle_test(0, 0), r"n must be an integer >= 1, got 0"),
        (
            lambda: triangle_test(3, 20, confidence_level=95),
            r"confidence_level must be in \[0, 1\], got 95",
        ),
        (lambda: dprime_from_pc(1.2), r"pc must be in \[0, 1\], got 1.2"),
        (lambda: pc_from_dprime(-0.5), r"dprime must be in \[0, inf\], got -0.5"),
        (lambda: pc_from_pd(-0.1), r"pd must be in \[0, 1\], got -0.1"),
    ],
)
def test_bad_arguments_are_refused(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


# --- validity by simulation (randomization, not an assumption about the judge) ---


@pytest.mark.parametrize("judge", ["always position 1", "uniform guesser"])
def test_fixed_design_false_positive_rate_matches_achieved_alpha(judge: str) -> None:
    # The design draws the odd position uniformly; a judge who cannot see a difference picks
    # independently of it. 200,000 null runs of the 20-trial design, seed 20261129.
    rng = np.random.default_rng(20261129)
    runs, n = 200_000, 20
    odd = rng.integers(1, 4, size=(runs, n))
    picks = (
        np.ones_like(odd) if judge == "always position 1" else rng.integers(1, 4, size=(runs, n))
    )
    correct = (picks == odd).sum(axis=1)
    rejected = upper_tail(correct, n, 1 / 3) <= 0.05
    achieved = power_row(n).achieved_alpha
    rate = float(rejected.mean())
    standard_error = math.sqrt(achieved * (1 - achieved) / runs)
    assert abs(rate - achieved) < 4 * standard_error, (rate, achieved)
