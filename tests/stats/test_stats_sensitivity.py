"""The sensitivity check: planted regressions the judge must prefer against, significantly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from blindtest.stats.sensitivity import sensitivity_check
from blindtest.stats.sizing import sensitivity_power


def test_a_judge_that_sees_the_regression_passes() -> None:
    scores = np.r_[np.ones(15), np.zeros(3), np.full(2, 0.5)]  # 15 of 18 untied for the own answer
    result = sensitivity_check(scores)
    assert result.passed
    assert (result.n, result.untied, result.tied) == (20, 18, 2)
    assert result.p_value == pytest.approx(
        stats.binomtest(15, 18, 0.5, alternative="greater").pvalue, rel=1e-12
    )
    assert result.interval.lo > 0.5
    assert result.to_dict()["interval"].keys() == {"estimate", "lo", "hi"}


def test_a_judge_at_chance_or_by_position_fails() -> None:
    # A judge that always picks the left answer: the design balances sides, so half go each way.
    assert not sensitivity_check(np.r_[np.ones(10), np.zeros(10)]).passed
    rng = np.random.default_rng(2)
    assert not sensitivity_check(rng.integers(0, 2, size=20).astype(float)).passed


def test_ties_count_against_the_judge_only_on_the_mean_score() -> None:
    # 12 wins and 28 ties: every untied planted comparison is right, but most were not seen.
    scores = np.r_[np.ones(12), np.full(28, 0.5)]
    assert sensitivity_check(scores).passed
    mean = sensitivity_check(scores, estimand="mean-score")
    assert mean.estimate == pytest.approx((12 + 14) / 40)
    assert mean.method == "exact-unconditional"


def test_a_panel_is_checked_on_its_mean_scores() -> None:
    scores = np.array([1, 5 / 6, 2 / 3, 1, 1, 5 / 6, 1, 2 / 3, 1, 1, 1, 5 / 6] * 3)
    result = sensitivity_check(scores, judges=3)
    assert result.method == "betting"
    assert result.passed


def test_planning_n_has_the_power_it_promises() -> None:
    # With 20 planted comparisons and a judge right on 80% of the untied ones (10% ties),
    # the check passes with probability 0.82 (exact).
    assert sensitivity_power(20, true=0.8, ties=0.1)[0] == pytest.approx(
        0.8155698175870018, rel=1e-9
    )
