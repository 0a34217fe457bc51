"""Turn a report into text a person reads (terminal) or a standalone HTML page.

Formatting only: every number and sentence comes from the report; nothing is computed here.
"""

from __future__ import annotations

import html
import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from blindtest.analyze import TESTS, format_p


def _pct(value: Any) -> str:
    return "?" if value is None else f"{100 * value:.0f}%"


def _num(value: Any, digits: int = 2) -> str:
    if value is None:
        return "inf"
    if isinstance(value, float) and math.isnan(value):
        return "?"
    return f"{value:.{digits}f}"


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _score_lines(report: Mapping[str, Any]) -> list[str]:
    protocol = report["protocol"]
    if report["verdict"] in ("void", "unusable") or not report.get("n"):
        return []
    test = report.get("test") or TESTS[protocol]
    if protocol == "preference":
        win = report["pc"]
        return [
            f"  A {report['wins']} : B {report['losses']}, {report['ties']} ties   "
            f"{format_p(report['p_value'])} ({test})",
            f"  A's win rate     {_pct(win['estimate'])}  (95% Wilson {_pct(win['lo'])} to "
            f"{_pct(win['hi'])}; ties excluded)",
        ]
    if report.get("correct") is None:
        return [f"  {report['n']} judgements   {format_p(report['p_value'])} ({test})"]
    unit = "correct" if protocol == "triangle" else "consistent"
    lines = [
        f"  {report['correct']} of {report['n']} {unit}   {format_p(report['p_value'])} ({test})"
    ]
    pc, pd, dprime = report.get("pc"), report.get("pd"), report.get("dprime")
    if pc:
        lines.append(
            f"  proportion correct  {_pct(pc['estimate'])}  (95% {_pct(pc['lo'])} to "
            f"{_pct(pc['hi'])})"
        )
    if pd:
        lines.append(
            f"  pd, visible on      {_pct(pd['estimate'])}  (95% {_pct(pd['lo'])} to "
            f"{_pct(pd['hi'])}) of these prompts"
        )
    if dprime and dprime.get("lo") is not None:
        lines.append(
            f"  d' (secondary)      {_num(dprime['estimate'])}  (95% {_num(dprime['lo'])} "
            f"to {_num(dprime['hi'])}; assumes a Thurstonian model)"
        )
    return lines


def _panel_lines(report: Mapping[str, Any]) -> list[str]:
    """Preference diagnostics: position bias, agreement, breakdown by tag, warnings."""
    lines = []
    bias = report.get("position_bias")
    if bias:
        lines.append(
            f"Position: left chosen {bias['left']} of {bias['n']} untied picks "
            f"({_pct(bias['statistic'])}, exact two-sided {format_p(bias['p_value'])})."
        )
    agreement = report.get("agreement")
    if agreement and agreement.get("kappa"):
        kappa = agreement["kappa"]
        lines.append(
            f"Agreement over {agreement['n_items']} shared trials: "
            f"{_pct(agreement['percent']['statistic'])} identical, {kappa['method']} kappa "
            f"{_num(kappa['statistic'])} ({kappa['label']}). {agreement['caveat']}"
        )
    elif report["protocol"] == "preference":
        lines.append("Agreement: not measured (one judge).")
    by_tag = report.get("by_tag")
    if by_tag:
        cells = [f"{tag} A {c['A']} : B {c['B']}, {c['ties']} ties" for tag, c in by_tag.items()]
        lines.append("By task type: " + "; ".join(cells) + ".")
    lines += report.get("warnings") or []
    return lines


def _audit_lines(report: Mapping[str, Any]) -> list[str]:
    audit = report.get("audit")
    if not audit:
        return ["Tells: not audited (run bt-audit, then bt-analyze again)."]
    lines = []
    names = {"length": "length bot", "duplicate": "duplicate spotter"}
    scores = [
        f"{names.get(k, k)} {b['correct']}/{b['n']} ({format_p(b['p_value'])})"
        for k, b in audit["bots"].items()
    ]
    if scores:
        lines.append("Tells, mechanical bots on the same trials: " + "; ".join(scores))
    lines += [f"  {s}" for s in audit["sentences"]]
    return lines


def _checks_lines(report: Mapping[str, Any]) -> list[str]:
    checks = (report.get("audit") or {}).get("checks")
    if not checks:
        return []
    passed = checks["pass"]
    paired = checks["paired"]
    line = (
        f"Mechanical checks first ({checks['prompts']} prompts): A passed "
        f"{passed['A']['passed']}/{passed['A']['total']}, B {passed['B']['passed']}/"
        f"{passed['B']['total']}; paired McNemar {format_p(paired['p_value'])}."
    )
    extra = " The blind judgement below speaks only to what the checks could not decide."
    not_run = (
        f" {checks['not_run']} command checks not run (--allow-commands)."
        if checks["not_run"]
        else ""
    )
    return [line + extra + not_run, ""]


def _per_trial_lines(report: Mapping[str, Any]) -> list[str]:
    rows = report.get("per_trial") or []
    if not rows:
        return []
    protocol = report["protocol"]
    if protocol == "triangle":
        table = [["trial", "prompt", "judge", "doubled", "odd at", "pick", "correct"]]
        table += [
            [
                str(r["trial"]),
                r["prompt_id"],
                r["judge"],
                f"{r['doubled']} {r['doubled_model']}",
                str(r["odd_position"]),
                str(r["pick"]),
                "yes" if r["correct"] else "no",
            ]
            for r in rows
        ]
    elif protocol == "pair":
        table = [["trial", "prompt", "judge", "option 1", "nickname", "consistent"]]
        table += [
            [
                str(r["trial"]),
                r["prompt_id"],
                r["judge"],
                f"{r['option1_side']} {r['option1_model']}",
                str(r["pick"]),
                "yes" if r["consistent"] else "no",
            ]
            for r in rows
        ]
    else:
        table = [["trial", "prompt", "judge", "left", "pick", "preferred", "reason"]]
        table += [
            [
                str(r["trial"]),
                r["prompt_id"],
                r["judge"],
                r["left"],
                str(r["pick"]),
                r["preferred"] or "tie",
                (r.get("reason") or "")[:60],
            ]
            for r in rows
        ]
    return ["Revealed, per trial:", *_table(table)]


def _appendix_lines(report: Mapping[str, Any]) -> list[str]:
    appendix = report.get("appendix")
    if not appendix:
        return []
    table = [["role", "model", "responses", "mean latency", "tokens in+out", "cost"]]
    for role, e in appendix.items():
        latency = f"{e['mean_latency_ms']:.0f} ms" if e.get("mean_latency_ms") is not None else "?"
        cost = f"${e['cost']:.4f}" if e.get("cost") is not None else "-"
        table.append(
            [
                role,
                str(e["model"]),
                str(e["responses"]),
                latency,
                f"{e['prompt_tokens']}+{e['completion_tokens']}",
                cost,
            ]
        )
    return ["Appendix, after the reveal (latency was never shown to the judge):", *_table(table)]


def format_summary(
    report: Mapping[str, Any], *, per_trial: bool = True, width: int | None = None
) -> str:
    """The result screen. ``width`` wraps prose for a terminal; None leaves one line per
    paragraph (for pipes, files and grep)."""
    judges = ", ".join(report.get("judges") or []) or "none"
    models = report["models"]
    lines = [
        f"blindtest: {report['protocol']} test, {models['A']} (A) vs {models['B']} (B), "
        f"{report['trials_planned']} trials, judge(s): {judges}",
        f"design {report['design_sha256'][:16]}",
        "",
        *_checks_lines(report),
        *_score_lines(report),
        "",
        report["statement"],
    ]
    if report.get("cost"):
        lines.append(report["cost"])
    panel = _panel_lines(report)
    if panel:
        lines += ["", *panel]
    lines += ["", *_audit_lines(report), ""]
    lines.append("Channels open: " + "; ".join(report["channels_open"]))
    lines.append("Channels closed: " + "; ".join(report["channels_closed"]))
    lines += ["", *report["notes"]]
    if report.get("missing"):
        lines.append("Not available for this report: " + ", ".join(report["missing"]) + ".")
    if per_trial:
        lines += ["", *_per_trial_lines(report)]
    appendix = _appendix_lines(report)
    if appendix:
        lines += ["", *appendix]
    if width is None:
        return "\n".join(lines)
    return "\n".join(_wrap(line, width) for line in lines)


def _wrap(line: str, width: int) -> str:
    """Wrap prose; indented lines (scores, tables) are already laid out, except the indented
    bot sentences, which wrap under their indent."""
    if len(line) <= width:
        return line
    if line.startswith("  ") and "  " in line[2:]:
        return line  # a table row or score line: columns are separated by double spaces
    indent = "  " if line.startswith("  ") else ""
    return textwrap.fill(line.strip(), width, initial_indent=indent, subsequent_indent=indent)


def render_html(report: Mapping[str, Any]) -> str:
    """A standalone HTML page of the same summary (no scripts, no external resources)."""
    body = html.escape(format_summary(report))
    title = html.escape(f"blindtest report {report['design_sha256'][:12]}")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>body{{font-family:system-ui,sans-serif;max-width:62rem;"
        "margin:2rem auto;padding:0 1rem}pre{white-space:pre-wrap;line-height:1.4}</style>"
        f"</head><body><h1>{title}</h1><pre>{body}</pre></body></html>\n"
    )
