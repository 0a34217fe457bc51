"""bt-plan --decide: the exact power of a pre-registered decision by n, the smallest n and the
stable n, checked against an oracle built here from scipy's binomial tails (not from
blindtest.stats.sizing): the untied count is Binomial(n, 1 - ties) and the claim is the
exact one-sided test of the untied share at the rule's boundary, conditional on it."""

from __future__ import annotations

from functools import cache

import numpy as np
import orjson
from scipy import stats

from conftest import Invoke


@cache
def critical(untied: int, boundary: float, alpha: float) -> int:
    """The smallest count of untied wins whose upper tail at ``boundary`` is at most alpha."""
    wins = np.arange(untied + 1)
    tail = stats.binom.sf(wins - 1, untied, boundary)
    reject = np.nonzero(tail <= alpha)[0]
    return int(reject[0]) if reject.size else untied + 1


def oracle_power(n: int, *, boundary: float, true: float, ties: float, alpha: float) -> float:
    total = 0.0
    for untied in range(1, n + 1):
        c = critical(untied, boundary, alpha)
        shown = stats.binom.sf(c - 1, untied, true) if c <= untied else 0.0
        total += stats.binom.pmf(untied, n, 1 - ties) * shown
    return float(total)


def test_the_issue_example_sizes_a_noninferiority_gate_exactly(invoke: Invoke) -> None:
    args = ("--decide", "noninferior:0.05", "--true", "0.5", "--ties", "0.3", "--power", "0.8")
    result = invoke("plan", *args, "--json")
    assert result.exit_code == 0, result.stderr
    (plan,) = orjson.loads(result.stdout)
    assert plan["decide"] == "noninferior:0.05"
    assert plan["unit"] == "comparison"
    assert plan["estimand"] == "untied-share"
    smallest, stable = plan["smallest_n"], plan["stable_n"]
    assert smallest == stable == 908
    power = {n: oracle_power(n, boundary=0.45, true=0.5, ties=0.3, alpha=0.05) for n in (907, 908)}
    assert power[907] < 0.8 <= power[908]
    for row in plan["rows"]:
        expected = oracle_power(row["n"], boundary=0.45, true=0.5, ties=0.3, alpha=0.05)
        assert abs(row["power"] - expected) < 1e-9, row
        size = oracle_power(row["n"], boundary=0.45, true=0.45, ties=0.3, alpha=0.05)
        assert abs(row["size"] - size) < 1e-9, row
        assert row["size"] <= 0.05
    text = invoke("plan", *args)
    assert text.exit_code == 0
    said = " ".join(text.stdout.split())
    assert "the challenger wins at least 45% of the untied comparisons" in said
    assert "smallest n reaching power 0.8: 908 comparisons" in said
    assert "stable n: 908" in said


def test_the_sawtooth_gives_a_stable_n_above_the_smallest(invoke: Invoke) -> None:
    # With no ties the exact power of the conditional test is a sawtooth: some n past the
    # smallest fall back below the target.
    result = invoke("plan", "--decide", "noninferior:0.05", "--json")
    (plan,) = orjson.loads(result.stdout)
    smallest, stable = plan["smallest_n"], plan["stable_n"]
    assert smallest < stable
    powers = [oracle_power(n, boundary=0.45, true=0.5, ties=0.0, alpha=0.05) for n in
              range(smallest, stable + 1)]  # fmt: skip
    assert powers[0] >= 0.8
    assert powers[-1] >= 0.8
    assert powers[-2] < 0.8  # the last dip below the target is just before the stable n


def test_the_given_trials_are_tabulated(invoke: Invoke) -> None:
    result = invoke("plan", "--decide", "superior", "--true", "0.6", "--trials", "50,100", "--json")
    (plan,) = orjson.loads(result.stdout)
    assert [row["n"] for row in plan["rows"]] == [50, 100]
    for row in plan["rows"]:
        expected = oracle_power(row["n"], boundary=0.5, true=0.6, ties=0.0, alpha=0.05)
        assert abs(row["power"] - expected) < 1e-9


def test_similar_is_the_similarity_plan(invoke: Invoke) -> None:
    decided = invoke("plan", "--decide", "similar:0.3", "--trials", "30,60")
    similarity = invoke("plan", "--similarity", "0.3", "--trials", "30,60")
    assert decided.exit_code == similarity.exit_code == 0
    assert decided.stdout == similarity.stdout


def test_decisions_that_do_not_fit_are_refused_in_one_line(invoke: Invoke) -> None:
    cases = [
        (("--protocol", "triangle", "--decide", "noninferior:0.05"), "use --protocol preference"),
        (("--protocol", "preference", "--decide", "similar:0.3"), "triangle and pair"),
        (("--decide", "noninferior:0.7"), "margin must be in (0, 0.5)"),
        (("--decide", "better"), "rule"),
        (("--decide", "noninferior:0.05", "--pc", "0.6"), "--true"),
    ]
    for args, words in cases:
        result = invoke("plan", *args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.count("\n") == 1, result.stderr
        assert words in result.stderr, result.stderr
