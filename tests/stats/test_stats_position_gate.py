"""The position gate over comparisons: exact sign-flip test, Korn-Graubard clustered interval,
pass/warn/fail against a margin; against R's survey package and exact enumeration, and by
seeded simulation of panels that share a signal."""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from blindtest.stats import intervals
from blindtest.stats import position as position_module
from blindtest.stats.position import (
    POSITION_MARGIN,
    clustered_share,
    position_gate,
    sign_flip_test,
    tally_positions,
)

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "benchmarks"))
import gate_simulation as sim  # noqa: E402

DATA = TESTS / "data"


def _cases(name: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads((DATA / name).read_text())
    return found


# ------------------------------------------------------------------ reference values


@pytest.mark.parametrize("case", _cases("position_reference.json"), ids=lambda c: c["name"])
def test_sign_flip_p_matches_exact_enumeration_of_placements(case: dict[str, Any]) -> None:
    p, method = sign_flip_test(case["left"], case["right"])
    assert method == "exact"
    assert p == pytest.approx(float(Fraction(case["p_exact"])), rel=1e-10)


@pytest.mark.parametrize("case", _cases("position_reference_r.json"), ids=lambda c: c["name"])
def test_left_share_interval_matches_korn_graubard_computed_in_r(case: dict[str, Any]) -> None:
    found = position_gate(case["left"], case["right"], alpha=0.05)
    for got, want in ((found.share, case["level_95"]), (found.share_tost, case["level_90"])):
        assert got.estimate == pytest.approx(want["estimate"], rel=1e-12)
        assert got.lo == pytest.approx(want["lo"], rel=1e-9, abs=1e-12)
        assert got.hi == pytest.approx(want["hi"], rel=1e-9, abs=1e-12)
    assert found.effective_n == pytest.approx(case["level_95"]["effective_n"], rel=1e-9)
    if case["level_95"]["design_effect"] is None:
        assert found.design_effect is None
    else:
        assert found.design_effect == pytest.approx(case["level_95"]["design_effect"], rel=1e-9)


@pytest.mark.parametrize(("left", "n"), [(0, 7), (3, 7), (7, 7), (13, 20), (51, 100), (260, 500)])
def test_one_judge_one_pass_is_the_exact_binomial_gate_it_replaces(left: int, n: int) -> None:
    found = position_gate([1] * left + [0] * (n - left), [0] * left + [1] * (n - left))
    cp = intervals.clopper_pearson(left, n, confidence_level=0.95)
    assert (found.share.lo, found.share.hi) == pytest.approx((cp.lo, cp.hi), rel=1e-12, abs=1e-15)
    assert found.p_value == pytest.approx(stats.binomtest(left, n, 0.5).pvalue, rel=1e-12)
    assert found.effective_n == pytest.approx(n)


def test_a_swap_comparison_whose_passes_agree_counts_as_half_left() -> None:
    # Both passes named the same output: one left pick and one right pick, share 1/2.
    found = position_gate([1, 1, 1, 2], [1, 1, 1, 0])
    assert found.share.estimate == pytest.approx((0.5 * 3 + 1.0) / 4)
    assert found.comparisons == 4
    assert found.picks == 8


def test_ties_drop_out_and_a_comparison_that_only_tied_drops_whole() -> None:
    counts = tally_positions(
        [(1, "left"), (1, "tie"), (2, "tie"), (2, "tie"), (3, "right"), (1, "left")]
    )
    assert counts.keys == (1, 2, 3)
    assert (counts.left, counts.right, counts.ties) == ((2, 0, 0), (0, 0, 1), (1, 2, 0))
    found = position_gate(list(counts.left), list(counts.right))
    assert found.comparisons == 2
    assert found.share.estimate == pytest.approx(0.5)


def test_normal_approximation_beyond_the_exact_lattice_is_close(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(7)
    n = rng.integers(1, 6, 60)
    left = rng.binomial(n, 0.58)
    exact, method = sign_flip_test(left.tolist(), (n - left).tolist())
    assert method == "exact"
    monkeypatch.setattr(position_module, "EXACT_SUPPORT", 10)
    approx, method = sign_flip_test(left.tolist(), (n - left).tolist())
    assert method == "normal"
    assert approx == pytest.approx(exact, abs=0.01)


# ------------------------------------------------------------------ the verdict


def test_a_tiny_lean_at_45000_comparisons_passes_instead_of_voiding_the_run() -> None:
    # 50.6% left of 45,000 single-judge comparisons: p = 0.011 voided the run before.
    left = 22_770
    found = position_gate([1] * left + [0] * (45_000 - left), [0] * left + [1] * (45_000 - left))
    assert found.significant
    assert found.p_value == pytest.approx(0.0111, abs=0.0005)
    assert found.verdict == "pass"
    assert found.p_within <= 0.05


def test_a_judge_on_the_left_70_percent_fails_and_a_short_run_warns() -> None:
    fails = position_gate([1] * 140 + [0] * 60, [0] * 140 + [1] * 60)
    assert fails.verdict == "fail"
    assert fails.share_tost.lo > 0.5 + POSITION_MARGIN
    short = position_gate([1] * 6 + [0] * 4, [0] * 6 + [1] * 4)
    assert short.verdict == "warn"
    assert not short.significant


@pytest.mark.parametrize("seed", range(6))
def test_verdict_is_the_two_one_sided_tests_on_the_intervals(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 4, int(rng.integers(20, 400)))
    left = rng.binomial(n, rng.uniform(0.4, 0.7))
    found = position_gate(left.tolist(), (n - left).tolist(), margin=0.05)
    inside = found.share_tost.lo > 0.45 and found.share_tost.hi < 0.55
    outside = found.share.lo > 0.55 or found.share.hi < 0.45
    assert (found.verdict == "pass") == inside
    assert (found.verdict == "fail") == (outside and not inside)


def test_result_is_frozen_and_json_ready() -> None:
    found = position_gate([3, 2, 0], [0, 1, 3])
    record = found.to_dict()
    assert record["verdict"] == found.verdict
    assert set(record["share"]) == {"estimate", "lo", "hi"}
    assert record["unit"] == "comparison"
    with pytest.raises(AttributeError):
        found.verdict = "pass"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([1, 2], [1]), {}, "one entry per comparison, got 2 and 1"),
        (([1, -1], [1, 1]), {}, r"left\[1\] must be an integer >= 0, got -1"),
        (([0, 0], [0, 0]), {}, "no comparison has a count"),
        (([1], [1]), {"margin": 0.5}, r"margin must be in \(0, 0.5\), got 0.5"),
        (([1], [1]), {"alpha": 0.5}, "alpha must be below 0.5"),
        (([1.5], [1]), {}, r"left\[0\] must be an integer"),
    ],
)
def test_bad_arguments_are_named(args: Any, kwargs: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        position_gate(*args, **kwargs)


def test_tally_refuses_an_unknown_position() -> None:
    with pytest.raises(ValueError, match=r"picks\[0\]: position must be"):
        tally_positions([(1, "middle")])


def test_clustered_share_refuses_more_successes_than_picks() -> None:
    with pytest.raises(ValueError, match=r"successes\[1\] must be at most totals\[1\] = 2"):
        clustered_share([0, 3], [1, 2])


# ------------------------------------------------------------------ simulation (small)


def _rates(found: list[Any]) -> dict[str, float]:
    return {
        "significant": float(np.mean([f.significant for f in found])),
        "fail": float(np.mean([f.verdict == "fail" for f in found])),
        "pass": float(np.mean([f.verdict == "pass" for f in found])),
    }


@pytest.mark.parametrize("judges", [3, 5])
def test_unbiased_panel_sharing_a_signal_holds_alpha_counted_by_comparison(judges: int) -> None:
    rng = np.random.default_rng(20261205 + judges)
    reps, n = 400, 40
    # Judges who agree comparison by comparison (a shared preference drawn per comparison,
    # Beta(0.25, 0.25)), with no position bias.
    left, right = sim.position_counts(rng, reps, n, judges, p=0.5, kappa=0.5)
    found = [position_gate(left[r].tolist(), right[r].tolist()) for r in range(reps)]
    rates = _rates(found)
    # Monte Carlo: 400 runs, sd of a 5% rate 0.011.
    assert rates["significant"] <= 0.05 + 3 * 0.011
    assert rates["fail"] <= 0.01
    # Counted pick by pick (the gate this replaces), the same panels fail far more often.
    picks = left.sum(axis=1)
    total = (left + right).sum(axis=1)
    naive = np.mean(
        [
            stats.binomtest(int(k), int(m), 0.5).pvalue <= 0.05
            for k, m in zip(picks, total, strict=True)
        ]
    )
    assert naive > 0.12


def test_at_the_margin_the_gate_passes_and_fails_at_most_alpha() -> None:
    rng = np.random.default_rng(20261206)
    reps, n, judges = 400, 200, 3
    # Left share exactly 1/2 + m: a pass is an error of the two one-sided tests.
    left, right = sim.position_counts(rng, reps, n, judges, bias=2 * POSITION_MARGIN, tau=0.2)
    found = [position_gate(left[r].tolist(), right[r].tolist()) for r in range(reps)]
    assert _rates(found)["pass"] <= 0.05 + 3 * 0.011
    assert _rates(found)["fail"] <= 0.025 + 3 * 0.008
