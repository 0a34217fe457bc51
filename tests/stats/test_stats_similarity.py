"""Similarity: "indistinguishable within pd0" as a tested claim (triangle and pair)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from blindtest.stats import pc_at_pd, similarity_test


def exact_lower_tail(k: int, n: int, p: Fraction) -> Fraction:
    return sum((math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k + 1)), Fraction(0))


def test_triangle_p_value_is_the_exact_lower_tail_at_the_null_boundary() -> None:
    # H0: pd >= 0.3 <=> Pc >= 1/3 + 0.2 = 8/15; p = P(X <= k | n, 8/15), by exact enumeration.
    for n, k in [(20, 9), (20, 5), (30, 9), (12, 0), (12, 12)]:
        exact = exact_lower_tail(k, n, Fraction(8, 15))
        assert similarity_test(k, n, 0.3).p_value == pytest.approx(float(exact), rel=1e-12)


def test_thirty_of_a_hundred_is_similar_within_pd_30_percent() -> None:
    result = similarity_test(30, 100, 0.3)
    assert result.similar
    assert result.p_value < 1e-5
    assert result.pc0 == pytest.approx(8 / 15, rel=1e-15)


def test_nine_of_twenty_is_not_yet_a_similarity_claim() -> None:
    # Spec 000's null example bounds pd at 53%; a 30% similarity claim needs more trials.
    result = similarity_test(9, 20, 0.3)
    assert not result.similar
    assert result.pd_upper > 0.3


@pytest.mark.parametrize("protocol", ["triangle", "pair"])
def test_similar_exactly_when_the_one_sided_upper_bound_is_below_pd0(protocol: str) -> None:
    # Duality of the exact test and the one-sided (1 - alpha) Clopper-Pearson bound.
    for n in (10, 25, 60, 150):
        for k in range(n + 1):
            for pd0 in (0.2, 0.3, 0.5):
                r = similarity_test(k, n, pd0, protocol=protocol)  # type: ignore[arg-type]
                if abs(r.pd_upper - pd0) > 1e-9:
                    assert r.similar == (r.pd_upper < pd0), (n, k, pd0, r)


def test_pair_similarity_is_two_one_sided_tests() -> None:
    # H0: |Pc - 1/2| >= 0.15; p = max(P(X <= k | 0.65), P(X >= k | 0.35)).
    for n, k in [(100, 50), (100, 58), (40, 20), (40, 30)]:
        low = exact_lower_tail(k, n, Fraction(13, 20))
        high = 1 - exact_lower_tail(k - 1, n, Fraction(7, 20))
        expected = float(max(low, high))
        assert similarity_test(k, n, 0.3, protocol="pair").p_value == pytest.approx(
            expected, rel=1e-12
        )
    assert similarity_test(50, 100, 0.3, protocol="pair").similar


def test_pc_at_pd_uses_each_protocols_chance_rate() -> None:
    assert pc_at_pd(0.0) == 1 / 3
    assert pc_at_pd(0.4) == pytest.approx(0.6, rel=1e-15)
    assert pc_at_pd(0.4, "pair") == pytest.approx(0.7, rel=1e-15)


def test_result_echoes_inputs() -> None:
    result = similarity_test(30, 100, 0.3, alpha=0.01)
    assert (result.correct, result.n, result.pd0, result.alpha) == (30, 100, 0.3, 0.01)
    assert result.protocol == "triangle"
    assert result.statistic == 0.3
    assert set(result.to_dict()) >= {"p_value", "similar", "pd_upper"}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: similarity_test(3, 20, 0.0), r"pd0 must be in \(0, 1\), got 0.0"),
        (lambda: similarity_test(3, 20, 1.0), r"pd0 must be in \(0, 1\), got 1.0"),
        (lambda: similarity_test(21, 20, 0.3), r"correct must be in \[0, n\] = \[0, 20\], got 21"),
        (
            lambda: similarity_test(3, 20, 0.3, protocol="preference"),  # type: ignore[arg-type]
            r"protocol must be one of 'triangle', 'pair'; got 'preference'",
        ),
        (lambda: similarity_test(3, 20, 0.3, alpha=1.5), r"alpha must be in \(0, 1\), got 1.5"),
    ],
)
def test_bad_arguments_are_refused(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
