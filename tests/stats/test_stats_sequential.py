"""Sequential e-process: closed form, log-space stability, boundaries, exact and simulated
crossing rates under the null, and stopping times under an alternative."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from blindtest.stats import (
    crossing_boundary,
    crossing_distribution,
    e_process,
    log_e_value,
    log_e_values,
    simulate_crossings,
)

from data.sequential_reference import (
    BOUNDARY_ALPHA_01,
    BOUNDARY_ALPHA_05,
    LOG_E_VALUES,
    NULL_CROSSING,
    NULL_FIRST_CROSSING_05,
    STOPPING,
)

# Reference values: tests/data/sequential_reference.py (exact integers and mpmath; see header).
RTOL = 1e-9
# Seeds of the simulations quoted in blindtest/stats/NOTES.md.
NULL_SEED = 20261129
ALT_SEED = 20261130


def exact_e(n: int, k: int) -> Fraction:
    """E(n, k) = (3/2) int_{1/3}^1 p^k (1-p)^(n-k) dp / ((1/3)^k (2/3)^(n-k)), expanded by
    repeated integration by parts into sum_{j<=k} C(n+1, j) 2^(k-j) / ((n+1) C(n, k))."""
    top = sum(math.comb(n + 1, j) * 2 ** (k - j) for j in range(k + 1))
    return Fraction(top, (n + 1) * math.comb(n, k))


def test_small_e_values_match_exact_fractions() -> None:
    assert exact_e(1, 1) == 2
    assert exact_e(1, 0) == Fraction(1, 2)
    for n in range(0, 13):
        for k in range(n + 1):
            assert math.exp(log_e_value(k, n)) == pytest.approx(float(exact_e(n, k)), rel=1e-12)


def test_log_e_values_match_the_reference_grid() -> None:
    # Relative 1e-9 on E is absolute 1e-9 on log E.
    misses = [
        (n, k, log_e_value(k, n), ref)
        for n, k, ref in LOG_E_VALUES
        if abs(log_e_value(k, n) - ref) > RTOL
    ]
    assert len(LOG_E_VALUES) > 500
    assert misses == []


def test_log_space_is_stable_to_ten_thousand_trials() -> None:
    logs = log_e_values(10_000)
    assert np.all(np.isfinite(logs))
    assert np.all(np.diff(logs) > 0)  # E increases with k at fixed n
    # Closed forms at the ends: E(n, 0) = 1 / (n + 1), deep in the lower tail where betaincc
    # underflows and the series branch takes over; E(n, n) = (3^(n+1) - 1) / (2 (n + 1)).
    assert logs[0] == pytest.approx(-math.log(10_001), abs=RTOL)
    assert logs[-1] == pytest.approx(10_001 * math.log(3) - math.log(20_002), abs=RTOL)
    reference = {k: ref for n, k, ref in LOG_E_VALUES if n == 10_000}
    for k, ref in reference.items():
        assert abs(logs[k] - ref) <= RTOL, k


def test_vectorized_and_scalar_values_agree() -> None:
    logs = log_e_values(300)
    for k in (0, 37, 100, 101, 250, 300):
        assert logs[k] == log_e_value(k, 300)


def test_crossing_boundaries_match_exact_integer_comparison() -> None:
    assert crossing_boundary(300) == BOUNDARY_ALPHA_05
    assert crossing_boundary(200, alpha=0.01) == BOUNDARY_ALPHA_01
    # Four straight correct calls are the earliest possible stop: E(4, 4) = 24.2 >= 20.
    assert BOUNDARY_ALPHA_05[:5] == (None, None, None, None, 4)


def test_exact_null_crossing_probabilities_match_the_reference() -> None:
    for alpha, horizon, probability in NULL_CROSSING:
        result = crossing_distribution(1 / 3, horizon, alpha=alpha)
        assert result.probability == pytest.approx(probability, rel=RTOL)
        assert result.probability <= alpha  # Ville's inequality
    first = crossing_distribution(1 / 3, 200).first_crossing
    pairs = zip(first, NULL_FIRST_CROSSING_05, strict=True)
    misses = [n for n, (a, b) in enumerate(pairs, 1) if not (a == b or abs(a - b) <= RTOL * b)]
    assert misses == []


def test_exact_stopping_times_match_the_reference() -> None:
    for pc, median, probability in STOPPING:
        result = crossing_distribution(pc, 200)
        assert result.median == median
        assert result.probability == pytest.approx(probability, rel=RTOL)


def test_e_process_stops_at_the_first_crossing() -> None:
    result = e_process([True, True, True, True, True])
    assert result.log_e_values[0] == pytest.approx(math.log(2), rel=1e-12)
    assert result.crossed_at == 4
    assert result.stopped
    assert result.statistic == pytest.approx(24.2, rel=1e-12)  # (3^5 - 1) / 10
    assert result.p_value == pytest.approx(1 / 24.2, rel=1e-12)
    assert result.threshold == 20.0


def test_e_process_without_a_crossing() -> None:
    result = e_process([False, True, False, False, True, False])
    assert result.crossed_at is None
    assert not result.stopped
    assert result.p_value == 1.0  # the running maximum never exceeded E_0 = 1
    assert len(result.log_e_values) == 6
    empty = e_process([])
    assert (empty.n, empty.statistic, empty.p_value) == (0, 1.0, 1.0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: log_e_value(5, 4), r"correct must be in \[0, n\] = \[0, 4\], got 5"),
        (lambda: log_e_value(0, -1), r"n must be an integer >= 0, got -1"),
        (lambda: e_process([True, 1]), r"outcomes\[1\] must be True or False, got 1"),  # type: ignore[list-item]
        (lambda: e_process([True], alpha=1.0), r"alpha must be in \(0, 1\), got 1.0"),
        (lambda: crossing_distribution(1.5, 10), r"pc must be in \[0, 1\], got 1.5"),
    ],
)
def test_bad_arguments_are_refused(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


# --- validity by simulation ---


def test_adversarial_peeker_false_positive_rate_is_at_most_alpha() -> None:
    # 20,000 null runs over a 200-trial horizon; the peeker stops at the first crossing.
    crossed = simulate_crossings(1 / 3, 20_000, 200, rng=np.random.default_rng(NULL_SEED)) > 0
    rate = float(crossed.mean())
    exact = crossing_distribution(1 / 3, 200).probability
    standard_error = math.sqrt(exact * (1 - exact) / 20_000)
    assert rate <= 0.05
    assert abs(rate - exact) < 4 * standard_error, (rate, exact)


def test_median_stopping_time_at_pc_0_7() -> None:
    # Spec 000: "median 9 trials at Pc = 0.7 in simulation". The exact distribution agrees.
    stops = simulate_crossings(0.7, 20_000, 200, rng=np.random.default_rng(ALT_SEED))
    stops = np.where(stops == 0, 201, stops)
    assert int(np.quantile(stops, 0.5, method="inverted_cdf")) == 9
    exact = np.cumsum(crossing_distribution(0.7, 200).first_crossing)
    for n in (6, 9, 15, 30):
        simulated = float((stops <= n).mean())
        error = math.sqrt(exact[n - 1] * (1 - exact[n - 1]) / 20_000)
        assert abs(simulated - exact[n - 1]) < 4 * error + 1e-12, n
