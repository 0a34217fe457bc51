"""Interval type, JSON convention, Clopper-Pearson and Wilson intervals."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from blindtest.stats import Interval, clopper_pearson, json_float, proportion_interval, wilson

from data.binomial_reference import CLOPPER_PEARSON, WILSON

# Reference values: tests/data/binomial_reference.py (mpmath, mp.dps = 50; see its header).
RTOL = 1e-9


def close(actual: float, expected: float, rtol: float = RTOL) -> bool:
    return actual == expected or abs(actual - expected) <= rtol * abs(expected)


def test_interval_to_dict_has_the_report_shape() -> None:
    assert Interval(0.5, 0.25, 0.75).to_dict() == {"estimate": 0.5, "lo": 0.25, "hi": 0.75}


def test_infinite_and_nan_values_are_written_as_null() -> None:
    d = Interval(math.inf, 1.5, math.inf).to_dict()
    assert d == {"estimate": None, "lo": 1.5, "hi": None}
    assert json.dumps(d, allow_nan=False)
    assert json_float(-math.inf) is None
    assert json_float(math.nan) is None
    assert json_float(2) == 2.0


def test_interval_is_frozen_and_slotted() -> None:
    interval = Interval(0.5, 0.25, 0.75)
    with pytest.raises(AttributeError):
        interval.lo = 0.0  # type: ignore[misc]
    assert not hasattr(interval, "__dict__")


def test_clopper_pearson_matches_mpmath() -> None:
    misses = []
    for n, k, level, lo, hi in CLOPPER_PEARSON:
        interval = clopper_pearson(k, n, confidence_level=float(level))
        if not (close(interval.lo, lo) and close(interval.hi, hi) and interval.estimate == k / n):
            misses.append((n, k, level, interval, lo, hi))
    assert len(CLOPPER_PEARSON) > 300
    assert misses == []


def test_wilson_matches_mpmath() -> None:
    misses = []
    for n, k, level, lo, hi in WILSON:
        interval = wilson(k, n, confidence_level=float(level))
        if not (close(interval.lo, lo) and close(interval.hi, hi)):
            misses.append((n, k, level, interval, lo, hi))
    assert len(WILSON) > 500
    assert misses == []


@pytest.mark.parametrize(
    ("k", "n"), [(0, 1), (1, 1), (3, 7), (40, 41), (1, 10_000), (5000, 10_000)]
)
def test_intervals_agree_with_scipy_binomtest(k: int, n: int) -> None:
    result = stats.binomtest(k, n)
    for method, ours in (("wilson", wilson), ("exact", clopper_pearson)):
        ci = result.proportion_ci(0.95, method=method)
        mine = ours(k, n, confidence_level=0.95)
        # scipy's exact interval comes from brentq with xtol=2e-12 (absolute).
        assert mine.lo == pytest.approx(ci.low, rel=1e-9, abs=1e-11)
        assert mine.hi == pytest.approx(ci.high, rel=1e-9, abs=1e-11)


def test_wilson_lower_bound_of_four_out_of_four_is_spec_0_5101() -> None:
    # Spec 002: "A perfect 4-of-4 gives a Wilson lower bound of 0.5101".
    assert f"{wilson(4, 4).lo:.4f}" == "0.5101"


def test_edge_counts_pin_the_matching_bound() -> None:
    # k = 0 and k = n: that side of both intervals is the boundary itself.
    for method in ("clopper-pearson", "wilson"):
        zero = proportion_interval(0, 20, method=method)
        full = proportion_interval(20, 20, method=method)
        assert zero.lo == 0.0
        assert zero.hi > 0.0
        assert full.hi == 1.0
        assert full.lo < 1.0
    # n = 1, k = 1: the exact lower bound is alpha/2 = 0.025 (1 - (1 - p) = p at n = 1).
    assert clopper_pearson(1, 1).lo == pytest.approx(0.025, rel=1e-12)
    assert clopper_pearson(0, 1).hi == pytest.approx(0.975, rel=1e-12)


def test_confidence_one_is_the_whole_unit_interval() -> None:
    assert clopper_pearson(3, 10, confidence_level=1.0) == Interval(0.3, 0.0, 1.0)
    assert wilson(3, 10, confidence_level=1.0) == Interval(0.3, 0.0, 1.0)


def test_confidence_zero_follows_each_definition() -> None:
    # Wilson at z = 0 is the point estimate; Clopper-Pearson at a = 1 is the pair of beta
    # medians, which brackets the estimate without collapsing onto it.
    assert wilson(3, 10, confidence_level=0.0) == Interval(0.3, 0.3, 0.3)
    cp = clopper_pearson(3, 10, confidence_level=0.0)
    assert cp.lo == pytest.approx(stats.beta.median(3, 8), rel=1e-12)
    assert cp.hi == pytest.approx(stats.beta.median(4, 7), rel=1e-12)
    assert cp.lo < 0.3 < cp.hi


def test_intervals_are_nested_in_confidence() -> None:
    narrow, wide = clopper_pearson(7, 20, confidence_level=0.9), clopper_pearson(7, 20)
    assert wide.lo < narrow.lo < narrow.hi < wide.hi


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: clopper_pearson(5, 4), r"k must be in \[0, n\] = \[0, 4\], got 5"),
        (lambda: clopper_pearson(-1, 4), r"k must be an integer >= 0, got -1"),
        (lambda: clopper_pearson(0, 0), r"n must be an integer >= 1, got 0"),
        (lambda: clopper_pearson(1.5, 4), r"k must be an integer >= 0, got 1.5"),  # type: ignore[arg-type]
        (lambda: clopper_pearson(True, 4), r"k must be an integer >= 0, got True"),
        (
            lambda: wilson(1, 4, confidence_level=1.2),
            r"confidence_level must be in \[0, 1\], got 1.2",
        ),
        (
            lambda: wilson(1, 4, confidence_level=math.nan),
            r"confidence_level must be a real number",
        ),
        (
            lambda: proportion_interval(1, 4, method="wald"),  # type: ignore[arg-type]
            r"method must be one of 'clopper-pearson', 'wilson'; got 'wald'",
        ),
    ],
)
def test_bad_arguments_are_refused_with_the_value_and_range(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


@given(
    n=st.integers(min_value=1, max_value=5000),
    share=st.floats(min_value=0.0, max_value=1.0),
    level=st.floats(min_value=0.0, max_value=1.0),
)
@settings(max_examples=200, deadline=None)
def test_intervals_always_bracket_the_estimate_inside_the_unit_interval(
    n: int, share: float, level: float
) -> None:
    k = round(share * n)
    for interval in (
        clopper_pearson(k, n, confidence_level=level),
        wilson(k, n, confidence_level=level),
    ):
        assert 0.0 <= interval.lo <= interval.estimate <= interval.hi <= 1.0
