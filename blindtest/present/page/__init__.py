"""The HTML report, ``bt-analyze RUN --html FILE``: one self-contained page (inline CSS and
SVG, no script, nothing fetched) built from report.json's fields with Jinja2 templates
(autoescape on). It carries every section of the result screen (blindtest.present.render), in the
screen's order of importance: the verdict with how sure and how big, the estimates against
chance (a forest plot of judges, the pooled estimate and the bots), the sequential e-value
path, the hidden controls, position and agreement, each LLM judge's diagnostics with its
warnings marked, style control (secondary), what a bot can explain (scores, sentences, the
formatting census), machine vs person, the answers to --ask questions, identity stripping,
the channels, the next step as a command, the technical figures, cost, the per-trial table
(each trial opening to the options as the judge saw them), the sides and the notes. Tables
where the screen aligns columns (blindtest.present.page.sections lays them out). A print
stylesheet and a narrow layout for phones.

It shows only what report.json holds: a void report (an unfinished fixed design) holds
nothing about the picks, so neither does its page. Pure: the caller writes the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import jinja2
from markupsafe import Markup

from blindtest.model.protocols import PROTOCOLS
from blindtest.present.lines import checks_lines, clean, reading_lines, skipped_lines
from blindtest.present.markup import render_text
from blindtest.present.page import sections
from blindtest.present.page.charts import Row, bar_chart, e_value_chart, interval_chart
from blindtest.present.raters import BOTH_BAD_SHOWN, page_raters, trial_rows
from blindtest.present.render_preference import by_tag_sentences, names_of
from blindtest.reportfmt import count, format_p
from blindtest.stats.intervals import clopper_pearson
from blindtest.version import __version__

CENSUS = ("mean_words", "bullets", "headings", "bold", "em_dashes", "code_blocks")


def _finalize(value: Any) -> Any:
    """Every string from report.json is shown with its control characters as escapes."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return clean(value)
    return value


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("blindtest.present.page", "templates"),
        autoescape=True,
        # report.json fields are optional (a void report holds few): a missing one is empty.
        undefined=jinja2.ChainableUndefined,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _interval(value: Any) -> tuple[float | None, float | None, float | None]:
    if not isinstance(value, Mapping):
        return None, None, None
    return value.get("estimate"), value.get("lo"), value.get("hi")


def _estimate_charts(report: Mapping[str, Any]) -> list[Any]:
    rules = PROTOCOLS[report["protocol"]]
    if report.get("verdict") == "void" or not report.get("n"):
        return []
    charts: list[Any] = []
    rows: list[Row] = []
    for judge, result in sorted((report.get("per_judge") or {}).items()):
        rows.append(Row(f"judge {judge}", *_interval(result.get("pc"))))
    pooled = "pooled" if rows else ", ".join(report.get("judges") or []) or "judge"
    first = names_of(report)[0]
    if rules.prefers:
        rows.append(Row(f"{first}'s win rate", *_interval(report.get("pc")), kind="pooled"))
    else:
        rows.append(Row(pooled, *_interval(report.get("pc")), kind="pooled"))
    for name, bot in sorted(((report.get("audit") or {}).get("bots") or {}).items()):
        if bot.get("n"):
            ci = clopper_pearson(int(bot["correct"]), int(bot["n"]))
            rows.append(Row(f"bot: {name}", bot["correct"] / bot["n"], ci.lo, ci.hi, kind="bot"))
    what = f"{first}'s win rate (ties excluded)" if rules.prefers else "Proportion correct"
    charts.append(
        interval_chart(
            "chart-pc",
            f"{what} with 95% intervals, against chance"
            + (": one row per judge and the pooled estimate" if report.get("per_judge") else "")
            + (", the bots beside the judge" if (report.get("audit") or {}).get("bots") else ""),
            rows,
            lo=0.0,
            hi=1.0,
            ref=rules.chance,
            ref_label=f"chance {rules.chance:.0%}",
        )
    )
    if rules.similarity and report.get("pd"):
        charts.append(
            interval_chart(
                "chart-pd",
                "pd: share of prompts on which the difference is visible (95% interval)",
                [Row("pd", *_interval(report["pd"]), kind="pooled")],
                lo=0.0,
                hi=1.0,
                ref=0.0,
                ref_label="no difference",
            )
        )
    estimate, lo, hi = _interval(report.get("dprime"))
    if estimate is not None and lo is not None and hi is not None:
        top = max(4.0, float(hi) + 0.5)
        charts.append(
            interval_chart(
                "chart-dprime",
                "d' (Thurstonian, secondary) with its 95% interval",
                [Row("d'", estimate, lo, hi, kind="pooled")],
                lo=0.0,
                hi=top,
                ref=0.0,
                ref_label="no difference",
                percent=False,
            )
        )
    return charts


def _census(report: Mapping[str, Any]) -> tuple[list[str], list[list[str]], Any]:
    """The formatting census: two candidates side by side, with a bar chart; more, one row
    each (too many bars to read)."""
    audit = report.get("audit") or {}
    census = audit.get("census_by_candidate") or audit.get("census") or {}
    sides = [s for s in names_of(report) if isinstance(census.get(s), Mapping)]
    if not sides:
        return [], [], None
    metrics = [m for m in CENSUS if any(m in census[s] for s in sides)]
    if len(sides) > 2:
        header = ["candidate", *(m.replace("_", " ") for m in metrics)]
        return header, [[s, *(_num(census[s].get(m)) for m in metrics)] for s in sides], None
    configs = report.get("sides") or {}
    # Headed by label: when both sides are one model, the model name tells them not apart.
    header = [
        "",
        *[
            f"{s}: {(configs.get(s) or {}).get('label') or census[s].get('model', s)}"
            for s in sides
        ],
    ]
    table = [[m.replace("_", " "), *[_num(census[s].get(m)) for s in sides]] for m in metrics]
    chart = bar_chart(
        "chart-census",
        "Formatting census per model (per response; each row scaled to its largest value)",
        header[1:],
        [(m.replace("_", " "), [float(census[s].get(m) or 0) for s in sides]) for m in metrics],
    )
    return header, table, chart


def _num(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _two_tags(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Two candidates: each tag's one pair (its first's wins, losses, ties and tests)."""
    names = names_of(report)
    by_tag = (report.get("candidates") or {}).get("by_tag") or {}
    if len(names) != 2:
        return {}
    return {tag: found["pairs"][0] for tag, found in by_tag.items() if found["pairs"]}


def _by_tag(report: Mapping[str, Any]) -> tuple[list[str], list[list[str]], Any]:
    """Two candidates' table by tag, with its chart (from three, `ranking.tag_rows`)."""
    by_tag = _two_tags(report)
    if not by_tag:
        return [], [], None
    first, second = names_of(report)
    table = [
        [tag, _num(c["wins"]), _num(c["losses"]), _num(c["ties"]), *_tag_test(c)]
        for tag, c in by_tag.items()
    ]
    chart = bar_chart(
        "chart-tags",
        f"Breakdown by prompt tag (wins for {first}, wins for {second}, ties; one scale for "
        "every tag)",
        [first, second, "ties"],
        [
            (tag, [float(c["wins"]), float(c["losses"]), float(c["ties"])])
            for tag, c in by_tag.items()
        ],
        one_scale=True,
    )
    extra = [f"{first}'s win rate (95% Wilson)", "p", "p (Holm)"]
    return ["tag", first, second, "ties", *extra], table, chart


def _tag_note(report: Mapping[str, Any]) -> str | None:
    """What the by-tag table counts and tests, as the screen's heading says it."""
    by_tag = _two_tags(report)
    if not by_tag:
        return None
    return (
        "Trials by their outcome, per prompt tag (a prompt with several tags counts in each); "
        f"{names_of(report)[0]}'s win rate among the untied with its Wilson 95% interval; the "
        f"exact two-sided p, and that p Holm-adjusted across the {count(len(by_tag), 'tag')}."
    )


def _tag_test(counts: Mapping[str, Any]) -> list[str]:
    """A tag's win rate, exact p and Holm-adjusted p."""
    rate = counts.get("win_rate") or {}
    shown = (
        f"{rate['estimate']:.0%} ({rate['lo']:.0%}-{rate['hi']:.0%})"
        if counts.get("n") and rate.get("estimate") is not None
        else "all ties"
    )
    return [
        shown,
        format_p(counts["p_value"]).removeprefix("p = "),
        format_p(counts["p_holm"]).removeprefix("p = "),
    ]


def _answer(text: str, plain: bool) -> Markup:
    """A prompt or an answer as the report shows it: its headings are none of the report's."""
    return render_text(text, plain=plain, headings=False)


def _trials(
    report: Mapping[str, Any], trials: Sequence[Mapping[str, Any]], plain: bool
) -> list[dict[str, Any]]:
    rows = trial_rows(report)  # the picks, and the "both bad" words marked as such
    if not rows:
        return []
    shown = {int(t["trial"]): t for t in trials}
    columns = [k for k in rows[0] if k not in ("reason",)]
    grouped: dict[int, list[Mapping[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(int(row["trial"]), []).append(row)
    out = []
    for number, judged in sorted(grouped.items()):
        seen = shown.get(number)
        out.append(
            {
                "trial": number,
                "columns": columns,
                "rows": [[_num(r.get(c)) for c in columns] for r in judged],
                "reasons": [r["reason"] for r in judged if r.get("reason")],
                "brief": "; ".join(_brief(r) for r in judged),
                "prompt": _answer(str(seen["prompt"]), plain) if seen else None,
                "history": [
                    (str(turn["role"]), _answer(str(turn["content"]), plain))
                    for turn in ((seen.get("history") or []) if seen else [])
                ],
                "options": [_answer(str(o), plain) for o in seen["options"]] if seen else [],
            }
        )
    return out


def _brief(row: Mapping[str, Any]) -> str:
    if row.get("pick") == BOTH_BAD_SHOWN:
        return f"{row.get('judge', 'judge')} said both bad"
    said = f"{row.get('judge', 'judge')} picked {row.get('pick')}"
    if "correct" in row:
        said += " (correct)" if row["correct"] else " (wrong)"
    elif row.get("preferred"):
        said += f" (prefers {row['preferred']})"
    return said


def _decision(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The pre-registered decision's lines and exit code (None without a decision)."""
    from blindtest.present.decision import decision_lines

    lines = decision_lines(report)
    return {"lines": lines, "exit_code": report["decision"]["exit_code"]} if lines else None


def render_report_page(
    report: Mapping[str, Any],
    *,
    trials: Sequence[Mapping[str, Any]] = (),
    e_values: Sequence[Mapping[str, Any]] = (),
    plain: bool = False,
) -> str:
    """The report as one self-contained HTML page."""
    census_header, census_rows, census_chart = _census(report)
    tag_header, tag_rows, tag_chart = _by_tag(report)
    prefers = PROTOCOLS[report["protocol"]].prefers
    ranked = prefers and len(names_of(report)) > 2 and report.get("verdict") != "void"
    charts = [] if ranked else _estimate_charts(report)
    e_chart = None
    if e_values:
        e_chart = e_value_chart(
            "chart-evalues", [float(v["log_e"]) for v in e_values], float(report["alpha"])
        )
    summary = report.get("summary") or {}
    loud, notes = sections.loud_notes(report)
    checks = checks_lines(report)  # type: ignore[arg-type]
    extra: dict[str, Any] = {}
    if prefers:
        from blindtest.present.page.ranking import page_data

        extra = page_data(report)
        if not ranked:  # two candidates: their own tag table (above), no ranking
            extra["tag_rows"], extra["tag_header"] = tag_rows, tag_header
    values: dict[str, Any] = dict(
        title=f"blindtest report {str(report['design_sha256'])[:12]}",
        version=__version__,
        report=report,
        rules=PROTOCOLS[report["protocol"]],
        summary=summary,
        charts=charts,
        census_header=census_header,
        census_rows=census_rows,
        census_chart=census_chart,
        tag_rows=tag_rows,
        tag_chart=tag_chart,
        tag_note=_tag_note(report),
        tag_sentences=by_tag_sentences(report),
        e_chart=e_chart,
        agreement=report.get("agreement") or None,
        reviewer_agreement=report.get("reviewer_agreement") or None,
        bias=report.get("position_bias") or None,
        controls=report.get("controls") or None,
        cost=report.get("cost"),
        appendix=sections.appendix(report),
        loud=loud,
        notes=notes,
        decision=_decision(report),
        skipped=skipped_lines(report),  # type: ignore[arg-type]
        checks=checks[0] if checks else None,
        reading=reading_lines(report),  # type: ignore[arg-type]
        position=sections.position(report),
        serious=sections.serious(report),
        tag_header=tag_header,
        llm_judges=sections.llm_judges(report),
        style_control=sections.style_control(report),
        bots=sections.bots(report),
        responses_sentences=sections.responses_sentences(report),
        people_estimate=sections.people_estimate(report),
        machine_vs_person=sections.machine_vs_person(report),
        answers=sections.answers(report),
        identity=sections.identity(report),
        next_step=sections.next_step(report),
        technical=sections.technical(report),
        sides=sections.sides(report),
        trials=_trials(report, trials, plain),
        format_p=format_p,
        count=count,
        pct=lambda v: "n/a" if v is None else f"{float(v) * 100:.0f}%",
        ranked=ranked,
        raters=page_raters(report),
    )
    values.update(extra)  # the preference page's own parts (`ranking.page_data`)
    return _environment().get_template("report.html").render(**values)


def render_plan_page(
    protocol: str,
    alpha: float,
    grid: str,
    ns: Sequence[int],
    curves: Sequence[tuple[str, Sequence[float]]],
    table: str,
    target: float | None = None,
) -> str:
    """``bt-plan --html``: exact power against the number of trials for each alternative."""
    from blindtest.present.page.charts import power_chart

    chart = power_chart(
        "chart-power",
        f"Exact power of the {protocol} design at alpha {alpha:g}, by number of trials "
        f"(one line per {grid})",
        ns,
        curves,
        target,
    )
    return (
        _environment()
        .get_template("plan.html")
        .render(
            title=f"blindtest plan: {protocol}",
            version=__version__,
            lede=(
                "How likely a design of each size is to detect a difference of each size. "
                "Exact power is a sawtooth in the number of trials: a larger design can have "
                "slightly less power than a smaller one."
            ),
            chart=chart,
            table=table.splitlines(),
        )
    )
