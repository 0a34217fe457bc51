"""The report page's sections that the result screen prints as lines (blindtest.present.render),
laid
out as tables and marked warnings: the LLM judges' diagnostics, the hidden controls, position
and agreement, style control, machine vs person, what a bot can explain, identity stripping,
the next step, the technical figures and the sides after the reveal.

Every figure and sentence comes from the report record, formatted with the same helpers as the
screen (blindtest.reportfmt); nothing is recomputed. Pure: dicts and lists for the template.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from blindtest.model.protocols import PROTOCOLS
from blindtest.present.hints import SETUP_LEAD, placeholder_legend, setup_command, stage_command
from blindtest.present.lines import agreement_text, appendix_rows, dprime_text, length_tell_rows
from blindtest.present.render_preference import names_of, unit_line
from blindtest.reportfmt import control_line, count, dollars, format_p, grouped, pct

#: The sentence of responses_sentences that discloses identity stripping.
IDENTITY_SENTENCE = "Identity stripping replaced"


def share(found: Mapping[str, Any] | None) -> str:
    """``100% of 40`` as the screen says a share, ``n/a`` without one."""
    if not found or found.get("estimate") is None:
        return "n/a"
    return f"{found['estimate']:.0%} of {found['n']}"


def money(value: Any) -> str:
    return f"${value:.4f}" if value is not None else "-"


def _interval(found: Mapping[str, Any] | None) -> str:
    interval = (found or {}).get("interval")
    return f"{interval['lo']:.0%} to {interval['hi']:.0%}" if interval else "-"


def position_row(position: Mapping[str, Any]) -> list[str]:
    """The position split in one table row: what each count means, the share of the first
    among first and second, its exact interval and the sign test."""
    if position.get("swapped"):
        what = (
            f"position: {position['inconsistent']} of "
            f"{count(position['comparisons'], 'comparison')} "
            f"position-inconsistent; both passes named the output shown first in "
            f"{position['first']}, the one shown second in {position['second']}"
        )
    else:
        what = (
            f"position (no swap): of {count(position['comparisons'], 'comparison')} "
            f"{position['first']} "
            f"named the output shown first, {position['second']} the one shown second"
        )
    first = position.get("share_first")
    if not first:  # neither first nor second: position decided no comparison
        return [what, "none decided by position", "-", "50%", "no sign test"]
    shown = f"{first['estimate']:.0%} first"
    return [what, shown, _interval({"interval": first}), "50%", format_p(position["p_value"])]


def gate_row(gate: Mapping[str, Any]) -> list[str]:
    """An LLM judge's own position gate in the choices table: its left share over its
    comparisons (every pass as shown), the interval, half, the sign-flip test, the verdict."""
    share = gate["share"]
    said = {"pass": "passes", "fail": "fails", "warn": "warns"}[str(gate["verdict"])]
    return [
        f"position gate over {count(gate['comparisons'], 'comparison')} (every pass as shown; "
        f"margin "
        f"{100 * gate['margin']:g} points): {said}",
        f"left share {_tenth(share['estimate'])}",
        f"{_tenth(share['lo'])} to {_tenth(share['hi'])}",
        "50%",
        f"sign-flip {format_p(gate['p_value'])}",
    ]


def llm_judges(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each LLM judge: its heading, warnings, the table of what it chose against chance (each
    share over comparisons, never passes), the table of counts, its leaking verdicts and its
    hidden-control line."""
    protocol = report["protocol"]
    chance = PROTOCOLS[protocol].chance_words
    judges = []
    for found in (report.get("llm_judges") or {}).get("judges") or []:
        choices = [position_row(found["position"])] if found.get("position") else []
        gate = (found.get("position") or {}).get("gate")
        if gate:
            choices.append(gate_row(gate))
        choices += [
            _choice_row(label, found[key], chance)
            for key, label in (
                ("p_first", "chose the first position shown"),
                ("p_longer", "chose the longer output"),
                ("p_more_markdown", "chose the output with more markdown"),
            )
            if found.get(key) is not None
        ]
        judges.append(
            {
                "name": found.get("model") or found["judge"],
                "judge": found["judge"],
                "comparisons": found["comparisons"],
                "warnings": list(found.get("warnings") or []),
                "choices": choices,
                "counts": _llm_counts(found, protocol),
                "leakage": [
                    [str(leak["trial"]), str(leak["details"])]
                    for leak in found.get("leakage") or []
                ],
                "controls": control_line(found["controls"]) if found.get("controls") else None,
            }
        )
    return judges


def _choice_row(label: str, found: Mapping[str, Any], chance: str) -> list[str]:
    """One share of an LLM judge's choices: estimate of n, exact interval, chance, exact p;
    a share over no comparison is said to be unmeasured."""
    if not found.get("n"):
        unit = found.get("unit") or "comparisons"
        return [label, f"not measured: no comparison counts (only {unit} do)", "-", chance, "-"]
    return [label, share(found), _interval(found), chance, format_p(found.get("p_value"))]


def _llm_counts(found: Mapping[str, Any], protocol: str) -> list[list[str]]:
    preference = PROTOCOLS[protocol].prefers  # low confidence counts as a tie
    rows = []
    if found.get("swap_consistency") is not None:
        rows.append(
            [
                "position swap: both passes agreed",
                f"in {share(found['swap_consistency'])} comparisons (exact 95% interval "
                f"{_interval(found['swap_consistency'])})",
            ]
        )
    rows += [
        [
            "below --min-confidence",
            f"{found['low_confidence']} ("
            + ("counted as ties, " if preference else "")
            + "flagged for human review)",
        ],
        ["with identity leakage", str(len(found.get("leakage") or []))],
        [
            "excluded from the test (neither counted nor ties)"
            if preference
            else "leaking verdicts",
            str(found["excluded"])
            if preference
            else "flagged for review, still counted (no tie to count them as)",
        ],
        ["requests", f"{found['requests']:,} ({count(found['retries'], 'retry', 'retries')})"],
        [
            "failure rows",
            f"{found['failures']} ({count(found['still_failed'], 'trial')} still unjudged)",
        ],
        ["tokens", grouped(found["tokens"])],
        ["cost", money(found.get("cost"))],
    ]
    return rows


def position(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """Preference's position bias, agreement, by-tag table and warnings (the screen's panel
    lines); None when the report has none of them."""
    bias = report.get("position_bias")
    agreement = report.get("agreement")
    warnings = [
        str(w["message"])
        for w in report.get("warnings") or []
        if w["code"] in ("position.margin", "position.lean", "agreement.pair_chance")
    ]
    gates = list(report.get("gates_failed") or [])
    one_judge = PROTOCOLS[report["protocol"]].prefers and "agreement" in report and not agreement
    if not (bias or agreement or warnings or gates or one_judge):
        return None
    rows = []
    if bias:
        share = bias.get("share") or {}
        rows.append(
            [
                "Left share",
                f"{_tenth(share.get('estimate'))} over {count(bias['comparisons'], 'comparison')} "
                f"({bias['picks']} untied picks; {_tenth(share.get('lo'))} to "
                f"{_tenth(share.get('hi'))}, {100 * (1 - bias['alpha']):g}% interval; sign-flip "
                f"test {format_p(bias['p_value'])}); margin {100 * bias['margin']:g} points: "
                f"{bias['verdict']}",
            ]
        )
    if agreement:
        rows += [["Agreement" if k == 0 else "", line] for k, line in enumerate(
            agreement_text(agreement))]  # fmt: skip
    elif one_judge:
        rows.append(["Agreement", "not measured (one judge)."])
    return {"rows": rows, "gates": gates, "warnings": warnings}


def _tenth(value: float | None) -> str:
    return "?" if value is None else f"{100 * value:.1f}%"


def serious(report: Mapping[str, Any]) -> list[dict[str, str]]:
    """The serious warnings the page names before the result (a failed gate is the result's
    own sentence): code, what it concerns, what the code means, and the message."""
    found = []
    for w in report.get("warnings") or []:
        if w.get("severity") != "serious" or str(w.get("code", "")).startswith("gate."):
            continue
        about = [str(w["judge"])] if w.get("judge") else []
        about += [" v ".join(w["pair"])] if w.get("pair") else []
        found.append(
            {
                "code": str(w["code"]),
                "about": ", ".join(about),
                "title": str(w.get("title") or ""),
                "message": str(w["message"]),
            }
        )
    return found


def style_control(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The style-control section: the screen's lines, and a table of the terms in which a
    number the fit cannot stand behind (separated, left out, not estimable) is words."""
    found = report.get("style_control")
    if not found:
        return None
    lines = [str(s) for s in found.get("lines") or []]
    if not found.get("fitted"):  # the lines say why
        return {"lines": lines, "rows": []}
    if "a_strength" not in found:  # from three candidates
        anchor = str(found.get("anchor") or "mean")
        if anchor == "mean":
            # An older analysis wrote no status: every strength it gave was estimated.
            statuses = {r.get("status") for r in (found.get("strengths") or {}).values()}
            some = bool(statuses - {None, "estimated"})
            anchor = "the mean of the candidates with a strength" if some else "the mean"
        return {
            "lines": [*lines, f"In the table, strengths are log-odds with {anchor} at 0."],
            "rows": _several_style_rows(found),
        }
    a, b = names_of(report)
    interval = str(found.get("interval_method") or "")
    infinite = (found.get("separation") or {}).get("infinite") or {}
    strength = {
        **(found.get("a_strength") or {}),
        "se": found.get("a_strength_se"),
        "status": found.get("a_strength_status"),
    }
    rows = [
        _style_row(
            f"{a}'s strength, style held equal", strength, infinite.get("a_strength"), interval
        )
    ]
    rate = found.get("a_win_rate_adjusted") or {}
    if strength["status"] == "estimated" and rate.get("estimate") is not None:
        rows.append(
            [
                f"{a}'s win rate at equal style",
                pct(rate["estimate"]),
                f"{pct(rate.get('lo'))} to {pct(rate.get('hi'))}",
                "",
                f"{a}'s strength through the logistic function",
            ]
        )
    for name, term in (found.get("coefficients") or {}).items():
        label = f"{name} (per unit of ({a} - {b}) / ({a} + {b}))"
        rows.append(_style_row(label, term, infinite.get(name), interval))
    test = found.get("lr_test")
    withheld = {
        "separated": "withheld: the picks are separated (the lines say what decided them)",
        "extrapolated": "withheld: equal style lies outside the data",
    }.get(str(found.get("lr_test_withheld")))
    if withheld:
        rows.append(["style terms jointly", "no test", "", "", withheld])
    elif test:
        rows.append(
            [
                "style terms jointly (Firth's penalised likelihood ratio)",
                f"chi-square {test['statistic']:.2f}, {test['df']} df",
                format_p(test["p_value"]),
                "",
                "",
            ]
        )
    return {"lines": lines, "rows": rows, "method": str(found.get("method"))}


def _several_style_rows(found: Mapping[str, Any]) -> list[list[str]]:
    """Three or more candidates: each strength with style held equal (or why it has none),
    then each style term, as the two-candidate table has them (Wald intervals from the
    prompt-clustered standard error, which the column shows)."""
    interval = "Wald, prompts as the unit" if found.get("interval_unit") == "prompt" else "Wald"
    rows = []
    for name, record in (found.get("strengths") or {}).items():
        # An older analysis wrote no status: every strength it gave was estimated.
        status = str(record.get("status") or "estimated")
        label = f"{name}'s strength, style held equal"
        if status == "not estimated":
            rows.append([label, "not estimable", "", "", "no other strength to set it against"])
            continue
        if name == found.get("anchor") and status == "estimated":
            # The named reference is the zero the others are measured from, not an interval
            # of width 0.
            rows.append([label, "0", "", "", "the reference (0 by definition)"])
            continue
        term = {**(record.get("strength") or {}), "status": status, "se": _shown_se(record)}
        rows.append(_style_row(label, term, None, interval))
    for name, record in (found.get("terms") or {}).items():
        term = {
            **(record.get("coefficient") or {}),
            "status": record.get("status"),
            "se": _shown_se(record),
        }
        label = f"{name} (per unit of (left - right) / (left + right))"
        rows.append(_style_row(label, term, None, interval))
    return rows


def _shown_se(record: Mapping[str, Any]) -> Any:
    """The standard error the interval used: the prompt-clustered one when there is one."""
    return record.get("se") if record.get("se_prompt") is None else record.get("se_prompt")


def _style_row(
    label: str, term: Mapping[str, Any], infinite: int | None, interval: str
) -> list[str]:
    estimate, lo, hi, se = (term.get(k) for k in ("estimate", "lo", "hi", "se"))
    status = str(term.get("status"))
    if status == "estimated" and estimate is not None:
        bound = f"{_coefficient(lo)} to {_coefficient(hi)}"
        error = "n/a" if se is None else f"{se:.2f}"
        return [label, _coefficient(estimate), bound, error, f"estimated ({interval})"]
    if status == "separated" and estimate is not None and infinite:
        # Partly separated: Firth's estimate is set by its penalty; the bound on the side the
        # likelihood does not run off to is what the data support.
        bound = f"at least {_coefficient(lo)}" if infinite > 0 else f"at most {_coefficient(hi)}"
        return [label, "not shown", bound, "", "separated: infinite by maximum likelihood"]
    words = {
        "separated": "separated: the picks follow it completely; nothing to estimate",
        "no variation": "no difference in any comparison; left out",
        "aliased": "the same difference in every comparison; left out",
        "confounded": "cannot be told apart from a style difference that never varied",
        "extrapolated": "no comparison at equal style: a figure would extrapolate",
    }
    return [label, "not estimable", "", "", words.get(status, "the fit did not converge")]


def _coefficient(value: Any) -> str:
    """A log-odds figure with its sign; an unbounded bound (null) as infinity."""
    return "unbounded" if value is None else f"{value:+.2f}"


def people_estimate(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """What people prefer from their sample and a judge on every comparison: the section's
    words, and per pair a row (estimate with interval and method, people alone, the judge
    alone, what the judge was worth)."""
    found = report.get("people_estimate")
    if found is None:
        return None
    shown = (report.get("candidates") or {}).get("shown") or {}
    rows = []
    for pair in found.get("pairs") or []:
        result = pair.get("result")
        if result is None:
            continue
        worth = result.get("judge_worth") or {}
        rows.append(
            [
                f"{shown.get(pair['first'], pair['first'])} over "
                f"{shown.get(pair['second'], pair['second'])}",
                _estimate(result["interval"]),
                str(result["method"]),
                _estimate(result["people_only"]),
                _estimate(result["judge_only"]),
                "n/a" if worth.get("estimate") is None else f"{float(worth['estimate']):.0f}",
            ]
        )
    return {"rows": rows, "lines": [str(s) for s in found.get("lines") or []]}


def _estimate(interval: Mapping[str, Any]) -> str:
    if interval.get("estimate") is None:
        return "n/a"
    if interval.get("lo") is None:
        return f"{float(interval['estimate']):.2f}"
    return (
        f"{float(interval['estimate']):.2f} ({float(interval['lo']):.2f} to "
        f"{float(interval['hi']):.2f})"
    )


def machine_vs_person(report: Mapping[str, Any]) -> dict[str, Any] | None:
    found = report.get("machine_vs_person")
    if found is None:
        return None
    rows = []
    for pair in found.get("pairs") or []:
        kappa = pair.get("kappa") or {}
        rows.append(
            [
                pair["machine"],
                pair["person"],
                str(pair["n"]),
                f"{pair['agreed']} of {pair['n']}",
                "undefined (one label throughout)"
                if kappa.get("estimate") is None
                else f"{kappa['estimate']:.2f} (no large-sample interval)"
                if kappa.get("lo") is None
                else f"{kappa['estimate']:.2f} (95% interval {kappa['lo']:.2f} to "
                f"{kappa['hi']:.2f})",
            ]
        )
    return {"rows": rows, "lines": [str(s) for s in found.get("lines") or []]}


def bots(report: Mapping[str, Any]) -> list[list[str]]:
    """The mechanical bots' scores: a table (header first), as the screen's score lines."""
    found = (report.get("audit") or {}).get("bots") or {}
    if not found:
        return []
    if PROTOCOLS[report["protocol"]].prefers:
        length = found.get("length")
        if not length or length_tell_rows(report):  # per candidate: its own table
            return []
        return [
            ["bot", "what it found", "p"],
            [
                "length",
                f"{names_of(report)[0]}'s answer was the longer in {length['correct']} of "
                f"{length['n']} trials",
                format_p(length["p_value"]),
            ],
        ]
    names = {"length": "length bot", "duplicate": "duplicate spotter"}
    table = [["bot", "correct", "p", "same pick as the judge"]]
    for kind, bot in found.items():
        same = bot.get("same_picks_as_judge")
        table.append(
            [
                names.get(kind, kind),
                f"{bot['correct']}/{bot['n']}",
                format_p(bot["p_value"]),
                f"{same} of {report['n']}" if same is not None else "",
            ]
        )
    return table


def identity(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """Identity stripping: whether it was on (the channels), its disclosure sentence and the
    mentions replaced per side; None for a design that records no stripping."""
    stripped = (report.get("responses") or {}).get("identity_stripped")
    channel = [
        c
        for c in (*(report.get("channels_closed") or []), *(report.get("channels_open") or []))
        if "identity stripping" in c
    ]
    if stripped is None and not channel:
        return None
    sentences = [s for s in report.get("responses_sentences") or [] if IDENTITY_SENTENCE in s]
    rows = []
    if stripped:
        rows = [
            [side, str(stripped["mentions"].get(side, 0)), str(stripped["responses"].get(side, 0))]
            for side in names_of(report)
        ]
    return {
        "on": any(c in (report.get("channels_closed") or []) for c in channel),
        "channel": channel,
        "sentences": sentences,
        "rows": rows,
    }


def next_step(report: Mapping[str, Any]) -> dict[str, str] | None:
    step = report.get("next")
    if not step:
        return None
    args = [str(a) for a in step["args"]]
    return {
        "why": str(step["why"]),
        "command": stage_command(str(step["stage"]), *args),
        "legend": placeholder_legend(args),
        "setup": setup_command(args),
        "setup_lead": SETUP_LEAD,
    }


def technical(report: Mapping[str, Any]) -> list[list[str]]:
    """The figures a statistician checks, as the screen's technical lines, in a table."""
    protocol = report["protocol"]
    if report.get("verdict") in ("void", "unusable") or not report.get("n"):
        return []
    if PROTOCOLS[protocol].prefers and len(names_of(report)) > 2:
        return [["unit, scale, ties", unit_line(report).removeprefix("The unit: ")]]
    if PROTOCOLS[protocol].prefers:
        first, second = names_of(report)
        win = report.get("pc") or {}
        untied = (report.get("wins") or 0) + (report.get("losses") or 0)
        left_out = (report.get("excluded") or {}).get("n")
        dropped = (
            f"; {count(left_out, 'comparison')} excluded by the LLM judge (neither wins nor ties)"
            if left_out
            else ""
        )
        return [
            [
                "comparisons",
                f"{first} {report['wins']} : {second} {report['losses']}, {report['ties']} ties "
                f"(ties excluded from the win rate){dropped}",
            ],
            [
                f"{first}'s win rate",
                f"{pct(win.get('estimate'))} (Wilson 95% interval {pct(win.get('lo'))} to "
                f"{pct(win.get('hi'))})"
                if untied
                else "undefined: no untied comparison",
            ],
        ]
    if report.get("correct") is None:
        return [["judgements", f"{report['n']} over all judges"]]
    return _discrimination(report, protocol)


def _discrimination(report: Mapping[str, Any], protocol: str) -> list[list[str]]:
    unit = PROTOCOLS[protocol].unit_words
    rows = [["trials", f"{report['correct']} of {report['n']} {unit}"]]
    agree = report.get("reviewer_agreement")
    if agree and agree.get("pairs"):
        rows.append(
            [
                "judges agreeing",
                f"{pct(agree['rate'])} of {agree['pairs']} pairs of picks on "
                f"{count(agree['trials_shared'], 'shared trial')} (1/3 if both guess)",
            ]
        )
    pc, pd, dprime = report.get("pc"), report.get("pd"), report.get("dprime")
    if pc:
        rows.append(["proportion correct", _interval_text(pc)])
    if pd:
        rows.append(["pd, visible on", _interval_text(pd) + " of these prompts"])
    if dprime and dprime.get("lo") is not None:
        rows.append(["d' (secondary)", dprime_text(dprime, gap=" ")])
    return rows


def _interval_text(found: Mapping[str, Any]) -> str:
    return f"{pct(found['estimate'])} (95% interval {pct(found['lo'])} to {pct(found['hi'])})"


def appendix(report: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for role, e in appendix_rows(report):
        latency = e.get("mean_latency_ms")
        rows.append(
            [
                role,
                str(e["model"]),
                str(e["responses"]),
                f"{latency:.0f} ms" if latency is not None else "?",
                grouped(e["prompt_tokens"]),
                grouped(e["completion_tokens"]),
                "-" if e.get("cost") is None else dollars(e["cost"]),  # as the screen has it
            ]
        )
    return rows


#: A side's configuration fields, in the screen's order.
SIDE_FIELDS = ("model", "dir", "base_url", "key_env", "system", "template")


def sides(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """Each side's full configuration after the reveal: one row per field, A and B columns."""
    found = report.get("sides")
    if not found:
        return None
    names = names_of(report)[:2]  # from three, the candidates' own table (page.ranking)
    configs = [found[s] for s in names]
    rows = [["label", *[str(c.get("label") or "") for c in configs]]]
    for name in SIDE_FIELDS:
        if any(c.get(name) is not None for c in configs):
            rows.append([name, *["" if c.get(name) is None else str(c[name]) for c in configs]])
    rows.append(["parameters", *[_parameters(c) for c in configs]])
    removed = [_removed(c) for c in configs]
    if any(removed):
        rows.append(["not sent", *removed])
    return {"summary": str(found.get("summary") or ""), "names": names, "rows": rows}


def _parameters(config: Mapping[str, Any]) -> str:
    params = {**(config.get("params") or {}), **(config.get("extra_params") or {})}
    return ", ".join(
        f"{k}={v if isinstance(v, str) else json.dumps(v)}"
        for k, v in params.items()
        if v is not None
    )


def _removed(config: Mapping[str, Any]) -> str:
    return ", ".join(k for k, v in (config.get("extra_params") or {}).items() if v is None)


def responses_sentences(report: Mapping[str, Any]) -> list[str]:
    """Refusals, truncations and served models (the identity sentence has its own section)."""
    return [s for s in report.get("responses_sentences") or [] if IDENTITY_SENTENCE not in s]


def loud_notes(report: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The notes every reader must see first (REVEALED, LAUNDERED), and the others."""
    notes: Sequence[str] = report.get("notes") or []
    loud = [n for n in notes if n.startswith(("REVEALED", "LAUNDERED", "DROPPED"))]
    return loud, [n for n in notes if n not in loud]


def answer_headers(a: str, b: str) -> dict[str, list[str]]:
    """The extra questions' tables, per option, then per comparison (header first), for the
    candidates ``a`` and ``b``."""
    return {
        "each response": [
            "judge",
            f"{a} yes",
            f"{b} yes",
            f"yes for {a} only",
            f"yes for {b} only",
            "both yes",
            "neither",
            "exact McNemar",
        ],
        "the comparison as a whole": [
            "judge",
            "yes",
            f"yes when {a} preferred",
            f"yes when {b} preferred",
            "yes in ties (left out)",
            "Fisher's exact",
        ],
    }


def _answer_p(test: Mapping[str, Any]) -> str:
    return (
        format_p(test["p_value"]) if test["degenerate"] is None else f"none: {test['degenerate']}"
    )


def _answer_row(who: str, cell: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    if "paired" in cell:
        sides, paired = cell["sides"], cell["paired"]
        return [
            who,
            *(f"{sides[s]['yes']} of {sides[s]['n']}" for s in names),
            str(paired["yes_a_no_b"]),
            str(paired["yes_b_no_a"]),
            str(paired["yes_both"]),
            str(paired["no_both"]),
            _answer_p(paired),
        ]
    by = cell["comparisons"]["by_preferred"]
    return [
        who,
        f"{cell['comparisons']['yes']} of {cell['comparisons']['n']}",
        *(f"{by[k]['yes']} of {by[k]['n']}" for k in (*names, "tie")),
        _answer_p(cell["association"]),
    ]


def answers(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each extra question: its sentence, and a table of the counts and the test, pooled
    (when the judges answered no trial in common) and per judge (when there are several)."""
    out = []
    names = names_of(report)
    headers = answer_headers(names[0], names[1]) if len(names) == 2 else {}
    for entry in report.get("answers") or []:
        rows = []
        if entry.get("judges") and entry.get("pooled"):
            pooled = "all judges, pooled" if len(entry["judges"]) > 1 else entry["judges"][0]
            rows.append(_answer_row(pooled, entry, names))
        for cell in entry.get("per_judge") or []:
            rows.append(_answer_row(cell["judge"], cell, names))
        header = headers.get(str(entry.get("about")))
        out.append(
            {"statement": str(entry["statement"]), "rows": rows if header else [], "header": header}
        )
    return out
