"""The blindtest.stats public surface: sorted, complete exports and JSON-ready results."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np

import blindtest.stats as stats_package
from blindtest import stats


def test_all_is_sorted_and_complete() -> None:
    exported = stats.__all__
    assert exported == sorted(
        exported, key=lambda name: (not name.isupper(), not name[0].isupper(), name)
    )
    # The package loads its submodules lazily (start-up): resolve every name.
    for name in exported:
        getattr(stats_package, name)
    public = {name for name in vars(stats_package) if not name.startswith("_")}
    modules = {
        "agreement",
        "anytime",
        "betting",
        "binomial",
        "candidate_style",
        "comparisons",
        "controls",
        "determinism",
        "decision",
        "intervals",
        "judges",
        "mean_score",
        "multiple",
        "pair",
        "pairwise",
        "penalised",
        "position",
        "power",
        "ppi",
        "ppi_calibration",
        "ppi_core",
        "ppi_flaws",
        "ppi_plan",
        "preference",
        "ranking",
        "separation",
        "sensitivity",
        "sequential",
        "similarity",
        "sizing",
        "style",
        "tables",
        "triangle",
        "annotations",
        "importlib",
        "TYPE_CHECKING",
        "Any",
    }
    assert public - modules == set(exported)


def test_every_result_is_frozen_slotted_and_json_ready() -> None:
    results: list[Any] = [
        stats.triangle_test(14, 20),
        stats.triangle_test(20, 20),
        stats.pair_test(0, 12),
        stats.preference_test(0, 0, 3),
        stats.similarity_test(30, 100, 0.3),
        stats.power_row(20),
        stats.similarity_power_row(50, 0.3),
        stats.e_process([True] * 6),
        stats.crossing_distribution(0.7, 30),
        stats.position_bias(30, 40),
        stats.percent_agreement([["a", "a"], ["a", "b"]]),
        stats.cohen_kappa(["a", "a"], ["a", "a"]),
        stats.fleiss_kappa([["a", "b", "a"], ["b", "b", "b"]]),
        stats.judge_panel({"x": [1, 2, 3], "y": [1, 1, 1]}, [1, 2, 1]),
        stats.binomial_test(3, 10),
        stats.rejection_region(20, 0.5, 0.05, "two-sided"),
        stats.style_control([1, 0, 1, 1], [[0.1], [-0.2], [0.0], [0.3]], ["length"]),
        stats.compare_non_tie(20, 20, 0, 8),
        stats.compare_non_tie(20, 20, 0, 4),
        stats.mcnemar_exact(7, 1),
        stats.fisher_exact(3, 0, 0, 4),  # an infinite odds ratio is written as null
    ]
    for result in results:
        name = type(result).__name__
        assert name.endswith("Result") or name in {
            "PowerRow",
            "SimilarityPowerRow",
            "RejectionRegion",
        }
        params = result.__dataclass_params__
        assert params.frozen, name
        assert not hasattr(result, "__dict__"), name
        payload = json.loads(json.dumps(result.to_dict(), allow_nan=False))
        assert set(payload) == {f.name for f in dataclasses.fields(result)}, name


def test_numpy_scalars_become_plain_json() -> None:
    payload = stats.Interval(np.float64(0.5), np.float64(-np.inf), np.float64(1.0)).to_dict()
    assert payload == {"estimate": 0.5, "lo": None, "hi": 1.0}
    assert type(payload["estimate"]) is float
