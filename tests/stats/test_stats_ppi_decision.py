"""A margin rule decided on the people's prediction-powered estimate: the one-sided p-values of
every interval the rule can choose (Student's t or Hall's skewness-corrected statistic on a
normal estimate; the exact layer-sum bounds inverted by bisection), checked against values
computed by hand (scipy's binomial tail, mpmath's Clopper-Pearson), the bounds they invert,
and the size at the margin by seeded simulation."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import mpmath
import numpy as np
import pytest
from scipy import stats

from blindtest.stats import ppi_core as core
from blindtest.stats.decision import interval_outcome, p_value_outcome
from blindtest.stats.intervals import Interval
from blindtest.stats.ppi import ppi_decision, ppi_preference

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


def _data(seed: int = 20261206, n: int = 120, total: int = 500) -> tuple[list[float], ...]:
    rng = np.random.default_rng(seed)
    truth = rng.choice([0.0, 0.5, 1.0], p=[0.35, 0.2, 0.45], size=total)
    judge = np.where(rng.random(total) < 0.75, truth, rng.choice([0.0, 0.5, 1.0], size=total))
    return truth[:n].tolist(), judge[:n].tolist(), judge[n:].tolist()


def _vector(people: list[float], judge: list[float], rest: list[float], **options: Any) -> Any:
    return core.intervals(
        [np.asarray([people])], [np.asarray([judge])], [np.asarray([rest])], [1.0], **options
    )


def _hall_by_hand(t: float, g: float) -> float:
    # Hall (1992), with the estimate's skewness g (the data's over sqrt(n))
    return t + g * t * t / 3 + g * g * t**3 / 27 + g / 6


def test_normal_one_sided_p_is_the_larger_of_student_and_hall_by_hand() -> None:
    people, judge, rest = _data()
    vec = _vector(people, judge, rest)
    assert int(vec.method[0]) == 0
    comb = vec.combined
    est, var, df, g = (float(a[0]) for a in (comb.estimate, comb.variance, comb.df, comb.skewness))
    t = (est - 0.4) / math.sqrt(var)
    plain = stats.t.sf(t, df)
    hall = stats.t.sf(_hall_by_hand(t, g), df)
    ys = [np.asarray([people])]
    got = core.one_sided_p(vec, ys, [1.0], core.VERDICT_SCORES, 0.4, above=True)
    assert float(got[0]) == pytest.approx(max(plain, hall), rel=1e-12)
    unskewed = core.one_sided_p(vec, ys, [1.0], core.VERDICT_SCORES, 0.4, above=True, skew=False)
    assert float(unskewed[0]) == pytest.approx(plain, rel=1e-12)
    # below: the same statistic reflected, the skewness with it
    below = core.one_sided_p(vec, ys, [1.0], core.VERDICT_SCORES, 0.7, above=False)
    t_below = (0.7 - est) / math.sqrt(var)
    expected = max(stats.t.sf(t_below, df), stats.t.sf(_hall_by_hand(t_below, -g), df))
    assert float(below[0]) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("g", [-0.4, -0.1, 0.0, 0.05, 0.2, 0.9])
def test_hall_transformation_is_increasing_and_inverted(g: float) -> None:
    t = np.linspace(-6, 6, 241)
    skew = np.full_like(t, g)
    out = core.hall(t, skew)
    assert np.all(np.diff(out) >= 0)  # its derivative is (1 + g t / 3)^2
    assert core.hall(t, skew) == pytest.approx([_hall_by_hand(x, g) for x in t], rel=1e-12)
    assert core.hall_inverse(out, skew) == pytest.approx(t, abs=1e-9)


def _binomial_p(k: int, n: int, boundary: float) -> float:
    # one layer (no ties): the Clopper-Pearson lower bound clears b exactly when P(X >= k | b)
    # is below the level, so the inverted p is the binomial upper tail itself
    return float(stats.binom.sf(k - 1, n, boundary))


@pytest.mark.parametrize(("k", "n", "boundary"), [(14, 20, 0.4), (30, 50, 0.45), (3, 30, 0.2)])
def test_exact_one_sided_p_of_one_layer_is_the_binomial_tail(
    k: int, n: int, boundary: float
) -> None:
    y = np.asarray([[1.0] * k + [0.0] * (n - k)])
    above = core.exact_one_sided_p([y], [1.0], (0.0, 1.0), boundary, above=True)
    assert float(above[0]) == pytest.approx(_binomial_p(k, n, boundary), rel=1e-9)
    below = core.exact_one_sided_p([y], [1.0], (0.0, 1.0), boundary, above=False)
    assert float(below[0]) == pytest.approx(float(stats.binom.cdf(k, n, boundary)), rel=1e-9)


def _mpmath_root(fn: Any, lo: float, hi: float) -> mpmath.mpf:
    """The root of an increasing ``fn`` on [lo, hi], by bisection in mpmath's arithmetic."""
    a, b = mpmath.mpf(lo), mpmath.mpf(hi)
    for _ in range(80):
        mid = (a + b) / 2
        a, b = (mid, b) if fn(mid) < 0 else (a, mid)
    return (a + b) / 2


def _mpmath_layer_lower(k: int, n: int, tail: mpmath.mpf) -> mpmath.mpf:
    """Clopper-Pearson's one-sided lower bound by hand: the p with P(X >= k | p) = tail."""
    if k == 0:
        return mpmath.mpf(0)
    # P(X >= k | p) is the regularised incomplete beta I_p(k, n - k + 1), increasing in p
    return _mpmath_root(lambda p: mpmath.betainc(k, n - k + 1, 0, p, regularized=True) - tail,
                        0.0, 1.0)  # fmt: skip


def test_exact_one_sided_p_with_ties_inverts_the_layer_sum_by_mpmath() -> None:
    # win 11, tie 6, loss 8 of 25: the lower bound 0.5 L(wins or ties) + 0.5 L(wins), each
    # Clopper-Pearson at half the level (Bonferroni over the two layers); p solves L(p) = 0.4
    mpmath.mp.dps = 30
    n, at_least_tie, wins = 25, 17, 11
    y = np.asarray([[1.0] * wins + [0.5] * (at_least_tie - wins) + [0.0] * (n - at_least_tie)])

    def lower(level: mpmath.mpf) -> mpmath.mpf:
        return (_mpmath_layer_lower(at_least_tie, n, level / 2)
                + _mpmath_layer_lower(wins, n, level / 2)) / 2  # fmt: skip

    expected = _mpmath_root(lambda a: lower(a) - mpmath.mpf("0.4"), 1e-9, 0.999)
    got = core.exact_one_sided_p([y], [1.0], core.VERDICT_SCORES, 0.4, above=True)
    assert float(got[0]) == pytest.approx(float(expected), rel=1e-8)
    assert 0.001 < float(got[0]) < 0.5


def test_exact_bounds_are_nested_in_the_level() -> None:
    # what makes the bisection's p-value valid: a lower bound only rises, an upper bound only
    # falls, as the one-sided level grows, for every data set, strata and ties included
    rng = np.random.default_rng(7)
    ys = [rng.choice([0.0, 0.5, 1.0], size=(200, n)) for n in (9, 30)]
    tails = np.linspace(0.001, 0.999, 60)
    found = [core.exact_bounds(ys, [0.3, 0.7], core.VERDICT_SCORES, t) for t in tails]
    lows = np.stack([lo for lo, _ in found])
    highs = np.stack([hi for _, hi in found])
    assert np.all(np.diff(lows, axis=0) >= -1e-12)
    assert np.all(np.diff(highs, axis=0) <= 1e-12)


@pytest.mark.parametrize("interval", ["auto", "exact"])
@pytest.mark.parametrize("alpha", [0.05, 0.0125, 0.2])
def test_a_one_sided_p_is_at_most_alpha_exactly_when_its_bound_clears(
    interval: str, alpha: float
) -> None:
    rng = np.random.default_rng(11)
    y = rng.choice([0.0, 0.5, 1.0], p=[0.4, 0.2, 0.4], size=(400, 40))
    f = np.where(rng.random(y.shape) < 0.8, y, 1.0)
    fu = rng.choice([0.0, 0.5, 1.0], size=(400, 160))
    vec = core.intervals([y], [f], [fu], [1.0], interval=interval)
    for boundary, lower in ((0.4, True), (0.6, False)):
        p = core.one_sided_p(vec, [y], [1.0], core.VERDICT_SCORES, boundary, above=lower)
        bound = core.one_sided_bound(vec, [y], [1.0], core.VERDICT_SCORES, alpha, lower=lower)
        clears = bound > boundary if lower else bound < boundary
        near = np.abs(p - alpha) < 1e-9  # the knife edge, where bisection decides
        assert np.array_equal((p <= alpha)[~near], clears[~near])
        assert clears.any()
        assert not clears.all()


def test_the_choice_of_interval_does_not_depend_on_the_level() -> None:
    # so one method's p-value serves Holm's every level alpha / k
    rng = np.random.default_rng(5)
    y = rng.choice([0.0, 0.5, 1.0], size=(300, 45))
    f = np.where(rng.random(y.shape) < 0.9, y, 1.0)
    fu = rng.choice([0.0, 0.5, 1.0], size=(300, 400))
    methods = {
        tuple(core.intervals([y], [f], [fu], [1.0], confidence_level=c).method)
        for c in (0.5, 0.9, 0.975, 0.999)
    }
    assert len(methods) == 1
    assert len(set(next(iter(methods)))) > 1  # and the rows do differ in method


def test_ppi_decision_reads_the_rule_against_its_boundaries() -> None:
    people, judge, rest = _data()
    found = ppi_decision(people, judge, rest, "noninferior:0.1")
    assert (found.lower, found.upper, found.method) == (0.4, None, "ppi-normal")
    assert found.status == "complete"
    vec = _vector(people, judge, rest)
    ys = [np.asarray([people])]
    above = float(core.one_sided_p(vec, ys, [1.0], core.VERDICT_SCORES, 0.4, above=True)[0])
    below = float(core.one_sided_p(vec, ys, [1.0], core.VERDICT_SCORES, 0.4, above=False)[0])
    assert found.p_value == pytest.approx(above, rel=1e-12)
    assert found.p_refute == pytest.approx(below, rel=1e-12)
    assert found.interval is not None
    assert found.interval.lo == pytest.approx(
        float(core.one_sided_bound(vec, ys, [1.0], core.VERDICT_SCORES, 0.05, lower=True)[0])
    )
    # equivalence: the claim is the larger of its two one-sided p-values, the refutation the
    # smaller of the two opposite ones
    eq = ppi_decision(people, judge, rest, "equivalent:0.2")
    assert eq.p_upper is not None
    assert eq.p_value == max(eq.p_lower, eq.p_upper)
    assert eq.upper == pytest.approx(0.7)


def test_ppi_decision_on_few_people_inverts_the_exact_interval() -> None:
    people = [1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.0]
    judge = [1.0, 1.0, 0.5, 1.0, 0.5, 1.0, 0.5, 0.5, 1.0, 1.0, 1.0, 0.0]
    rest = [1.0, 0.5, 0.0] * 10
    found = ppi_decision(people, judge, rest, "superior", confidence_level=0.9)
    headline = ppi_preference(people, judge, rest, confidence_level=0.9)
    assert found.method == headline.method == "people-exact"
    assert found.interval == headline.interval  # the same exact bounds at the same level
    edge = ppi_preference(people, judge, rest, confidence_level=1 - 2 * found.p_value)
    assert edge.interval.lo == pytest.approx(0.5, abs=1e-9)  # p: where the bound meets 1/2


def test_ppi_decision_under_the_bound_rule_takes_the_worse_fill() -> None:
    people, judge, rest = _data(n=60)
    gappy: list[float | None] = [*people[:-3], None, None, None]
    found = ppi_decision(gappy, judge, rest, "noninferior:0.1", missing="bound")
    low = ppi_decision([*people[:-3], 0.0, 0.0, 0.0], judge, rest, "noninferior:0.1")
    high = ppi_decision([*people[:-3], 1.0, 1.0, 1.0], judge, rest, "noninferior:0.1")
    assert (found.status, found.method) == ("bounded", "bounded")
    assert found.p_value == max(low.p_value, high.p_value)
    assert found.p_refute == max(low.p_refute, high.p_refute)
    assert found.interval is not None
    assert low.interval is not None
    assert high.interval is not None
    assert found.interval.lo == min(low.interval.lo, high.interval.lo)
    assert math.isnan(found.interval.estimate)
    void = ppi_decision(gappy, judge, rest, "noninferior:0.1")
    assert (void.status, void.interval) == ("void", None)
    assert math.isnan(void.p_value)


def test_ppi_decision_refuses_a_similarity_rule() -> None:
    people, judge, rest = _data()
    with pytest.raises(ValueError, match="similar:PD0 is decided by similarity_decision"):
        ppi_decision(people, judge, rest, "similar:0.3")


@pytest.mark.parametrize(
    ("p_claim", "p_refute", "outcome"),
    [(0.01, 0.99, "shown"), (0.99, 0.01, "refuted"), (0.3, 0.7, "not_shown"),
     (0.05, 0.95, "shown"), (None, 0.5, "not_shown"), (NAN, 0.01, "refuted"),
     (0.01, 0.01, "not_shown")],
)  # fmt: skip
def test_p_value_outcome_reads_each_p_at_alpha(
    p_claim: float | None, p_refute: float | None, outcome: str
) -> None:
    assert p_value_outcome(p_claim, p_refute, 0.05) == outcome


def _benchmark(name: str) -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "benchmarks" / f"{name}.py"
    sys.path.insert(0, str(path.parent))  # it imports its model from the scripts beside it
    try:
        spec = importlib.util.spec_from_file_location(name, path)
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
    # toward the challenger at 70%, the cell where Student's t alone showed 5.6%; 4,000 data
    # sets, so 0.0535 is one standard error over 0.05
    sim = _benchmark("sim_ppi_decision")
    rng = np.random.default_rng(sim.SEED)
    plain, shipped, normal = sim.shown_rate(rng, 4000, 200, 50, sim.Truth(0.30, 0.20), "side", 0.7)
    assert shipped <= 0.0535
    assert shipped < plain  # Hall's correction is what holds it
    assert normal > 0.9  # the prediction-powered normal interval decided nearly every one
    # and above the margin the same rule shows it most of the time
    y_all, j_all = sim.draw(rng, 2000, 200, sim.Truth(0.55, 0.20), "side", 0.7)
    bound, _ = sim.lower_bounds(y_all[:, :50], j_all[:, :50], j_all[:, 50:], 0.05, skew=True)
    assert float(np.mean(bound > 0.4)) > 0.8


@pytest.mark.parametrize("m", [2, 3, 4])
def test_holm_across_challengers_at_their_margins_keeps_the_family_wise_error(m: int) -> None:
    # the suite's small version of tests/benchmarks/sim_ppi_holm.py: m independent challengers,
    # every one at its margin (score 0.40), 50 people's judgements of 1,000 comparisons each, a
    # judge biased toward the challengers; and with one clearly better, where Holm's later
    # steps test at alpha / (m - 1). 1,000 families, so 0.064 is two standard errors over 0.05
    sim = _benchmark("sim_ppi_holm")
    rng = np.random.default_rng(sim.SEED + m)
    cell = (1000, 50, sim.Truth(0.30, 0.20), "side", 0.7)
    assert sim.family_error(rng, 1000, m, cell) <= 0.064
    assert sim.family_error(rng, 1000, m, cell, better=True) <= 0.064


def test_grid_p_values_give_holm_the_rejections_of_the_exact_p_values() -> None:
    sim = _benchmark("sim_ppi_holm")
    rng = np.random.default_rng(3)
    y, judge = sim.draw_cell(rng, 300, 200, sim.Truth(0.30, 0.20), "fair", 0.7)
    for n in (20, 50):
        grid = sim.grid_p_values(y[:, :n], judge[:, :n], judge[:, n:], 4)
        vec = core.intervals([y[:, :n]], [judge[:, :n]], [judge[:, n:]], [1.0])
        exact = core.one_sided_p(vec, [y[:, :n]], [1.0], core.VERDICT_SCORES, 0.4, above=True)
        for k in range(1, 5):
            assert np.array_equal(grid <= 0.05 / k, exact <= 0.05 / k)
