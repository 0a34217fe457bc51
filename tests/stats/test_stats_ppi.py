"""The prediction-powered estimate of the people's score: equal to ppi-python's mean estimator
where they meet, exact where it falls back, honest about missing judgements, and covering by
simulation (small here; the full grid is tests/benchmarks/sim_ppi.py)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from scipy import stats

from blindtest.stats import ppi_core as core
from blindtest.stats.ppi import (
    MIN_DEGREES_OF_FREEDOM,
    PPIMissingResult,
    PPIResult,
    ppi_preference,
    ppi_preference_missing,
)

DATA = Path(__file__).resolve().parent.parent / "data"
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
# ppi-python 0.2.3 in a throwaway venv; the command is in tests/data/ppi_reference.py.
REFERENCE: dict[str, Any] = json.loads((DATA / "ppi_reference.json").read_text())
CASES = REFERENCE["cases"]


def _sim() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sim_ppi", BENCHMARKS / "sim_ppi.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sim_ppi"] = module
    spec.loader.exec_module(module)
    return module


def _run(name: str, **options: Any) -> PPIResult:
    case = CASES[name]
    return ppi_preference(case["people"], case["judge_sampled"], case["judge_unsampled"], **options)


def _close(got: Any, want: dict[str, float], rtol: float = 1e-12) -> None:
    assert got.estimate == pytest.approx(want["estimate"], rel=rtol, abs=1e-14)
    assert got.lo == pytest.approx(want["lo"], rel=rtol, abs=1e-14)
    assert got.hi == pytest.approx(want["hi"], rel=rtol, abs=1e-14)


# ------------------------------------------------------------ against ppi-python and mpmath


@pytest.mark.parametrize("name", sorted(CASES))
def test_plug_in_weight_equals_ppi_python(name: str) -> None:
    result = _run(name, weight="plug-in", quantile="z", interval="normal")
    assert result.weight == pytest.approx(CASES[name]["plug_in_weight"], rel=1e-12)
    _close(result.normal, CASES[name]["plug_in"])
    _close(result.interval, CASES[name]["plug_in"])
    assert result.method == "ppi-normal"
    assert result.weight_rule == "plug-in"


@pytest.mark.parametrize("name", sorted(CASES))
def test_weight_one_equals_ppi_python(name: str) -> None:
    result = _run(name, weight="one", quantile="z", interval="normal")
    assert result.weight == 1.0
    _close(result.normal, CASES[name]["weight_one"])


def test_stratified_equals_ppi_python_per_stratum_combined_by_share() -> None:
    strata = REFERENCE["stratified"]["strata"]
    people, judged, unsampled, labels, labels_u = [], [], [], [], []
    for name, data in strata.items():
        people += data["people"]
        judged += data["judge_sampled"]
        unsampled += data["judge_unsampled"]
        labels += [name] * len(data["people"])
        labels_u += [name] * len(data["judge_unsampled"])
    result = ppi_preference(
        people,
        judged,
        unsampled,
        strata_sampled=labels,
        strata_unsampled=labels_u,
        weight="plug-in",
        quantile="z",
        interval="normal",
    )
    _close(result.normal, REFERENCE["stratified"]["combined"])
    by_name = {s.name: s for s in result.strata}
    assert by_name["code"].share == 0.4
    assert by_name["chat"].share == 0.6
    for name, data in strata.items():
        assert by_name[name].weight == pytest.approx(data["weight"], rel=1e-12)
        assert by_name[name].estimate == pytest.approx(data["estimate"], rel=1e-12)
    assert math.isnan(result.weight)  # one weight per stratum, none overall


@pytest.mark.parametrize("name", ["even", "small", "one_sided", "weak_judge"])
def test_untied_share_equals_ppi_python_at_a_fixed_weight(name: str) -> None:
    result = _run(name, weight=0.7, quantile="z", interval="normal")
    assert result.untied_share is not None
    _close(result.untied_share.normal, CASES[name]["untied_weight_0.7"], rtol=1e-11)
    assert result.untied_share.weight == pytest.approx(0.7, rel=1e-14)


@pytest.mark.parametrize("name", ["even", "small", "one_sided", "weak_judge"])
def test_effective_n_is_broska_formula_at_ppi_python_correlation(name: str) -> None:
    result = _run(name)
    assert result.effective_n.estimate == pytest.approx(CASES[name]["effective_n"], rel=1e-12)
    assert result.judge_worth.estimate == pytest.approx(
        CASES[name]["effective_n"] - result.n, rel=1e-12
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_exact_bounds_equal_mpmath_clopper_pearson_layers(name: str) -> None:
    values = (0.0, 1.0) if name == "confidence" else (0.0, 0.5, 1.0)
    result = _run(name, interval="exact", score_values=values)
    assert result.method == "people-exact"
    assert result.interval.lo == pytest.approx(CASES[name]["exact"]["lo"], rel=1e-10)
    assert result.interval.hi == pytest.approx(CASES[name]["exact"]["hi"], rel=1e-10)
    assert result.interval.estimate == pytest.approx(np.mean(CASES[name]["people"]), rel=1e-15)


# ------------------------------------------------------------------------------- weights


def test_cross_fit_weight_of_a_fold_comes_from_the_other_fold() -> None:
    y = np.array([[1.0, 0.0, 1.0, 0.5, 0.0, 1.0, 0.5, 1.0]])
    f = np.array([[1.0, 0.0, 0.5, 0.5, 0.0, 1.0, 1.0, 0.0]])
    fu = np.array([[1.0, 0.5, 0.0, 1.0, 0.0, 0.5]])
    lam = core.cross_fit_weights(y, f, fu)
    for fold in (0, 1):
        other = np.arange(8) % 2 != fold
        yo, fo = y[0, other], f[0, other]
        cov = np.mean((yo - yo.mean()) * (fo - fo.mean()))
        var = np.var(np.concatenate([fo, fu[0]]), ddof=1)
        want = min(max(cov / ((1 + 8 / 6) * var), 0.0), 1.0)
        assert lam[0, np.arange(8) % 2 == fold] == pytest.approx(want, rel=1e-14)


def test_auto_weight_cross_fits_below_the_threshold_and_plugs_in_above() -> None:
    assert _run("even").weight_rule == "cross-fit"
    case = CASES["one_sided"]
    people = case["people"] * 3
    judged = case["judge_sampled"] * 3
    assert ppi_preference(people, judged, case["judge_unsampled"]).weight_rule == "plug-in"


def test_cross_fitted_estimate_is_unbiased_where_plug_in_is_not() -> None:
    sim = _sim()
    rng = np.random.default_rng(11)
    truth = sim.Truth(0.80, 0.10)
    y_all, j_all = sim.draw(rng, 10_000, 200, truth, "side", 0.9)
    y, f, fu = y_all[:, :20], j_all[:, :20], j_all[:, 20:]
    cross = core.stratum_parts(y, f, fu, "cross-fit").estimate
    plug = core.stratum_parts(y, f, fu, "plug-in").estimate
    se = cross.std() / math.sqrt(cross.size)
    assert abs(cross.mean() - truth.score) < 3 * se
    assert plug.mean() - truth.score > 6 * se  # PPI++'s plug-in weight, tuned on the sample


def test_a_stratum_people_judged_entirely_takes_weight_zero() -> None:
    result = ppi_preference(
        [1.0, 0.0, 0.5, 1.0, 1.0, 0.0],
        [1.0, 0.0, 0.5, 1.0, 0.5, 0.0],
        [1.0, 0.0, 0.5],
        strata_sampled=["a", "a", "a", "b", "b", "b"],
        strata_unsampled=["a", "a", "a"],
    )
    by_name = {s.name: s for s in result.strata}
    assert by_name["b"].weight == 0.0
    assert by_name["b"].n_unsampled == 0
    assert by_name["b"].estimate == pytest.approx(2.0 / 3.0)


# ---------------------------------------------------------------------- the interval rule


def test_normal_interval_is_student_t_on_satterthwaite_degrees_of_freedom() -> None:
    result = _run("even")
    assert result.method == "ppi-normal"
    case = CASES["even"]
    y, f = np.array(case["people"]), np.array(case["judge_sampled"])
    fu = np.array(case["judge_unsampled"])
    lam = core.cross_fit_weights(y[None, :], f[None, :], fu[None, :])[0]
    d = y - lam * f
    n, n_u, lam_bar = y.size, fu.size, lam.mean()
    v = d.var() / n + lam_bar**2 * fu.var() / n_u
    dd, ff = d - d.mean(), fu - fu.mean()
    vv = (np.mean(dd**4) - d.var() ** 2) / n**3 + lam_bar**4 * (
        np.mean(ff**4) - fu.var() ** 2
    ) / n_u**3
    df = min(2 * v**2 / vv, n - 1)
    assert result.degrees_of_freedom == pytest.approx(df, rel=1e-12)
    q = stats.t.isf(0.025, df)
    assert result.interval.lo == pytest.approx(result.estimate - q * math.sqrt(v), rel=1e-12)
    assert result.standard_error == pytest.approx(math.sqrt(v), rel=1e-12)
    assert result.p_value == pytest.approx(
        2 * stats.t.sf(abs(result.estimate - 0.5) / math.sqrt(v), df), rel=1e-10
    )


def test_few_people_fall_back_to_the_people_exact_interval() -> None:
    case = CASES["small"]
    result = ppi_preference(
        case["people"][:15], case["judge_sampled"][:15], case["judge_unsampled"]
    )
    assert result.degrees_of_freedom < MIN_DEGREES_OF_FREEDOM
    assert result.method == "people-exact"
    assert result.interval == result.exact
    assert result.people_only == result.exact
    assert "degrees of freedom" in result.reason
    assert "holds at any size" in result.reason
    assert result.estimate == pytest.approx(np.mean(case["people"][:15]))
    assert math.isfinite(result.normal.lo)  # kept beside it
    assert math.isnan(result.effective_n.lo)  # no interval for the worth below 100


def test_judge_equal_to_people_gives_no_variance_and_says_so() -> None:
    people = [1.0, 0.0, 0.5] * 20
    result = ppi_preference(people, people, [1.0, 0.0] * 100, weight="one")
    # Only the judge's own spread is left: the sample says nothing about its errors.
    assert result.standard_error == pytest.approx(0.5 / math.sqrt(200), rel=1e-12)
    assert result.method == "people-normal"
    assert "does not vary" in result.reason


def test_forced_intervals_are_the_ones_asked_for() -> None:
    case = CASES["small"]
    args = (case["people"][:15], case["judge_sampled"][:15], case["judge_unsampled"])
    forced = ppi_preference(*args, interval="normal")
    assert forced.method == "ppi-normal"
    assert forced.reason == "the normal interval was asked for"
    exact = _run("even", interval="exact")
    assert exact.method == "people-exact"
    assert exact.interval == exact.exact


def test_exact_p_value_is_where_the_exact_interval_touches_the_null() -> None:
    case = CASES["one_sided"]
    args = (case["people"][:30], case["judge_sampled"][:30], case["judge_unsampled"])
    result = ppi_preference(*args, interval="exact")
    assert 0 < result.p_value < 0.05
    edge = ppi_preference(*args, interval="exact", confidence_level=1 - result.p_value)
    assert edge.interval.lo == pytest.approx(0.5, abs=1e-9)


def test_interval_is_clipped_to_the_score_range() -> None:
    people = [1.0] * 27 + [0.0] * 3
    judge = [1.0] * 25 + [0.5] * 5
    result = ppi_preference(people, judge, [1.0] * 200, interval="normal")
    assert result.interval.hi <= 1.0
    assert result.normal.hi > 1.0


# ----------------------------------------------------------------------- what stands beside


def test_judge_only_and_people_only_describe_each_side() -> None:
    case = CASES["even"]
    result = _run("even")
    every = np.array(case["judge_sampled"] + case["judge_unsampled"])
    assert result.judge_only.estimate == pytest.approx(every.mean(), rel=1e-14)
    half = stats.t.isf(0.025, every.size - 1) * every.std() / math.sqrt(every.size)
    assert result.judge_only.hi - result.judge_only.estimate == pytest.approx(half, rel=1e-12)
    assert result.people_only.estimate == pytest.approx(np.mean(case["people"]), rel=1e-14)
    assert result.people_only_method in {"people-normal", "people-exact"}


def test_worth_is_everything_for_a_judge_that_is_people_and_nothing_for_noise() -> None:
    rng = np.random.default_rng(3)
    people = rng.choice([0.0, 0.5, 1.0], size=50).tolist()
    same = ppi_preference(people, people, [0.5] * 150)
    assert same.effective_n.estimate == pytest.approx(200.0)
    noise = rng.choice([0.0, 0.5, 1.0], size=50).tolist()
    anti = [1.0 - p for p in people]
    opposed = ppi_preference(people, anti, noise * 3)
    assert opposed.effective_n.estimate == pytest.approx(50.0)  # a negative correlation: none
    assert opposed.judge_worth.estimate == pytest.approx(0.0)


def test_worth_has_an_interval_from_a_hundred_people_and_it_covers() -> None:
    result = _run("one_sided")
    assert result.n == 100
    assert result.effective_n.lo < result.effective_n.estimate < result.effective_n.hi
    assert result.judge_worth.lo == pytest.approx(result.effective_n.lo - 100)
    sim = _sim()
    truth = sim.Truth(0.45, 0.20)
    y_all, j_all = sim.draw(np.random.default_rng(21), 1500, 1000, truth, "fair", 0.7)
    comb = core.intervals([y_all[:, :100]], [j_all[:, :100]], [j_all[:, 100:]], [1.0]).combined
    true = sim.true_effective_n(sim.joint(truth, "fair", 0.7), 100, 1000)
    coverage = np.mean((comb.effective_lo <= true) & (true <= comb.effective_hi))
    assert coverage >= 0.92  # 0.946 in the full grid (10,000 data sets)


def test_untied_share_needs_verdicts_and_an_untied_one() -> None:
    panel = [0.25, 0.75, 0.5, 1.0] * 10
    result = ppi_preference(
        panel, [0.0, 1.0, 0.5, 1.0] * 10, [1.0] * 50, score_values=(0, 0.25, 0.5, 0.75, 1)
    )
    assert result.untied_share is None
    ties = ppi_preference([0.5] * 30, [0.5] * 30, [1.0] * 50)
    assert ties.untied_share is None


def test_untied_share_falls_back_to_clopper_pearson_on_few_untied() -> None:
    from blindtest.stats import clopper_pearson

    people = [1.0] * 6 + [0.0] * 2 + [0.5] * 4
    judge = [1.0] * 5 + [0.0] * 3 + [0.5] * 4
    result = ppi_preference(people, judge, [1.0, 0.0, 0.5] * 30)
    assert result.untied_share is not None
    assert result.untied_share.method == "people-exact"
    assert result.untied_share.interval == clopper_pearson(6, 8)


# ------------------------------------------------------------------------ missing judgements


def test_missing_judgements_void_the_estimate_when_asked() -> None:
    case = CASES["even"]
    people = [None, *case["people"][1:]]
    result = ppi_preference_missing(people, case["judge_sampled"], case["judge_unsampled"])
    assert result.status == "void"
    assert result.interval is None
    assert result.n_missing == 1
    assert "never dropped" in result.reason


def test_missing_judgements_are_bounded_by_losses_and_wins() -> None:
    case = CASES["even"]
    people = [None, None, *case["people"][2:]]
    result = ppi_preference_missing(
        people, case["judge_sampled"], case["judge_unsampled"], missing="bound"
    )
    assert result.status == "bounded"
    assert result.as_losses is not None
    assert result.as_wins is not None
    assert result.interval is not None
    assert result.interval.lo == min(result.as_losses.interval.lo, result.as_wins.interval.lo)
    assert result.interval.hi == max(result.as_losses.interval.hi, result.as_wins.interval.hi)
    assert result.estimate_low < result.estimate_high
    assert math.isnan(result.interval.estimate)


def test_the_bound_is_the_worst_case_for_every_fill_of_the_exact_interval() -> None:
    case = CASES["small"]
    people: list[float | None] = [None, None, None, *case["people"][3:]]
    args = (case["judge_sampled"], case["judge_unsampled"])
    bound = ppi_preference_missing(people, *args, missing="bound", interval="exact")
    assert bound.interval is not None
    for fill in ([0.5, 1.0, 0.0], [1.0, 1.0, 0.5], [0.0, 0.5, 0.5], [1.0, 0.0, 1.0]):
        filled = ppi_preference(fill + case["people"][3:], *args, interval="exact")
        assert bound.interval.lo <= filled.interval.lo
        assert filled.interval.hi <= bound.interval.hi


def test_nothing_missing_is_complete() -> None:
    case = CASES["even"]
    result = ppi_preference_missing(
        case["people"], case["judge_sampled"], case["judge_unsampled"], missing="bound"
    )
    assert result.status == "complete"
    assert result.result is not None
    assert result.interval == result.result.interval


# ------------------------------------------------------------------------- bad arguments


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"people": [1.5, 0.0]}, r"people\[0\] must be in \[0, 1\], got 1.5"),
        ({"people": [None, 0.0]}, r"people\[0\] must be a real number, got None"),
        ({"people": [0.3, 0.0]}, r"people\[0\] = 0.3 is not one of score_values"),
        ({"judge_sampled": [0.5]}, r"one score each per sampled comparison .* got 2 and 1"),
        ({"weight": "best"}, r"weight must be one of 'auto', 'plug-in'.*got 'best'"),
        ({"weight": 1.2}, r"weight must be one of .* or a number in \[0, 1\]; got 1.2"),
        ({"interval": "wald"}, r"interval must be one of 'auto', 'normal', 'exact'; got 'wald'"),
        ({"confidence_level": 1.0}, r"confidence_level must be in \(0, 1\), got 1.0"),
        ({"score_values": (0.5, 0.0)}, r"score_values must be at least two increasing"),
        ({"strata_sampled": ["a", "b"]}, r"give strata_sampled and strata_unsampled together"),
        (
            {"strata_sampled": ["a", "a"], "strata_unsampled": ["a", "b", "b"]},
            r"stratum 'b' has 2 comparisons but no people's judgement",
        ),
    ],
)
def test_bad_arguments_are_refused_with_the_value(change: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {
        "people": [1.0, 0.0],
        "judge_sampled": [1.0, 0.5],
        "judge_unsampled": [0.0, 1.0, 0.5],
    }
    args.update(change)
    with pytest.raises(ValueError, match=message):
        ppi_preference(**args)


def test_missing_rule_is_checked() -> None:
    with pytest.raises(ValueError, match=r"missing must be one of 'void', 'bound'; got 'drop'"):
        ppi_preference_missing([1.0], [1.0], [0.0], missing="drop")  # type: ignore[arg-type]


def test_results_are_frozen_slotted_and_json_ready() -> None:
    small = CASES["small"]
    results: list[PPIResult | PPIMissingResult] = [
        _run("even"),
        _run("confidence"),
        ppi_preference(small["people"][:10], small["judge_sampled"][:10], [0.5, 1.0]),
        ppi_preference_missing([None, 1.0], [1.0, 1.0], [0.0], missing="bound"),
        ppi_preference_missing([None, 1.0], [1.0, 1.0], [0.0]),
    ]
    for result in results:
        text = json.dumps(result.to_dict(), allow_nan=False)
        assert "NaN" not in text
        assert not hasattr(result, "__dict__")
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(result, dataclasses.fields(result)[0].name, None)
    assert _run("even").to_dict()["interval"].keys() == {"estimate", "lo", "hi"}


# -------------------------------------------------------------------- coverage, in small


@pytest.mark.parametrize(
    ("total", "n", "truth", "kind", "agreement"),
    [
        (1000, 50, (0.45, 0.20), "side", 0.9),  # rare, one-sided disagreements
        (1000, 20, (0.30, 0.10), "side", 0.9),  # the hardest cell of the full grid
        (200, 100, (0.45, 0.20), "length", 0.7),
        (1000, 100, (0.80, 0.10), "fair", 0.5),
    ],
)
def test_interval_covers_the_people_score(
    total: int, n: int, truth: tuple[float, float], kind: str, agreement: float
) -> None:
    sim = _sim()
    rng = np.random.default_rng(20261206 + n)
    people = sim.Truth(*truth)
    y_all, j_all = sim.draw(rng, 1500, total, people, kind, agreement)
    vec = core.intervals([y_all[:, :n]], [j_all[:, :n]], [j_all[:, n:]], [1.0])
    theta = people.score
    coverage = np.mean((vec.lo <= theta) & (theta <= vec.hi))
    # 1,500 data sets: a standard error of 0.0056; the full grid runs 10,000.
    assert coverage >= 0.93


def test_interval_is_narrower_than_people_alone_when_the_judge_tracks_them() -> None:
    sim = _sim()
    rng = np.random.default_rng(5)
    y_all, j_all = sim.draw(rng, 1500, 1000, sim.Truth(0.45, 0.20), "fair", 0.7)
    vec = core.intervals([y_all[:, :100]], [j_all[:, :100]], [j_all[:, 100:]], [1.0])
    assert np.mean(vec.method == 0) > 0.99
    assert np.mean(vec.hi - vec.lo) < 0.9 * np.mean(vec.people_hi - vec.people_lo)
