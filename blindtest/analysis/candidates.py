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
only ``VOID_KEYS`` (`blindtest.analysis.report`). The answers, tokens and cost per candidate
come from `blindtest.analysis.candidate_responses`, the words of the headline from
`blindtest.analysis.candidate_headline`. Pure; opens no file.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from blindtest.analysis.candidate_headline import headline, prob
from blindtest.analysis.candidate_responses import candidate_responses, responses_sentences, spend
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
from blindtest.analysis.responses import appendix
from blindtest.analysis.tells import audit_summary
from blindtest.analysis.wording import channels, notes
from blindtest.model import pairing
from blindtest.model.candidates import candidates_of
from blindtest.model.rng import IndexStream
from blindtest.model.sides import side_config
from blindtest.reportfmt import count, format_p, pct
from blindtest.rundir import artifacts
from blindtest.rundir.artifacts import JsonObject, schema_tag
from blindtest.rundir.types import DesignRecord, ReportRecord
from blindtest.stats import position_bias, preference_test
from blindtest.stats.pairwise import PairTable, pair_table, reference_table, tally
from blindtest.stats.ranking import DAVIDSON, Ranking, outcomes, rank_candidates

if TYPE_CHECKING:
    from blindtest.model.picks import Pick

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


def _sides(entry: Mapping[str, Any]) -> tuple[str, str]:
    return str(entry["left"]), str(entry["right"])


# --------------------------------------------------------------------------- per candidate


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
                "p_preferred_vs_average": prob(strength["estimate"])
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
        "headline": headline(ranking, pairs, against, spend, anchor),
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
        lambda ns: spend(ns, responses, generation),
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
        responses_sentences(design, responses) if responses is not None else []
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
