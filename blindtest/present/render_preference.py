"""The result screen of a preference run, one for every number of candidates, growing with k:
for two the verdict in one sentence, how sure, how big (the winner, the counts, the interval);
from three the ranking in words first (who is ahead, by how much, which differences are real,
what each costs), then its tables; for any k the hidden controls, the extra questions, position
and agreement, the tags, the LLM judges, style control, what a bot can explain, the channels,
the next step, the technical figures and the revealed tables.

Formatting only, as ``render`` (which calls it; every line is cleaned as it is printed): every
number and sentence comes from the report (``blindtest.analysis.preference``); nothing is
computed here beyond laying figures out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from blindtest import reportfmt
from blindtest.present import lines as blocks
from blindtest.present.lines import aligned as _table
from blindtest.present.lines import length_tell_lines, length_tell_rows
from blindtest.present.raters import BOTH_BAD_SHOWN, trial_rows
from blindtest.reportfmt import format_p, pct
from blindtest.rundir.types import ReportRecord
from blindtest.stats.ranking import FIT_FIRTH

__all__ = [
    "NOT_ESTIMABLE",
    "PARTS",
    "by_tag_lines",
    "by_tag_sentences",
    "header_lines",
    "header_parts",
    "interval_words",
    "length_tell_lines",
    "length_tell_rows",
    "money",
    "names_of",
    "ranking_lines",
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


def names_of(report: Mapping[str, Any]) -> list[str]:
    """The candidates, in the design's order (A and B of a two-sided report)."""
    return list((report.get("candidates") or {}).get("names") or ["A", "B"])


def shown(report: Mapping[str, Any], name: str) -> str:
    """What the report calls a candidate: ``A (label)`` for a side of a two-sided design."""
    return str(((report.get("candidates") or {}).get("shown") or {}).get(name, name))


def header_parts(report: Mapping[str, Any]) -> list[str]:
    """Who was compared and how often: ``preference``, two candidates ``X vs Y`` (and what
    differs besides the model), more as a list with their pairing, and the comparisons."""
    section: Mapping[str, Any] = report.get("candidates") or {}
    comparisons = reportfmt.count(report["trials_planned"], "comparison")
    sampled = report.get("people_trials_planned")
    if not section:  # a void report names nothing about the picks, nor the candidates
        asked = f" (people asked {sampled} of them, the judge all)" if sampled else ""
        return ["preference", comparisons + asked]
    names = names_of(report)
    # The planned comparisons' prompts (a report before analysis version 7: those with an
    # outcome), and the comparisons whose only word was "both bad", which have none.
    prompts = section.get("prompts_planned", section.get("prompts"))
    on = f" on {reportfmt.count(prompts, 'prompt')}" if prompts else ""
    said = []
    estimate = report.get("people_estimate")
    if estimate:  # people on their sample, a judge on every comparison
        on = ""
        said.append(f"{_people_judged(estimate['sample'])}, the judge all")
    both_bad = len((report.get("abstentions") or {}).get("left_out") or ())
    if both_bad:
        said.append(f"{both_bad} judged both bad")
    if said:
        on += f" ({'; '.join(said)})"
    parts = ["preference"]
    if len(names) == 2:
        who = " vs ".join(shown(report, n) for n in names)
        summary = (report.get("sides") or {}).get("summary") or ""
        if summary.endswith(")") and not summary.endswith("(different models)"):
            who += f" ({summary.rsplit(' (', 1)[1]}"  # what differs besides the model
        parts.append(who)
    else:
        parts.append(f"{reportfmt.count(len(names), 'candidate')} ({', '.join(names)})")
        if section.get("pairing"):
            parts.append(f"pairs {section['pairing']}")
    return [*parts, f"{comparisons}{on}"]


def _people_judged(sample: Mapping[str, Any]) -> str:
    """``people judged 30``, or ``people judged 29 of their sample's 30`` when some of the
    comparisons people were asked went unjudged (a sample whose missing rule bounds them)."""
    judged, asked = int(sample["judged"]), int(sample["comparisons"])
    if judged >= asked:
        return f"people judged {asked}"
    return f"people judged {judged} of their sample's {asked}"


def header_lines(report: ReportRecord) -> list[str]:
    """The screen's first lines: :func:`header_parts`, the judges, the design's hash."""
    judges = ", ".join(report.get("judges") or []) or "none"
    return [
        f"blindtest: {', '.join(header_parts(report))}, judged by: {judges}",
        f"design {report['design_sha256'][:16]}",
        "",
    ]


def _tokens(record: Mapping[str, Any]) -> str:
    tokens = record.get("tokens")
    if not tokens or not record.get("answers"):
        return "-"
    return f"{tokens['total'] / record['answers']:,.0f}"


def interval_words(section: Mapping[str, Any]) -> str:
    """How the strengths' 95% intervals were made and how often they hold, in words:
    ``a bootstrap over 30 prompts (2,000 resamples; one at a time, ...)``, or Firth's profile
    intervals (no resamples to count)."""
    boot = section.get("bootstrap") or {}
    coverage = boot.get("coverage")
    about = f"; {coverage}" if coverage else ""
    if boot.get("resamples"):
        prompts = reportfmt.count(section.get("prompts") or 0, "prompt")
        return f"a bootstrap over {prompts} ({boot['resamples']:,} resamples{about})"
    if section.get("fit") == FIT_FIRTH:
        return f"the profile penalised likelihood (Firth's fit{about})"
    return f"no resampling{about}"


def _ranking_table(section: Mapping[str, Any]) -> list[str]:
    records = section["ranking"]
    anchor = section["anchor"]
    zero = "the mean" if anchor == "mean" else anchor
    ranked = not section.get("problem")
    title = (
        f"Ranking: strength on the log-odds scale, {zero} at 0; 95% interval from "
        f"{interval_words(section)}; the ranks the data allow (from the pair tests, all at "
        "once); wins, losses and ties (W-L-T); tokens per answer; dollars per 1,000 answers:"
        if ranked
        else "Ranking: strengths not estimable (the reason is above), so no interval and no "
        "bootstrap; the ranks the data allow (from the pair tests, all at once); each "
        "candidate's wins, losses and ties (W-L-T); tokens per answer; dollars per 1,000 "
        "answers:"
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
                # Named with the label a sides file gave it (``candidates.shown``).
                str((section.get("shown") or {}).get(r["candidate"], r["candidate"])),
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


def _pair_cell(row: Mapping[str, Any]) -> str:
    """``alpha > beta`` when the separations put the first ahead (its own test or through
    others), ``alpha < beta`` when the second, ``alpha v beta`` when not told apart: the
    claim in the pair's own cell, so the table keeps its width."""
    ahead = row.get("ahead")
    sign = "v" if ahead is None else ">" if ahead == row["first"] else "<"
    return f"{row['first']} {sign} {row['second']} "


def _family(table: Mapping[str, Any]) -> str:
    """``Holm across the 12 ordered pairs`` (the separations' family: two claims a pair)."""
    return f"Holm across the {2 * len(table['pairs'])} ordered pairs, one-sided"


def _pairs_table(section: Mapping[str, Any]) -> list[str]:
    pairs = section["pairs"]
    if not pairs["pairs"] or section.get("reference"):  # then the reference's table is it
        return []
    title = (
        f"Pairs ({reportfmt.count(len(pairs['pairs']), 'pair')} that met; the unit is a "
        f"comparison; ties left out; Wilson 95% and exact two-sided p one pair at a time; "
        f"adjusted p: exact sign tests, {_family(pairs)}; a > b: a told apart from b, "
        "ahead (through others when its adjusted p is above alpha); v: not told apart):"
    )
    # One space between columns (two after the names) and a short head over the win rate:
    # two long names, a Wilson interval and two p-values then fit 80 columns.
    table = [["first v second ", "W-L-T", "win rate", "p", "adj. p"]]
    for r in pairs["pairs"]:
        rate = r["win_rate"]
        shown = (
            f"{pct(rate['estimate'])} ({pct(rate['lo'])} to {pct(rate['hi'])})"
            if r["n"]
            else "only ties"
        )
        table.append(
            [
                _pair_cell(r),
                f"{r['wins']}-{r['losses']}-{r['ties']}",
                shown,
                _p(r["p_value"], pairs["alpha"]),
                _p(r["p_holm"], pairs["alpha"]),
            ]
        )
    return [title, *_table(table, gap=" ")]


def _reference_table(section: Mapping[str, Any]) -> list[str]:
    found = section.get("reference")
    if not found:
        return []
    ref = found["family"].removeprefix("against ")
    table = [["candidate", "W-L-T", f"win rate v {ref}", "p", "adj. p", ""]]
    for r in found["pairs"]:
        rate = r["win_rate"]
        mark = "" if not r["significant"] else "ahead" if r["wins"] > r["losses"] else "behind"
        table.append(
            [
                r["first"],
                f"{r['wins']}-{r['losses']}-{r['ties']}",
                f"{pct(rate['estimate'])} ({pct(rate['lo'])} to {pct(rate['hi'])})"
                if r["n"]
                else "only ties",
                _p(r["p_value"], found["alpha"]),
                _p(r["p_holm"], found["alpha"]),
                mark,
            ]
        )
    return [
        f"Against the reference {ref} (Wilson 95% interval and exact two-sided p one at a "
        f"time; adjusted p: exact sign tests, {_family(found)}):",
        *_table(table),
    ]


def _tag_pair_line(tag: str, pair: Mapping[str, Any]) -> str:
    """One tag's pair: ``tag: A 9 : B 3, 1 tie; A's win rate 75% (47% to 91%); p = 0.15``."""
    rate = pair.get("win_rate") or {}
    test = (
        f"; {pair['first']}'s win rate {pct(rate.get('estimate'))} ({pct(rate.get('lo'))} to "
        f"{pct(rate.get('hi'))}); {format_p(pair['p_holm'])}"
        if pair.get("n")
        else "; all ties"
    )
    ties = f"{pair['ties']} tie{'s' if pair['ties'] != 1 else ''}"
    return (
        f"  {blocks.clean(tag)}: {pair['first']} {pair['wins']} : {pair['second']} "
        f"{pair['losses']}, {ties}{test}"
    )


def by_tag_lines(report: Mapping[str, Any]) -> list[str]:
    """The breakdown by prompt tag. Two candidates: per tag their wins, losses and ties, the
    first's untied win rate with its Wilson interval and the Holm-adjusted exact p. Three or
    more: each candidate's untied win rate against whichever candidates it met there (a
    description), and the tags' pair tests that hold after Holm. Then the sentences of
    :func:`by_tag_sentences`."""
    section = report.get("candidates") or {}
    by_tag: Mapping[str, Any] = section.get("by_tag") or {}
    if not by_tag:
        return []
    names = names_of(report)
    if len(names) == 2:
        first = names[0]
        lines = [
            f"By task type (trials; {first}'s win rate among the untied, Wilson 95% interval; "
            f"exact two-sided p, Holm-adjusted across {reportfmt.count(len(by_tag), 'tag')}):"
        ]
        lines += [_tag_pair_line(tag, found["pairs"][0]) for tag, found in by_tag.items()]
        return lines + by_tag_sentences(report)
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
    return lines + by_tag_sentences(report)


def by_tag_sentences(report: Mapping[str, Any]) -> list[str]:
    """A sentence for each tag where a pair goes the other way from the whole (seed 001: a
    candidate that loses overall but wins on one kind of task says to route by task rather
    than standardise), a finding only when it holds after Holm's adjustment. "Overall" is the
    whole's claim (the pair's ``ahead``) when it makes one, else the counts, said as counts; a
    tag's direction is its pair's ``won_more``."""
    section = report.get("candidates") or {}
    by_tag: Mapping[str, Any] = section.get("by_tag") or {}
    alpha = report.get("alpha") or 0.05
    # The whole's direction is its claim (the separations', or two candidates' verdict), and
    # a tag's is a count until Holm says more: "B leads overall" is never said of a pair the
    # data do not tell apart.
    whole = {(r["first"], r["second"]): r for r in (section.get("pairs") or {}).get("pairs") or []}
    cells = sum(len(found["pairs"]) for found in by_tag.values())
    across = (
        reportfmt.count(len(by_tag), "tag")
        if len(names_of(report)) == 2
        else f"the {reportfmt.count(cells, 'pair')} of every tag"
    )
    lines: list[str] = []
    for tag, found in by_tag.items():
        for pair in found["pairs"]:
            overall = whole.get((pair["first"], pair["second"]))
            # Who won more in the tag (a report before analysis version 7 called it "ahead").
            here, more = pair.get("won_more", pair.get("ahead")), _won_more(overall)
            if overall is None or here is None or here == more:
                continue
            count = pair["wins"] if here == pair["first"] else pair["losses"]
            held = pair["p_holm"] <= alpha
            said = (
                f"On '{blocks.clean(tag)}' {here} {'is preferred' if held else 'won more'} "
                f"({count} of {pair['n']} untied) though {_overall_words(overall, more)}"
            )
            if held:
                lines.append(
                    f"{said}, and it holds after Holm's adjustment across {across} "
                    f"({format_p(pair['p_holm'])}): route by task rather than standardise on "
                    "one."
                )
            else:
                lines.append(
                    f"{said}; not significant after Holm's adjustment across {across} "
                    f"({format_p(pair['p_holm'])}): a lead to test with more "
                    f"'{blocks.clean(tag)}' prompts, not a finding."
                )
    return lines


def _won_more(row: Mapping[str, Any] | None) -> str | None:
    """The candidate that won more of a pair's comparisons (None when level or absent)."""
    if row is None or row["wins"] == row["losses"]:
        return None
    return str(row["first"] if row["wins"] > row["losses"] else row["second"])


def _overall_words(row: Mapping[str, Any], more: str | None) -> str:
    """``A is preferred overall`` when the whole's claim says so, else ``A won more overall
    (11 to 6; not told apart)``: the counts, never a lead."""
    if row.get("ahead") is not None:
        return f"{row['ahead']} is preferred overall"
    high, low = sorted((row["wins"], row["losses"]), reverse=True)
    return f"{more} won more overall ({high} to {low}; not told apart)"


def _problems(section: Mapping[str, Any]) -> list[str]:
    out = []
    if section.get("interval_problem"):
        out.append(f"Intervals: {reportfmt.group_counts(section['interval_problem'])}.")
    return out


def ranking_lines(report: ReportRecord) -> list[str]:
    """From three candidates, the ranking's tables: the ranking, the pairs or the reference,
    each followed by a blank line."""
    section: Mapping[str, Any] = report["candidates"]
    lines = _problems(section)
    for block in (_ranking_table(section), _pairs_table(section), _reference_table(section)):
        if block:
            lines += [*block, ""]
    return lines


def unit_line(report: Mapping[str, Any]) -> str:
    """The unit, the scale of the strengths and the model of ties, in one line."""
    section = report["candidates"]
    if len(names_of(report)) == 2:
        return f"The unit: {section['unit']}."
    model = {
        "davidson": "Davidson's (1970): a tie counts as half a win to each side",
        "bradley-terry": "none in the data, so plain Bradley-Terry",
    }.get(section.get("tie_model") or "", "no model fitted")
    return f"The unit: {section['unit']}. Scale: {section['scale_meaning']}. Ties: {model}."


def _technical_lines(report: ReportRecord) -> list[str]:
    """The figures a statistician checks, after everything a person needs: the two
    candidates' counts and the first's win rate; from three, the unit, scale and ties."""
    if report["verdict"] in ("void", "unusable") or not report.get("n"):
        return []
    names = names_of(report)
    if len(names) > 2:
        return ["Technical figures:", f"  {unit_line(report)}"]
    first, second = names
    win = report["pc"] or {}
    rate = (
        f"  {first}'s win rate  {pct(win.get('estimate'))}  (Wilson 95% interval "
        f"{pct(win.get('lo'))} to {pct(win.get('hi'))})"
        if (report["wins"] or 0) + (report["losses"] or 0)
        else f"  {first}'s win rate  undefined: no untied comparison"
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
        f"  {first} {report['wins']} : {second} {report['losses']}, {report['ties']} ties (ties "
        f"excluded from the win rate){dropped}",
        rate,
    ]


def _panel_lines(report: ReportRecord) -> list[str]:
    """Position bias (one line, whichever says most), agreement, the breakdown by tag."""
    lines = []
    bias = report.get("position_bias")
    gate = any(g.startswith("position bias") for g in report.get("gates_failed") or [])
    if bias and not gate:
        lines.append(str(bias["statement"]))
    agreement = report.get("agreement")
    if agreement:
        lines += blocks.agreement_text(agreement)
    elif "agreement" in report:
        lines.append("Agreement: not measured (one judge).")
    return lines + by_tag_lines(report)


def _result(report: ReportRecord) -> list[str]:
    """The result: two candidates (or a report that is not a result), the screen's verdict,
    how sure and how big; from three, the ranking in words."""
    if len(names_of(report)) == 2 or report["verdict"] == "void":
        return blocks.result_lines(report)
    if report["verdict"] in ("unusable", "incomplete"):
        return [report["statement"]]
    return list(report["candidates"]["headline"])


def _per_trial_lines(report: ReportRecord, width: int | None) -> list[str]:
    rows = trial_rows(report)  # the picks, and the "both bad" words marked as such
    if not rows:
        return []
    table = [["trial", "prompt", "judge", "left", "right", "pick", "preferred", "reason"]]
    table += [
        [
            str(r["trial"]),
            r["prompt_id"],
            r["judge"],
            r["left"],
            r["right"],
            str(r["pick"]),
            r.get("excluded")
            or r["preferred"]
            or ("neither" if r["pick"] == BOTH_BAD_SHOWN else "tie"),
            blocks.clean(r.get("reason") or ""),
        ]
        for r in rows
    ]
    return ["Revealed, per trial:", *blocks.fit_reasons(table, width)]


def sides_lines(report: Mapping[str, Any]) -> list[str]:
    """Two candidates, each one's full configuration; more, one line each."""
    sides = report.get("sides")
    if not sides:
        return []
    names = names_of(report)
    if len(names) == 2:
        return blocks.sides_lines(report, names)
    lines = ["", f"Candidates, after the reveal: {sides['summary']}"]
    for name in names:
        config = sides[name]
        where = config.get("dir") or config.get("base_url") or ""
        lines.append(
            f"  {shown(report, name)}: {config['model']}" + (f" at {where}" if where else "")
        )
    return lines


def _result_and_cost(report: ReportRecord) -> list[str]:
    cost = report.get("cost")
    return [*_result(report), *([cost] if cost and len(names_of(report)) == 2 else [])]


def _ranking(report: ReportRecord) -> list[str]:
    """From three candidates (a result, not a void report), the ranking's tables."""
    if len(names_of(report)) == 2 or report["verdict"] == "void":
        return []
    lines = ranking_lines(report)
    while lines and not lines[-1]:
        lines.pop()
    return lines


#: The preference run's parts of the one result screen (``blocks.format_summary``).
PARTS = blocks.Parts(
    header=header_lines,
    result=_result_and_cost,
    after_result=_ranking,
    panel=_panel_lines,
    technical=_technical_lines,
    per_trial=_per_trial_lines,
    sides=sides_lines,
)
