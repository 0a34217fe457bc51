"""Exact power, size and sample size of pre-registered decisions (bt-plan --decide)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from blindtest.stats.binomial import upper_tail
from blindtest.stats.power import similarity_power_row, similarity_smallest_n
from blindtest.stats.sizing import (
    decision_power,
    decision_power_table,
    decision_sample_size,
    decision_size,
    sensitivity_power,
    sensitivity_sample_size,
    similarity_power,
    similarity_sample_size,
    untied_critical,
)

# Reference: tests/data/decision_reference.json, made by tests/data/decision_reference.py
# (exact Fraction arithmetic; see its docstring for the command).
REFERENCE: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "data" / "decision_reference.json").read_text()
)
RTOL = 1e-9


def margin_of(case: dict[str, Any]) -> float | None:
    return None if case["rule"] == "superior" else float(case["margin"])


@pytest.mark.parametrize(
    "case", REFERENCE["sample_sizes"], ids=lambda c: f"{c['rule']}-{c['ties']}"
)
def test_power_equals_the_exact_fraction_enumeration(case: dict[str, Any]) -> None:
    for n, expected in case["power"].items():
        actual = decision_power(
            int(n), case["rule"], margin_of(case), true=case["true"], ties=case["ties"]
        )[0]
        assert actual == pytest.approx(expected, rel=RTOL, abs=1e-300), n


@pytest.mark.parametrize(
    "case", REFERENCE["sample_sizes"], ids=lambda c: f"{c['rule']}-{c['ties']}"
)
def test_smallest_and_stable_n_equal_the_exact_scan(case: dict[str, Any]) -> None:
    found = decision_sample_size(
        case["rule"], margin_of(case), true=case["true"], ties=case["ties"], power=case["target"]
    )
    assert found.smallest_n == case["smallest_n"]
    assert found.stable_n == case["stable_n"]
    assert found.stable_sure
    assert found.stable_checked_to >= case["checked_to"]


def test_the_issue_planning_example() -> None:
    # bt-plan --decide noninferior:0.05 --true 0.5 --ties 0.3 --power 0.8
    found = decision_sample_size("noninferior", 0.05, true=0.5, ties=0.3, power=0.8)
    assert (found.smallest_n, found.stable_n) == (908, 908)
    assert found.power_at_smallest == pytest.approx(0.8000213210320093, rel=1e-9)
    rows = decision_power_table([100, 500, 908], "noninferior", 0.05, true=0.5, ties=0.3)
    assert [row.n for row in rows] == [100, 500, 908]
    assert rows[-1].power >= 0.8
    assert all(row.size <= 0.05 for row in rows)
    assert rows[0].expected_untied == pytest.approx(70.0)
    # Without ties the exact power is a sawtooth: 618 comparisons reach 80%, a few more fall
    # back below, and from 647 on every n reaches it.
    sawtooth = decision_sample_size("noninferior", 0.05, true=0.5, ties=0.0, power=0.8)
    assert (sawtooth.smallest_n, sawtooth.stable_n) == (618, 647)
    powers = decision_power(range(618, 648), "noninferior", 0.05, true=0.5)
    assert powers[0] >= 0.8
    assert powers[-1] >= 0.8
    assert (powers < 0.8).any()


def test_critical_counts_equal_exact_integer_comparisons() -> None:
    rows = REFERENCE["noninferior_critical"]
    untied = np.array([row["untied"] for row in rows])
    critical = untied_critical(untied, 0.45, 0.05, "above")
    assert critical.tolist() == [row["critical"] for row in rows]
    sizes = upper_tail(critical, untied, 0.45)
    assert sizes == pytest.approx([row["size"] for row in rows], rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("alpha", [0.01, 0.025, 0.05, 0.1])
def test_non_inferiority_size_at_the_margin_is_at_most_alpha_for_n_up_to_200(alpha: float) -> None:
    # Exact enumeration: the conditional size given every untied count U <= 200, for margins
    # from 0.01 to 0.3; the unconditional size at any tie rate is a mixture of these.
    untied = np.arange(1, 201)
    for margin in (0.01, 0.02, 0.05, 0.1, 0.2, 0.3):
        null = 0.5 - margin
        critical = untied_critical(untied, null, alpha, "above")
        size = upper_tail(critical, untied, null)
        assert size.max() <= alpha, margin
        # Each critical count is the smallest that holds alpha: one less would exceed it.
        looser = upper_tail(critical - 1, untied, null)
        assert (looser[critical <= untied] > alpha).all(), margin
    for ties in (0.0, 0.1, 0.3, 0.5, 0.7, 0.9):
        size = decision_size(range(1, 201), "noninferior", 0.05, ties=ties, alpha=alpha)
        assert size.max() <= alpha, ties


@pytest.mark.parametrize(("rule", "margin"), [("superior", None), ("equivalent", 0.1)])
def test_superiority_and_equivalence_size_is_at_most_alpha(rule: str, margin: float | None) -> None:
    for ties in (0.0, 0.3, 0.8):
        size = decision_size(range(1, 201), rule, margin, ties=ties)  # type: ignore[arg-type]
        assert size.max() <= 0.05


@pytest.mark.parametrize("protocol", ["triangle", "pair"])
@pytest.mark.parametrize("pd0", [0.2, 0.3, 0.5])
def test_similarity_power_equals_the_similarity_power_row(protocol: str, pd0: float) -> None:
    ns = range(1, 61)
    fast = similarity_power(ns, pd0, protocol=protocol, pd=0.1)  # type: ignore[arg-type]
    rows = [
        similarity_power_row(n, pd0, protocol=protocol, pds=[0.1]).power[0.1]  # type: ignore[arg-type]
        for n in ns
    ]
    assert fast == pytest.approx(rows, rel=1e-9, abs=1e-15)
    found = similarity_sample_size(pd0, protocol=protocol)  # type: ignore[arg-type]
    assert found.smallest_n == similarity_smallest_n(0.8, pd0, protocol=protocol)  # type: ignore[arg-type]


def test_sensitivity_power_plans_the_planted_comparisons() -> None:
    found = sensitivity_sample_size(true=0.8, ties=0.1, power=0.8)
    assert (found.smallest_n, found.stable_n) == (20, 20)
    assert "planted" in found.basis
    assert sensitivity_power(20, true=0.8, ties=0.1)[0] == pytest.approx(
        decision_power(20, "superior", true=0.8, ties=0.1)[0]
    )
    # A judge at chance never passes more often than alpha.
    assert sensitivity_power(range(1, 200), true=0.5, ties=0.2).max() <= 0.05


def test_power_at_or_beyond_the_null_has_no_sample_size() -> None:
    found = decision_sample_size("noninferior", 0.05, true=0.45, ties=0.3)
    assert found.smallest_n is None
    assert found.stable_n is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"rule": "noninferior", "margin": 0.7, "true": 0.5},
            r"margin must be in \(0, 0.5\), got 0.7",
        ),
        ({"rule": "superior", "margin": 0.1, "true": 0.5}, r"superior takes no margin, got 0.1"),
        ({"rule": "superior", "true": 1.5}, r"true must be in \[0, 1\], got 1.5"),
        ({"rule": "superior", "true": 0.6, "ties": 1.0}, r"ties must be below 1"),
        ({"rule": "better", "true": 0.6}, r"rule must be one of .*; got 'better'"),
    ],
)
def test_bad_power_arguments_echo_the_value(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decision_power(10, **kwargs)
