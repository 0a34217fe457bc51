"""Size of the decisions by seeded vectorised simulation: small versions of
tests/benchmarks/bench_decision_size.py (whose full grids are in docs/statistics.md)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _bench() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(
            "bench_decision_size", BENCHMARKS / "bench_decision_size.py"
        )
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


BENCH = _bench()
RUNS = 2_000
# Three Monte Carlo standard errors above alpha: a valid test stays below this.
CEILING = 0.05 + 3 * math.sqrt(0.05 * 0.95 / RUNS)


@pytest.mark.parametrize("judges", [1, 2, 3, 5])
def test_panel_laws_sit_exactly_at_the_null(judges: int) -> None:
    support, probs = BENCH.untied_law(judges, 0.45)
    assert np.all(np.abs(support - 0.5) > 1e-12)
    assert float(probs @ support) == pytest.approx(0.45, abs=1e-12)
    support, probs = BENCH.mean_score_law(judges, 0.45, 0.3)
    assert float(probs @ support) == pytest.approx(0.45, abs=1e-12)
    assert float(probs[np.abs(support - 0.5) < 1e-12].sum()) == pytest.approx(0.3)


@pytest.mark.parametrize(
    ("candidates", "prompts", "judges", "partial"),
    [(2, 10, 1, False), (3, 30, 1, True), (3, 30, 3, False), (5, 30, 2, True), (2, 100, 5, False)],
)
def test_fixed_decisions_hold_the_family_wise_size(
    candidates: int, prompts: int, judges: int, partial: bool
) -> None:
    rng = np.random.default_rng(20261206)
    rate = BENCH.fixed_size(
        rng, candidates=candidates, prompts=prompts, judges=judges, partial=partial, runs=RUNS
    )
    assert rate <= CEILING


@pytest.mark.parametrize("tie_rate", [0.0, 0.6])
def test_a_panel_mean_score_test_holds_its_size(tie_rate: float) -> None:
    rng = np.random.default_rng(20261208)
    rate = BENCH.fixed_mean_score_size(rng, judges=3, prompts=60, tie_rate=tie_rate, runs=RUNS)
    assert rate <= CEILING


def test_a_peeker_stopping_at_the_first_crossing_is_held_to_alpha() -> None:
    rng = np.random.default_rng(20261207)
    scenarios = {s["label"]: s for s in BENCH.sequential_scenarios()}
    for label in (
        "noninferior:0.05, untied share, 1 judge(s)",
        "noninferior:0.05, untied share, 3 judge(s)",
        "equivalent:0.1 at 0.4, 1 judge",
        "noninferior:0.05, mean score, ties 90%",
    ):
        scenario = scenarios[label]
        claim, refute, _ = BENCH.sequential_runs(
            rng,
            rule=scenario["rule"],
            law=scenario["null"],
            runs=RUNS,
            horizon=300,
            untied_only=scenario["untied_only"],
        )
        assert BENCH.false_claim_rates(claim, refute, (300,))[300] <= CEILING, label


def test_holm_step_down_matches_the_adjusted_p_values() -> None:
    from blindtest.stats.multiple import holm

    rng = np.random.default_rng(3)
    p = rng.random((200, 6)) ** 3
    shown = BENCH.holm_shown(p, 0.05)
    expected = np.array([[q <= 0.05 for q in holm(list(row))] for row in p])
    assert (shown == expected).all()
