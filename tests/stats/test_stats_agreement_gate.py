"""The agreement gate over picks coded by position: it fails when agreement is not
distinguishable from chance (the bootstrap interval reaches 0), not below a fixed 0.2; agreement
per pair of candidates beside the pooled alpha; and what the gate does, by seeded simulation."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from blindtest.model.rng import IndexStream
from blindtest.stats.agreement import (
    _alpha_from_weights,
    agreement_by_pair,
    agreement_gate,
    cohen_kappa,
    krippendorff_alpha,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import gate_simulation as sim


def _stream(label: str = "agreement") -> IndexStream:
    return IndexStream("gate-tests", label)


def test_coded_by_side_a_strong_shared_effect_looks_like_chance_and_by_position_it_does_not() -> (
    None
):
    # Two judges who each prefer the better side A in 9 of 10 comparisons, independently.
    rng = np.random.default_rng(3)
    n = 400
    a_left = sim.placements(rng, 1, n, balanced=True)[0]
    first, second = rng.random(n) < 0.9, rng.random(n) < 0.9
    by_side = cohen_kappa(["A" if x else "B" for x in first], ["A" if x else "B" for x in second])
    assert abs(by_side.statistic) < 0.1  # the kappa paradox
    by_position = [
        ["left" if x == left else "right", "left" if y == left else "right"]
        for x, y, left in zip(first, second, a_left, strict=True)
    ]
    gate = agreement_gate(by_position, rng=_stream())
    assert gate.alpha.statistic == pytest.approx((2 * 0.9 - 1) ** 2, abs=0.08)
    assert gate.verdict == "pass"


def test_judges_at_chance_fail_because_nothing_is_shared() -> None:
    rng = np.random.default_rng(4)
    left, right, ties = sim.agreement_counts(rng, 1, 200, 3, p=0.5)
    gate = agreement_gate(sim.units_of(left[0], right[0], ties[0]), rng=_stream())
    assert gate.verdict == "fail"
    assert gate.reason == "chance"
    assert gate.distinguishable is False


def test_a_moderate_real_effect_passes_below_the_old_fixed_threshold() -> None:
    # p = 0.7: alpha near (2p - 1)^2 = 0.16, under the old 0.2 threshold, yet clearly above 0.
    rng = np.random.default_rng(5)
    left, right, ties = sim.agreement_counts(rng, 1, 600, 3, p=0.7)
    units = sim.units_of(left[0], right[0], ties[0])
    gate = agreement_gate(units, rng=_stream())
    assert gate.alpha.statistic < 0.2
    assert gate.verdict == "pass"
    stricter = agreement_gate(units, rng=_stream(), min_alpha=0.2)
    assert stricter.verdict == "fail"
    assert stricter.reason == "below_min"


def test_a_unanimous_panel_passes_and_too_few_units_fail() -> None:
    unanimous = agreement_gate([["left", "left"]] * 12, rng=_stream())
    assert (unanimous.verdict, unanimous.reason) == ("pass", "unanimous")
    lonely = agreement_gate([["left"], ["right", "left"]], rng=_stream())
    assert (lonely.verdict, lonely.reason) == ("fail", "too_few")


def test_pooled_agreement_can_hide_chance_on_the_pair_the_headline_is_about() -> None:
    rng = np.random.default_rng(6)
    units: list[list[str]] = []
    pairs: list[tuple[str, str]] = []
    # Lopsided pairs: three judges all pick the stronger answer (wherever it is shown).
    for pair in (("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")):
        for _ in range(60):
            side = "left" if rng.random() < 0.5 else "right"
            units.append([side] * 3)
            pairs.append(pair)
    # The leader against the second: each judge at chance.
    for _ in range(60):
        units.append(["left" if rng.random() < 0.5 else "right" for _ in range(3)])
        pairs.append(("b", "a"))
    pooled = krippendorff_alpha(units, rng=_stream())
    assert pooled.statistic > 0.6
    found = {p.pair: p for p in agreement_by_pair(units, pairs, rng=_stream("pairs"))}
    assert found["a", "b"].comparisons == 60
    assert found["a", "b"].gate.verdict == "fail"
    assert found["a", "c"].gate.verdict == "pass"
    assert list(found) == sorted(found)


def test_pair_agreement_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="one entry per comparison, got 1 and 2"):
        agreement_by_pair([["left", "left"]], [("a", "b"), ("a", "c")], rng=_stream())
    with pytest.raises(ValueError, match=r"pairs\[0\] must name two different candidates"):
        agreement_by_pair([["left", "left"]], [("a", "a")], rng=_stream())
    with pytest.raises(ValueError, match="min_alpha must be in"):
        agreement_gate([["left", "left"]], rng=_stream(), min_alpha=2.0)


def test_gate_record_is_json_ready() -> None:
    record = agreement_gate([["left", "right"], ["left", "left"]] * 6, rng=_stream()).to_dict()
    assert record["coding"].startswith("position")
    assert set(record["alpha"]["interval"]) == {"estimate", "lo", "hi"}


# ------------------------------------------------------------------ simulation (small)


def _gate_fail_and_cover(
    judges: int, n: int, p: float, tau: float, reps: int, seed: int
) -> tuple[float, float]:
    """(share of runs the gate fails, coverage of the true alpha) for the percentile bootstrap
    over comparisons, run on each comparison pattern's counts (the package's own formula)."""
    rng = np.random.default_rng(seed)
    left, right, ties = sim.agreement_counts(rng, reps, n, judges, p=p, tau=tau)
    patterns, _ = sim.pattern_table(judges)
    freq = sim.pattern_frequencies(left, right, ties, judges).astype(np.float64)
    sizes = np.full(len(patterns), float(judges))
    truth = sim.true_alpha(p, tau)
    fails = covers = 0
    for r in range(reps):
        draws = rng.multinomial(n, freq[r] / n, size=500).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            values = _alpha_from_weights(draws, patterns, sizes)[0]
        values = values[~np.isnan(values)]
        lo, hi = np.quantile(values, [0.025, 0.975])
        fails += lo <= 0
        covers += lo <= truth <= hi
    return fails / reps, covers / reps


def test_pattern_bootstrap_alpha_is_the_package_alpha() -> None:
    rng = np.random.default_rng(8)
    left, right, ties = sim.agreement_counts(rng, 1, 50, 3, p=0.7, tau=0.2)
    patterns, _ = sim.pattern_table(3)
    freq = sim.pattern_frequencies(left, right, ties, 3).astype(np.float64)
    by_pattern = _alpha_from_weights(freq, patterns, np.full(len(patterns), 3.0))[0][0]
    direct = krippendorff_alpha(sim.units_of(left[0], right[0], ties[0])).statistic
    assert by_pattern == pytest.approx(direct, rel=1e-12)


def test_gate_fails_independent_judges_at_chance_and_rarely_a_strong_shared_signal() -> None:
    fail_null, _ = _gate_fail_and_cover(3, 60, 0.5, 0.0, reps=200, seed=11)
    assert fail_null >= 0.9  # a false "shared signal" at most ~alpha/2 + Monte Carlo error
    fail_strong, cover_strong = _gate_fail_and_cover(3, 60, 0.9, 0.2, reps=200, seed=12)
    assert fail_strong <= 0.05
    assert cover_strong >= 0.88
