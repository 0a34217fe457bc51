"""Turn a report into text a person reads (terminal) or a standalone HTML page: the one result
screen (``format_summary``), laid out of the blocks in ``lines`` with the parts of each kind of
report (triangle and pair here, preference in ``render_preference``).

Formatting only: every number and sentence comes from the report; nothing is computed here.
"""

from __future__ import annotations

import html

from blindtest import reportfmt
from blindtest.model.protocols import PROTOCOLS
from blindtest.present import render_preference
from blindtest.present.lines import (
    Parts,
    _census_lines,
    _label,
    _table,
    agreement_text,
    answers_lines,
    appendix_lines,
    appendix_rows,
    audit_lines,
    checks_lines,
    clean,
    dprime_text,
    finish,
    next_lines,
    reading_lines,
    result_lines,
    section_lines,
    serious_lines,
    sides_lines,
    skipped_lines,
    technical_lines,
)
from blindtest.present.raters import first_picks_lines, judges_lines
from blindtest.reportfmt import pct
from blindtest.rundir.types import ReportRecord

__all__ = [
    "TWO_SIDES",
    "Parts",
    "_census_lines",
    "agreement_text",
    "answers_lines",
    "appendix_rows",
    "checks_lines",
    "clean",
    "dprime_text",
    "format_summary",
    "reading_lines",
    "render_html",
    "skipped_lines",
]


def _technical_lines(report: ReportRecord) -> list[str]:
    """The figures a statistician checks, after everything a person needs."""
    rules = PROTOCOLS[report["protocol"]]
    if report["verdict"] in ("void", "unusable") or not report.get("n"):
        return []
    if report.get("correct") is None:
        return ["Technical figures:", f"  {report['n']} judgements over all judges"]
    lines = ["Technical figures:", f"  {report['correct']} of {report['n']} {rules.unit_words}"]
    agree = report.get("reviewer_agreement")
    if agree and agree.get("pairs"):
        lines.append(
            f"  judges agreeing    {pct(agree['rate'])} of {agree['pairs']} pairs of picks on "
            f"{reportfmt.count(agree['trials_shared'], 'shared trial')} (1/3 if both guess)"
        )
    pc, pd, dprime = report.get("pc"), report.get("pd"), report.get("dprime")
    if pc:
        lines.append(
            f"  proportion correct  {pct(pc['estimate'])}  (95% interval {pct(pc['lo'])} to "
            f"{pct(pc['hi'])})"
        )
    if pd:
        lines.append(
            f"  pd, visible on      {pct(pd['estimate'])}  (95% interval {pct(pd['lo'])} to "
            f"{pct(pd['hi'])}) of these prompts"
        )
    if dprime and dprime.get("lo") is not None:
        lines.append(f"  d' (secondary)      {dprime_text(dprime)}")
        lines.append(
            "  d' is the difference in units of the judge's perceptual noise, under a "
            "Thurstonian model (each response read as a noisy impression); pd assumes nothing."
        )
    return lines


def _per_trial_lines(report: ReportRecord, width: int | None = None) -> list[str]:
    rows = report.get("per_trial") or []
    if not rows:
        return []
    # The columns follow the analysis's per-trial rows, one form per kind of pick.
    kind = PROTOCOLS[report["protocol"]].pick_kind
    if kind == "position":
        table = [["trial", "prompt", "judge", "doubled", "odd at", "pick", "correct"]]
        table += [
            [
                str(r["trial"]),
                r["prompt_id"],
                r["judge"],
                f"{r['doubled']} {_label(report, r['doubled'], r['doubled_model'])}",
                str(r["odd_position"]),
                str(r["pick"]),
                "yes" if r["correct"] else "no",
            ]
            for r in rows
        ]
    else:  # a nickname (pair); preference has its own screen (render_preference)
        table = [["trial", "prompt", "judge", "option 1", "nickname", "consistent"]]
        table += [
            [
                str(r["trial"]),
                r["prompt_id"],
                r["judge"],
                f"{r['option1_side']} {_label(report, r['option1_side'], r['option1_model'])}",
                str(r["pick"]),
                "yes" if r["consistent"] else "no",
            ]
            for r in rows
        ]
    return ["Revealed, per trial:", *_table(table)]


def _header(report: ReportRecord) -> list[str]:
    judges = ", ".join(clean(j) for j in report.get("judges") or []) or "none"
    models = report.get("models")
    sides = f", {clean(models['A'])} (A) vs {clean(models['B'])} (B)" if models else ""
    summary = (report.get("sides") or {}).get("summary")
    if models and summary and summary != f"{models['A']} vs {models['B']} (different models)":
        sides = f", {clean(summary)}"
    return [
        f"blindtest: {report['protocol']} test{sides}, "
        f"{reportfmt.count(report['trials_planned'], 'trial')}, "
        f"judged by: {judges}",
        f"design {report['design_sha256'][:16]}",
        "",
    ]


def _result_and_cost(report: ReportRecord) -> list[str]:
    cost = report.get("cost")
    return [*result_lines(report), *([cost] if cost else [])]


#: Triangle and pair: two sides told apart.
TWO_SIDES = Parts(
    header=_header,
    result=_result_and_cost,
    after_result=lambda _: [],
    panel=lambda _: [],
    technical=_technical_lines,
    per_trial=_per_trial_lines,
    sides=sides_lines,
)


def format_summary(
    report: ReportRecord,
    *,
    per_trial: bool = True,
    width: int | None = None,
    table_width: int | None = None,
) -> str:
    """The result screen, in the order a person needs it: the verdict in one sentence, how
    sure, how big, what a bot can explain, what to run next; technical figures, notes and the
    revealed tables last. A preference run's parts (``render_preference.PARTS``) grow with
    its number of candidates. ``width`` wraps prose between words (``screen.wrap``: tables and
    commands stay whole); None leaves one line per paragraph (the HTML page). The per-trial
    table's reasons are cut to fit ``table_width`` (default ``width``): a wide terminal's
    tables may be wider than its prose."""
    prefers = PROTOCOLS[report["protocol"]].prefers
    parts = render_preference.PARTS if prefers else TWO_SIDES
    lines = parts.header(report)
    if report["verdict"] == "void" and not report.get("summary"):
        lines += [clean(report["statement"]), *skipped_lines(report), *reading_lines(report)]
        return finish(lines, width)
    notes = list(report.get("notes") or [])
    loud = [n for n in notes if n.startswith(("REVEALED", "LAUNDERED", "DROPPED"))]
    lines += [*loud, *([""] if loud else [])]
    lines += skipped_lines(report)
    lines += serious_lines(report)
    lines += [*checks_lines(report), *parts.result(report)]
    if after := parts.after_result(report):
        lines += ["", *after]
    channels = [
        "Channels open (differences the judge could have used): "
        + "; ".join(report["channels_open"]),
        "Channels closed (made equal or hidden): " + "; ".join(report["channels_closed"]),
    ]
    for block in (
        section_lines(report.get("people_estimate")),  # what people prefer, from their sample
        first_picks_lines(report),  # beside the result, when a judge changed a word
        section_lines(report.get("controls")),  # hidden controls, right after the verdict
        answers_lines(report),
        parts.panel(report),
        judges_lines(report),
        section_lines(report.get("llm_judges")),
        section_lines(report.get("machine_vs_person")),
        section_lines(report.get("style_control")),
        audit_lines(report),
        channels,
        next_lines(report),
        technical_lines(parts.technical(report), report),
    ):
        if block:
            lines += ["", *block]
    lines += ["", *[n for n in notes if n not in loud]]
    if report.get("missing"):
        lines.append("Not available for this report: " + ", ".join(report["missing"]) + ".")
    lines += reading_lines(report)
    if per_trial:
        lines += ["", *parts.per_trial(report, table_width or width)]
    lines += parts.sides(report)
    appendix = appendix_lines(report)
    if appendix:
        lines += ["", *appendix]
    return finish(lines, width)


def render_html(report: ReportRecord) -> str:
    """A standalone HTML page of the same summary (no scripts, no external resources)."""
    body = html.escape(format_summary(report))
    title = html.escape(f"blindtest report {report['design_sha256'][:12]}")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>body{{font-family:system-ui,sans-serif;max-width:62rem;"
        "margin:2rem auto;padding:0 1rem}pre{white-space:pre-wrap;line-height:1.4}</style>"
        f"</head><body><h1>{title}</h1><pre>{body}</pre></body></html>\n"
    )
