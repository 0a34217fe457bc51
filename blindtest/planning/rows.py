"""Power planning for bt-plan: exact rows built on `blindtest.stats.power`. Pure; no I/O.

Grid values keep the text the user typed (``"0.6"``), because the JSON output is keyed by it
and ``str(0.6 + 0.0)`` is not always what was written.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from blindtest.errors import BadValue, option
from blindtest.model.protocols import PROTOCOLS
from blindtest.planning.search import (
    SmallestN,
    difference_smallest_n,
    power_model,
    power_with_ties,
    similarity_model,
    similarity_smallest_n,
)
from blindtest.stats.power import power_row, similarity_power_row
from blindtest.stats.similarity import pc_at_pd

DEFAULT_TRIALS = (10, 15, 20, 23, 25, 30, 40, 50)
#: At most this many trials over all rows of one table (each row is exact and costs O(n)).
MAX_TOTAL_TRIALS = 1_000_000


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
    smallest: dict[str, SmallestN]
    similarity_pd0: float | None = None
    #: The expected tie rate of a preference plan (n then counts every comparison).
    ties: float = 0.0


def grid_values(
    protocol: str, pcs: Sequence[str] | None, pds: Sequence[str] | None
) -> tuple[str, tuple[GridValue, ...]]:
    """Turn the ``--pc``/``--pd`` texts into proportions correct for the protocol."""
    rules = PROTOCOLS[protocol]
    if pds is not None:
        if not rules.similarity:
            raise BadValue(
                f"{option('pd')} has no meaning for {protocol}; give win rates with {option('pc')}"
            )
        guess = similarity_model(protocol)
        return "pd", tuple(GridValue(t, pc_at_pd(_unit(t, "pd"), guess)) for t in pds)
    texts = pcs if pcs is not None else rules.default_pcs
    kind = "win rate" if rules.prefers else "pc"
    return kind, tuple(GridValue(t, _unit(t, "pc")) for t in texts)


def _unit(text: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise BadValue(f"{option(name)}: {text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise BadValue(f"{option(name)}: {text} is outside [0, 1]")
    return value


def build_plan(
    protocol: str,
    trials: Sequence[int],
    *,
    alpha: float,
    pcs: Sequence[str] | None = None,
    pds: Sequence[str] | None = None,
    target_power: float | None = None,
    ties: float = 0.0,
) -> PlanResult:
    """Critical count, achieved alpha and exact power at each grid value, for each n.

    ``ties`` (preference only) is the expected share of comparisons that are ties; n then
    counts every comparison and the win rates are among the untied ones."""
    grid, values = grid_values(protocol, pcs, pds)
    if ties:
        if not PROTOCOLS[protocol].prefers:  # only a preference judge may answer "tie"
            raise BadValue(
                f"{option('ties')} is for preference designs (triangle and pair have no ties)"
            )
        if not 0 <= ties < 1:
            raise BadValue(f"{option('ties')}: {ties:g} is outside [0, 1)")
        return _plan_with_ties(protocol, trials, alpha, grid, values, target_power, ties)
    rows = []
    model = power_model(protocol)
    for n in trials:
        row = power_row(n, protocol=model, alpha=alpha, pcs=[v.value for v in values])
        rows.append(
            {
                "n": row.n,
                "critical": row.critical,
                "lower_critical": row.lower_critical,
                "achieved_alpha": row.achieved_alpha,
                "power": {v.text: row.power[v.value] for v in values},
            }
        )
    smallest: dict[str, SmallestN] = {}
    if target_power is not None:
        for v in values:
            smallest[v.text] = difference_smallest_n(target_power, protocol, alpha, v.value)
    return PlanResult(protocol, alpha, grid, values, tuple(rows), smallest)


def _plan_with_ties(
    protocol: str,
    trials: Sequence[int],
    alpha: float,
    grid: str,
    values: tuple[GridValue, ...],
    target_power: float | None,
    ties: float,
) -> PlanResult:
    """Preference rows over n comparisons of which a share ``ties`` are expected to be ties:
    no fixed critical count (the verdict is decided on however many are untied)."""
    ns = np.asarray(trials, dtype=np.int64)
    nulls = power_with_ties(ns, protocol, alpha, PROTOCOLS[protocol].chance, ties)
    powers = {v.text: power_with_ties(ns, protocol, alpha, v.value, ties) for v in values}
    rows = tuple(
        {
            "n": int(n),
            "critical": None,
            "lower_critical": None,
            "achieved_alpha": float(nulls[i]),
            "power": {text: float(power[i]) for text, power in powers.items()},
            "ties": ties,
        }
        for i, n in enumerate(ns.tolist())
    )
    smallest: dict[str, SmallestN] = {}
    if target_power is not None:
        for v in values:
            smallest[v.text] = difference_smallest_n(target_power, protocol, alpha, v.value, ties)
    return PlanResult(protocol, alpha, grid, values, rows, smallest, ties=ties)


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
    if not PROTOCOLS[protocol].similarity:
        raise BadValue(f"{option('similarity_pd0')} applies to the triangle and pair protocols")
    kind = similarity_model(protocol)
    texts = pds if pds is not None else ("0",)
    values = tuple(GridValue(t, _unit(t, "pd")) for t in texts)
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
    smallest: dict[str, SmallestN] = {}
    if target_power is not None:
        for v in values:
            smallest[v.text] = similarity_smallest_n(target_power, protocol, alpha, pd0, v.value)
    return PlanResult(protocol, alpha, "pd", values, tuple(rows), smallest, similarity_pd0=pd0)


def _label(result: PlanResult, value: GridValue) -> str:
    names = {"pc": "Pc", "pd": "pd", "win rate": "win rate"}
    return f"power if {names[result.grid]} = {value.text}"


def _decision(result: PlanResult, row: dict[str, Any]) -> str:
    if result.similarity_pd0 is not None:
        if row["similar_hi"] is None:
            return "never"
        rules = PROTOCOLS[result.protocol]
        if rules.two_sided:
            return f"{row['similar_lo']}..{row['similar_hi']} {rules.unit}"
        return f"<= {row['similar_hi']} {rules.unit}"
    if row.get("ties"):
        return "on the untied"
    if row["critical"] is None:
        return "never"
    rules = PROTOCOLS[result.protocol]
    if not rules.two_sided:
        return f"{row['critical']} {rules.unit}"
    return f"{row['critical']} {rules.unit} (or <= {row['lower_critical']})"


def times_in_100(probability: float) -> str:
    """A probability as "95 times in 100" (never "0" or "100" for what is merely rare/likely)."""
    count = round(probability * 100)
    if count < 1:
        return "less than once in 100"
    if count > 99 and probability < 1:
        return "more than 99 times in 100"
    return f"{count} time{'s' if count != 1 else ''} in 100"


def _who(result: PlanResult, value: GridValue) -> str:
    """The alternative in words: "a judge right 70% of the time"."""
    if result.similarity_pd0 is not None:
        return f"when judges truly tell the two apart on {float(value.text):.0%} of trials"
    if result.grid == "win rate" and result.ties:
        return (
            f"a side preferred in {value.value:.0%} of the untied comparisons, with "
            f"{result.ties:.0%} ties,"
        )
    if result.grid == "win rate":
        return f"a side preferred {value.value:.0%} of the time"
    if result.grid == "pd":
        apart = float(value.text)
        return f"a judge who truly tells them apart on {apart:.0%} of trials"
    return f"a judge right {value.value:.0%} of the time"


def reading(result: PlanResult) -> str:
    """The first row in one sentence, so the table needs no statistics to read."""
    row, value = result.rows[0], result.values[-1]
    power = row["power"][value.text]
    if result.similarity_pd0 is not None:
        return (
            f"Reading the first row: with {row['n']} trials, {_who(result, value)}, the claim "
            f"'indistinguishable within pd {result.similarity_pd0:g}' is made "
            f"{times_in_100(power)}."
        )
    if result.grid == "win rate":
        return (
            f"Reading the first row: with {row['n']} trials, {_who(result, value)} wins the "
            f"verdict {times_in_100(power)}; with no real preference, one side wrongly wins it "
            f"{times_in_100(row['achieved_alpha'])} (the achieved alpha)."
        )
    return (
        f"Reading the first row: {_who(result, value)} is detected {times_in_100(power)} "
        f"with {row['n']} trials; a judge who is only guessing is wrongly detected "
        f"{times_in_100(row['achieved_alpha'])} (the achieved alpha)."
    )


def _smallest_line(result: PlanResult, text: str, found: SmallestN) -> str:
    grid = result.values[[v.text for v in result.values].index(text)]
    target = _label(result, grid).removeprefix("power if ")
    if found.at_chance:
        return (
            f"smallest n reaching the target power at {target}: none; at chance the test "
            "rejects only as often as alpha, whatever n"
        )
    if found.n is None:
        return (
            f"smallest n reaching the target power at {target}: none up to {found.searched_to:,} "
            f"trials (the most bt-plan computes)"
        )
    line = f"smallest n reaching the target power at {target}: {found.n} (power {found.power:.3f})"
    return f"{line}; {_stable_words(found)}"


def _stable_words(found: SmallestN) -> str:
    """Where the power stops dipping below the target, and how far that was checked."""
    sure = (
        f"computed exactly to {found.stable_checked_to:,}, and a bound holds beyond"
        if found.stable_sure
        else f"computed exactly to {found.stable_checked_to:,}, the most bt-plan computes"
    )
    if found.stable_n == found.n:
        return f"every larger n reaches it too ({sure})"
    dips = [str(d) for d in found.dips]
    if not dips:
        fall = "larger n fall below it again"
    elif len(dips) == 1:
        fall = f"{dips[0]} falls below it again"
    elif len(dips) <= 4:
        fall = f"{', '.join(dips[:-1])} and {dips[-1]} fall below it again"
    else:
        fall = f"{len(dips)} larger n fall below it again ({', '.join(dips[:4])}, ...)"
    if found.stable_n is None:
        return (
            f"the power is a sawtooth in n: {fall}; it still dips at {found.stable_checked_to:,}"
            f" ({sure}), so no n is stable"
        )
    where = "on" if found.stable_sure else f"to {found.stable_checked_to:,}"
    return (
        f"the power is a sawtooth in n: {fall}; the stable n is {found.stable_n:,}: every n "
        f"from it {where} reaches the target ({sure})"
    )


def _table(result: PlanResult) -> list[list[str]]:
    """Header row, then one row per n (the narrow layout reads the header row too)."""
    decide = "similar at" if result.similarity_pd0 is not None else "reject at"
    columns = ["trials", decide, "achieved alpha", *(_label(result, v) for v in result.values)]
    table = [columns]
    for row in result.rows:
        cells = [str(row["n"]), _decision(result, row), f"{row['achieved_alpha']:.3f}"]
        cells += [f"{row['power'][v.text]:.2f}" for v in result.values]
        table.append(cells)
    return table


def _two_line_header(name: str) -> tuple[str, str]:
    if name.startswith("power if "):
        return "power if", name.removeprefix("power if ")
    if name == "achieved alpha":
        return "achieved", "alpha"
    return name, ""


def _table_lines(table: list[list[str]]) -> list[str]:
    head, *rows = table
    headers = [_two_line_header(name) for name in head]
    grid = [[h[0] for h in headers], [h[1] for h in headers], *rows]
    widths = [max(len(r[i]) for r in grid) for i in range(len(head))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in grid
    ]


def _wrap(text: str, width: int, indent: str = "") -> list[str]:
    """Wrap at spaces only (never inside "false-positive" or a number)."""
    return textwrap.wrap(
        text, width, subsequent_indent=indent, break_on_hyphens=False, break_long_words=False
    )


_HOLD = "\x00"


def _narrow_rows(table: list[list[str]], width: int) -> list[str]:
    """One wrapped paragraph per row, for terminals too narrow for the table."""
    head, *rows = table
    lines: list[str] = []
    for cells in rows:
        parts = [f"{head[1]} {cells[1]}", f"achieved alpha {cells[2]}"]
        # "Pc = 0.7" stays on one line: its spaces are held by a placeholder while wrapping.
        parts += [
            f"power {cell} if {name.removeprefix('power if ').replace(' ', _HOLD)}"
            for name, cell in zip(head[3:], cells[3:], strict=True)
        ]
        text = f"{cells[0]} trials: " + "; ".join(parts)
        lines += [line.replace(_HOLD, " ") for line in _wrap(text, width, indent="  ")]
    return lines


def format_plan(result: PlanResult, width: int = 80) -> str:
    """The power table as spec 000 prints it (alpha to 3 decimals, power to 2), with every
    sentence wrapped at word boundaries to ``width``; a table wider than that becomes one
    paragraph per row."""
    width = max(width, 20)
    if result.similarity_pd0 is not None:
        head = (
            f"{result.protocol} similarity test at pd0 = {result.similarity_pd0:g}, "
            f"alpha {result.alpha:g}: declares 'indistinguishable within pd0' when"
        )
    else:
        head = (
            f"{result.protocol} design, exact binomial against chance "
            f"{PROTOCOLS[result.protocol].plan_chance}, "
            f"alpha {result.alpha:g}"
        )
        if result.ties:
            head += (
                f"; {result.ties:.0%} of comparisons expected to be ties: trials count every "
                "comparison, ties leave the test, and the win rate is among the untied"
            )
    table = _table(result)
    rows = _table_lines(table)
    if max(len(r) for r in rows) > width:
        rows = _narrow_rows(table, width)
    lines = [*_wrap(head, width), "", *rows]
    for text, found in result.smallest.items():
        lines += _wrap(_smallest_line(result, text, found), width, indent="  ")
    lines += ["", *_wrap(reading(result), width)]
    if result.similarity_pd0 is None:
        lines += _wrap(
            "Achieved alpha is the real false-positive rate of the rule; the binomial is "
            "discrete, so it sits below the nominal alpha.",
            width,
        )
    return "\n".join(lines)


#: bt-design's warning: a design under this power at Pc (or win rate) 0.7 gets one line.
WEAK_POWER = 0.5
WEAK_AT = 0.7
WEAK_TARGET = 0.8


def weak_design_note(protocol: str, trials: int, alpha: float) -> str | None:
    """One line for a design with under 50% power at Pc 0.7 (win rate 0.7), naming the trial
    count that reaches 80%; None for a design that is not weak."""
    rules = PROTOCOLS[protocol]
    model = power_model(protocol)
    power = power_row(trials, protocol=model, alpha=alpha, pcs=[WEAK_AT]).power[WEAK_AT]
    if power >= WEAK_POWER:
        return None
    found = difference_smallest_n(WEAK_TARGET, protocol, alpha, WEAK_AT)
    verb, who = (
        ("find", "a side preferred 70% of the time")
        if rules.prefers
        else ("detect", "a judge right 70% of the time")
    )
    head = f"with {trials} trial{'s' if trials != 1 else ''} this design"
    if power == 0:
        line = f"{head} can never {verb} {who}"
    else:
        line = f"{head} {verb}s {who} only {times_in_100(power)}"
    if not found.n:
        return line
    steady = found.stable_n
    reach = f"; {found.n} trials reach 80%"
    if steady is not None and steady != found.n:
        reach += f" and every count from {steady} on stays there"
    if rules.prefers:
        return line + reach + ", if no comparison is a tie (bt-plan --ties shows more)"
    return line + reach + " (bt-plan shows more)"
