"""bt-plan: the spec's power table verbatim, and exact agreement with brute-force fractions."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import orjson
import pytest

from conftest import Invoke


def exact_upper_tail(k: int, n: int, p: Fraction) -> Fraction:
    return sum((comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1)), Fraction(0))


def brute_force_row(
    n: int, alpha: Fraction, pcs: list[Fraction]
) -> tuple[int | None, Fraction, list[Fraction]]:
    """Triangle decision rule from first principles with exact rational arithmetic."""
    chance = Fraction(1, 3)
    tail = Fraction(0)
    critical = None
    # Walk down from k = n, accumulating P(X >= k); the last k still within alpha is critical.
    for k in range(n, -1, -1):
        tail += comb(n, k) * chance**k * (1 - chance) ** (n - k)
        if tail > alpha:
            break
        critical = k
    if critical is None:
        return None, Fraction(0), [Fraction(0)] * len(pcs)
    size = exact_upper_tail(critical, n, chance)
    return critical, size, [exact_upper_tail(critical, n, pc) for pc in pcs]


def test_spec_table_comes_out_exactly(invoke: Invoke) -> None:
    result = invoke("plan", "--trials", "20,23,30", "--pc", "0.6,0.7")
    assert result.exit_code == 0
    rows = [line.split() for line in result.stdout.splitlines() if line[:2] in ("20", "23", "30")]
    assert rows == [
        ["20", "11", "correct", "0.038", "0.76", "0.95"],
        ["23", "12", "correct", "0.048", "0.84", "0.98"],
        ["30", "15", "correct", "0.043", "0.90", "0.99"],
    ]


def test_json_rows_are_keyed_by_the_values_as_written(invoke: Invoke) -> None:
    result = invoke("plan", "--trials", "20", "--pc", "0.60,.7", "--json")
    rows = orjson.loads(result.stdout)
    assert list(rows[0]["power"]) == ["0.60", ".7"]
    assert set(rows[0]) >= {"n", "critical", "achieved_alpha", "power"}


@pytest.mark.parametrize("alpha", ["0.05", "0.01", "0.1"])
def test_triangle_rows_match_exact_fractions_for_many_n(invoke: Invoke, alpha: str) -> None:
    ns = [*range(1, 61), 75, 100]
    pcs = ["0.5", "0.6", "0.7", "0.9"]
    result = invoke(
        "plan",
        "--trials",
        ",".join(map(str, ns)),
        "--pc",
        ",".join(pcs),
        "--alpha",
        alpha,
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    for row in orjson.loads(result.stdout):
        critical, size, power = brute_force_row(
            row["n"], Fraction(alpha), [Fraction(p) for p in pcs]
        )
        assert row["critical"] == critical
        assert row["achieved_alpha"] == pytest.approx(float(size), rel=1e-9, abs=1e-15)
        for text, expected in zip(pcs, power, strict=True):
            assert row["power"][text] == pytest.approx(float(expected), rel=1e-9, abs=1e-15)


def test_target_power_finds_the_spec_answer_of_30_trials(invoke: Invoke) -> None:
    result = invoke("plan", "--target-power", "0.9", "--pc", "0.6")
    assert "smallest n reaching the target power at Pc = 0.6: 30" in result.stdout


def test_pd_grid_maps_through_the_guessing_correction(invoke: Invoke) -> None:
    by_pd = orjson.loads(invoke("plan", "--trials", "20", "--pd", "0.4", "--json").stdout)
    by_pc = orjson.loads(invoke("plan", "--trials", "20", "--pc", "0.6", "--json").stdout)
    assert by_pd[0]["power"]["0.4"] == pytest.approx(by_pc[0]["power"]["0.6"], rel=1e-12)


def test_similarity_rows_are_printed(invoke: Invoke) -> None:
    result = invoke("plan", "--similarity", "0.3", "--trials", "30,60", "--json")
    rows = orjson.loads(result.stdout)
    assert [r["n"] for r in rows] == [30, 60]
    assert all(r["achieved_alpha"] <= 0.05 for r in rows)
    # Similarity is declared for few correct answers: under the boundary pd0 it is rare.
    chance = Fraction(1, 3) + Fraction(2, 3) * Fraction(3, 10)
    hi = rows[0]["similar_hi"]
    size = 1 - exact_upper_tail(hi + 1, 30, chance)
    assert rows[0]["achieved_alpha"] == pytest.approx(float(size), rel=1e-9)
    assert 1 - exact_upper_tail(hi + 2, 30, chance) > Fraction(5, 100)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pc", "2"], "--pc: 2 is outside [0, 1]"),
        (["--pc", "x"], "--pc: 'x' is not a number"),
        (["--trials", "0"], "--trials: '0' is not a whole number"),
        (["--trials", "ten"], "--trials: 'ten' is not a whole number"),
        (["--pc", "0.6", "--pd", "0.4"], "give --pc or --pd, not both"),
        (["--alpha", "0.9"], "--alpha must be in (0, 0.5]"),
        (["--protocol", "preference", "--pd", "0.3"], "--pd has no meaning for preference"),
    ],
)
def test_bad_plan_arguments_exit_2_with_one_line(
    invoke: Invoke, args: list[str], message: str
) -> None:
    result = invoke("plan", *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stderr.count("\n") == 1
