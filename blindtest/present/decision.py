"""The pre-registered decision as people and CI read it: the screen's lines after the result,
and the JUnit XML of ``bt-analyze --junit`` (one test case per decision, the failure message
its headline). Reads ``report["decision"]`` only (`blindtest.analysis.decision` writes it);
computes nothing. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from xml.etree import ElementTree

from blindtest.model.protocols import PROTOCOLS
from blindtest.reportfmt import count, dollars, format_p, pct

__all__ = ["EXIT_WORDS", "decision_lines", "junit_xml", "undecided_lines"]

#: What each exit code of a decision says (DESIGN.md's table).
EXIT_WORDS: Mapping[int, str] = {
    0: "the claim is shown",
    1: "a gate failed: no result",
    4: "the opposite is shown",
    5: "not shown either way at this size",
}
_SCALE = {
    "untied-share": "untied share",
    "mean-score": "mean score",
    "pd": "pd",
    "people-mean-score": "people's mean score (a tie 1/2), estimated by prediction-powered "
    "inference from people on the design's sample and the LLM judge on every comparison",
}


def _rule(decision: Mapping[str, Any]) -> str:
    rule = str(decision["rule"])
    return rule if rule == "superior" else f"{rule}:{float(decision['margin']):g}"


def _cost(item: Mapping[str, Any], champion: str) -> str | None:
    cost = item.get("cost_per_answer") or {}
    mine, theirs = cost.get("challenger"), cost.get("champion")
    if mine is None or theirs is None:
        return None
    difference = theirs - mine
    way = "cheaper" if difference > 0 else "dearer" if difference < 0 else "the same"
    tail = f" ({dollars(abs(difference))} {way} per answer)" if difference else " (the same)"
    mine_said, theirs_said = dollars(mine), dollars(theirs)
    name = item.get("challenger_name") or item["challenger"]
    return f"cost per answer: {name} {mine_said}, {champion} {theirs_said}{tail}"


def _settle(item: Mapping[str, Any], decision: Mapping[str, Any]) -> str | None:
    settle = item.get("settle")
    if item.get("outcome") != "not_shown" or settle is None:
        return None
    if decision.get("estimand") == "people-mean-score":
        return _people_settle(settle)
    planning = decision.get("planning") or {}
    at = (
        f"at the planning value ({_SCALE.get(str(decision['estimand']), 'share')} "
        f"{planning.get('true', settle['true']):g}, ties {planning.get('ties', settle['ties']):g}, "
        f"power {settle['power']:g})"
    )
    if settle.get("n") is None:
        return f"no n up to 100,000 comparisons settles it {at}: widen the margin or plan again"
    stable = f", every n from {settle['stable_n']:,} on" if settle.get("stable_n") else ""
    return f"the n that would settle it {at}: {settle['n']:,} comparisons{stable}"


def _people_settle(settle: Mapping[str, Any]) -> str:
    """The people's judgements that would settle a decision on their estimate, as a plan at
    the observed values (`blindtest.analysis.people_settle`), never as a promise."""
    score = pct(settle["true"])
    if settle.get("reason") == "boundary":
        return (
            f"the people's mean score sits on the boundary ({score}): at that value no number "
            "of people's judgements would settle it"
        )
    agree = (
        f"the judge agrees with people as often as here ({settle['agreed']} of "
        f"{settle['sample']}, {pct(settle['agreement'])}, its verdict on the side of the "
        f"people's mean score; ties: people {pct(settle['ties'])}, the judge "
        f"{pct(settle['judge_ties'])})"
    )
    head = f"if the people's mean score is what it looks like ({score}) and {agree}"
    total = count(int(settle["comparisons"]), "comparison")
    if settle.get("n") is None:
        if settle.get("reason") == "more comparisons":
            return (
                f"{head}, no people's sample among these {total} would settle it: more "
                "comparisons are needed (a plan at the observed values, not a promise)"
            )
        return f"no plan at the observed values: {settle.get('note') or settle.get('reason')}"
    way = "show it" if settle.get("settles") == "shown" else "show its opposite"
    now = int(settle["people_judged"])
    more = (
        f" (now {now})"
        if int(settle["n"]) > now
        else f" (no more than the {now} judged: the plan expects a narrower interval than "
        "this sample gave)"
    )
    return (
        f"a plan at the observed values, not a promise: {head}, about {int(settle['n']):,} "
        f"people's judgements of the {total}{more}, the judge on all, would settle it "
        f"({way}, power {settle['power']:g})"
    )


def _sensitivity(section: Mapping[str, Any] | None) -> str:
    if section is None:
        return "sensitivity check: none pre-registered"
    found = section.get("result")
    how = ", ".join(f"{k} {v}" for k, v in (section.get("degradations") or {}).items())
    head = f"sensitivity check: {section['judged']} of {section['planted']} planted ({how})"
    if found is None:
        return head + ": none was judged, FAILED"
    if found.get("estimate") is None:
        return head + ": every one judged was a tie, FAILED"
    interval = found["interval"]
    untied, tied = found.get("untied"), found.get("tied")
    among = (
        f" of the {untied} untied, {count(int(tied), 'tie')} left out"
        if untied is not None and tied
        else ""
    )
    return (
        f"{head}: the judge preferred the champion's own answer to its degraded copy in "
        f"{pct(found['estimate'])}{among} (interval {pct(interval['lo'])} to "
        f"{pct(interval['hi'])}, one-sided {format_p(found['p_value'])}): "
        f"{'passed' if section['passed'] else 'FAILED'}"
    )


def _figures(item: Mapping[str, Any]) -> str | None:
    if item.get("comparisons") is None:
        return None
    parts = [count(int(item["comparisons"]), "comparison")]
    if item.get("people_judged") is not None:
        parts[0] += f" (people judged {item['people_judged']}, the judge all)"
    if item.get("stop") is not None:  # a sequential decision
        where = (
            f"stopped at comparison {item['stopped_at']} of {item['judged']} judged"
            if item.get("stopped_at")
            else f"no crossing in {item['judged']} judged ({item['stop']})"
        )
        parts = [where, f"e-value {item['e_value']:.3g}", f"one observation: {item['observation']}"]
    ties = item.get("tie_rate")
    if ties and ties.get("estimate") is not None:
        parts.append(f"tie rate {pct(ties['estimate'])}")
    adjusted = " (Holm across challengers)" if item.get("adjustment") else ""
    if item.get("p_value") is not None:
        parts.append(f"the claim's one-sided {format_p(item['p_value'])}{adjusted}")
    if item.get("p_refute") is not None:
        parts.append(f"its opposite's {format_p(item['p_refute'])}")
    if item.get("method"):
        parts.append(str(item["method"]))
    return ", ".join(parts)


def decision_lines(report: Mapping[str, Any]) -> list[str]:
    """The decision's lines on the screen (no lines for a report without a decision)."""
    decision = report.get("decision")
    if not decision:
        return []
    label = "pre-registered" if decision.get("pre_registered") else "NOT PRE-REGISTERED"
    champion = str(decision.get("champion_name") or decision["champion"])
    lines = [
        f"Decision ({label}): {_rule(decision)} on the "
        f"{_SCALE.get(str(decision['estimand']), decision['estimand'])}, champion {champion}, "
        f"alpha {decision['alpha']:g}" + (", sequential" if decision.get("sequential") else "")
    ]
    if decision.get("reason"):
        lines.append(f"  {decision['reason']}")
    for item in decision.get("decisions") or ():
        lines.append(f"  {item['headline']}")
        for extra in (_figures(item), _cost(item, champion), _settle(item, decision)):
            if extra:
                lines.append(f"    {extra}")
    if decision.get("sensitivity_note"):
        lines.append(f"  {decision['sensitivity_note']}")
    elif decision.get("rule") != "similar" and "sensitivity" in decision:
        lines.append(f"  {_sensitivity(decision.get('sensitivity'))}")
    lines += _tag_lines(decision.get("by_tag"))
    if decision.get("failed_on"):
        lines.append(
            f"  --fail-on/--strict: {', '.join(decision['failed_on'])} raised, so the exit is 1"
        )
    code = int(decision["exit_code"])
    held = code == 5 and all(
        item.get("reasons") for item in decision.get("decisions") or () if item["exit_code"] == 5
    )
    lead = (
        code == 5
        and not decision.get("pre_registered")
        and all(
            item["outcome"] == "shown"
            for item in decision.get("decisions") or ()
            if item["exit_code"] == 5
        )
    )
    words = (
        "not shown: what it needs is missing (above)"
        if held
        else "shown, but not pre-registered: a lead to pre-register (bt-design --decide), not a "
        "release"
        if lead
        else EXIT_WORDS.get(code, "")
    )
    lines.append(f"exit {code}: {words}")
    return lines


#: The margin the suggested decision names, and the planted comparisons it suggests.
SUGGESTED_MARGIN = 0.05
SUGGESTED_SENSITIVITY = 20


def undecided_lines(report: Mapping[str, Any]) -> list[str]:
    """A two-sided preference result with no decision and no clear winner: what the interval
    allows (never "not worse" or "adequate": only a margin fixed in the design shows that),
    and the pre-registered design that would settle it with the n it needs at a true share
    of 1/2 and this run's tie rate."""
    from blindtest.stats.sizing import decision_sample_size

    protocol = PROTOCOLS.get(str(report.get("protocol")))
    if report.get("decision") or protocol is None or not protocol.prefers:
        return []
    rate = report.get("pc") or {}
    if report.get("verdict") != "inconclusive" or rate.get("lo") is None:
        return []
    wins, losses, ties = (int(report.get(k) or 0) for k in ("wins", "losses", "ties"))
    tie_rate = ties / max(1, wins + losses + ties)
    size = decision_sample_size(
        "noninferior", SUGGESTED_MARGIN, true=0.5, ties=min(tie_rate, 0.95), power=0.8
    )
    lines = [
        f"No decision was pre-registered: the data allow A to be preferred in up to "
        f"{pct(rate['hi'])} of the untied comparisons, and B in up to {pct(1 - rate['lo'])} "
        "(Wilson 95%), so neither is shown better, and nothing here shows either is not worse.",
        f"To decide whether B is not worse than A by more than {SUGGESTED_MARGIN * 100:g} points, "
        f"pre-register the margin in a new design (bt-design with `--decide "
        f"noninferior:{SUGGESTED_MARGIN:g} --sensitivity {SUGGESTED_SENSITIVITY}`)"
        + (
            f"; at a true share of 1/2 and this run's tie rate ({pct(tie_rate)}), "
            f"{size.smallest_n:,} comparisons show it with power 0.8."
            if size.smallest_n is not None
            else "."
        ),
    ]
    return lines


def _tag_lines(section: Mapping[str, Any] | None) -> list[str]:
    if not section:
        return []
    held = " (Holm across tags; not the exit code):" if section["decided"] else ":"
    lines = ["  per tag" + held]
    for challenger, tags in section["by_challenger"].items():
        for tag, found in tags.items():
            interval = found["interval"]
            figures = (
                f"{pct(interval['estimate'])} ({pct(interval['lo'])} to {pct(interval['hi'])})"
                if interval.get("estimate") is not None
                else "no untied comparison"
            )
            said = f" {found['outcome']}" if "outcome" in found else ""
            lines.append(
                f"    {challenger} on {tag}: {figures}, {count(found['comparisons'], 'comparison')}"
                f"{said}"
            )
    return lines


def junit_xml(report: Mapping[str, Any], name: str = "blindtest") -> bytes:
    """One ``<testcase>`` per decision: passed when its exit code is 0, else a ``<failure>``
    whose message is its headline (type: the outcome); a ``--fail-on`` code that fired fails
    every case. The suite is named ``blindtest``, so the output guard knows the file."""
    decision = report.get("decision") or {}
    items: Sequence[Mapping[str, Any]] = decision.get("decisions") or ()
    failed_on = list(decision.get("failed_on") or ())
    root = ElementTree.Element("testsuites", {"name": name})
    suite = ElementTree.SubElement(
        root,
        "testsuite",
        {
            "name": f"{name} decision {_rule(decision)}" if decision else name,
            "tests": str(max(1, len(items))),
            "failures": "0",
        },
    )
    failures = 0
    cases = list(items) or [
        {
            "challenger": "-",
            "exit_code": decision.get("exit_code", 1),
            "outcome": decision.get("outcome", "no_result"),
            "headline": decision.get("reason", "no decision"),
        }
    ]
    for item in cases:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            {
                "classname": f"{name}.decision",
                "name": f"{_rule(decision) if decision else 'decision'}: {item['challenger']} "
                f"against {decision.get('champion', '-')}",
            },
        )
        code = int(item["exit_code"])
        if code or failed_on:
            failures += 1
            message = str(item["headline"])
            if failed_on:
                message += f" [--fail-on: {', '.join(failed_on)}]"
            failure = ElementTree.SubElement(
                case, "failure", {"message": message, "type": str(item["outcome"])}
            )
            failure.text = f"exit {code}: {EXIT_WORDS.get(code, '')}"
    suite.set("failures", str(failures))
    ElementTree.indent(root)
    body = ElementTree.tostring(root, encoding="unicode")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n").encode()
