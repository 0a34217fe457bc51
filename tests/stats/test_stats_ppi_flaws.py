"""What a judge's flaw costs the prediction-powered interval in width: the values worked out
independently (tests/data/ppi_flaws_reference.py, mpmath), never a negative cost, people's own
slope kept, and by simulation near nothing for a flawless judge and growing with a planted
position or length lean (small here; the full grid is tests/benchmarks/sim_ppi_flaws.py)."""

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

from blindtest.stats.ppi import ppi_preference
from blindtest.stats.ppi_flaws import PPIFlawCost, ppi_flaw_cost, ppi_prediction_cost

DATA = Path(__file__).resolve().parent.parent / "data"
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
# mpmath at 40 digits, without blindtest: the command is in tests/data/ppi_flaws_reference.py.
REFERENCE: dict[str, Any] = json.loads((DATA / "ppi_flaws_reference.json").read_text())
CASES = REFERENCE["cases"]
FLAWED = sorted(name for name, case in CASES.items() if "flaw_sampled" in case)


def _sim() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sim_ppi_flaws", BENCHMARKS / "sim_ppi_flaws.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sim_ppi_flaws"] = module
    spec.loader.exec_module(module)
    return module


def _strata(case: dict[str, Any]) -> dict[str, Any]:
    if len(set(case["strata_sampled"])) == 1:
        return {}
    return {"strata_sampled": case["strata_sampled"], "strata_unsampled": case["strata_unsampled"]}


def _flaw(case: dict[str, Any], **options: Any) -> PPIFlawCost:
    return ppi_flaw_cost(
        case["people"], case["judge_sampled"], case["judge_unsampled"],
        case["flaw_sampled"], case["flaw_unsampled"],
        weight=case["weight"], beyond_people=case["beyond_people"], **_strata(case), **options,
    )  # fmt: skip


# ---------------------------------------------------------------- against mpmath, by hand


@pytest.mark.parametrize("name", FLAWED)
def test_flaw_cost_equals_the_definitions_worked_out_in_mpmath(name: str) -> None:
    case = CASES[name]
    got = _flaw(case, quantile="z").to_dict()
    for key, want in case["expected"].items():
        assert got[key] == pytest.approx(want, rel=1e-10, abs=1e-13), key
    assert got["width_cost"] == pytest.approx(max(case["expected"]["width_change"], 0.0))
    people = case["expected"]["adjusted_effective_n"] - case["expected"]["effective_n"]
    assert got["people_equivalent"] == pytest.approx(max(people, 0.0), rel=1e-10, abs=1e-12)
    assert got["measured"] is True


def test_leaked_verdicts_counted_equal_the_definitions_worked_out_in_mpmath() -> None:
    case = CASES["leaked_verdicts_counted"]
    got = ppi_prediction_cost(
        case["people"], case["judge_sampled"], case["judge_unsampled"],
        case["other_sampled"], case["other_unsampled"], weight="plug-in", quantile="z",
    ).to_dict()  # fmt: skip
    for key, want in case["expected"].items():
        assert got[key] == pytest.approx(want, rel=1e-10, abs=1e-13), key
    assert got["judge_slope"] is None
    assert got["width_cost"] > 0  # the leaked verdicts, counted, carry the judge's signal


def test_the_actual_half_width_is_the_estimates_own_normal_interval() -> None:
    case = CASES["position_plug_in"]
    for quantile in ("t", "z"):
        got = _flaw(case, quantile=quantile)
        result = ppi_preference(
            case["people"], case["judge_sampled"], case["judge_unsampled"],
            weight="plug-in", quantile=quantile,
        )  # fmt: skip
        assert got.half_width == pytest.approx((result.normal.hi - result.normal.lo) / 2)


def test_a_planted_left_lean_is_what_is_taken_off() -> None:
    case = CASES["position_plug_in"]
    got = _flaw(case)
    assert got.judge_slope > 0.1  # the judge's score rises when the first was on the left
    assert 0 <= got.removed_slope <= got.judge_slope
    assert got.width_cost > 0
    assert got.adjusted_half_width < got.half_width


# ------------------------------------------------------------------------------ behaviour


def test_people_who_follow_the_variable_as_much_keep_it_in_the_counterfactual() -> None:
    rng = np.random.default_rng(3)
    x = rng.choice([-1.0, 1.0], 200)
    y = np.where(rng.random(200) < 0.5, (x + 1) / 2, rng.choice([0.0, 0.5, 1.0], 200))
    f = y.copy()  # the judge is the people: it follows length exactly as much as they do
    args = (y[:50].tolist(), f[:50].tolist(), f[50:].tolist(), x[:50].tolist(), x[50:].tolist())
    kept = ppi_flaw_cost(*args)
    assert kept.removed_slope == pytest.approx(0.0, abs=1e-12)
    assert kept.width_change == pytest.approx(0.0, abs=1e-12)
    taken = ppi_flaw_cost(*args, beyond_people=False)
    assert taken.removed_slope == pytest.approx(taken.judge_slope)
    # Taking off what people share only widens: a negative change, and no cost.
    assert taken.width_change < 0
    assert taken.width_cost == 0.0
    assert taken.people_equivalent == 0.0


def test_a_variable_that_never_varies_is_not_measured_and_says_why() -> None:
    got = ppi_flaw_cost([1.0, 0.0, 0.5], [1.0, 0.0, 1.0], [0.5, 1.0], [1, 1, 1], [1, 1])
    assert got.measured is False
    assert got.reason == "the flaw's variable is the same on every comparison (of each stratum)"
    assert (got.width_cost, got.people_equivalent) == (0.0, 0.0)
    assert math.isnan(got.width_change)


def test_a_judge_that_is_all_position_has_nothing_left_to_give_back() -> None:
    rng = np.random.default_rng(4)
    x = rng.choice([-1.0, 1.0], 300)
    y = rng.choice([0.0, 0.5, 1.0], 300)
    f = (x + 1) / 2
    got = ppi_flaw_cost(y[:60].tolist(), f[:60].tolist(), f[60:].tolist(),
                        x[:60].tolist(), x[60:].tolist())  # fmt: skip
    assert got.explained == pytest.approx(1.0)
    assert got.width_cost < 0.01


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"flaw_sampled": [1.0]}, r"flaw_sampled needs one value per sampled comparison \(2\)"),
        ({"flaw_unsampled": [1.0, float("nan")]}, r"flaw_unsampled\[1\] must be a real number"),
        ({"flaw_sampled": [1.0, "left"]}, r"flaw_sampled\[1\] must be a real number, got 'left'"),
        ({"weight": "best"}, r"weight must be one of 'auto', 'plug-in'.*got 'best'"),
        ({"quantile": "q"}, r"quantile must be one of 't', 'z'; got 'q'"),
        ({"people": [0.3, 1.0]}, r"people\[0\] = 0.3 is not one of score_values"),
    ],
)
def test_bad_arguments_are_refused_with_the_value(change: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {
        "people": [1.0, 0.0],
        "judge_sampled": [1.0, 0.5],
        "judge_unsampled": [0.0, 1.0],
        "flaw_sampled": [1.0, -1.0],
        "flaw_unsampled": [1.0, -1.0],
    }
    args.update(change)
    with pytest.raises(ValueError, match=message):
        ppi_flaw_cost(**args)


def test_counterfactual_predictions_must_be_scores_on_the_same_comparisons() -> None:
    with pytest.raises(ValueError, match=r"other_sampled\[0\] must be in \[0, 1\], got 2.0"):
        ppi_prediction_cost([1.0, 0.0], [1.0, 0.5], [0.0], [2.0, 0.0], [0.0])
    with pytest.raises(ValueError, match=r"one score per comparison .* got 1 and 1"):
        ppi_prediction_cost([1.0, 0.0], [1.0, 0.5], [0.0], [1.0], [0.0])


def test_results_are_frozen_slotted_and_json_ready() -> None:
    results = [
        _flaw(CASES["position_plug_in"]),
        ppi_flaw_cost([1.0, 0.0, 0.5], [1.0, 0.0, 1.0], [0.5, 1.0], [1, 1, 1], [1, 1]),
    ]
    for result in results:
        text = json.dumps(result.to_dict(), allow_nan=False)
        assert "NaN" not in text
        assert not hasattr(result, "__dict__")
        with pytest.raises(dataclasses.FrozenInstanceError):
            result.width_cost = 1.0  # type: ignore[misc]


# ----------------------------------------------------------------------- simulation, small


@pytest.mark.parametrize("kind", ["position", "length"])
def test_the_cost_is_near_nothing_for_a_flawless_judge_and_grows_with_a_planted_lean(
    kind: str,
) -> None:
    sim = _sim()
    rng = np.random.default_rng(20261206)
    flawless, some, more = (
        sim.run_cell(rng, 400, total=200, n=50, kind=kind, lean=lean) for lean in (0.0, 0.5, 1.0)
    )
    # 400 data sets a cell: the mean cost's standard error is about 0.0005 (0.0001 flawless).
    assert flawless.cost < 0.002
    assert flawless.people < 1.0
    assert flawless.cost < some.cost < more.cost
    assert more.cost > 0.008
    assert 2.0 < some.people < more.people


@pytest.mark.parametrize("lean", [0.5, 1.0, 3.0])
def test_the_estimate_falls_short_of_the_true_cost_of_a_lean_on_close_calls(lean: float) -> None:
    """What a lean took from the content of close calls cannot be given back, so the estimate
    counts less than the whole (the words say so), and next to nothing for a judge that
    follows position almost always (the words say that too: explained near 1)."""
    sim = _sim()
    cell = sim.run_cell(np.random.default_rng(7), 400, total=200, n=50, kind="position",
                        lean=lean)  # fmt: skip
    assert cell.cost < cell.true_cost
    assert (cell.explained > 0.5) == (lean == 3.0)
