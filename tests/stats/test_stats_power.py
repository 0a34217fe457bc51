"""Exact power, achieved alpha and sample size for triangle, pair and preference designs."""

from __future__ import annotations

import json

import pytest
from scipy import stats

from blindtest.stats import (
    critical_value,
    power_row,
    power_table,
    preference_test,
    rejection_region,
    similarity_power_row,
    similarity_smallest_n,
    smallest_n,
)

from data.power_reference import (
    PAIR_POWER,
    PAIR_SIMILARITY_POWER,
    TRIANGLE_POWER,
    TRIANGLE_SIMILARITY_POWER,
)

# Reference values: tests/data/power_reference.py (exact rational arithmetic; see its header).
RTOL = 1e-9


def close(actual: float, expected: float, rtol: float = RTOL) -> bool:
    return actual == expected or abs(actual - expected) <= rtol * abs(expected)


# Spec 000, verbatim ("The interesting rows, at alpha 0.05"):
# trials  reject at   achieved alpha  power if Pc = 0.6  power if Pc = 0.7
SPEC_000_TABLE = [
    ("20", "11 correct", "0.038", "0.76", "0.95"),
    ("23", "12 correct", "0.048", "0.84", "0.98"),
    ("30", "15 correct", "0.043", "0.90", "0.99"),
]


@pytest.mark.parametrize(("trials", "reject_at", "achieved", "power6", "power7"), SPEC_000_TABLE)
def test_spec_000_power_table_comes_out_exactly(
    trials: str, reject_at: str, achieved: str, power6: str, power7: str
) -> None:
    row = power_row(int(trials), alpha=0.05, pcs=(0.6, 0.7))
    assert f"{row.critical} correct" == reject_at
    assert f"{row.achieved_alpha:.3f}" == achieved
    assert f"{row.power[0.6]:.2f}" == power6
    assert f"{row.power[0.7]:.2f}" == power7


def test_ninety_percent_power_at_pc_0_6_needs_thirty_trials() -> None:
    # Spec 000: "If you want 90% power against ... Pc = 0.6, run 30."
    assert smallest_n(0.9, 0.6) == 30
    assert power_row(29).power[0.6] < 0.9 <= power_row(30).power[0.6]


def test_triangle_power_matches_exact_rational_tables() -> None:
    misses = []
    for alpha, n, critical, size, *powers in TRIANGLE_POWER:
        row = power_row(n, alpha=alpha, pcs=(0.5, 0.6, 0.7, 0.8))
        ok = row.critical == critical and close(row.achieved_alpha, size)
        ok = ok and all(
            close(row.power[pc], p) for pc, p in zip((0.5, 0.6, 0.7, 0.8), powers, strict=True)
        )
        if not ok:
            misses.append((alpha, n, row))
    assert misses == []


def test_pair_power_matches_exact_rational_tables() -> None:
    misses = []
    for n, lower, upper, size, *powers in PAIR_POWER:
        row = power_row(n, protocol="pair", pcs=(0.6, 0.7, 0.8))
        ok = (row.lower_critical, row.critical) == (lower, upper) and close(
            row.achieved_alpha, size
        )
        ok = ok and all(
            close(row.power[pc], p) for pc, p in zip((0.6, 0.7, 0.8), powers, strict=True)
        )
        if not ok:
            misses.append((n, row))
    assert misses == []


def test_triangle_similarity_rows_match_exact_rational_tables() -> None:
    misses = []
    for n, hi, size, power0, power1 in TRIANGLE_SIMILARITY_POWER:
        row = similarity_power_row(n, 0.3, pds=(0.0, 0.1))
        expected_lo = None if hi is None else 0
        ok = (row.similar_lo, row.similar_hi) == (expected_lo, hi)
        ok = ok and close(row.achieved_alpha, size)
        ok = ok and close(row.power[0.0], power0) and close(row.power[0.1], power1)
        if not ok:
            misses.append((n, row))
    assert misses == []


def test_pair_similarity_rows_match_exact_rational_tables() -> None:
    misses = []
    for n, lo, hi, size, power0 in PAIR_SIMILARITY_POWER:
        row = similarity_power_row(n, 0.3, protocol="pair")
        ok = (row.similar_lo, row.similar_hi) == (lo, hi) and close(row.achieved_alpha, size)
        if not (ok and close(row.power[0.0], power0)):
            misses.append((n, row))
    assert misses == []


@pytest.mark.parametrize("p0", [0.5, 1 / 3, 0.8])
def test_two_sided_region_is_exactly_where_binomtest_p_is_at_most_alpha(p0: float) -> None:
    for n in (*range(1, 26), 97):
        p_values = [stats.binomtest(k, n, p0).pvalue for k in range(n + 1)]
        for alpha in (0.05, 0.01):
            region = rejection_region(n, p0, alpha, "two-sided")
            assert [region.rejects(k) for k in range(n + 1)] == [p <= alpha for p in p_values]


def test_preference_region_is_exactly_where_the_verdict_is_directional() -> None:
    for n in range(1, 41):
        row = power_row(n, protocol="preference")
        for wins in range(n + 1):
            directional = preference_test(wins, n - wins).verdict != "inconclusive"
            lower = -1 if row.lower_critical is None else row.lower_critical
            in_region = row.critical is not None and (wins >= row.critical or wins <= lower)
            assert directional == in_region, (n, wins)


def test_critical_values_for_each_alternative() -> None:
    assert critical_value(20, 1 / 3, 0.05, "greater") == 11
    assert critical_value(20, 0.5, 0.05, "two-sided") == 15
    assert critical_value(20, 0.5, 0.05, "less") == 5
    assert critical_value(2, 1 / 3, 0.05) is None
    region = rejection_region(20, 0.5, 0.05, "two-sided")
    assert (region.lower, region.upper) == (5, 15)


def test_too_few_trials_cannot_reject() -> None:
    row = power_row(2)
    assert row.critical is None
    assert row.achieved_alpha == 0.0
    assert row.power[0.7] == 0.0
    assert power_row(5, protocol="pair").critical is None


def test_smallest_n_returns_none_when_out_of_reach() -> None:
    assert smallest_n(0.99, 0.4, n_max=50) is None
    assert similarity_smallest_n(0.8, 0.3) is not None
    n = similarity_smallest_n(0.8, 0.3)
    assert n is not None
    assert similarity_power_row(n, 0.3).power[0.0] >= 0.8


def test_rows_are_json_ready() -> None:
    payload = json.loads(json.dumps(power_table([20, 23])[0].to_dict(), allow_nan=False))
    assert payload["power"] == {
        "0.6": pytest.approx(0.7553, abs=1e-4),
        "0.7": pytest.approx(0.952, abs=1e-3),
    }


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: power_row(0), r"n must be an integer >= 1, got 0"),
        (
            lambda: power_row(20, protocol="abx"),  # type: ignore[arg-type]
            r"protocol must be one of 'triangle', 'pair', 'preference'",
        ),
        (lambda: power_row(20, pcs=(1.2,)), r"pc must be in \[0, 1\], got 1.2"),
        (lambda: smallest_n(1.0, 0.6), r"target_power must be in \(0, 1\), got 1.0"),
        (lambda: rejection_region(20, 0.0, 0.05), r"p0 must be in \(0, 1\), got 0.0"),
        (lambda: similarity_power_row(20, 0.3, pds=(-1.0,)), r"pd must be in \[0, 1\], got -1.0"),
    ],
)
def test_bad_arguments_are_refused(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
