"""bt-plan bounds its work, says the bound, and searches --target-power as far as
the answer needs (exactly, with the sawtooth in n reported)."""

from __future__ import annotations

import numpy as np
import pytest

from blindtest.planning import search as plan
from blindtest.stats.power import power_row, similarity_power_row, smallest_n

from conftest import Invoke


def test_huge_trials_are_refused_with_the_bound(invoke: Invoke) -> None:
    result = invoke("plan", "--trials", "1000000000")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "--trials: 1,000,000,000 is more than bt-plan computes" in result.stderr
    assert "up to 100,000" in result.stderr
    assert result.stdout == ""


def test_many_rows_are_bounded_in_total(invoke: Invoke) -> None:
    result = invoke("plan", "--trials", ",".join(["100000"] * 11))
    assert result.exit_code == 2
    assert "one table computes at most 1,000,000 trials in all" in result.stderr


def test_the_bound_is_in_the_help(invoke: Invoke) -> None:
    assert "100,000" in invoke("plan", "-h").stdout


def test_largest_allowed_row_is_exact(invoke: Invoke) -> None:
    result = invoke("plan", "--trials", "100000", "--json")
    assert result.exit_code == 0, result.stderr
    assert '"critical": 33580' in result.stdout


def test_target_power_beyond_2000_trials_is_found(invoke: Invoke) -> None:
    # Seen: "none" at Pc 0.34 while a larger table showed the power reached.
    result = invoke("plan", "--target-power", "0.8", "--pc", "0.34", "--trials", "20")
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "smallest n reaching the target power at Pc = 0.34: 31070 (power 0.800)" in text
    assert power_row(31070, pcs=[0.34]).power[0.34] >= 0.8
    assert power_row(31069, pcs=[0.34]).power[0.34] < 0.8
    assert (
        "the power is a sawtooth in n: 128 larger n fall below it again (31071, 31072, 31074, "
        "31075, ...); the stable n is 31,307: every n from it to 100,000 reaches the target "
        "(computed exactly to 100,000, the most bt-plan computes)"
    ) in text


def test_none_says_how_far_it_searched(invoke: Invoke) -> None:
    result = invoke("plan", "--protocol", "pair", "--target-power", "0.99", "--pc", "0.505")
    text = " ".join(result.stdout.split())
    assert "Pc = 0.505: none up to 100,000 trials (the most bt-plan computes)" in text


def test_chance_is_answered_at_once(invoke: Invoke) -> None:
    result = invoke("plan", "--target-power", "0.8", "--pc", "0.3")
    assert "none; at chance the test rejects only as often as alpha" in " ".join(
        result.stdout.split()
    )


@pytest.mark.parametrize("protocol", ["triangle", "pair", "preference"])
@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.2])
def test_block_search_agrees_with_the_exact_rows(protocol: str, alpha: float) -> None:
    ns = np.arange(1, 401, dtype=np.int64)
    fast = plan._difference_power(ns, protocol, alpha, 0.7)
    exact = [power_row(int(n), protocol=protocol, alpha=alpha, pcs=[0.7]).power[0.7] for n in ns]  # type: ignore[arg-type]
    assert fast.tolist() == pytest.approx(exact, rel=1e-12, abs=1e-15)
    found = plan.find_smallest_n(
        0.9,
        lambda block: plan._difference_power(block, protocol, alpha, 0.7),
        exact=lambda n: power_row(n, protocol=protocol, alpha=alpha, pcs=[0.7]).power[0.7],  # type: ignore[arg-type]
    )
    assert found.n == smallest_n(0.9, 0.7, protocol=protocol, alpha=alpha, n_max=2000)  # type: ignore[arg-type]
    assert found.dips == tuple(
        n
        for n in range(found.n + 1, found.checked_to + 1)  # type: ignore[operator]
        if power_row(n, protocol=protocol, alpha=alpha, pcs=[0.7]).power[0.7] < 0.9  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("protocol", ["triangle", "pair"])
def test_similarity_block_search_agrees_with_the_exact_rows(protocol: str) -> None:
    ns = np.arange(1, 301, dtype=np.int64)
    fast = plan._similarity_power(ns, protocol, 0.05, 0.3, 0.0)
    exact = [
        similarity_power_row(int(n), 0.3, protocol=protocol, pds=[0.0]).power[0.0]  # type: ignore[arg-type]
        for n in ns
    ]
    assert fast.tolist() == pytest.approx(exact, rel=1e-12, abs=1e-15)


def test_plan_says_what_the_first_row_means(invoke: Invoke) -> None:
    result = invoke("plan", "--trials", "20", "--pc", "0.7")
    text = " ".join(result.stdout.split())
    assert "a judge right 70% of the time is detected 95 times in 100 with 20 trials" in text
    assert "a judge who is only guessing is wrongly detected 4 times in 100" in text


@pytest.mark.parametrize("columns", [40, 60, 80, 120])
def test_plan_wraps_at_word_boundaries_to_the_terminal(invoke: Invoke, columns: int) -> None:
    result = invoke(
        "plan", "--protocol", "pair", "--target-power", "0.9", env={"COLUMNS": str(columns)}
    )
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert all(len(line) <= columns for line in lines), max(lines, key=len)
    words = " ".join(result.stdout.split())
    assert "false-positive" in words  # never split at the hyphen
    assert "a judge right 80% of the time is detected 38 times in 100 with 10 trials" in words


def test_narrow_terminal_gets_one_paragraph_per_row(invoke: Invoke) -> None:
    args = ("--protocol", "pair", "--trials", "20", "--pc", "0.7")
    result = invoke("plan", *args, env={"COLUMNS": "40"})
    assert all(len(line) <= 40 for line in result.stdout.splitlines())
    assert (
        "20 trials: reject at 15 consistent (or <= 5); achieved alpha 0.041; power 0.42 if Pc = 0.7"
    ) in " ".join(result.stdout.split())


def test_table_fits_80_columns_with_two_line_headers(invoke: Invoke) -> None:
    result = invoke("plan", "--protocol", "pair", env={"COLUMNS": "80"})
    lines = result.stdout.splitlines()
    assert lines[2].split() == ["trials", "reject", "at", "achieved", "power", "if", "power", "if"]
    assert lines[3].split() == ["alpha", "Pc", "=", "0.7", "Pc", "=", "0.8"]
    assert lines[6].split() == [
        "20",
        "15",
        "consistent",
        "(or",
        "<=",
        "5)",
        "0.041",
        "0.42",
        "0.80",
    ]
