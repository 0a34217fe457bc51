"""The analysis of a several-candidate run: pair by pair, the ranking, each candidate against a
reference, cost and tokens beside them, and the same gates as a two-sided preference run.

The unit is one comparison (one judge's verdict on two answers to one prompt; with several
judges, the majority on that comparison, as the two-sided preference analysis counts a
trial). The pair tests and the against-reference tests count comparisons
(`blindtest.stats.pairwise`: Wilson interval, exact two-sided binomial, Holm across the
family). The ranking (`blindtest.stats.ranking`: Davidson-Bradley-Terry on the log-odds scale)
takes the prompt as the unit of its intervals: a seeded bootstrap over prompts from
``IndexStream(seed, "ranking")``, which bt-verify recomputes. The position-bias and agreement
gates are the two-sided preference run's, over the same picks.

Everything here is revealed only after judging; a fixed design that was not finished keeps
only ``VOID_KEYS`` (`blindtest.analysis.report`). Pure; opens no file.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from blindtest import artifacts, pairing
from blindtest.analysis.common import (
    AnalysisOptions,
    AnalysisResult,
    by_judge,
    excluded_reason,
    interval,
    prompts_by_trial,
    void_statement,
)
from blindtest.analysis.preference import (
    _agreement,
    _excluded_section,
    _excluded_words,
    _gate_problems,
    _majority,
)
from blindtest.analysis.responses import MARKED_KINDS, appendix
from blindtest.analysis.tells import audit_summary
from blindtest.analysis.wording import channels, notes
from blindtest.artifact_types import DesignRecord, ReportRecord
from blindtest.artifacts import JsonObject, schema_tag
from blindtest.candidates import answer_owners, candidates_of
from blindtest.reportfmt import count, format_p, pct
from blindtest.rng import IndexStream
from blindtest.sides import side_config
from blindtest.stats import position_bias, preference_test
from blindtest.stats.pairwise import PairTable, pair_table, reference_table, tally
from blindtest.stats.ranking import DAVIDSON, Ranking, outcomes, rank_candidates

if TYPE_CHECKING:
    from blindtest.judging.picks import Pick

__all__ = [
    "RANKING_STREAM",
    "build_candidates_report",
    "candidate_responses",
]

#: The label of the bootstrap's index stream (with the design seed).
RANKING_STREAM = "ranking"
TEST = (
    "Davidson-Bradley-Terry ranking, bootstrap over prompts; per pair the exact two-sided "
    "binomial against 1/2 with Wilson interval, Holm across pairs"
)
UNIT = (
    "a comparison: one judge's verdict on two answers to one prompt (with several judges, "
    "their majority on it); the ranking's intervals take the prompt as the unit (a bootstrap "
    "over prompts, every comparison of a prompt together)"
)
SCALE = (
    "log-odds: a difference d between two strengths means the first is preferred to the "
    "second in 1/(1+e^-d) of the comparisons between them that are not ties"
)


# --------------------------------------------------------------------------- responses


def _kind(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return "missing"
    if row["status"] != "ok":
        return "failed"
    return str(row.get("kind") or "ok")


def candidate_responses(
    design: DesignRecord, rows: Sequence[JsonObject], torn_line: int | None
) -> JsonObject:
    """responses.jsonl against a several-candidate design: each candidate answers each of its
    prompts once (the row at its owner slot, ``candidates.answer_owners``); answered, refused,
    cut and failed answers and the tokens used per candidate, the comparisons a refusal or a
    cut-off singles one answer out in, and the model each server said answered."""
    from blindtest.slots import SlotState

    state = SlotState.from_rows(rows)
    owners = answer_owners(design)
    names = candidates_of(design) or ()
    launder = design["normalization"]["launder"] is not None
    per: dict[str, Counter[str]] = {name: Counter() for name in names}
    served: dict[str, Counter[str]] = {name: Counter() for name in names}
    kinds: dict[tuple[str, str], str] = {}
    answered = laundered = 0
    for (prompt_id, name), key in owners.items():
        row = state.generated.get(key)
        kind = _kind(row)
        kinds[(prompt_id, name)] = kind
        per[name][kind] += 1
        if row is not None and row["status"] == "ok":
            answered += 1
            usage = row.get("usage")
            if usage:  # an answer read from a file has none
                per[name]["with_usage"] += 1
                per[name]["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
                per[name]["completion_tokens"] += int(usage.get("completion_tokens") or 0)
            if row.get("served_model"):
                served[name][str(row["served_model"])] += 1
        wash = state.laundered.get(key)
        laundered += wash is not None and wash["status"] == "ok"
    marked = []
    for entry in design["arrangement"]:
        shown = {kinds.get((entry["prompt_id"], side), "missing") for side in _sides(entry)}
        if len(shown) == 2 and shown & set(MARKED_KINDS):
            marked.append(int(entry["trial"]))
    summary: JsonObject = {
        "rows": len(rows),
        "slots": len(owners),
        "answered": answered,
        "laundered": laundered if launder else None,
        "complete": answered == len(owners) and (not launder or laundered == len(owners)),
        "torn_line": torn_line,
        "per_side": {
            name: {
                "answered": sum(c[k] for k in c if k not in _NOT_ANSWERED),
                "refusals": c["refusal"],
                "truncated": c["length"],
                "failed": c["failed"],
                "missing": c["missing"],
                "prompt_tokens": c["prompt_tokens"] if c["with_usage"] else None,
                "completion_tokens": c["completion_tokens"] if c["with_usage"] else None,
            }
            for name, c in per.items()
        },
        "marked_trials": marked,
        "served_models": {name: dict(sorted(c.items())) for name, c in served.items()},
    }
    return summary


_NOT_ANSWERED = ("missing", "failed", "prompt_tokens", "completion_tokens", "with_usage")


def _sides(entry: Mapping[str, Any]) -> tuple[str, str]:
    return str(entry["left"]), str(entry["right"])


def _responses_sentences(design: DesignRecord, summary: Mapping[str, Any]) -> list[str]:
    out = []
    per = summary["per_side"]
    hit = [n for n in per if per[n]["refusals"] or per[n]["truncated"]]
    if hit:
        parts = [
            f"{n} {count(per[n]['refusals'], 'refusal')} and {per[n]['truncated']} cut at the "
            "token limit"
            for n in hit
        ]
        out.append("Refusals and truncations, of the answers shown: " + "; ".join(parts) + ".")
    marked = summary["marked_trials"]
    if marked:
        listed = ", ".join(str(t) for t in marked[:10]) + (", ..." if len(marked) > 10 else "")
        out.append(
            f"In {count(len(marked), 'comparison')} ({listed}) a refusal or a cut-off answer "
            "singled one answer out: those comparisons may have been decided by the refusal, "
            "not by quality."
        )
    for name, found in summary["served_models"].items():
        asked = design["models"][name]["model"]
        if len(found) > 1:
            names = ", ".join(f"{model} ({n})" for model, n in found.items())
            out.append(
                f"Candidate {name} asked for {asked}; the server said the answers came from "
                f"more than one model within this run: {names}. The run mixes builds."
            )
        elif found and asked not in found:
            out.append(
                f"Candidate {name} asked for {asked}, but the server said every answer came "
                f"from {next(iter(found))}: the result speaks to the model that answered."
            )
    return out


# --------------------------------------------------------------------------- per candidate


def _spend(
    names: Sequence[str],
    responses: Mapping[str, Any] | None,
    generation: Mapping[str, Any] | None,
) -> dict[str, JsonObject]:
    """Each candidate's answers, tokens (from responses.jsonl) and cost (from the prices
    bt-generate was given, in generation.json); None where the run does not say."""
    roles = (generation or {}).get("roles") or {}
    per = (responses or {}).get("per_side") or {}
    out: dict[str, JsonObject] = {}
    for name in names:
        own = per.get(name)
        role = roles.get(name) or {}
        answers = own["answered"] if own else role.get("responses")
        # Tokens as responses.jsonl records them; without it, as generation.json summed
        # them, when a request was made (an answer read from a file used none).
        source = own if own else role if role.get("requests") else {}
        tokens_in, tokens_out = source.get("prompt_tokens"), source.get("completion_tokens")
        cost = role.get("cost")
        out[name] = {
            "answers": answers,
            "tokens": None
            if tokens_in is None or tokens_out is None
            else {"prompt": tokens_in, "completion": tokens_out, "total": tokens_in + tokens_out},
            "cost": cost,
            "cost_per_answer": cost / answers if cost is not None and answers else None,
        }
    return out


def _by_tag(
    design: DesignRecord, names: Sequence[str], outcome: Mapping[int, str]
) -> dict[str, Any]:
    """Per prompt tag and candidate: wins, losses and ties over that tag's comparisons, and
    the untied win rate with its Wilson interval (against whichever candidates it met there;
    a description, not a test). A prompt with several tags counts in each."""
    tags = {p["id"]: p.get("tags", []) for p in design["prompts"]}
    entries = {e["trial"]: e for e in design["arrangement"]}
    table: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    comparisons: Counter[str] = Counter()
    for trial, won in outcome.items():
        entry = entries[trial]
        for tag in tags[entry["prompt_id"]]:
            comparisons[tag] += 1
            for side in _sides(entry):
                table[tag][side]["tie" if won == "tie" else "win" if won == side else "loss"] += 1
    found: dict[str, Any] = {}
    for tag in sorted(table):
        rows = []
        for name in names:
            c = table[tag].get(name)
            if not c:
                continue
            test = preference_test(c["win"], c["loss"], c["tie"], alpha=design["alpha"])
            rows.append(
                {
                    "candidate": name,
                    "wins": c["win"],
                    "losses": c["loss"],
                    "ties": c["tie"],
                    "n": test.n,
                    "win_rate": interval(test.win_rate),
                }
            )
        found[tag] = {"comparisons": comparisons[tag], "candidates": rows}
    return found


# --------------------------------------------------------------------------- words


def _money(value: float | None) -> str:
    """Dollars with two significant digits below $1 (``$0.093``), cents above."""
    if value is None:
        return "cost unknown"
    return f"${value:.2f}" if value >= 1 else f"${value:.2g}"


def _times(ratio: float) -> str:
    words = {2: "twice", 3: "three times", 4: "four times", 5: "five times", 10: "ten times"}
    rounded = round(ratio)
    if rounded in words and abs(ratio - rounded) < 0.05 * ratio:
        return f"{words[rounded]} as much"
    return f"{ratio:.1f} times as much"


def _p_words(d: float | None) -> str:
    return "?" if d is None or math.isnan(d) else pct(1.0 / (1.0 + math.exp(-d)))


def _prob(d: float | None) -> float | None:
    if d is None or math.isnan(d):
        return None
    if math.isinf(d):
        return 1.0 if d > 0 else 0.0
    return 1.0 / (1.0 + math.exp(-d))


def _pair_key(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


def _real_pairs(table: PairTable) -> dict[frozenset[str], Any]:
    return {_pair_key(r.first, r.second): r for r in table.pairs}


def _pair_result(record: Any, winner: str) -> str:
    """``won 12 to 8, 15 ties, Holm p = 0.50`` from ``winner``'s side."""
    wins, losses = (
        (record.wins, record.losses) if winner == record.first else (record.losses, record.wins)
    )
    return (
        f"won {wins} to {losses}, {count(record.ties, 'tie')}, Holm-adjusted "
        f"{format_p(record.p_holm)}"
    )


def _difference(ranking: Ranking, a: str, b: str) -> tuple[float, float, float, bool]:
    """a minus b: estimate, simultaneous bounds, separated."""
    for d in ranking.differences:
        if (d.first, d.second) == (a, b):
            return d.difference.estimate, d.difference.lo, d.difference.hi, d.separated
    d = next(d for d in ranking.differences if (d.first, d.second) == (b, a))
    return -d.difference.estimate, -d.difference.hi, -d.difference.lo, d.separated


def _leader_lines(ranking: Ranking, met: Mapping[frozenset[str], Any], anchor: str) -> list[str]:
    """Who is ahead, by how much as a chance of being preferred, and the groups."""
    order = [s.candidate for s in ranking.strengths]
    lines = [f"Ranking, strongest first: {', '.join(order)} (Bradley-Terry, {anchor} at 0)."]
    leader, second = order[0], order[1]
    est, lo, hi, separated = _difference(ranking, leader, second)
    bounds = (
        f"simultaneous 95% interval {pct(_prob(lo))} to {pct(_prob(hi))}"
        if math.isfinite(lo) and math.isfinite(hi)
        else "no bounded interval"
    )
    record = met.get(_pair_key(leader, second))
    direct = f"; when they met, {leader} {_pair_result(record, leader)}" if record else ""
    if not separated:
        verdict = "the data cannot separate the two, so the lead is not established."
    elif record is not None and not record.significant:
        verdict = (
            "the ranking, which draws on every comparison, separates the two, though their "
            "own meetings alone do not after Holm."
        )
    else:
        verdict = "the ranking separates the two."
    lines.append(
        f"{leader} is ahead: against {second}, the next, it is preferred in {_p_words(est)} "
        f"of the comparisons that are not ties ({bounds}{direct}); {verdict}"
    )
    groups = [g for g in ranking.groups if len(g) > 1]
    if groups:
        lines.append(
            "The data cannot separate "
            + "; nor ".join("{" + ", ".join(g) + "}" for g in groups)
            + " (simultaneous 95% intervals for every difference of strengths)."
        )
    else:
        lines.append("Every candidate is separated from the next (simultaneous 95%).")
    return lines


def _holm_lines(pairs: PairTable) -> list[str]:
    """Which pair tests are real after Holm."""
    real = [r for r in pairs.pairs if r.significant]
    family = f"{count(len(pairs.pairs), 'pair')} that met (alpha {pairs.alpha:g})"
    if not real:
        return [f"No pair differs after Holm across the {family}."] if pairs.pairs else []
    parts = []
    for r in real:
        winner, loser = (r.first, r.second) if r.wins > r.losses else (r.second, r.first)
        parts.append(f"{winner} over {loser} ({_pair_result(r, winner)})")
    rest = len(pairs.pairs) - len(real)
    tail = {0: ".", 1: "; the other pair is not shown to differ."}.get(
        rest, f"; the other {rest} pairs are not shown to differ."
    )
    return [f"Real differences after Holm across the {family}: " + "; ".join(parts) + tail]


def _reference_lines(reference: PairTable) -> list[str]:
    ref = reference.family.removeprefix("against ")
    parts = []
    for r in reference.pairs:
        rate = (
            f"{pct(r.win_rate.estimate)} (Wilson 95% {pct(r.win_rate.lo)} to {pct(r.win_rate.hi)})"
            if r.n
            else "undefined (only ties)"
        )
        flag = ", a real difference" if r.significant else ""
        parts.append(f"{r.first} {rate}, Holm-adjusted {format_p(r.p_holm)}{flag}")
    return [
        f"Against the reference {ref}, each candidate's share of the untied comparisons: "
        + "; ".join(parts)
        + "."
    ]


def _headline(
    ranking: Ranking | None,
    pairs: PairTable,
    reference: PairTable | None,
    spend: Mapping[str, Mapping[str, Any]],
    anchor: str,
) -> list[str]:
    """The ranking in words a person acts on: who is ahead and by how much, which differences
    are real, what each costs, and whether a cheaper candidate the data cannot tell from the
    leader would do."""
    lines: list[str] = []
    met = _real_pairs(pairs)
    ranked = ranking is not None and ranking.problem is None
    if ranking is not None and ranking.problem is None:
        lines += _leader_lines(ranking, met, anchor)
    elif ranking is not None:
        lines.append(f"No ranking: {ranking.problem}.")
    # With a reference every pair that met holds it: the reference's table says it all.
    lines += _holm_lines(pairs) if reference is None else _reference_lines(reference)
    costs = {n: s["cost_per_answer"] for n, s in spend.items() if s["cost_per_answer"]}
    if costs:
        names = [s.candidate for s in ranking.strengths] if ranking and ranked else list(spend)
        shown = [f"{n} {_money(1000 * costs[n]) if n in costs else 'unknown'}" for n in names]
        lines.append("Cost per 1,000 answers: " + ", ".join(shown) + ".")
        lines += _adequate(ranking, met, costs)
    return lines


def _adequate(
    ranking: Ranking | None,
    met: Mapping[frozenset[str], Any],
    costs: Mapping[str, float],
) -> list[str]:
    """Seed 001's honest conclusion: a cheaper candidate that met the leader and is not shown
    worse (the Holm-adjusted pair test does not reach alpha, and the ranking's simultaneous
    interval for the difference is bounded and holds 0) is adequate on this evidence, and
    the sentence says how far the data allow the leader to be ahead. Candidates that never
    met the leader, or whose difference the data cannot bound, get no such sentence: not
    being told apart for want of data is not adequacy."""
    if ranking is None or ranking.problem is not None:
        return []
    order = [s.candidate for s in ranking.strengths]
    leader = order[0]
    if leader not in costs:
        return []
    close = []
    for name in order[1:]:
        record = met.get(_pair_key(leader, name))
        if name not in costs or costs[name] >= costs[leader] or record is None:
            continue
        _, lo, hi, separated = _difference(ranking, leader, name)
        if record.n and not record.significant and not separated and math.isfinite(lo + hi):
            close.append((name, record, lo, hi))
    if not close:
        return []
    name, record, lo, hi = min(close, key=lambda c: (costs[c[0]], order.index(c[0])))
    return [
        f"{name} is not shown worse than the leader {leader} ({leader} "
        f"{_pair_result(record, leader)}; the data allow {leader} to be preferred in "
        f"{pct(_prob(lo))} to {pct(_prob(hi))} of untied comparisons between them), and "
        f"{leader} costs {_times(costs[leader] / costs[name])} per answer: on this evidence "
        f"the cheaper {name} is adequate."
    ]


# --------------------------------------------------------------------------- the report


def _ranking_records(
    ranking: Ranking | None,
    names: Sequence[str],
    spend: Mapping[str, JsonObject],
) -> list[JsonObject]:
    if ranking is None:
        return [{"candidate": n, "rank": None, **spend[n]} for n in names]
    records = []
    for position, s in enumerate(ranking.strengths, start=1):
        strength = interval(s.strength)
        records.append(
            {
                "candidate": s.candidate,
                "rank": position if ranking.problem is None else None,
                "strength": strength,
                "p_preferred_vs_average": _prob(strength["estimate"])
                if ranking.anchor == "mean"
                else None,
                "rank_best": s.rank_best if ranking.problem is None else None,
                "rank_worst": s.rank_worst if ranking.problem is None else None,
                "comparisons": s.comparisons,
                "wins": s.wins,
                "losses": s.losses,
                "ties": s.ties,
                **spend[s.candidate],
            }
        )
    return records


def _win_matrix(names: Sequence[str], pairs: PairTable) -> list[list[JsonObject | None]]:
    """Row candidate against column candidate: wins, losses, ties and the untied win rate
    (null on the diagonal and for pairs that never met)."""
    index = {n: i for i, n in enumerate(names)}
    matrix: list[list[JsonObject | None]] = [[None] * len(names) for _ in names]
    for r in pairs.pairs:
        i, j = index[r.first], index[r.second]
        n = r.wins + r.losses
        matrix[i][j] = {
            "wins": r.wins,
            "losses": r.losses,
            "ties": r.ties,
            "win_rate": r.wins / n if n else None,
        }
        matrix[j][i] = {
            "wins": r.losses,
            "losses": r.wins,
            "ties": r.ties,
            "win_rate": r.losses / n if n else None,
        }
    return matrix


def _ranking_section(ranking: Ranking | None) -> JsonObject:
    if ranking is None:
        return {"problem": "no comparison was counted, so there is no ranking"}
    whole = ranking.to_dict()
    return {
        "problem": ranking.problem,
        "interval_problem": ranking.interval_problem,
        "tie_parameter": whole["tie_parameter"],
        "log_likelihood": whole["log_likelihood"],
        "iterations": ranking.iterations,
        "differences": whole["differences"],
        "prompts": ranking.prompts,
        "comparisons": ranking.comparisons,
    }


def _analyse(
    design: DesignRecord,
    picks: Sequence[Pick],
    options: AnalysisOptions,
    judge_gates: Sequence[str],
    spend_of: Any,
    rank: bool,
) -> tuple[JsonObject, list[str], list[str], dict[int, str], list[Pick]]:
    """(the candidates section, gate problems, warnings, outcome per comparison, excluded);
    ``rank`` False leaves the bootstrap out (an unfinished design's report keeps none of it)."""
    names = list(candidates_of(design) or ())
    excluded = [p for p in picks if excluded_reason(p) is not None]
    counted = [p for p in picks if excluded_reason(p) is None]
    judges = by_judge(counted)
    outcome = _majority(design, judges)
    entries = {e["trial"]: e for e in design["arrangement"]}
    rows = [
        (entries[t]["prompt_id"], *_sides(entries[t]), None if won == "tie" else won)
        for t, won in sorted(outcome.items())
    ]
    alpha = design["alpha"]
    pairs = pair_table(tally(names, [row[1:] for row in rows]), alpha=alpha)
    recorded = cast(Mapping[str, Any], design)["pairing"]  # the schema's own key
    mode = pairing.parse_mode(str(recorded["mode"]))
    reference = mode.reference if mode.kind == "reference" else None
    against = None
    if reference is not None and any(reference in (r.first, r.second) for r in pairs.pairs):
        against = reference_table(tally(names, [row[1:] for row in rows]), reference, alpha=alpha)
    ranking = (
        rank_candidates(
            outcomes(names, rows),
            rng=IndexStream(str(design["seed"]), RANKING_STREAM),
            anchor=reference,
        )
        if rows and rank
        else None
    )
    spend = spend_of(names)
    anchor = "the mean strength" if reference is None else f"the reference {reference}"
    non_tie = [p for p in counted if p.pick != "tie"]
    left = sum(1 for p in non_tie if p.pick == "left")
    bias = (
        position_bias(left, len(non_tie), alpha=alpha, margin=options.position_margin)
        if non_tie
        else None
    )
    agreement = _agreement(_as_two_sided(design), judges)
    if agreement is not None:
        agreement["method"] = (
            "Krippendorff's alpha, nominal (the answer on the left preferred, the one on the "
            "right, or tie: every judge saw a comparison in the same positions); comparisons "
            "one judge saw drop out"
        )
    problems = _gate_problems(bias, agreement, options, judges=len(by_judge(picks)))
    if judge_gates:
        problems = [*judge_gates, *(g for g in problems if not g.startswith("position bias"))]
    warnings = []
    if bias is not None and bias.exceeds_margin and not bias.significant:
        warnings.append(
            f"Position: left chosen {bias.left} of {bias.n} times ({pct(bias.statistic)}), more "
            f"than {pct(options.position_margin)} from half but not significantly "
            f"({format_p(bias.p_value)}); worth a look, not a failure."
        )
    section: JsonObject = {
        "names": names,
        "pairing": str(mode),
        "unit": UNIT,
        "tie_model": _tie_model(ranking),
        "scale": "log-odds",
        "scale_meaning": SCALE,
        "anchor": "mean" if reference is None else reference,
        "ranking": _ranking_records(ranking, names, spend),
        "groups": [list(g) for g in ranking.groups] if ranking is not None else [],
        **_ranking_section(ranking),
        "bootstrap": {
            "unit": "prompt",
            "resamples": ranking.resamples if ranking is not None else 0,
            "failed_resamples": ranking.failed_resamples if ranking is not None else 0,
            "confidence_level": ranking.confidence_level if ranking is not None else 0.95,
            "critical_value": _finite(ranking.critical_value) if ranking else None,
            "stream": f"IndexStream(seed, {RANKING_STREAM!r})",
            "interval_method": ranking.interval_method if ranking else None,
            "difference_method": ranking.difference_method if ranking else None,
        },
        "pairs": pairs.to_dict(),
        "win_matrix": _win_matrix(names, pairs),
        "reference": against.to_dict() if against is not None else None,
        "by_tag": _by_tag(design, names, outcome),
        "headline": _headline(ranking, pairs, against, spend, anchor),
    }
    section["position_bias"] = bias.to_dict() if bias else None
    section["agreement"] = agreement
    return section, problems, warnings, outcome, excluded


def _as_two_sided(design: DesignRecord) -> DesignRecord:
    """The design with each comparison coded by position (A the answer on the left, which
    every judge saw there), for the panel's agreement. Coded by candidate name, a comparison
    could take only three of k + 1 values while chance agreement is reckoned over all of
    them, which inflates Krippendorff's alpha (two judges picking at random reach about 0.3
    with four candidates); coded by the candidates' order, a strong candidate listed first
    makes nearly every answer the same and deflates it. Positions are balanced by the design,
    so left, right and tie keep chance agreement honest."""
    arrangement = [
        {"trial": e["trial"], "prompt_id": e["prompt_id"], "left": "A"}
        for e in design["arrangement"]
    ]
    return cast(DesignRecord, {**design, "arrangement": arrangement, "candidates": None})


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _tie_model(ranking: Ranking | None) -> str | None:
    if ranking is None:
        return None
    return "davidson" if ranking.model == DAVIDSON else "bradley-terry"


def _verdict(section: Mapping[str, Any]) -> str:
    separated = any(d["separated"] for d in section.get("differences") or [])
    real = any(r["significant"] for r in section["pairs"]["pairs"])
    return "ranked" if separated or real else "inconclusive"


def _sides_summary(design: DesignRecord, names: Sequence[str]) -> str:
    labels = ", ".join(
        n if design["models"][n]["model"] == n else f"{n} ({design['models'][n]['model']})"
        for n in names
    )
    return f"{count(len(names), 'candidate')}: {labels}"


def build_candidates_report(
    design: DesignRecord,
    design_sha256: str,
    picks: Sequence[Pick],
    *,
    inputs: Mapping[str, str],
    missing: Sequence[str],
    audit: Mapping[str, Any] | None,
    generation: Mapping[str, Any] | None,
    options: AnalysisOptions,
    reading: Mapping[str, Any] | None,
    responses: Mapping[str, Any] | None,
    gates: Sequence[str],
    void_keys: Sequence[str],
) -> AnalysisResult:
    """report.json of a several-candidate run (module doc); ``exit_code`` 1 when the design
    is unfinished, a gate fails, or responses.jsonl is incomplete."""
    names = list(candidates_of(design) or ())
    prompt_of = prompts_by_trial(design)
    finished = len({p.trial for p in picks}) >= design["trials"]
    section, problems, warnings, outcome, excluded = _analyse(
        design,
        picks,
        options,
        gates,
        lambda ns: _spend(ns, responses, generation),
        rank=finished or options.reveal_void,
    )
    judged = {judge: len(own) for judge, own in sorted(by_judge(picks).items())}
    dropped = _excluded_section(excluded, outcome) if excluded else None
    if dropped is not None and not outcome:
        problems.append(
            f"excluded: every comparison was left out ({_excluded_words(dropped)}); nothing "
            "was measured."
        )
    done = len(set(outcome) | {p.trial for p in excluded})
    entries = {e["trial"]: e for e in design["arrangement"]}
    per_trial = [
        {
            "trial": p.trial,
            "prompt_id": prompt_of[p.trial],
            "judge": p.judge,
            "left": _sides(entries[p.trial])[0],
            "right": _sides(entries[p.trial])[1],
            "pick": p.pick,
            "preferred": None
            if p.pick == "tie" or excluded_reason(p)
            else _sides(entries[p.trial])[0 if p.pick == "left" else 1],
            **({"excluded": excluded_reason(p)} if excluded_reason(p) else {}),
            "reason": p.reason,
        }
        for p in sorted(picks, key=lambda p: (p.trial, p.judge))
    ]
    code = 0
    if not picks or done < design["trials"]:
        verdict, statement, code = "void", void_statement(design, done), 1
    elif problems:
        verdict, statement, code = "unusable", "Not a result: " + " ".join(problems), 1
    else:
        verdict = _verdict(section)
        statement = " ".join(section["headline"])
    opened, closed = channels(design)
    report: dict[str, Any] = {
        "schema": schema_tag("report"),
        "design_sha256": design_sha256,
        "inputs": dict(inputs),
        "missing": list(missing),
        "protocol": design["protocol"],
        "alpha": design["alpha"],
        "sequential": design["sequential"],
        "trials_planned": design["trials"],
        "models": {n: design["models"][n]["model"] for n in names},
        "correct": None,
        "n": len(outcome),
        "verdict": verdict,
        "statement": statement,
        "judged": judged,
        "audit": None,
        "channels_open": opened,
        "channels_closed": closed,
        "notes": notes(design),
        "appendix": appendix(generation),
        "cost": None,
        "e_values": None,
        "reading": dict(reading) if reading is not None else None,
        "responses": dict(responses) if responses is not None else None,
        "answers": [],
        "analysis_options": {
            "min_kappa": options.min_kappa,
            "position_margin": options.position_margin,
            "reveal_void": options.reveal_void,
        },
        "judges": sorted(by_judge([p for p in picks if excluded_reason(p) is None])),
        "test": TEST,
        "wins": None,
        "losses": None,
        "ties": None,
        "excluded": dropped,
        "p_value": None,
        "position_bias": section.pop("position_bias"),
        "agreement": section.pop("agreement"),
        "gates_failed": problems,
        "warnings": warnings,
        "per_trial": per_trial,
        "candidates": section,
    }
    if verdict == "void" and not options.reveal_void:
        kept = {key: report[key] for key in void_keys if key in report}
        kept["n"] = min(judged.values(), default=0)
        return AnalysisResult(report=cast(ReportRecord, kept), exit_code=1)
    report["audit"] = audit_summary(design, audit, report) if audit is not None else None
    report["responses_sentences"] = (
        _responses_sentences(design, responses) if responses is not None else []
    )
    report["sides"] = {
        "summary": _sides_summary(design, names),
        **{n: side_config(design, n) for n in names},
    }
    if responses is not None and not responses["complete"] and verdict != "void":
        report["picks_verdict"] = verdict
        report["verdict"] = "incomplete"
        report["statement"] = (
            f"Incomplete run: {artifacts.RESPONSES} holds {responses['answered']} of the "
            f"{responses['slots']} answers the design needs, so what the judge saw cannot be "
            "checked against what the candidates answered; rerun bt-generate on this run to "
            "fetch the rest, then analyse again. The picks alone say: " + statement
        )
        code = 1
    report["summary"] = {
        "verdict": report["statement"] if code else section["headline"][0],
        "sure": None,
        "size": None,
    }
    report["next"] = None
    return AnalysisResult(report=cast(ReportRecord, report), exit_code=code)
