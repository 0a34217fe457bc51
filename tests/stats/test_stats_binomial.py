"""Exact binomial p-values: one-sided tails from the incomplete beta, two-sided R convention."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
from scipy import stats

from blindtest.stats import binomial_p_value, binomial_test, lower_tail, upper_tail

from data.binomial_reference import TRIANGLE_P_VALUES, TWO_SIDED_HALF, TWO_SIDED_THIRD

# Reference values: tests/data/binomial_reference.py (exact rational sums; see its header).
RTOL = 1e-9


def close(actual: float, expected: float, rtol: float = RTOL) -> bool:
    return actual == expected or abs(actual - expected) <= rtol * abs(expected)


def test_one_sided_triangle_p_values_match_exact_sums() -> None:
    misses = [
        (n, k, binomial_p_value(k, n, 1 / 3, "greater"), p)
        for n, k, p in TRIANGLE_P_VALUES
        if not close(binomial_p_value(k, n, 1 / 3, "greater"), p)
    ]
    assert len(TRIANGLE_P_VALUES) > 500
    assert misses == []


def test_lower_tail_matches_exact_sums_by_symmetry() -> None:
    # P(X <= n - k | 2/3) = P(Y >= k | 1/3) with Y = n - X.
    misses = [
        (n, k)
        for n, k, p in TRIANGLE_P_VALUES
        if not close(binomial_p_value(n - k, n, 2 / 3, "less"), p)
    ]
    assert misses == []


def test_two_sided_p_values_match_r_convention_against_one_half() -> None:
    misses = [
        (n, k, binomial_p_value(k, n, 0.5), p)
        for n, k, p in TWO_SIDED_HALF
        if not close(binomial_p_value(k, n, 0.5), p)
    ]
    assert len(TWO_SIDED_HALF) > 500
    assert misses == []


def test_two_sided_p_values_match_r_convention_against_one_third() -> None:
    misses = [(n, k) for n, k, p in TWO_SIDED_THIRD if not close(binomial_p_value(k, n, 1 / 3), p)]
    assert misses == []


def test_small_cases_against_fraction_enumeration() -> None:
    # Exact enumeration: P(X >= k) = sum_j C(n, j) 2^(n - j) / 3^n.
    for n in range(1, 9):
        for k in range(n + 1):
            exact = Fraction(sum(math.comb(n, j) * 2 ** (n - j) for j in range(k, n + 1)), 3**n)
            assert binomial_p_value(k, n, 1 / 3, "greater") == pytest.approx(
                float(exact), rel=1e-13
            )


def test_vectorized_tails_cover_out_of_range_counts() -> None:
    assert list(upper_tail([-1, 0, 21], 20, 1 / 3)) == [1.0, 1.0, 0.0]
    assert list(lower_tail([-1, 20, 25], 20, 1 / 3)) == [0.0, 1.0, 1.0]
    ks = list(range(21))
    expected = stats.binom.sf([k - 1 for k in ks], 20, 0.3)
    assert upper_tail(ks, 20, 0.3) == pytest.approx(expected, rel=1e-12)


def test_result_echoes_inputs_and_is_json_ready() -> None:
    result = binomial_test(14, 20, 1 / 3, alternative="greater")
    assert (result.k, result.n, result.alternative) == (14, 20, "greater")
    assert result.statistic == 0.7
    assert result.p_value == pytest.approx(0.0008788065585934, rel=1e-12)
    assert result.proportion.estimate == 0.7
    assert (
        json.loads(json.dumps(result.to_dict(), allow_nan=False))["proportion"]["estimate"] == 0.7
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: binomial_p_value(3, 2, 0.5), r"k must be in \[0, n\] = \[0, 2\], got 3"),
        (lambda: binomial_p_value(1, 2, 1.0), r"p0 must be in \(0, 1\), got 1.0"),
        (lambda: binomial_p_value(1, 2, 0.5, "above"), r"alternative must be one of"),  # type: ignore[arg-type]
    ],
)
def test_bad_arguments_are_refused(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
