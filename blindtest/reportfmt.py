"""How a report writes its numbers and names its tests: p-values (spec 000's digits),
percentages, counted nouns, and the test behind each p-value.

Shared by the analysis (which writes the sentences) and the renderer (which lays them out), so
render never imports the analysis. Pure; imports nothing of blindtest's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

__all__ = [
    "TESTS",
    "control_line",
    "count",
    "count_grouped",
    "dollars",
    "fixed",
    "format_p",
    "format_p_against",
    "group_counts",
    "grouped",
    "p_cell",
    "pct",
    "seed_shown",
]

#: The test behind each report's p-value, as the result screen names it.
TESTS = {
    "triangle": "one-sided exact binomial against chance 1/3",
    "sequential": "sequential e-process against 1/3; anytime-valid p",
    "panel": "exact randomization test over trials, several judges",
    "pair": "two-sided exact binomial against 1/2",
    "pair_panel": "per-judge two-sided exact binomial, Holm-adjusted",
    "preference": "exact two-sided binomial against 1/2, Wilson interval",
}


def pct(value: float | None) -> str:
    """A share as a whole percent (``0.53`` -> ``53%``); ``?`` when unknown or NaN."""
    return "?" if value is None or math.isnan(value) else f"{100 * value:.0f}%"


#: A seed longer than this is shown by its start and its length, not whole (it may be a
#: pasted file): it stays whole in design.json.
SEED_SHOWN = 32


def seed_shown(seed: str) -> str:
    """A design seed as a line may show it: whole when short and printable, else its first
    characters (control characters as escapes) and its length."""
    if len(seed) <= SEED_SHOWN and seed.isprintable():
        return seed
    head = seed[: SEED_SHOWN // 2].encode("unicode_escape").decode("ascii")
    return f"{head}... ({len(seed):,} characters)"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 trial``, ``2 trials``; ``plural`` where adding an s is wrong (``retry``,
    ``retries``)."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def count_grouped(n: int, noun: str, plural: str | None = None) -> str:
    """``count`` with thousands separators (``55,980 tokens``), for lines no report stores."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def fixed(value: float, digits: int = 2, *, sign: bool = False) -> str:
    """``value`` to ``digits`` decimals (``sign``: with its sign, ``+0.59``); a value that
    rounds to zero is ``0.00``, never ``-0.00``."""
    text = f"{value:{'+' if sign else ''}.{digits}f}"
    return f"{0:.{digits}f}" if float(text) == 0 else text


def grouped(n: int | float | None) -> str:
    """A whole count with thousands separators (``55,980``); ``-`` when unknown."""
    return "-" if n is None else f"{n:,.0f}"


#: A count of at least four digits before tokens, requests or resamples, as a stored line
#: (report.json) says it without separators.
_UNGROUPED = re.compile(r"(?<![\d,.$])(\d{4,})(?= (?:tokens?|requests?|resamples?)\b)")


def group_counts(text: str) -> str:
    """``55980 tokens`` -> ``55,980 tokens`` (and requests, resamples) in a line report.json
    stores ungrouped, whose bytes stay as written: the screen groups them as it prints."""
    return _UNGROUPED.sub(lambda m: f"{int(m[1]):,}", text)


def _rounded(value: float, digits: int) -> Decimal:
    """``value`` to ``digits`` significant digits, halves rounded up."""
    exponent = Decimal(repr(value)).adjusted()
    return Decimal(repr(value)).quantize(Decimal(1).scaleb(exponent - digits + 1), ROUND_HALF_UP)


def dollars(value: float) -> str:
    """Dollars with cents at least and two significant digits below ten cents, so a column
    of them reads alike (``$0.40`` next to ``$0.025``, ``$12.30``) and a small cost never
    shows as a zero it is not (``$0.0031``, not ``$0.00``); halves rounded up."""
    if not math.isfinite(value) or value <= 0:
        return "$?" if math.isnan(value) else f"${value:,.2f}"
    rounded = _rounded(value, 2) if value < 0.1 else Decimal(repr(value))
    decimals = max(2, 1 - rounded.adjusted())
    return f"${rounded.quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP):,.{decimals}f}"


def format_p(value: float | None) -> str:
    """``p = 0.19`` the way spec 000 prints it: two significant digits (0.19, 0.038), one
    below 0.001 (0.0009, 0.000002), halves rounded up, and ``p < 0.000001`` beyond that."""
    if value is None:
        return "p not defined"
    if value < 1e-6:
        return "p < 0.000001"
    digits = 2 if value >= 0.001 else 1
    rounded = _rounded(value, digits)
    decimals = max(2, digits - 1 - rounded.adjusted())
    return f"p = {rounded:.{decimals}f}"


def format_p_against(value: float | None, alpha: float) -> str:
    """``format_p``, unless its rounding would put p on the wrong side of alpha (0.0497 as
    0.050 next to alpha 0.05): then as many digits as it takes and the comparison spelt out,
    ``p = 0.0497 < 0.05``."""
    text = format_p(value)
    if value is None or value < 1e-6:
        return text
    shown = float(text.removeprefix("p = "))
    if (shown <= alpha) == (value <= alpha) and shown != alpha:
        return text
    if value == alpha:
        return f"p = {alpha:g} <= {alpha:g}"
    for digits in range(3, 12):
        rounded = _rounded(value, digits)
        if (float(rounded) <= alpha) == (value <= alpha) and float(rounded) != alpha:
            break
    relation = "<" if value < alpha else ("<=" if value <= alpha else ">")
    return f"p = {rounded:f} {relation} {alpha:g}"


def p_cell(value: float | None, alpha: float | None = None) -> str:
    """A p-value in a table column: ``0.019``, ``< 0.000001``; given the ``alpha`` a column
    compares it with, with ``format_p_against``'s digits (``0.0498``, never ``0.050`` for a
    p below 0.05) and without the spelt-out comparison, which the column's flag says."""
    text = format_p(value) if alpha is None else format_p_against(value, alpha)
    figure = text.removeprefix("p = ").removeprefix("p ")
    return figure.split(" ", 1)[0] if figure[:1].isdigit() else figure


def _share(found: Mapping[str, Any]) -> str:
    """``100% of 40`` as the screen says a share, ``n/a`` without one."""
    if found.get("estimate") is None:
        return "n/a"
    return f"{found['estimate']:.0%} of {found['n']}"


def control_line(control: Mapping[str, Any]) -> str:
    """One judge's hidden controls, in the screen's words (blindtest.analysis.judges): by
    comparison, where position went and how often it tied there, each with its interval, and
    how often it preferred one output there and on the real trials (a description)."""
    split = control["position"]
    decided = split["first"] + split["second"]
    interval = control.get("interval")
    where = (
        f" (exact 95% interval {interval['lo']:.0%} to {interval['hi']:.0%})"
        if interval is not None
        else ""
    )
    text = (
        f"hidden controls (one model on both sides, {count(control['controls'], 'comparison')}): "
        f"first "
        f"position in {_share({'estimate': control.get('share_left'), 'n': decided})} "
        f"comparisons position went with{where}"
    )
    tie_rate = (control.get("description") or {}).get("tie_rate")
    if tie_rate:
        ties = tie_rate["interval"]
        text += (
            f"; tied in {ties['estimate']:.0%} of its verdicts (95% interval {ties['lo']:.0%} "
            f"to {ties['hi']:.0%})"
        )
    found = control["real_vs_controls"]
    real = found.get("real_rate")
    text += (
        f"; preferred one output in "
        f"{_share({'estimate': control.get('share_non_tie'), 'n': control['counted']})}"
    )
    if real is not None:
        text += (
            f", against {_share({'estimate': real['estimate'], 'n': found['real']['comparisons']})}"
            " of the real comparisons"
        )
    return text + " (a description; it decides nothing)"
