"""The tie-inclusive estimand for one judge: Tango's statistic, the exact unconditional test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import optimize

from blindtest.stats.mean_score import (
    mean_score_critical,
    mean_score_interval,
    mean_score_p_value,
    mean_score_rejection,
    mean_score_test,
    tango_statistic,
)

# Reference: tests/data/decision_reference.json (mpmath at 50 digits: the restricted maximum
# likelihood by numerical maximisation, p-values by enumerating every table and maximising
# over a 4,001-point tie grid refined by golden-section search).
REFERENCE: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "data" / "decision_reference.json").read_text()
)["mean_score"]


@pytest.mark.parametrize("case", REFERENCE, ids=lambda c: f"{c['wins']}-{c['ties']}-{c['losses']}")
def test_tango_statistic_and_p_value_equal_mpmath(case: dict[str, Any]) -> None:
    w, t, loss = case["wins"], case["ties"], case["losses"]
    n, null = w + t + loss, case["null"]
    z = float(tango_statistic(w, loss, n, 2.0 * null - 1.0))
    assert z == pytest.approx(case["tango"], rel=1e-12, abs=1e-12)
    # Swapping the sides mirrors the statistic (what the "less" test relies on).
    assert float(tango_statistic(loss, w, n, 1.0 - 2.0 * null)) == pytest.approx(-z, abs=1e-12)
    p = mean_score_p_value(
        case["wins"], case["ties"], case["losses"], case["null"], alternative=case["alternative"]
    )
    # The supremum over the tie rate is found to about 1e-8 (a grid zoomed twice).
    assert p == pytest.approx(case["p_value"], rel=1e-7)
    assert p <= case["p_value"] * (1 + 1e-12)  # never above the true supremum


@pytest.mark.parametrize(
    ("w", "t", "loss", "delta0"),
    [(10, 5, 20, -0.1), (0, 20, 5, -0.1), (7, 3, 0, 0.2), (40, 2, 1, -0.6)],
)
def test_restricted_maximum_likelihood_is_the_numerical_maximum(
    w: int, t: int, loss: int, delta0: float
) -> None:
    n = w + t + loss

    def minus_log_likelihood(q: float) -> float:
        total = t * np.log(1 - 2 * q - delta0) if t else 0.0
        total += w * np.log(q + delta0) if w else 0.0
        total += loss * np.log(q) if loss else 0.0
        return -float(total)

    lo, hi = max(0.0, -delta0) + 1e-12, (1 - delta0) / 2 - 1e-12
    q = optimize.minimize_scalar(
        minus_log_likelihood, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13}
    ).x
    z_numeric = (w - loss - n * delta0) / np.sqrt(n * (2 * q + delta0 * (1 - delta0)))
    assert float(tango_statistic(w, loss, n, delta0)) == pytest.approx(z_numeric, rel=1e-6)


def test_the_statistic_rises_with_wins_at_a_fixed_untied_count() -> None:
    # What lets the tail be summed as binomial tails given the untied count.
    for n in range(1, 121):
        for delta0 in (-0.6, -0.2, -0.1, -0.02, 0.0, 0.1, 0.4):
            w, u = np.triu_indices(n + 1)
            z = tango_statistic(w, u - w, n, delta0)
            # Along each U the rows come in order of W.
            for untied in range(1, n + 1, max(1, n // 7)):
                along = z[u == untied]
                assert (np.diff(along) > 0).all(), (n, delta0, untied)


def test_size_at_the_margin_is_at_most_alpha_over_every_tie_rate() -> None:
    # Exact: for each n the rejection region {Z >= z*} and its probability at the null over
    # 402 tie rates spanning the whole range [0, 0.9], half even in tau and half even in
    # arcsin(sqrt(tau)) (finer near 0); the refined supremum inside the test must not miss
    # a peak this grid finds. Every n to 40, then every 8th to 200 (the benchmark,
    # tests/benchmarks/bench_decision_size.py meanscore, checks every n <= 200 over 2,002 tie
    # rates at four alpha x margin; docs/statistics.md).
    phis = np.linspace(0.0, np.arcsin(np.sqrt(0.9)), 201)
    ties = np.unique(np.r_[np.linspace(0.0, 0.9, 201), np.sin(phis) ** 2])
    worst = 0.0
    for n in [*range(1, 41), *range(48, 201, 8)]:
        critical = mean_score_critical(n, 0.45, 0.05)
        size = mean_score_rejection(n, 0.45, critical, mean=0.45, ties=ties)
        worst = max(worst, float(size.max()))
        assert size.max() <= 0.05, n
    assert worst > 0.049  # it is not trivially conservative either


def test_size_below_the_margin_is_smaller_still() -> None:
    ties = np.linspace(0.0, 0.8, 81)
    for n in (10, 40, 120):
        critical = mean_score_critical(n, 0.45, 0.05)
        assert mean_score_rejection(n, 0.45, critical, mean=0.4, ties=ties).max() <= 0.05
        power = mean_score_rejection(n, 0.45, critical, mean=0.55, ties=np.array([0.3]))[0]
        assert power > 0.05


def test_interval_holds_the_estimate_and_mirrors_under_swapping_sides() -> None:
    interval = mean_score_interval(30, 12, 3, confidence_level=0.9)
    assert interval.estimate == pytest.approx(0.8)
    assert interval.lo < interval.estimate < interval.hi
    mirror = mean_score_interval(3, 12, 30, confidence_level=0.9)
    assert mirror.lo == pytest.approx(1 - interval.hi, abs=1e-8)
    assert mirror.hi == pytest.approx(1 - interval.lo, abs=1e-8)
    # The one-sided test at the interval's ends is at its level (up to the non-monotone
    # p-value's jumps, which the decision guards against).
    assert mean_score_p_value(30, 12, 3, interval.lo) == pytest.approx(0.05, abs=2e-3)
    full = mean_score_test(30, 12, 3, lower=0.45, upper=None)
    assert full.p_less is None
    assert full.p_greater is not None
    assert full.p_greater < 1e-6


def test_bad_mean_score_arguments_echo_the_value() -> None:
    with pytest.raises(ValueError, match=r"null must be in \(0, 1\), got 1.2"):
        mean_score_p_value(3, 2, 1, 1.2)
    with pytest.raises(
        ValueError, match=r"alternative must be one of 'greater', 'less'; got 'two'"
    ):
        mean_score_p_value(3, 2, 1, 0.4, alternative="two")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="wins \\+ ties \\+ losses must be at least 1, got 0"):
        mean_score_p_value(0, 0, 0, 0.4)
