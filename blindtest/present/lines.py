"""The blocks every result screen is built of (``render.format_summary`` lays them out, with
the parts of each kind of report: ``render`` for triangle and pair, ``render_preference`` for
preference): safe text, tables, agreement, what a bot can explain, the extra questions, what was
read and skipped, the next step, the appendix and the sides.

Formatting only: every number and sentence comes from the report; nothing is computed here.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blindtest import reportfmt
from blindtest.model.protocols import PROTOCOLS
from blindtest.present.hints import SETUP_LEAD, placeholder_legend, setup_command, stage_command
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
    gate = _gate_words(agreement.get("gate"))
    return [
        head + gate,
        *(_pair_words(p) for p in agreement["pairs"]),
        *candidate_pair_lines(agreement),
        agreement["caveat"],
    ]


def _gate_words(gate: Mapping[str, Any] | None) -> str:
    """What the near-chance gate made of alpha (nothing for a report made before it)."""
    if not gate:
        return ""
    if gate.get("reason") == "below_min":
        return f" Below --min-kappa {gate['min_alpha']:g}: the gate fails."
    if gate.get("distinguishable") is True:
        stricter = (
            f" and at least --min-kappa {gate['min_alpha']:g}"
            if gate.get("min_alpha") is not None
            else ""
        )
        return f" Distinguishable from chance (its interval is above 0){stricter}: the gate passes."
    if gate.get("distinguishable") is False:
        hi = ((gate.get("alpha") or {}).get("interval") or {}).get("hi")
        if hi is not None and hi < 0:  # wholly below chance: the judges systematically differ
            return " Below chance (its whole interval is below 0): the gate fails."
        return " Not distinguishable from chance (its interval reaches 0): the gate fails."
    return ""


def _alpha_words(alpha: Mapping[str, Any]) -> str:
    if alpha.get("statistic") is None:
        return "alpha undefined (one answer throughout)"
    interval = alpha.get("interval")
    bounds = (
        f" ({_num(interval['lo'])} to {_num(interval['hi'])})"
        if interval and interval.get("lo") is not None
        else ""
    )
    return f"alpha {_num(alpha['statistic'])}{bounds}"


def candidate_pair_lines(agreement: Mapping[str, Any]) -> list[str]:
    """From three candidates: the panel's agreement on each pair of candidates, beside the
    pooled alpha (a description; the pooled figure is the gate)."""
    pairs = agreement.get("candidate_pairs") or []
    if not pairs:
        return []
    lines = [
        "  By pair of candidates (alpha with its 95% bootstrap interval; a pair the judges "
        "agree on at chance can hide behind a high pooled alpha):"
    ]
    for found in pairs:
        verdict = {True: "", False: ", not distinguishable from chance"}.get(
            found.get("distinguishable"), ""
        )
        lines.append(
            f"    {' v '.join(found['candidates'])}: {_alpha_words(found['alpha'])} over "
            f"{reportfmt.count(found['comparisons'], 'comparison')}{verdict}"
        )
    return lines


def _bot_scores(report: ReportRecord, bots: Mapping[str, Any]) -> list[str]:
    if (report.get("audit") or {}).get("length_by_candidate"):  # the length tell per candidate
        return length_tell_lines(report)
    if PROTOCOLS[report["protocol"]].prefers:
        length = bots.get("length")
        if not length:
            return []
        first = _names(report)[0]
        return [
            f"  length: {first}'s answer was the longer in {length['correct']} of "
            f"{length['n']} trials ({format_p(length['p_value'])})"
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


def _names(report: Mapping[str, Any]) -> list[str]:
    """The candidates, in the design's order (A and B of a two-sided report)."""
    return list((report.get("candidates") or {}).get("names") or ["A", "B"])


#: The census figures the screen shows, per response.
_CENSUS = {
    "mean_words": "words (mean)",
    "em_dashes": "em dashes",
    "bold": "bold spans",
    "bullets": "bullet items",
}


def _census_lines(report: ReportRecord, census: Mapping[str, Any] | None) -> list[str]:
    """The formatting census: two candidates side by side (a column each), more one row
    each, so that the table keeps within the screen."""
    names = [n for n in _names(report) if n in (census or {})]
    if not census or not names:
        return []
    digits = {key: 0 if key == "mean_words" else 1 for key in _CENSUS}
    if len(names) > 2:
        rows = [["candidate", *_CENSUS.values()]]
        rows += [[n, *(_num(census[n][key], digits[key]) for key in _CENSUS)] for n in names]
        return ["  Census of the answers as shown, per answer:", *["  " + r for r in _table(rows)]]
    # Headed by label: when both sides are one model, the model name tells them not apart.
    heads = [f"{s} {_label(report, s, census[s]['model'])}" for s in names]
    rows = [["per response", *heads]]
    for key, label in _CENSUS.items():
        rows.append([label, *(_num(census[s][key], digits[key]) for s in names)])
    return ["  Census of the responses as shown:", *["  " + r for r in _table(rows)]]


def audit_lines(report: ReportRecord) -> list[str]:
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
    lines += _census_lines(report, audit.get("census_by_candidate") or audit.get("census"))
    return lines + responses


def next_lines(report: ReportRecord) -> list[str]:
    step = report.get("next")
    if not step:
        return []
    command = stage_command(step["stage"], *step["args"])
    lines = [f"Next: {step['why']}:", Verbatim(f"    {command}")]  # copied whole
    args = [str(a) for a in step["args"]]
    legend = placeholder_legend(args)
    lines += [f"  {legend}"] if legend else []
    setup = setup_command(args)
    return [*lines, f"  {SETUP_LEAD}", Verbatim(f"    {setup}")] if setup else lines


def answers_lines(report: ReportRecord) -> list[str]:
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
    names = [n for n in _names(report) if n in passed]
    counts = [f"{n} {passed[n]['passed']}/{passed[n]['total']}" for n in names]
    mcnemar = f"; paired McNemar {format_p(paired['p_value'])}" if paired else ""
    line = (
        f"Mechanical checks first ({reportfmt.count(checks['prompts'], 'prompt')}): "
        f"{names[0]} passed {counts[0].split(' ', 1)[1]}"
        + "".join(f", {c}" for c in counts[1:])
        + f"{mcnemar}."
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


def fit_reasons(table: list[list[str]], width: int | None) -> list[str]:
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


def appendix_rows(report: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The appendix's roles in the design's order: report.json sorts its keys, so a run of
    candidates is put back in the order its design gives them (other roles after, as stored)."""
    appendix: Mapping[str, Any] = report.get("appendix") or {}
    names = [n for n in (report.get("candidates") or {}).get("names") or [] if n in appendix]
    return [(role, appendix[role]) for role in [*names, *(r for r in appendix if r not in names)]]


def appendix_lines(report: ReportRecord) -> list[str]:
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


def serious_lines(report: Mapping[str, Any]) -> list[str]:
    """Every serious warning, named before the result (each said in full in its section): a
    failed gate is the result itself ("Not a result: ..."), so it is not named twice."""
    found = [
        w
        for w in report.get("warnings") or []
        if w.get("severity") == "serious" and not str(w.get("code", "")).startswith("gate.")
    ]
    if not found:
        return []
    head = (
        "SERIOUS WARNING, before the result (said in full below):"
        if len(found) == 1
        else f"{len(found)} SERIOUS WARNINGS, before the result (each said in full below):"
    )
    lines = [head]
    for w in found:
        about = [str(w["judge"])] if w.get("judge") else []
        about += [" v ".join(w["pair"])] if w.get("pair") else []
        title = w.get("title") or str(w["message"]).split(". ", 1)[0]
        lines.append(f"  {w['code']}{' (' + ', '.join(about) + ')' if about else ''}: {title}")
    return [*lines, ""]


def result_lines(report: ReportRecord) -> list[str]:
    summary = report.get("summary")
    if not summary:
        return [clean(report["statement"])]
    lines = [clean(summary["verdict"])]
    if summary.get("sure"):
        lines.append(f"How sure: {summary['sure']}")
    if summary.get("size"):
        lines.append(f"How big: {summary['size']}")
    return lines


def section_lines(section: Mapping[str, Any] | None) -> list[str]:
    """The screen lines an optional report section carries (LLM judges, style control...)."""
    return [reportfmt.group_counts(str(line)) for line in (section or {}).get("lines") or []]


def technical_lines(lines: Sequence[str], report: Mapping[str, Any]) -> list[str]:
    """The technical figures, then the style control's (log-odds, intervals, its test): what
    a statistician checks, after what a person reads."""
    extra = [str(line) for line in (report.get("style_control") or {}).get("technical") or []]
    if not extra:
        return list(lines)
    return [*(lines or ["Technical figures:"]), *extra]


#: A side's system prompt or template is cut to this on the screen.
_SHOWN_CHARS = 240


def sides_lines(report: Mapping[str, Any], names: Sequence[str] = ("A", "B")) -> list[str]:
    """Each side's (``names``: each candidate's) full configuration, after the reveal."""
    sides = report.get("sides")
    if not sides:
        return []
    lines = ["", f"Sides, after the reveal: {sides['summary']}"]
    for side in names:
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


@dataclass(frozen=True, slots=True)
class Parts:
    """What one kind of report puts into the one result screen: its header, its result (the
    verdict, how sure, how big, cost), what follows the result (a ranking's tables), its panel
    of diagnostics, its technical figures, its revealed per-trial table and its sides."""

    header: Callable[[ReportRecord], list[str]]
    result: Callable[[ReportRecord], list[str]]
    after_result: Callable[[ReportRecord], list[str]]
    panel: Callable[[ReportRecord], list[str]]
    technical: Callable[[ReportRecord], list[str]]
    per_trial: Callable[[ReportRecord, int | None], list[str]]
    sides: Callable[[ReportRecord], list[str]]


def finish(lines: Sequence[str], width: int | None) -> str:
    safe = [Verbatim(clean(x)) if isinstance(x, Verbatim) else clean(x) for x in lines]
    return wrap_lines(safe, width)


def aligned(rows: Sequence[Sequence[str]], right: Sequence[int] = (), gap: str = "  ") -> list[str]:
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
                "-" if t["p_holm"] is None else reportfmt.p_cell(t["p_holm"], report["alpha"]),
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
        *[Verbatim("  " + line) for line in aligned(rows, right=(1, 2, 3, 4, 5))],
    ]
