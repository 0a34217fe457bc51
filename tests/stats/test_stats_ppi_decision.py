"""A margin rule decided on an interval (the prediction-powered estimate's), and the one-sided
p-values of the people's score against a boundary that invert the same interval."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from scipy import stats

from blindtest.stats import ppi_core as core
from blindtest.stats.decision import interval_outcome
from blindtest.stats.intervals import Interval
from blindtest.stats.ppi import PPIResult, ppi_one_sided_p, ppi_preference

NAN = math.nan


@pytest.mark.parametrize(
    ("rule", "lo", "hi", "outcome"),
    [
        ("noninferior:0.1", 0.41, 0.7, "shown"),  # lower bound above 1/2 - 0.1
        ("noninferior:0.1", 0.40, 0.7, "not_shown"),  # on the boundary: not past it
        ("noninferior:0.1", 0.2, 0.39, "refuted"),  # upper bound below 1/2 - 0.1
        ("noninferior:0.1", 0.3, 0.6, "not_shown"),
        ("superior", 0.51, 0.8, "shown"),
        ("superior", 0.2, 0.49, "refuted"),
        ("equivalent:0.1", 0.42, 0.58, "shown"),  # inside 1/2 +- 0.1: two one-sided tests
        ("equivalent:0.1", 0.42, 0.61, "not_shown"),
        ("equivalent:0.1", 0.61, 0.9, "refuted"),
        ("equivalent:0.1", 0.1, 0.39, "refuted"),
        ("noninferior:0.1", NAN, 0.7, "not_shown"),  # a missing bound decides nothing
    ],
)
def test_interval_outcome_reads_the_interval_against_the_margin(
    rule: str, lo: float, hi: float, outcome: str
) -> None:
    assert interval_outcome(rule, Interval(NAN, lo, hi)) == outcome


def test_interval_outcome_refuses_a_similarity_rule() -> None:
    with pytest.raises(ValueError, match="similar:PD0 is decided by similarity_decision"):
        interval_outcome("similar:0.3", Interval(0.1, 0.0, 0.2))


def _normal(level: float) -> PPIResult:
    rng = np.random.default_rng(20261206)
    truth = rng.choice([0.0, 0.5, 1.0], p=[0.35, 0.2, 0.45], size=500)
    judge = np.where(rng.random(500) < 0.75, truth, rng.choice([0.0, 0.5, 1.0], size=500))
    result = ppi_preference(
        truth[:120].tolist(),
        judge[:120].tolist(),
        judge[120:].tolist(),
        confidence_level=level,
    )
    assert result.method == "ppi-normal"
    return result


@pytest.mark.parametrize("alpha", [0.05, 0.025])
def test_one_sided_p_at_the_interval_bound_is_alpha(alpha: float) -> None:
    # the 1 - 2 alpha two-sided interval's lower bound is where the one-sided test of "above"
    # has p = alpha, and its upper bound where "below" has: the test inverts the interval
    result = _normal(1 - 2 * alpha)
    lo, hi = result.interval.lo, result.interval.hi
    assert ppi_one_sided_p(result, lo, above=True) == pytest.approx(alpha, rel=1e-9)
    assert ppi_one_sided_p(result, hi, above=False) == pytest.approx(alpha, rel=1e-9)
    assert ppi_one_sided_p(result, lo - 0.01, above=True) < alpha
    assert ppi_one_sided_p(result, lo + 0.01, above=True) > alpha


def test_one_sided_p_is_students_t_on_the_estimates_own_error() -> None:
    result = _normal(0.9)
    stat = (result.estimate - 0.4) / result.standard_error
    expected = stats.t.sf(stat, result.degrees_of_freedom)
    assert ppi_one_sided_p(result, 0.4, above=True) == pytest.approx(expected, rel=1e-12)
    assert ppi_one_sided_p(result, 0.4, above=False) == pytest.approx(1 - expected, rel=1e-12)
    z = stats.norm.sf(stat)
    assert ppi_one_sided_p(result, 0.4, above=True, quantile="z") == pytest.approx(z, rel=1e-12)


def test_one_sided_p_is_nan_where_the_people_own_interval_was_chosen() -> None:
    few = ppi_preference([1.0, 0.0, 0.5, 1.0, 1.0], [1.0, 0.0, 0.5, 0.5, 1.0], [0.5] * 40)
    assert few.method != "ppi-normal"
    assert math.isnan(ppi_one_sided_p(few, 0.4, above=True))


def test_one_sided_p_refuses_a_boundary_off_the_score_scale() -> None:
    with pytest.raises(ValueError, match=r"boundary must be in \[0, 1\] \(a score\), got 1.5"):
        ppi_one_sided_p(_normal(0.9), 1.5, above=True)


def _sim_decision() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "sim_ppi_decision.py"
    sys.path.insert(0, str(path.parent))  # it imports its model from sim_ppi.py beside it
    try:
        spec = importlib.util.spec_from_file_location("sim_ppi_decision", path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def test_noninferiority_on_the_people_estimate_holds_its_size_at_the_margin() -> None:
    # the suite's small version of tests/benchmarks/sim_ppi_decision.py (docs/statistics.md):
    # true score 0.40 = 1/2 - 0.1, 200 comparisons, 50 people's judgements, a judge biased
    # toward one side at 70%; 4,000 data sets, so 0.06 is about three standard errors over 0.05
    sim = _sim_decision()
    rng = np.random.default_rng(sim.SEED)
    rate, normal = sim.shown_rate(rng, 4000, 200, 50, sim.Truth(0.30, 0.20), "side", 0.7)
    assert rate <= 0.06
    assert normal > 0.9  # the prediction-powered normal interval decided nearly every one
    # and above the margin the same rule shows it most of the time
    y_all, j_all = sim.draw(rng, 2000, 200, sim.Truth(0.55, 0.20), "side", 0.7)
    vec = core.intervals(
        [y_all[:, :50]], [j_all[:, :50]], [j_all[:, 50:]], [1.0], confidence_level=0.9
    )
    assert float(np.mean(vec.lo > 0.4)) > 0.8
