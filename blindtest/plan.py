"""Power planning for bt-plan: exact rows built on `blindtest.stats.power`. Pure; no I/O.

Grid values keep the text the user typed (``"0.6"``), because the JSON output is keyed by it
and ``str(0.6 + 0.0)`` is not always what was written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from blindtest.stats.power import (
    PowerProtocol,
    power_row,
    similarity_power_row,
    similarity_smallest_n,
    smallest_n,
)
from blindtest.stats.similarity import SimilarityProtocol, pc_at_pd

DEFAULT_TRIALS = (10, 15, 20, 23, 25, 30, 40, 50)
DEFAULT_PCS = {"triangle": ("0.6", "0.7"), "pair": ("0.7", "0.8"), "preference": ("0.7", "0.8")}
N_MAX = 2000


@dataclass(frozen=True, slots=True)
class GridValue:
    """One alternative as written (``text``) and as the number the power function takes
    (``value``: a proportion correct or win rate; a pd for similarity rows)."""

    text: str
    value: float


@dataclass(frozen=True, slots=True)
class PlanResult:
    protocol: str
    alpha: float
    grid: str  # "pc", "pd" or "win rate"
    values: tuple[GridValue, ...]
    rows: tuple[dict[str, Any], ...]
    smallest: dict[str, int | None]
    similarity_pd0: float | None = None


def grid_values(
    protocol: str, pcs: Sequence[str] | None, pds: Sequence[str] | None
) -> tuple[str, tuple[GridValue, ...]]:
    """Turn the ``--pc``/``--pd`` texts into proportions correct for the protocol."""
    if pds is not None:
        if protocol == "preference":
            raise ValueError("--pd has no meaning for preference; give win rates with --pc")
        guess_protocol: SimilarityProtocol = "pair" if protocol == "pair" else "triangle"
        return "pd", tuple(GridValue(t, pc_at_pd(_unit(t, "--pd"), guess_protocol)) for t in pds)
    texts = pcs if pcs is not None else DEFAULT_PCS[protocol]
    kind = "win rate" if protocol == "preference" else "pc"
    return kind, tuple(GridValue(t, _unit(t, "--pc")) for t in texts)


def _unit(text: str, option: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{option}: {text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{option}: {text} is outside [0, 1]")
    return value


def build_plan(
    protocol: str,
    trials: Sequence[int],
    *,
    alpha: float,
    pcs: Sequence[str] | None = None,
    pds: Sequence[str] | None = None,
    target_power: float | None = None,
) -> PlanResult:
    """Critical count, achieved alpha and exact power at each grid value, for each n."""
    grid, values = grid_values(protocol, pcs, pds)
    kind = cast(PowerProtocol, protocol)
    rows = []
    for n in trials:
        row = power_row(n, protocol=kind, alpha=alpha, pcs=[v.value for v in values])
        rows.append(
            {
                "n": row.n,
                "critical": row.critical,
                "lower_critical": row.lower_critical,
                "achieved_alpha": row.achieved_alpha,
                "power": {v.text: row.power[v.value] for v in values},
            }
        )
    smallest: dict[str, int | None] = {}
    if target_power is not None:
        for v in values:
            smallest[v.text] = smallest_n(
                target_power,
                v.value,
                protocol=kind,
                alpha=alpha,
                n_max=N_MAX,
            )
    return PlanResult(protocol, alpha, grid, values, tuple(rows), smallest)


def build_similarity_plan(
    protocol: str,
    trials: Sequence[int],
    pd0: float,
    *,
    alpha: float,
    pds: Sequence[str] | None = None,
    target_power: float | None = None,
) -> PlanResult:
    """Rows for a pre-registered similarity claim at ``pd0``: power is the chance of
    declaring "indistinguishable within pd0" when the true pd is each grid value."""
    if protocol == "preference":
        raise ValueError("--similarity applies to the triangle and pair protocols")
    kind = cast(SimilarityProtocol, protocol)
    texts = pds if pds is not None else ("0",)
    values = tuple(GridValue(t, _unit(t, "--pd")) for t in texts)
    rows = []
    for n in trials:
        row = similarity_power_row(
            n,
            pd0,
            protocol=kind,
            alpha=alpha,
            pds=[v.value for v in values],
        )
        rows.append(
            {
                "n": row.n,
                "similar_lo": row.similar_lo,
                "similar_hi": row.similar_hi,
                "achieved_alpha": row.achieved_alpha,
                "power": {v.text: row.power[v.value] for v in values},
            }
        )
    smallest: dict[str, int | None] = {}
    if target_power is not None:
        for v in values:
            smallest[v.text] = similarity_smallest_n(
                target_power,
                pd0,
                pd=v.value,
                protocol=kind,
                alpha=alpha,
                n_max=N_MAX,
            )
    return PlanResult(protocol, alpha, "pd", values, tuple(rows), smallest, similarity_pd0=pd0)


def _label(result: PlanResult, value: GridValue) -> str:
    names = {"pc": "Pc", "pd": "pd", "win rate": "win rate"}
    return f"power if {names[result.grid]} = {value.text}"


def _decision(result: PlanResult, row: dict[str, Any]) -> str:
    if result.similarity_pd0 is not None:
        if row["similar_hi"] is None:
            return "never"
        if result.protocol == "pair":
            return f"{row['similar_lo']}..{row['similar_hi']} consistent"
        return f"<= {row['similar_hi']} correct"
    if row["critical"] is None:
        return "never"
    unit = {"triangle": "correct", "pair": "consistent", "preference": "wins"}[result.protocol]
    if result.protocol == "triangle":
        return f"{row['critical']} {unit}"
    return f"{row['critical']} {unit} (or <= {row['lower_critical']})"


def format_plan(result: PlanResult) -> str:
    """The power table as spec 000 prints it: alpha to 3 decimals, power to 2."""
    if result.similarity_pd0 is not None:
        head = (
            f"{result.protocol} similarity test at pd0 = {result.similarity_pd0:g}, "
            f"alpha {result.alpha:g}: declares 'indistinguishable within pd0' when"
        )
        decide = "similar at"
    else:
        chance = "1/3, one-sided" if result.protocol == "triangle" else "1/2, two-sided"
        head = (
            f"{result.protocol} design, exact binomial against chance {chance}, "
            f"alpha {result.alpha:g}"
        )
        decide = "reject at"
    columns = ["trials", decide, "achieved alpha", *(_label(result, v) for v in result.values)]
    table = [columns]
    for row in result.rows:
        cells = [str(row["n"]), _decision(result, row), f"{row['achieved_alpha']:.3f}"]
        cells += [f"{row['power'][v.text]:.2f}" for v in result.values]
        table.append(cells)
    widths = [max(len(r[i]) for r in table) for i in range(len(columns))]
    lines = [head, ""]
    lines += [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in table
    ]
    for text, n in result.smallest.items():
        grid = result.values[[v.text for v in result.values].index(text)]
        target = f"{_label(result, grid).removeprefix('power if ')}"
        lines.append(
            f"smallest n reaching the target power at {target}: "
            + (str(n) if n is not None else f"none up to {N_MAX}")
        )
    if result.similarity_pd0 is None:
        lines += [
            "",
            "achieved alpha is the real false-positive rate of the rule; the binomial is discrete,",
            "so it sits below the nominal alpha.",
        ]
    return "\n".join(lines)
