"""The result screen of a several-candidate run: the ranking in words first (who is ahead, by
how much, which differences are real, what each costs), then the tables.

Formatting only, as ``render`` (which calls it, and cleans every line it prints): every
number and sentence comes from the report's ``candidates`` section
(``blindtest.analysis.candidates``); nothing is computed here beyond laying figures out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from blindtest import reportfmt
from blindtest.present.screen import Verbatim
from blindtest.reportfmt import pct
from blindtest.rundir.types import ReportRecord

__all__ = [
    "NOT_ESTIMABLE",
    "candidates_lines",
    "header_lines",
    "length_tell_lines",
    "length_tell_rows",
    "money",
    "strength_text",
]


#: A strength the data give no finite estimate of (the ranking's reason says why).
NOT_ESTIMABLE = "not estimable"

#: The reference's strength: the 0 the others are measured from, not an estimate with an
#: interval (its bootstrap "interval" is 0 to 0 by construction).
REFERENCE_STRENGTH = " 0     (reference)"


def _num(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "?"
    return reportfmt.fixed(value, digits, sign=True)


def money(value: float | None) -> str:
    """Dollars as ``reportfmt.dollars`` writes them ($0.40, $0.025); "-" when unknown."""
    return "-" if value is None else reportfmt.dollars(value)


def strength_text(strength: Mapping[str, Any]) -> str:
    """``+1.49  (1.02 to 2.01)``; an unbounded end said as such."""
    lo, hi = strength.get("lo"), strength.get("hi")
    lo_text = "unbounded" if lo is None else _num(lo)
    hi_text = "unbounded" if hi is None else _num(hi)
    estimate = _num(strength.get("estimate"))
    if estimate[0].isdigit():  # 0.00 has no sign: a space keeps the column's digits aligned
        estimate = " " + estimate
    return f"{estimate}  ({lo_text} to {hi_text})"


def _p(value: float | None, alpha: float) -> str:
    """A p-value in a column that compares it with ``alpha``: ``0.019``, ``0.0498`` (never
    rounded onto alpha), ``< 0.000001``."""
    return reportfmt.p_cell(value, alpha)


def _table(rows: Sequence[Sequence[str]], right: Sequence[int] = (), gap: str = "  ") -> list[str]:
    """Columns (``right``: right-aligned) ``gap`` apart; the screen cleans every line as it
    prints it."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        Verbatim(
            "  "
            + gap.join(
                c.rjust(w) if i in right and n else c.ljust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )
        for n, row in enumerate(rows)
    ]


def header_lines(report: ReportRecord) -> list[str]:
    section = report["candidates"]
    judges = ", ".join(report.get("judges") or []) or "none"
    names = section["names"]
    prompts = section.get("prompts")
    on = f" on {reportfmt.count(prompts, 'prompt')}" if prompts else ""
    return [
        f"blindtest: preference, {reportfmt.count(len(names), 'candidate')} "
        f"({', '.join(names)}), pairs {section['pairing']}, "
        f"{reportfmt.count(report['trials_planned'], 'comparison')}{on}, judged by: {judges}",
        f"design {report['design_sha256'][:16]}",
        "",
    ]


def _tokens(record: Mapping[str, Any]) -> str:
    tokens = record.get("tokens")
    if not tokens or not record.get("answers"):
        return "-"
    return f"{tokens['total'] / record['answers']:,.0f}"


def _ranking_table(section: Mapping[str, Any]) -> list[str]:
    records = section["ranking"]
    anchor = section["anchor"]
    zero = "the mean" if anchor == "mean" else anchor
    boot = section["bootstrap"]
    ranked = not section.get("problem")
    title = (
        f"Ranking: strength on the log-odds scale, {zero} at 0; 95% interval from a bootstrap "
        f"over {reportfmt.count(section.get('prompts') or 0, 'prompt')} "
        f"({boot['resamples']:,} resamples); the ranks the data allow; wins, losses and ties "
        "(W-L-T); tokens per answer; dollars per 1,000 answers:"
        if ranked
        else "Ranking: strengths not estimable (the reason is above), so no interval and no "
        "bootstrap; each candidate's wins, losses and ties (W-L-T); tokens per answer; "
        "dollars per 1,000 answers:"
    )
    table = [
        [
            "rank",
            "candidate",
            "strength (95% interval)",
            "ranks",
            "W-L-T",
            "tokens",
            "$/1k",
        ]
    ]
    for r in records:
        best, worst = r.get("rank_best"), r.get("rank_worst")
        ranks = "-" if best is None else str(best) if best == worst else f"{best}-{worst}"
        table.append(
            [
                "-" if r.get("rank") is None else str(r["rank"]),
                r["candidate"],
                NOT_ESTIMABLE
                if not ranked or (r.get("strength") or {}).get("estimate") is None
                else REFERENCE_STRENGTH
                if r["candidate"] == anchor  # 0 by definition: no interval to give
                else strength_text(r["strength"]),
                ranks,
                f"{r['wins']}-{r['losses']}-{r['ties']}" if "wins" in r else "-",
                _tokens(r),
                money(None if r.get("cost_per_answer") is None else 1000 * r["cost_per_answer"]),
            ]
        )
    return [title, *_table(table, right=(5, 6))]


def _pairs_table(section: Mapping[str, Any]) -> list[str]:
    pairs = section["pairs"]
    if not pairs["pairs"] or section.get("reference"):  # then the reference's table is it
        return []
    title = (
        f"Pairs ({reportfmt.count(len(pairs['pairs']), 'pair')} that met; the unit is a "
        f"comparison; ties left out of the win rate; Holm across the pairs):"
    )
    # One space between columns (two after the names) and a short head over the win rate:
    # two long names, a Wilson interval and two p-values then fit 80 columns.
    table = [["first v second ", "W-L-T", "win rate", "p", "Holm p", ""]]
    for r in pairs["pairs"]:
        rate = r["win_rate"]
        shown = (
            f"{pct(rate['estimate'])} ({pct(rate['lo'])} to {pct(rate['hi'])})"
            if r["n"]
            else "only ties"
        )
        table.append(
            [
                f"{r['first']} v {r['second']} ",
                f"{r['wins']}-{r['losses']}-{r['ties']}",
                shown,
                _p(r["p_value"], pairs["alpha"]),
                _p(r["p_holm"], pairs["alpha"]),
                "real" if r["significant"] else "",
            ]
        )
    return [title, *_table(table, gap=" ")]


def _reference_table(section: Mapping[str, Any]) -> list[str]:
    found = section.get("reference")
    if not found:
        return []
    ref = found["family"].removeprefix("against ")
    table = [["candidate", "W-L-T", f"win rate v {ref}", "p", "Holm p", ""]]
    for r in found["pairs"]:
        rate = r["win_rate"]
        table.append(
            [
                r["first"],
                f"{r['wins']}-{r['losses']}-{r['ties']}",
                f"{pct(rate['estimate'])} ({pct(rate['lo'])} to {pct(rate['hi'])})"
                if r["n"]
                else "only ties",
                _p(r["p_value"], found["alpha"]),
                _p(r["p_holm"], found["alpha"]),
                "real" if r["significant"] else "",
            ]
        )
    return [
        f"Against the reference {ref} (Wilson 95% interval, exact test, Holm across the "
        f"{reportfmt.count(len(found['pairs']), 'candidate')}):",
        *_table(table),
    ]


def _by_tag_lines(section: Mapping[str, Any]) -> list[str]:
    by_tag = section.get("by_tag") or {}
    if not by_tag:
        return []
    lines = [
        "By tag (untied win rate against whichever candidates it met there; a description, "
        "not a test):"
    ]
    for tag, found in by_tag.items():
        parts = [
            f"{r['candidate']} {pct(r['win_rate']['estimate']) if r['n'] else '-'}"
            f" ({r['wins']}-{r['losses']}-{r['ties']})"
            for r in found["candidates"]
        ]
        lines.append(
            f"  {tag}, {reportfmt.count(found['comparisons'], 'comparison')}: " + ", ".join(parts)
        )
    return lines


def _problems(section: Mapping[str, Any]) -> list[str]:
    out = []
    if section.get("interval_problem"):
        out.append(f"Intervals: {reportfmt.group_counts(section['interval_problem'])}.")
    return out


def candidates_lines(report: ReportRecord) -> list[str]:
    """The ranking's words, then its tables: ranking, pairs, against the reference, by tag."""
    section: Mapping[str, Any] = report["candidates"]
    lines: list[str] = []
    if report["verdict"] in ("unusable", "incomplete"):
        lines += [report["statement"], ""]
    else:
        lines += [*section["headline"], ""]
    lines += _problems(section)
    for block in (
        _ranking_table(section),
        (section.get("style_control") or {}).get("lines") or [],
        _pairs_table(section),
        _reference_table(section),
        _by_tag_lines(section),
    ):
        if block:
            lines += [*block, ""]
    model = {
        "davidson": "Davidson's (1970): a tie counts as half a win to each side",
        "bradley-terry": "none in the data, so plain Bradley-Terry",
    }.get(section.get("tie_model") or "", "no model fitted")
    lines.append(f"The unit: {section['unit']}. Scale: {section['scale_meaning']}. Ties: {model}.")
    return lines


def length_tell_rows(report: Mapping[str, Any]) -> list[list[str]]:
    """The length bot per candidate (bt-audit's sign test, the prompt as the unit), in the
    design's order: on how many prompts its answer was longer, shorter or even against the
    candidates it met there, and the Holm-adjusted p; a header row first, nothing when the
    report has no such test."""
    tells = (report.get("audit") or {}).get("length_by_candidate")
    if not tells:
        return []
    rows = [["candidate", "longer", "shorter", "even", "prompts", "Holm p"]]
    for name in report["candidates"]["names"]:
        t = tells[name]
        rows.append(
            [
                name,
                str(t["longer"]),
                str(t["shorter"]),
                str(t["even"]),
                str(t["prompts"]),
                "-" if t["p_holm"] is None else _p(t["p_holm"], report["alpha"]),
            ]
        )
    return rows


def length_tell_lines(report: Mapping[str, Any]) -> list[str]:
    """The screen's length line of a several-candidate run: per candidate, not "A's answer"."""
    rows = length_tell_rows(report)
    if not rows:
        return []
    return [
        "  length, prompt by prompt: on how many prompts each candidate's answer was longer, "
        "shorter or even against those it met (Holm-adjusted across the candidates):",
        *[Verbatim("  " + line) for line in _table(rows, right=(1, 2, 3, 4, 5))],
    ]


def per_comparison_lines(report: ReportRecord) -> list[str]:
    rows = report.get("per_trial") or []
    if not rows:
        return []
    table = [["comparison", "prompt", "judge", "left", "right", "pick", "preferred"]]
    table += [
        [
            str(r["trial"]),
            r["prompt_id"],
            r["judge"],
            r["left"],
            r["right"],
            str(r["pick"]),
            r.get("excluded") or r["preferred"] or "tie",
        ]
        for r in rows
    ]
    return ["Revealed, per comparison:", *_table(table)]


def sides_lines(report: Mapping[str, Any]) -> list[str]:
    sides = report.get("sides")
    if not sides:
        return []
    lines = ["", f"Candidates, after the reveal: {sides['summary']}"]
    for name in report["candidates"]["names"]:
        config = sides[name]
        where = config.get("dir") or config.get("base_url") or ""
        lines.append(f"  {name}: {config['model']}" + (f" at {where}" if where else ""))
    return lines
