"""Betting tests and confidence sequences for a mean in [0, 1] (Waudby-Smith and Ramdas 2024)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from blindtest.stats.betting import (
    betting_bound,
    betting_log_wealth,
    betting_p_value,
    first_crossing,
)

# Reference: tests/data/decision_reference.json, the wealth computed by the authors' package
# confseq 0.0.11 (betting_mart with lambda_predmix_eb, truncation 1/2), seeded sequences.
REFERENCE: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "data" / "decision_reference.json").read_text()
)["betting"]


@pytest.mark.parametrize(
    "case", REFERENCE, ids=lambda c: f"{c['label']}-m{c['m']}-{c['horizon'] or 'cs'}"
)
def test_wealth_equals_confseq(case: dict[str, Any]) -> None:
    x = np.asarray(case["x"])
    for side in ("above", "below"):
        wealth = betting_log_wealth(
            x, case["m"], alpha=case["alpha"], side=side, horizon=case["horizon"]
        )
        assert wealth == pytest.approx(case[f"log_wealth_{side}"], rel=1e-12, abs=1e-12)


def test_wealth_runs_one_way_in_the_null_mean() -> None:
    rng = np.random.default_rng(11)
    x = rng.integers(0, 5, size=80) / 4
    grid = np.linspace(0.01, 0.99, 99)
    above = betting_log_wealth(x[None, :], grid[:, None], alpha=0.05, side="above")
    below = betting_log_wealth(x[None, :], grid[:, None], alpha=0.05, side="below")
    assert (np.diff(above, axis=0) <= 1e-12).all()
    assert (np.diff(below, axis=0) >= -1e-12).all()


@pytest.mark.parametrize("horizon", [None, 120])
def test_bounds_and_p_values_say_the_same(horizon: int | None) -> None:
    rng = np.random.default_rng(12)
    x = rng.integers(0, 7, size=120) / 6
    lo = betting_bound(x, alpha=0.05, side="above", horizon=horizon)
    hi = betting_bound(x, alpha=0.05, side="below", horizon=horizon)
    assert lo < x.mean() < hi
    for m in np.linspace(0.02, 0.98, 49):
        rejected_low = betting_p_value(x, m, alpha=0.05, side="above", horizon=horizon) <= 0.05
        rejected_high = betting_p_value(x, m, alpha=0.05, side="below", horizon=horizon) <= 0.05
        assert rejected_low == (m <= lo), m
        assert rejected_high == (m >= hi), m


def test_padding_does_not_move_the_wealth() -> None:
    x = np.array([[1.0, 0.0, 1.0, 1.0, 0.3, 0.3], [1.0, 1.0, 0.0, 0.5, 1.0, 1.0]])
    valid = np.array([[True] * 4 + [False] * 2, [True] * 6])
    padded = betting_log_wealth(x, 0.4, alpha=0.05, side="above", valid=valid)
    alone = betting_log_wealth(x[0, :4], 0.4, alpha=0.05, side="above")
    assert padded[0, :4] == pytest.approx(alone)
    assert padded[0, 4:] == pytest.approx([alone[-1], alone[-1]])
    assert first_crossing(np.array([[0.0, 3.1, 2.0], [0.0, 0.0, 0.0]]), 0.05).tolist() == [2, 0]


def test_no_data_rejects_nothing() -> None:
    assert betting_p_value([], 0.4, alpha=0.05, side="above", horizon=None) == 1.0
    assert betting_bound([], alpha=0.05, side="above", horizon=None) == 0.0
    assert betting_bound([], alpha=0.05, side="below", horizon=None) == 1.0
    assert math.isclose(betting_p_value([0.0], 0.4, alpha=0.05, side="above", horizon=1), 1.0)
