"""Turn a report into text a person reads (terminal) or a standalone HTML page.

Formatting only: every number and sentence comes from the report; nothing is computed here.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from blindtest import reportfmt
from blindtest.model.protocols import PROTOCOLS
from blindtest.present.hints import placeholder_legend, stage_command
from blindtest.present.screen import Verbatim, wrap_lines
from blindtest.reportfmt import format_p, pct
from blindtest.rundir.types import ReportRecord

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: Any) -> str:
    """Text from a file, safe to print: control characters (ESC, CR, newline, bidi overrides)
    are shown as escapes instead of acting on the terminal or the page."""

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _CONTROL.sub(escape, str(text))


def _num(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "?"
    return f"{value:.{digits}f}"


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    rows = [[clean(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def dprime_text(dprime: Mapping[str, Any], gap: str = "  ") -> str:
    """d' without "inf": an unbounded estimate (every trial right) is said in words."""
    est, lo, hi = dprime.get("estimate"), dprime.get("lo"), dprime.get("hi")
    if est is None:
        return f"unbounded (every trial consistent; 95% interval from {_num(lo)})"
    upper = "no finite upper end" if hi is None else f"to {_num(hi)}"
    return f"{_num(est)}{gap}(95% interval {_num(lo)} {upper})"


def _technical_lines(report: ReportRecord) -> list[str]:
    """The figures a statistician checks, after everything a person needs."""
    rules = PROTOCOLS[report["protocol"]]
    if report["verdict"] in ("void", "unusable") or not report.get("n"):
        return []
    if rules.prefers:
        win = report["pc"]
        rate = (
            f"  A's win rate  {pct(win['estimate'])}  (Wilson 95% interval {pct(win['lo'])} "
            f"to {pct(win['hi'])})"
            if (report["wins"] or 0) + (report["losses"] or 0)
            else "  A's win rate  undefined: no untied comparison"
        )
        left_out = (report.get("excluded") or {}).get("n")
        dropped = (
            f"; {reportfmt.count(left_out, 'comparison')} excluded by the LLM judge "
            "(neither wins nor ties)"
            if left_out
            else ""
        )
        return [
            "Technical figures:",
            f"  A {report['wins']} : B {report['losses']}, {report['ties']} ties (ties excluded "
            f"from the win rate){dropped}",
            rate,
        ]
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


def _interval_words(found: Mapping[str, Any], what: str) -> str:
    level, bounds = f"{found['confidence_level'] * 100:g}%", found["interval"]
    return f"{level} {what} {_num(bounds['lo'])} to {_num(bounds['hi'])}"


def _pair_words(pair: Mapping[str, Any]) -> str:
    first, second = pair["judges"]
    head = (
        f"  {first} and {second}, {reportfmt.count(pair['n'], 'shared trial')}, the same answer "
        f"on {pair['agreed']}"
    )
    if pair["statistic"] is None:
        return f"{head}: {pair['statement']}."
    kappa = f"Cohen's kappa {_num(pair['statistic'])}"
    if pair.get("interval"):
        kappa += f" ({_interval_words(pair, 'interval')})"
    if pair["p_value"] is not None:
        kappa += f", test of kappa = 0: {format_p(pair['p_value'])}"
    if pair.get("statement"):
        kappa += f"; {pair['statement']}"
    return f"{head}: {kappa}."


def agreement_text(agreement: Mapping[str, Any]) -> list[str]:
    """The panel's agreement in words: alpha with its interval (or why it is not measured),
    one line per pair of judges who share trials, and spec 002's caveat. Shared by the
    screen and the HTML report."""
    if "alpha" not in agreement:  # a report made before alpha: percent and kappa only
        kappa = agreement.get("kappa") or {}
        if not kappa:
            return [f"Agreement: {agreement.get('statement') or 'not measured'}"]
        return [
            f"Agreement over {reportfmt.count(agreement['n_items'], 'shared trial')}: "
            f"{kappa['method']} kappa "
            f"{_num(kappa['statistic'])} ({kappa['label']}). {agreement['caveat']}"
        ]
    if not agreement["measurable"]:
        return [f"Agreement not measured: {agreement['statement']}"]
    alpha = agreement["alpha"]
    if alpha["statistic"] is None:
        head = (
            f"Agreement over {reportfmt.count(agreement['n_items'], 'shared trial')}: "
            f"{agreement['statement']}"
        )
    else:
        shown = f"Krippendorff's alpha {_num(alpha['statistic'])} ({alpha['label']}"
        if alpha.get("interval"):
            shown += "; " + _interval_words(alpha, "bootstrap interval over trials")
            left_out = alpha.get("undefined_resamples") or 0
            if left_out:  # resamples of one answer throughout have no alpha
                shown += (
                    f", from the {alpha['resamples'] - left_out:,} of {alpha['resamples']:,} "
                    "resamples that held more than one answer"
                )
        head = (
            f"Agreement over {reportfmt.count(agreement['n_items'], 'trial')} seen by two or more "
            f"judges: {shown}), "
            f"{pct(agreement['percent']['statistic'])} of pairs of answers identical."
        )
    return [head, *(_pair_words(p) for p in agreement["pairs"]), agreement["caveat"]]


def _panel_lines(report: ReportRecord) -> list[str]:
    """Preference diagnostics: position bias (one line, whichever says most), agreement,
    breakdown by tag, other warnings."""
    lines = []
    bias = report.get("position_bias")
    warnings = list(report.get("warnings") or [])
    position_warning = [w for w in warnings if w.startswith("Position:")]
    gate = any(g.startswith("position bias") for g in report.get("gates_failed") or [])
    if position_warning:
        lines.append(position_warning[0])
    elif bias and not gate:
        lines.append(
            f"Position: left chosen {bias['left']} of {bias['n']} untied picks "
            f"({pct(bias['statistic'])}, exact two-sided {format_p(bias['p_value'])})."
        )
    agreement = report.get("agreement")
    if agreement:
        lines += agreement_text(agreement)
    elif PROTOCOLS[report["protocol"]].prefers and report.get("agreement", "absent") is None:
        lines.append("Agreement: not measured (one judge).")
    lines += by_tag_lines(report)
    lines += [w for w in warnings if w not in position_warning]
    return lines


def by_tag_lines(report: ReportRecord) -> list[str]:
    """The breakdown by prompt tag: per tag the trials' outcomes, A's win rate among the
    untied with its Wilson interval and the Holm-adjusted exact p; then the sentences of
    :func:`by_tag_sentences`."""
    by_tag = report.get("by_tag")
    if not by_tag:
        return []
    if not any("p_holm" in c for c in by_tag.values()):  # a report made before the tests
        cells = [f"{tag} A {c['A']} : B {c['B']}, {c['ties']} ties" for tag, c in by_tag.items()]
        return ["By task type: " + clean("; ".join(cells)) + "."]
    lines = [
        f"By task type (trials; A's win rate among the untied, Wilson 95% interval; exact "
        f"two-sided p, Holm-adjusted across {reportfmt.count(len(by_tag), 'tag')}):"
    ]
    for tag, c in by_tag.items():
        rate = c.get("win_rate") or {}
        test = (
            f"; A's win rate {pct(rate.get('estimate'))} ({pct(rate.get('lo'))} to "
            f"{pct(rate.get('hi'))}); {format_p(c['p_holm'])}"
            if c.get("n")
            else "; all ties"
        )
        ties = f"{c['ties']} tie{'s' if c['ties'] != 1 else ''}"
        lines.append(f"  {clean(tag)}: A {c['A']} : B {c['B']}, {ties}{test}")
    return lines + by_tag_sentences(report)


def by_tag_sentences(report: ReportRecord) -> list[str]:
    """A sentence for each tag that goes the other way from the whole (seed 001: a candidate
    that loses overall but wins on one kind of task says to route by task rather than
    standardise), a finding only when it holds after Holm's adjustment."""
    by_tag = report.get("by_tag") or {}
    lines: list[str] = []
    wins, losses = report.get("wins") or 0, report.get("losses") or 0
    overall = "A" if wins > losses else "B" if losses > wins else None
    alpha = report.get("alpha") or 0.05
    for tag, c in by_tag.items():
        ahead = c.get("ahead")
        if overall is None or ahead is None or ahead == overall or "p_holm" not in c:
            continue
        count = c["A"] if ahead == "A" else c["B"]
        said = (
            f"On '{clean(tag)}' {ahead} is preferred ({count} of {c['n']} untied) though "
            f"{overall} leads overall"
        )
        if c["p_holm"] <= alpha:
            lines.append(
                f"{said}, and it holds after Holm's adjustment across "
                f"{reportfmt.count(len(by_tag), 'tag')} "
                f"({format_p(c['p_holm'])}): route by task rather than standardise on one."
            )
        else:
            lines.append(
                f"{said}; not significant after Holm's adjustment across "
                f"{reportfmt.count(len(by_tag), 'tag')} "
                f"({format_p(c['p_holm'])}): a lead to test with more '{clean(tag)}' prompts, "
                "not a finding."
            )
    return lines


def _bot_scores(report: ReportRecord, bots: Mapping[str, Any]) -> list[str]:
    if report.get("candidates"):  # no side A: the length tell is per candidate
        from blindtest.present.render_candidates import length_tell_lines

        return length_tell_lines(report)
    if PROTOCOLS[report["protocol"]].prefers:
        length = bots.get("length")
        if not length:
            return []
        return [
            f"  length: A's answer was the longer in {length['correct']} of {length['n']} "
            f"trials ({format_p(length['p_value'])})"
        ]
    names = {"length": "length bot", "duplicate": "duplicate spotter"}
    lines = []
    for kind, bot in bots.items():
        same = bot.get("same_picks_as_judge")
        also = f", same pick as the judge on {same} of {report['n']}" if same is not None else ""
        lines.append(
            f"  {names.get(kind, kind)} {bot['correct']}/{bot['n']} "
            f"({format_p(bot['p_value'])}){also}"
        )
    return lines


def _census_lines(report: ReportRecord, census: Mapping[str, Any] | None) -> list[str]:
    if not census:
        return []
    # Headed by label: when both sides are one model, the model name tells them not apart.
    heads = [f"{s} {_label(report, s, census[s]['model'])}" for s in ("A", "B")]
    rows = [["per response", *heads]]
    labels = {
        "mean_words": "words (mean)",
        "em_dashes": "em dashes",
        "bold": "bold spans",
        "bullets": "bullet items",
    }
    for key, label in labels.items():
        digits = 0 if key == "mean_words" else 1
        rows.append([label, _num(census["A"][key], digits), _num(census["B"][key], digits)])
    return ["  Census of the responses as shown:", *["  " + r for r in _table(rows)]]


def _audit_lines(report: ReportRecord) -> list[str]:
    audit = report.get("audit")
    responses = report.get("responses_sentences") or []
    if not audit:
        return [
            "What a bot can explain: not audited (run bt-audit, then bt-analyze again).",
            *responses,
        ]
    lines = ["What a bot can explain (mechanical judges that read no content, same trials):"]
    lines += _bot_scores(report, audit["bots"])
    lines += [f"  {s}" for s in audit["sentences"]]
    lines += _census_lines(report, audit.get("census"))
    return lines + responses


def _next_lines(report: ReportRecord) -> list[str]:
    step = report.get("next")
    if not step:
        return []
    command = stage_command(step["stage"], *step["args"])
    lines = [f"Next: {step['why']}:", Verbatim(f"    {command}")]  # copied whole
    legend = placeholder_legend([str(a) for a in step["args"]])
    return [*lines, f"  {legend}"] if legend else lines


def _answers_lines(report: ReportRecord) -> list[str]:
    answers = report.get("answers") or []
    if not answers:
        return []
    lines = ["Answers to the extra questions:"]
    for entry in answers:
        statement = str(entry["statement"])
        each = [] if entry.get("pooled", True) else list(entry.get("per_judge") or [])
        for cell in each:  # judges tested alone: one line each, under the question
            statement = statement.replace(f" {cell['statement']}", "", 1)
        lines.append(f"  {clean(statement)}")
        lines += [f"    {clean(str(cell['statement']))}" for cell in each]
    return lines


def reading_lines(report: ReportRecord) -> list[str]:
    """Every input the report was computed from, with what was read from it."""
    reading = report.get("reading")
    if not reading:
        return []
    picks = {f["file"]: f["picks"] for f in reading.get("picks", [])}
    responses = report.get("responses")
    audit = reading.get("audit") or {}
    read = []
    for name in report.get("inputs") or {}:
        if name in picks:
            read.append(f"{clean(name)} ({reportfmt.count(picks[name], 'pick')})")
        elif name == "responses.jsonl" and responses:
            read.append(f"{name} ({responses['answered']} of {responses['slots']} answered)")
        elif name == "audit.json" and audit.get("used") is False:
            continue  # said under "Skipped"
        else:
            read.append(clean(name))
    return ["Read: " + "; ".join(read) + "."]


def skipped_lines(report: ReportRecord) -> list[str]:
    skipped = (report.get("reading") or {}).get("skipped") or []
    return [f"Skipped: {clean(s)}." for s in skipped]


def checks_lines(report: ReportRecord) -> list[str]:
    checks = (report.get("audit") or {}).get("checks")
    if not checks:
        return []
    passed = checks["pass"]
    paired = checks["paired"]
    line = (
        f"Mechanical checks first ({reportfmt.count(checks['prompts'], 'prompt')}): A passed "
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


def _label(report: ReportRecord, side: str, model: str) -> str:
    """What the report calls a side: its label, else the model."""
    config = (report.get("sides") or {}).get(side) or {}
    return str(config.get("label") or model)


#: A reason is cut to this in the per-trial table (report.json holds it whole), and to as
#: little as ``_REASON_MIN`` to keep a row within the terminal.
_REASON_CHARS, _REASON_MIN = 60, 20


def _fit_reasons(table: list[list[str]], width: int | None) -> list[str]:
    """The preference table with its last column (the reasons) cut to ``_REASON_CHARS``, or
    shorter, with "...", so a row fits ``width``; a note says so when the width cut one."""
    room = _REASON_CHARS
    if width is not None:
        others = max(len(line) for line in _table([row[:-1] for row in table]))
        room = max(_REASON_MIN, min(_REASON_CHARS, width - others - 2))
    cut_to_fit = False
    for row in table[1:]:
        if len(row[-1]) > room and room < _REASON_CHARS:
            row[-1], cut_to_fit = row[-1][: room - 3] + "...", True
        else:
            row[-1] = row[-1][:room]
    lines: list[str] = [Verbatim(line) for line in _table(table)]
    if cut_to_fit:
        lines.append("  (reasons cut to fit the terminal; report.json holds them whole)")
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
    elif kind == "nickname":
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
                clean(r.get("reason") or ""),
            ]
            for r in rows
        ]
        return ["Revealed, per trial:", *_fit_reasons(table, width)]
    return ["Revealed, per trial:", *_table(table)]


def appendix_rows(report: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The appendix's roles in the design's order: report.json sorts its keys, so a run of
    candidates is put back in the order its design gives them (other roles after, as stored)."""
    appendix: Mapping[str, Any] = report.get("appendix") or {}
    names = [n for n in (report.get("candidates") or {}).get("names") or [] if n in appendix]
    return [(role, appendix[role]) for role in [*names, *(r for r in appendix if r not in names)]]


def _appendix_lines(report: ReportRecord) -> list[str]:
    if not report.get("appendix"):
        return []
    table = [["role", "model", "responses", "mean latency", "tokens in+out", "cost"]]
    for role, e in appendix_rows(report):
        latency = f"{e['mean_latency_ms']:.0f} ms" if e.get("mean_latency_ms") is not None else "?"
        cost = reportfmt.dollars(e["cost"]) if e.get("cost") is not None else "-"
        table.append(
            [
                role,
                str(e["model"]),
                str(e["responses"]),
                latency,
                f"{reportfmt.grouped(e['prompt_tokens'])}+"
                f"{reportfmt.grouped(e['completion_tokens'])}",
                cost,
            ]
        )
    return ["Appendix, after the reveal (latency was never shown to the judge):", *_table(table)]


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


def _result_lines(report: ReportRecord) -> list[str]:
    summary = report.get("summary")
    if not summary:
        return [clean(report["statement"])]
    lines = [clean(summary["verdict"])]
    if summary.get("sure"):
        lines.append(f"How sure: {summary['sure']}")
    if summary.get("size"):
        lines.append(f"How big: {summary['size']}")
    return lines


def _section_lines(section: Mapping[str, Any] | None) -> list[str]:
    """The screen lines an optional report section carries (LLM judges, style control...)."""
    return [reportfmt.group_counts(str(line)) for line in (section or {}).get("lines") or []]


def format_summary(
    report: ReportRecord,
    *,
    per_trial: bool = True,
    width: int | None = None,
    table_width: int | None = None,
) -> str:
    """The result screen, in the order a person needs it: the verdict in one sentence, how
    sure, how big, what a bot can explain, what to run next; technical figures, notes and the
    revealed tables last. ``width`` wraps prose between words (``screen.wrap``: tables and
    commands stay whole); None leaves one line per paragraph (the HTML page). The per-trial
    table's reasons are cut to fit ``table_width`` (default ``width``): a wide terminal's
    tables may be wider than its prose."""
    if report.get("candidates"):
        return _candidates_summary(report, per_trial=per_trial, width=width)
    lines = _header(report)
    if report["verdict"] == "void" and not report.get("summary"):
        lines += [clean(report["statement"]), *skipped_lines(report), *reading_lines(report)]
        return _finish(lines, width)
    notes = list(report.get("notes") or [])
    loud = [n for n in notes if n.startswith(("REVEALED", "LAUNDERED", "DROPPED"))]
    lines += [*loud, *([""] if loud else [])]
    lines += skipped_lines(report)
    lines += [*checks_lines(report), *_result_lines(report)]
    if cost := report.get("cost"):
        lines.append(cost)
    channels = [
        "Channels open (differences the judge could have used): "
        + "; ".join(report["channels_open"]),
        "Channels closed (made equal or hidden): " + "; ".join(report["channels_closed"]),
    ]
    for block in (
        _section_lines(report.get("controls")),  # hidden controls, right after the verdict
        _answers_lines(report),
        _panel_lines(report),
        _section_lines(report.get("llm_judges")),
        _section_lines(report.get("machine_vs_person")),
        _section_lines(report.get("style_control")),
        _audit_lines(report),
        channels,
        _next_lines(report),
        _technical_lines(report),
    ):
        if block:
            lines += ["", *block]
    lines += ["", *[n for n in notes if n not in loud]]
    if report.get("missing"):
        lines.append("Not available for this report: " + ", ".join(report["missing"]) + ".")
    lines += reading_lines(report)
    if per_trial:
        lines += ["", *_per_trial_lines(report, table_width or width)]
    lines += _sides_lines(report)
    appendix = _appendix_lines(report)
    if appendix:
        lines += ["", *appendix]
    return _finish(lines, width)


def _candidates_summary(report: ReportRecord, *, per_trial: bool, width: int | None) -> str:
    """A several-candidate run's screen (``render_candidates``): the ranking in words and its
    tables where the two-sided screen has its verdict and figures; the diagnostics, notes and
    revealed tables as there."""
    from blindtest.present import render_candidates as ranked

    notes = list(report.get("notes") or [])
    loud = [n for n in notes if n.startswith(("REVEALED", "LAUNDERED", "DROPPED"))]
    lines = [*ranked.header_lines(report), *loud, *([""] if loud else [])]
    lines += skipped_lines(report)
    lines += ranked.candidates_lines(report)
    channels = [
        "Channels open (differences the judge could have used): "
        + "; ".join(report["channels_open"]),
        "Channels closed (made equal or hidden): " + "; ".join(report["channels_closed"]),
    ]
    for block in (
        _panel_lines(report),
        _section_lines(report.get("llm_judges")),
        _section_lines(report.get("machine_vs_person")),
        _audit_lines(report),
        channels,
    ):
        if block:
            lines += ["", *block]
    lines += ["", *[n for n in notes if n not in loud]]
    if report.get("missing"):
        lines.append("Not available for this report: " + ", ".join(report["missing"]) + ".")
    lines += reading_lines(report)
    if per_trial:
        lines += ["", *ranked.per_comparison_lines(report)]
    lines += ranked.sides_lines(report)
    appendix = _appendix_lines(report)
    if appendix:
        lines += ["", *appendix]
    return _finish(lines, width)


#: A side's system prompt or template is cut to this on the screen.
_SHOWN_CHARS = 240


def _sides_lines(report: Mapping[str, Any]) -> list[str]:
    """Each side's full configuration, after the reveal."""
    sides = report.get("sides")
    if not sides:
        return []
    lines = ["", f"Sides, after the reveal: {sides['summary']}"]
    for side in ("A", "B"):
        config = sides[side]
        lines.append(f"  {side} {config['label']}")
        for name in ("model", "dir", "base_url", "key_env", "system", "template"):
            if config.get(name) is not None:
                value = str(config[name]).replace("\n", " / ")
                if len(value) > _SHOWN_CHARS:  # report.json holds it whole
                    value = f"{value[:_SHOWN_CHARS]}... ({len(value)} characters in report.json)"
                lines.append(f"    {name}: {value}")
        params = {**(config.get("params") or {}), **(config.get("extra_params") or {})}
        shown = ", ".join(
            f"{k}={v if isinstance(v, str) else json.dumps(v)}"
            for k, v in params.items()
            if v is not None
        )
        removed = [k for k, v in (config.get("extra_params") or {}).items() if v is None]
        if shown:
            lines.append(f"    parameters: {shown}")
        if removed:
            lines.append(f"    not sent: {', '.join(removed)}")
    return lines


def _finish(lines: Sequence[str], width: int | None) -> str:
    safe = [Verbatim(clean(x)) if isinstance(x, Verbatim) else clean(x) for x in lines]
    return wrap_lines(safe, width)


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
