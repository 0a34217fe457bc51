"""The preference parts of the HTML report (``templates/report.html``), growing with the number
of candidates: for any k the header line and the length tell per candidate; from three the
ranking in words, the strengths with their interval bars, the win-rate matrix, cost against
strength, the pair and reference tables, the tags and the candidates after the reveal (two
candidates read like a two-sided run: the verdict, the win rate against chance, the tags).

Formatting only: every figure comes from report.json's ``candidates`` section. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from blindtest.present.lines import length_tell_rows
from blindtest.present.page import charts
from blindtest.present.render_preference import (
    NOT_ESTIMABLE,
    header_parts,
    interval_words,
    names_of,
)
from blindtest.reportfmt import count, dollars, fixed, group_counts, p_cell, pct

__all__ = ["page_data"]


def _p(value: float | None, alpha: float) -> str:
    return p_cell(value, alpha)  # never rounded onto alpha: 0.0498, not 0.050


def _rate(rate: Mapping[str, Any], n: int) -> str:
    if not n or rate.get("estimate") is None:
        return "only ties"
    return f"{pct(rate['estimate'])} ({pct(rate['lo'])} to {pct(rate['hi'])})"


def _money(value: float | None) -> str:
    return "-" if value is None else dollars(value)


def _shown(section: Mapping[str, Any], name: str) -> str:
    """What the report calls a candidate: its name, with the label a ``--sides`` file gave it
    (``candidates.shown``)."""
    return str((section.get("shown") or {}).get(name, name))


def _strength_chart(section: Mapping[str, Any]) -> Any:
    records = [
        r for r in section["ranking"] if (r.get("strength") or {}).get("estimate") is not None
    ]
    if not records:
        return None
    zero = "the mean" if section["anchor"] == "mean" else section["anchor"]
    rows = [
        charts.Row(
            _shown(section, r["candidate"]),
            r["strength"]["estimate"],
            r["strength"]["lo"],
            r["strength"]["hi"],
        )
        for r in records
    ]
    chart = charts.strength_chart(
        "chart-ranking",
        f"Strength on the log-odds scale ({zero} at 0), strongest first, with 95% intervals "
        f"from {interval_words(section)}",
        rows,
        ref=0.0,
        ref_label=f"{zero} = 0",
    )
    for shown in chart.rows:
        if shown["label"] == _shown(section, section["anchor"]):  # the 0, not a 0-to-0 interval
            shown["text"], shown["interval"] = "0", "the reference, 0 by definition"
    return chart


def _cost_chart(section: Mapping[str, Any]) -> Any:
    points = [
        (
            _shown(section, r["candidate"]),
            1000 * r["cost_per_answer"],
            r["strength"]["estimate"],
            r["strength"]["lo"],
            r["strength"]["hi"],
        )
        for r in section["ranking"]
        if r.get("cost_per_answer") and (r.get("strength") or {}).get("estimate") is not None
    ]
    if len(points) < 2:
        return None
    return charts.cost_chart(
        "chart-cost",
        "Cost against strength: dollars per 1,000 answers across, strength (log-odds, 95% "
        "interval) up; up and to the left is better",
        points,
        "dollars per 1,000 answers",
        "strength",
    )


def _matrix(section: Mapping[str, Any]) -> dict[str, Any]:
    """Row against column: the row's untied win rate, its wins-losses-ties, and a shade
    (blue when the row wins more, orange when it loses more)."""
    names = section["names"]
    rows = []
    for i, name in enumerate(names):
        cells = []
        for j, other in enumerate(names):
            cell = section["win_matrix"][i][j]
            if i == j:
                cells.append({"text": "", "title": "", "shade": "self"})
            elif cell is None:
                cells.append(
                    {"text": "did not meet", "title": f"{name} never met {other}", "shade": "none"}
                )
            else:
                rate = cell["win_rate"]
                shade = (
                    "none"
                    if rate is None
                    else "w2"
                    if rate >= 0.7
                    else "w1"
                    if rate > 0.55
                    else "l2"
                    if rate <= 0.3
                    else "l1"
                    if rate < 0.45
                    else "even"
                )
                cells.append(
                    {
                        "text": "ties only" if rate is None else pct(rate),
                        "counts": f"{cell['wins']}-{cell['losses']}-{cell['ties']}",
                        "title": f"{name} against {other}: won {cell['wins']}, lost "
                        f"{cell['losses']}, {count(cell['ties'], 'tie')}",
                        "shade": shade,
                    }
                )
        rows.append({"name": name, "cells": cells})
    return {"names": names, "rows": rows}


def _ranking_rows(section: Mapping[str, Any]) -> list[list[str]]:
    out = []
    for r in section["ranking"]:
        strength = r.get("strength") or {}
        best, worst = r.get("rank_best"), r.get("rank_worst")
        tokens = r.get("tokens")
        out.append(
            [
                "-" if r.get("rank") is None else str(r["rank"]),
                _shown(section, r["candidate"]),
                *_strength_cells(strength, r["candidate"] == section.get("anchor")),
                "-" if best is None else str(best) if best == worst else f"{best} to {worst}",
                f"{r.get('wins', 0)}-{r.get('losses', 0)}-{r.get('ties', 0)}",
                "-"
                if not tokens or not r.get("answers")
                else f"{tokens['total'] / r['answers']:,.0f}",
                _money(None if r.get("cost_per_answer") is None else 1000 * r["cost_per_answer"]),
            ]
        )
    return out


def _strength_cells(strength: Mapping[str, Any], reference: bool) -> tuple[str, str]:
    """The strength and its interval; the reference is the 0 the others are measured from,
    not an estimate (its bootstrap "interval" is 0 to 0 by construction)."""
    estimate = strength.get("estimate")
    if estimate is None:
        return NOT_ESTIMABLE, "-"
    if reference:
        return "0", "reference (0 by definition)"
    return fixed(estimate, sign=True), f"{_end(strength['lo'])} to {_end(strength['hi'])}"


def _end(value: float | None) -> str:
    return "unbounded" if value is None else fixed(value, sign=True)


def _pair_rows(table: Mapping[str, Any] | None, reference: bool = False) -> list[list[str]]:
    if not table:
        return []
    return [
        [
            r["first"] if reference else f"{r['first']} v {r['second']}",
            f"{r['wins']}-{r['losses']}-{r['ties']}",
            _rate(r["win_rate"], r["n"]),
            _p(r["p_value"], table["alpha"]),
            _p(r["p_holm"], table["alpha"]),
            _told(r, reference),
        ]
        for r in table["pairs"]
    ]


def _told(row: Mapping[str, Any], reference: bool) -> str:
    """Who the separations put ahead in one row (its own test, or through others)."""
    if reference:
        if not row["significant"]:
            return "not told apart"
        return "ahead" if row["wins"] > row["losses"] else "behind"
    ahead = row.get("ahead")
    if ahead is None:
        return "not told apart"
    return f"{ahead} ahead" if row["significant"] else f"{ahead} ahead, through others"


def _tag_rows(section: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One row per tag and candidate (long, so it reads on a phone too)."""
    by_tag = section.get("by_tag") or {}
    header = ["tag", "candidate", "won-lost-tied", "untied win rate (Wilson 95%)"]
    rows = []
    for tag, found in by_tag.items():
        for n, r in enumerate(found["candidates"]):
            rows.append(
                [
                    f"{tag} ({count(found['comparisons'], 'comparison')})" if n == 0 else "",
                    r["candidate"],
                    f"{r['wins']}-{r['losses']}-{r['ties']}",
                    _rate(r["win_rate"], r["n"]),
                ]
            )
    return header, rows


def _sides(report: Mapping[str, Any]) -> list[list[str]]:
    """Each candidate's configuration, the candidate called as the report calls it (with the
    label its sides file gave it)."""
    sides = report.get("sides") or {}
    rows = []
    for name in report["candidates"]["names"]:
        config = sides.get(name) or {}
        rows.append(
            [
                _shown(report["candidates"], name),
                str(config.get("model", "")),
                str(config.get("dir") or config.get("base_url") or ""),
                str(config.get("system") or ""),
                str(config.get("template") or ""),
            ]
        )
    return rows


def page_data(report: Mapping[str, Any]) -> dict[str, Any]:
    """What ``report.html`` draws of a preference report, from its ``candidates`` section."""
    section = report.get("candidates")
    length = length_tell_rows(report)
    found: dict[str, Any] = {
        "meta": header_parts(report),
        "section": section,
        "length_header": length[0] if length else [],
        "length_rows": length[1:],
    }
    if section is None or len(names_of(report)) == 2:  # void, or two: no ranking to draw
        return found
    headline: Sequence[str] = section.get("headline") or []
    tag_header, tag_rows = _tag_rows(section)
    problem = section.get("problem")
    told = problem is not None and any(problem in line for line in headline)
    if report.get("verdict") not in ("void", "unusable", "incomplete"):
        found["headline"] = headline
    return found | {
        # Why there are no strengths, unless the headline above has just said it.
        "no_strengths": None
        if problem is None
        else "Strengths not estimable: the reason is given above."
        if told
        else f"Strengths not estimable: {problem}.",
        # report.json keeps the count of resamples ungrouped; the page groups it (2,000).
        "interval_problem": group_counts(section.get("interval_problem") or ""),
        "strength_chart": _strength_chart(section),
        "cost_chart": _cost_chart(section),
        "matrix": _matrix(section),
        "ranking_rows": _ranking_rows(section),
        "pair_rows": _pair_rows(section["pairs"]),
        "reference_rows": _pair_rows(section.get("reference"), reference=True),
        "reference_name": (section.get("reference") or {})
        .get("family", "")
        .removeprefix("against "),
        "tag_header": tag_header,
        "tag_rows": tag_rows,
        "candidate_sides": _sides(report),
    }
