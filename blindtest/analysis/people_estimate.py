"""``report["people_estimate"]``: what people prefer, estimated from people on the sample the
design drew (``bt-design --people-sample N``) and a judge (an LLM judge, given with
``bt-analyze --against FILE``) on every comparison, by prediction-powered inference
(`blindtest.stats.ppi`, PPI++).

**Estimand.** For each pair of candidates (first, second in candidate order), the people's
mean preference score for the first over the workload's prompts: a person's win 1, tie 1/2,
loss 0 (a comparison several people judged: the mean of their scores; "both bad" is not a
score). **Unit**: one comparison (two sides: one per prompt; the prompt is the sampling unit).
The judge's prediction is its verdict's score (its swap passes combined into its verdict, an
excluded verdict or a missing one 1/2), or with ``judge_prediction: "confidence"`` in the
design a fixed mapping of its confidence (`blindtest.model.people_sample.predicted_score`).
Whatever the judge does, the estimate stays unbiased: its error is measured on the comparisons
people judged and taken off; a judge that tracks people only narrows the interval.

Beside each estimate: the people-only and judge-only estimates, the judge's worth in people's
judgements (``judge_worth``), the interval's method and why (the people's exact interval when
the normal approximation cannot be trusted), Holm across the pairs from three candidates, and
the judge's calibration against people on the sample (`blindtest.stats.ppi_calibration`, coded
by position, as the agreement gate codes it). A sampled comparison without a people's judgement
is never dropped: the design's ``missing`` rule makes the estimate void or bounds it by the
worst case (`blindtest.stats.ppi.ppi_preference_missing`). Pure; opens no file.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blindtest.analysis.common import excluded_reason
from blindtest.model.candidates import candidates_of, comparison_sides
from blindtest.model.people_sample import (
    PEOPLE_ESTIMAND,
    predicted_score,
    sample_of,
    sampled_prompts,
    stratum_of,
)
from blindtest.model.picks import Pick
from blindtest.model.scoring import preferred_side
from blindtest.reportfmt import format_p, pct
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import ArrangementEntry, DesignRecord
from blindtest.stats.decision import DecisionRule
from blindtest.stats.multiple import holm
from blindtest.stats.ppi import (
    VERDICT_SCORES,
    PPIDecision,
    PPIMissingResult,
    ppi_decision,
    ppi_preference_missing,
)
from blindtest.stats.ppi_calibration import judge_calibration

__all__ = [
    "ESTIMAND",
    "POSITION_LABELS",
    "PairData",
    "bounded_words",
    "decision_level",
    "pair_data",
    "pairs_data",
    "people_estimate",
    "people_estimate_lines",
]

ESTIMAND = (
    "the people's mean preference score for the first candidate of each pair (a win 1, a tie "
    "1/2, a loss 0; several people on a comparison: their mean) over the workload's prompts"
)
WHY_UNBIASED = (
    "the judge cannot bias it: its error is measured on the comparisons people judged and "
    "taken off, so a judge that is wrong only widens the interval"
)
METHOD = (
    "prediction-powered inference with the power-tuned weight (PPI++: Angelopoulos, Duchi and "
    "Zrnic 2024); Holm across pairs from three candidates"
)
#: Verdicts by position, as the agreement gate codes them.
POSITION_LABELS = ("left", "tie", "right")


def _score(design: DesignRecord, pick: Pick, first: str) -> float:
    side = preferred_side(design, pick.trial, pick.pick)
    return 0.5 if side is None else float(side == first)


def _grid(counts: Sequence[int]) -> tuple[float, ...]:
    """The scores a comparison's people can give: the means of m verdicts, for each m seen."""
    values = {j / (2 * m) for m in set(counts) | {1} for j in range(2 * m + 1)}
    return tuple(sorted(values)) if set(counts) - {1} else VERDICT_SCORES


def _position(pick: Pick | None) -> str | None:
    if pick is None:
        return None
    return str(pick.pick) if pick.pick in POSITION_LABELS else None


def _people_verdict(own: Sequence[Pick]) -> str:
    """The comparison's people's verdict by position: the majority, split or tied: tie."""
    votes: dict[str, int] = defaultdict(int)
    for pick in own:
        votes[str(pick.pick)] += 1
    ranked = sorted(votes.items(), key=lambda kv: -kv[1])
    tied = len(ranked) > 1 and ranked[0][1] == ranked[1][1]
    return "tie" if tied else ranked[0][0]


def _calibration(
    sampled: Sequence[int],
    people: Mapping[int, Sequence[Pick]],
    judge: Mapping[int, Pick],
    level: float,
) -> JsonObject | None:
    rows = [
        (_people_verdict(people[t]), _position(judge.get(t)), judge[t].confidence)
        for t in sampled
        if people.get(t) and _position(judge.get(t)) is not None
    ]
    if not rows:
        return None
    found = judge_calibration(
        [r[0] for r in rows],
        [r[1] for r in rows],
        confidence=[r[2] for r in rows],
        labels=POSITION_LABELS,
        confidence_level=level,
    )
    return found.to_dict()


def _pair_record(
    pair: tuple[str, str], found: PPIMissingResult | None, why: str | None
) -> JsonObject:
    record: JsonObject = {"first": pair[0], "second": pair[1]}
    if found is None:
        return record | {"status": "not estimated", "reason": why}
    result = found.result
    record |= {
        "status": found.status,
        "reason": found.reason,
        "n_sampled": found.n_sampled,
        "n_missing": found.n_missing,
        "interval": found.interval.to_dict() if found.interval is not None else None,
        "estimate_low": _finite(found.estimate_low),
        "estimate_high": _finite(found.estimate_high),
    }
    if result is not None:
        record["result"] = result.to_dict()
    for name, bound in (("as_losses", found.as_losses), ("as_wins", found.as_wins)):
        if bound is not None:
            record[name] = bound.to_dict()
    return record


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _order(design: DesignRecord) -> dict[int, int]:
    """Each sampled comparison's place in the draw: its prompt's place, then trial order."""
    place = {prompt: i for i, prompt in enumerate(sampled_prompts(design))}
    return {
        int(e["trial"]): place[str(e["prompt_id"])]
        for e in design["arrangement"]
        if str(e["prompt_id"]) in place
    }


def people_estimate(
    design: DesignRecord,
    people: Sequence[Pick],
    judge: Sequence[Pick],
    *,
    confidence_level: float = 0.95,
) -> JsonObject | None:
    """The section (module doc), or None when the design samples no prompts for people.
    ``people``: the people's picks (any outside the sample are counted, not used); ``judge``:
    one judge's picks on every comparison (empty: the section says what to give)."""
    record = sample_of(design)
    if record is None:
        return None
    order = _order(design)
    sampled = sorted(order, key=lambda t: (order[t], t))
    names = candidates_of(design)
    judges = sorted({p.judge for p in judge})
    section: JsonObject = {
        "estimand": ESTIMAND,
        "unit": "a comparison (the prompt is the sampling unit)",
        "method": METHOD,
        "why_unbiased": WHY_UNBIASED,
        "sample": {
            "size": record["size"],
            "by": record["by"],
            "comparisons": len(sampled),
            "judged": len({p.trial for p in people if p.trial in order}),
            "outside": len({p.trial for p in people if p.trial not in order}),
        },
        "judge": judges[0] if len(judges) == 1 else None,
        "judge_prediction": record["judge_prediction"],
        "missing_rule": record["missing"],
        "comparisons": len(design["arrangement"]),
        "pairs": [],
        "calibration": None,
    }
    if len(judges) != 1:
        section["status"] = "no judge" if not judges else "several judges"
        return section
    by_trial: dict[int, list[Pick]] = defaultdict(list)
    for pick in people:
        if pick.trial in order:
            by_trial[pick.trial].append(pick)
    verdicts = {p.trial: p for p in judge if excluded_reason(p) is None}
    section["judge_verdicts"] = len(verdicts)
    section["calibration"] = _calibration(sampled, by_trial, verdicts, confidence_level)
    pairs = _pair_estimates(design, names, sampled, by_trial, verdicts, confidence_level)
    computed = [p for p in pairs if (p.get("result") or {}).get("p_value") is not None]
    if len(names) >= 3 and computed:
        for pair, adjusted in zip(
            computed, holm([p["result"]["p_value"] for p in computed]), strict=True
        ):
            pair["p_holm"] = adjusted
    section["pairs"] = pairs
    section["status"] = _status(pairs)
    if decision_level(design) is not None:
        section["decision"] = _decision_estimates(design, sampled, by_trial, verdicts)
    return section


def _status(pairs: Sequence[Mapping[str, Any]]) -> str:
    states = {str(p["status"]) for p in pairs}
    for worst in ("void", "bounded", "not estimated"):
        if worst in states:
            return worst
    return "complete" if states else "not estimated"


def _groups(design: DesignRecord, names: Sequence[str]) -> dict[tuple[str, str], list[Any]]:
    """The comparisons of each pair of candidates (first, second in candidate order)."""
    rank = {name: i for i, name in enumerate(names)}
    groups: dict[tuple[str, str], list[ArrangementEntry]] = defaultdict(list)
    for entry in design["arrangement"]:
        left, right = comparison_sides(entry)
        pair = (left, right) if rank[left] < rank[right] else (right, left)
        groups[pair].append(entry)
    return dict(sorted(groups.items(), key=lambda kv: (rank[kv[0][0]], rank[kv[0][1]])))


def _estimate(
    design: DesignRecord,
    first: str,
    entries: Sequence[ArrangementEntry],
    sampled: Sequence[int],
    people: Mapping[int, Sequence[Pick]],
    judge: Mapping[int, Pick],
    level: float,
) -> PPIMissingResult | str:
    """One pair's estimate of ``first``'s score at ``level``, or why there is none."""
    found = _inputs(design, first, entries, sampled, people, judge)
    if isinstance(found, str):
        return found
    try:
        return ppi_preference_missing(*found.scores, confidence_level=level, **found.options)
    except ValueError as error:
        return str(error)


@dataclass(frozen=True, slots=True)
class _Inputs:
    """One pair's scores for `blindtest.stats.ppi` (people's, the judge's on the sample and
    off it), the keyword arguments that go with them (grid, strata, missing rule), and the
    comparisons they come from (sampled, in draw order; the rest)."""

    scores: tuple[list[float | None], list[float], list[float]]
    options: dict[str, Any]
    inside: tuple[ArrangementEntry, ...]
    outside: tuple[ArrangementEntry, ...]


def _inputs(
    design: DesignRecord,
    first: str,
    entries: Sequence[ArrangementEntry],
    sampled: Sequence[int],
    people: Mapping[int, Sequence[Pick]],
    judge: Mapping[int, Pick],
) -> _Inputs | str:
    """One pair's scores of ``first``, or why there are none to estimate from."""
    record = sample_of(design) or {}
    rule = str(record.get("judge_prediction", "verdict"))
    prompts = {str(p["id"]): p for p in design["prompts"]}
    place = {t: i for i, t in enumerate(sampled)}
    inside = sorted((e for e in entries if e["trial"] in place), key=lambda e: place[e["trial"]])
    outside = [e for e in entries if e["trial"] not in place]

    def predicted(trial: int) -> float:
        pick = judge.get(trial)
        score = _score(design, pick, first) if pick is not None else None
        return predicted_score(score, pick.confidence if pick else None, rule)

    scores: list[float | None] = []
    counts = []
    for entry in inside:
        own = people.get(entry["trial"]) or []
        counts.append(len(own))
        scores.append(sum(_score(design, p, first) for p in own) / len(own) if own else None)
    options: dict[str, Any] = {"score_values": _grid([c for c in counts if c])}
    if record.get("by") == "tag":
        options["strata_sampled"] = [stratum_of(prompts[str(e["prompt_id"])]) for e in inside]
        options["strata_unsampled"] = [stratum_of(prompts[str(e["prompt_id"])]) for e in outside]
    if not inside or not outside:
        return "people judged none, or all, of its comparisons"
    options["missing"] = str(record.get("missing", "void"))
    return _Inputs(
        (scores, [predicted(e["trial"]) for e in inside], [predicted(e["trial"]) for e in outside]),
        options,
        tuple(inside),
        tuple(outside),
    )


@dataclass(frozen=True, slots=True)
class PairData:
    """One pair's inputs to its estimate of ``first``'s score: the sampled comparisons
    (``inside``, in the design's draw order) and the rest (``outside``); the people's score
    on each sampled one (None: no people's judgement), the judge's prediction on each of both,
    and the keyword options `blindtest.stats.ppi.ppi_preference` takes (``score_values``, the
    strata)."""

    first: str
    inside: tuple[ArrangementEntry, ...]
    outside: tuple[ArrangementEntry, ...]
    people: tuple[float | None, ...]
    judge_sampled: tuple[float, ...]
    judge_unsampled: tuple[float, ...]
    options: Mapping[str, Any]


def pair_data(
    design: DesignRecord,
    first: str,
    entries: Sequence[ArrangementEntry],
    sampled: Sequence[int],
    people: Mapping[int, Sequence[Pick]],
    judge: Mapping[int, Pick],
) -> PairData | str:
    """One pair's inputs (`PairData`, from the estimate's own `_inputs`), or why it has none.
    ``judge``: the judge's counted verdicts by trial (a trial without one is predicted 1/2)."""
    found = _inputs(design, first, entries, sampled, people, judge)
    if isinstance(found, str):
        return found
    people_scores, judge_sampled, judge_unsampled = found.scores
    return PairData(
        first=first,
        inside=found.inside,
        outside=found.outside,
        people=tuple(people_scores),
        judge_sampled=tuple(judge_sampled),
        judge_unsampled=tuple(judge_unsampled),
        options={k: v for k, v in found.options.items() if k != "missing"},
    )


def pairs_data(
    design: DesignRecord, people: Sequence[Pick], judge: Mapping[int, Pick]
) -> dict[tuple[str, str], PairData | str]:
    """Every pair's inputs (`pair_data`) from the people's picks and the judge's verdicts by
    trial, as `people_estimate` reads them (a design without a people's sample: none)."""
    if sample_of(design) is None:
        return {}
    order = _order(design)
    sampled = sorted(order, key=lambda t: (order[t], t))
    by_trial: dict[int, list[Pick]] = defaultdict(list)
    for pick in people:
        if pick.trial in order:
            by_trial[pick.trial].append(pick)
    return {
        pair: pair_data(design, pair[0], entries, sampled, by_trial, judge)
        for pair, entries in _groups(design, candidates_of(design)).items()
    }


def _pair_estimates(
    design: DesignRecord,
    names: Sequence[str],
    sampled: Sequence[int],
    people: Mapping[int, Sequence[Pick]],
    judge: Mapping[int, Pick],
    level: float,
) -> list[JsonObject]:
    out = []
    for pair, entries in _groups(design, names).items():
        found = _estimate(design, pair[0], entries, sampled, people, judge, level)
        if isinstance(found, str):
            out.append(_pair_record(pair, None, found))
        else:
            out.append(_pair_record(pair, found, None))
    return out


def decision_level(design: DesignRecord) -> float | None:
    """The two-sided level of a decision on the people's estimate: 1 - 2 alpha (each bound the
    one-sided 1 - alpha one its p-values invert; with several challengers the outcome reads
    Holm's adjusted p-values and the interval stays unadjusted, as for every decision); None
    when the design pre-registers no decision on the people's estimate."""
    decision = design.get("decision")
    if not decision or decision.get("estimand") != PEOPLE_ESTIMAND:
        return None
    return 1.0 - 2.0 * float(decision["alpha"])


def _decision_estimates(
    design: DesignRecord,
    sampled: Sequence[int],
    people: Mapping[int, Sequence[Pick]],
    judge: Mapping[int, Pick],
) -> JsonObject:
    """Per challenger, the one-sided evidence on its people's score against the champion
    (`blindtest.stats.ppi.ppi_decision`: p-values by whichever interval the rule chose, and the
    interval at `decision_level`), Holm (1979) across the m challengers on the claims' p-values
    and, separately, the refutations' (a challenger without an estimate counts with p = 1, so
    the family is always the m the design named); the outcome is
    `blindtest.analysis.decision`'s."""
    decision = design["decision"]
    level = decision_level(design) or 0.9
    champion = str(decision["champion"])
    names = candidates_of(design) or ("A", "B")
    rule = DecisionRule(str(decision["rule"]), float(decision["margin"]))
    out: JsonObject = {}
    for pair, entries in _groups(design, names).items():
        if champion not in pair:
            continue
        challenger = pair[1] if pair[0] == champion else pair[0]
        inputs = _inputs(design, challenger, entries, sampled, people, judge)
        out[challenger] = _decision_record(_decided(inputs, rule, level), level)
    m = len(out)
    for key, adjusted_key in (("p_value", "p_adjusted"), ("p_refute", "p_refute_adjusted")):
        ps = [_p_or_one(record.get(key)) for record in out.values()]
        for record, adjusted in zip(out.values(), holm(ps), strict=True):
            record[adjusted_key] = adjusted if m > 1 else None
    for record in out.values():
        record["adjustment"] = f"holm:{m}" if m > 1 else None
    return out


def _decided(inputs: _Inputs | str, rule: DecisionRule, level: float) -> PPIDecision | str:
    if isinstance(inputs, str):
        return inputs
    try:
        return ppi_decision(*inputs.scores, rule, confidence_level=level, **inputs.options)
    except ValueError as error:
        return str(error)


def _p_or_one(value: Any) -> float:
    return float(value) if value is not None else 1.0


def _decision_record(found: PPIDecision | str, level: float) -> JsonObject:
    record: JsonObject = {"confidence_level": level}
    if isinstance(found, str):
        return record | {"status": "not estimated", "reason": found, "p_value": None,
                         "p_refute": None}  # fmt: skip
    return record | {
        "status": found.status,
        "reason": found.reason,
        "n_sampled": found.n_sampled,
        "n_missing": found.n_missing,
        "interval": found.interval.to_dict() if found.interval is not None else None,
        "method": found.method,
        "p_value": _finite(found.p_value),
        "p_lower": _finite(found.p_lower),
        "p_upper": _finite(found.p_upper) if found.p_upper is not None else None,
        "p_refute": _finite(found.p_refute),
        "direction": found.direction,
    }


def _span(interval: Mapping[str, Any] | None) -> str:
    if not interval or interval.get("lo") is None:
        return "no interval"
    return f"{float(interval['lo']):.2f} to {float(interval['hi']):.2f}"


def people_estimate_lines(section: Mapping[str, Any], shown: Mapping[str, str]) -> list[str]:
    """The section in plain words, for the screen and the page: what was estimated, from
    what, how sure, and why the judge cannot bias it."""
    sample = section["sample"]
    status = section.get("status")
    judge = section.get("judge")
    head = (
        f"What people prefer, estimated from {sample['judged']} of the {sample['comparisons']} "
        f"comparisons people judged (a sample drawn from the seed before any call) and "
    )
    if status == "no judge":
        return [
            head + "no judge on every comparison: give the LLM judge's picks with --against "
            "FILE to estimate it."
        ]
    if status == "several judges":
        return [head + "several judges' picks: give one judge's picks with --against FILE."]
    lines = [
        head + f"the judge {judge!r} on all {section['comparisons']} "
        f"(its prediction: its {section['judge_prediction']}). Score: a win 1, a tie 1/2, a "
        "loss 0; 0.50 means no preference."
    ]
    gates = section.get("gates_failed") or []
    if gates:
        lines.append(
            "Not a result: the people's own gates failed, and they hold for the estimate too ("
            + " ".join(str(g) for g in gates)
            + ")"
        )
    for pair in section["pairs"]:
        lines.append(_pair_line(pair, shown))
    lines.append(f"Why {WHY_UNBIASED}.")
    calibration = section.get("calibration")
    if calibration:
        lines.append(_calibration_line(calibration))
    costs = section.get("flaw_costs")
    if costs is None:  # not costed: said as they are
        costs = [{"flaw": f, "said": "The judge's own flaw", "pairs": []}
                 for f in section.get("judge_flaws") or []]  # fmt: skip
    lines += [_flaw_line(record, shown) for record in costs]
    return lines


def _flaw_line(record: Mapping[str, Any], shown: Mapping[str, str]) -> str:
    """One flaw of the judge: what it is, that it is a warning, and what it cost in width
    (`blindtest.analysis.people_flaws`)."""
    head = f"{record['said']} ({str(record['flaw']).rstrip('.')}): a warning, not a gate"
    if "kind" not in record:
        return head + " (the estimate stays valid, only wider)."
    return f"{head}, since the estimate stays valid; {_cost_words(record, shown)}."


def _cost_words(record: Mapping[str, Any], shown: Mapping[str, str]) -> str:
    """What one flaw cost, per pair, and what the figure means."""
    pairs = record.get("pairs") or []
    if record.get("not_measured") or not pairs:
        return f"its cost in width is not measured: {record.get('not_measured')}"
    several = len(pairs) > 1
    words = "; ".join(
        (f"{shown.get(p['first'], p['first'])} over {shown.get(p['second'], p['second'])}: "
         if several else "") + _one_cost(p)
        for p in pairs
    )  # fmt: skip
    measured = [p for p in pairs if p.get("measured")]
    if not measured:
        return words
    variable = str(record.get("variable"))
    if record.get("kind") == "leakage":
        return words + " (a rough estimate: those verdicts counted, against left out)"
    words += (
        f" (a rough estimate, likely short: it takes off only the part of the judge's scores "
        f"that follows {variable} beyond people's own, not the content the judge did not read)"
    )
    explained = max(float(p.get("explained") or 0.0) for p in measured)
    if explained >= 0.5:
        words += (
            f". {variable[0].upper()}{variable[1:]} explains {pct(explained)} of the judge's "
            "scores, so little of the judge is left to measure"
        )
    if record.get("kind") == "position" and record.get("swapped"):
        words += (
            ". Its swap already cancels position within each verdict: what position cost it "
            "lies in the ties of its position-inconsistent comparisons, not counted here"
        )
    return words


def _one_cost(pair: Mapping[str, Any]) -> str:
    """One pair's cost: points of the interval's width and people's judgements."""
    if not pair.get("measured"):
        return f"its cost in width cannot be measured: {pair.get('reason')}"
    cost, people = float(pair["width_cost"]), float(pair["people_equivalent"])
    of = (
        " (of the prediction-powered interval; the headline is the people's own)"
        if pair.get("headline") not in (None, "ppi-normal")
        else ""
    )
    if round(cost, 2) == 0:
        return f"it cost no width that can be measured{of}"
    judgements = (
        "less than one person's judgement" if people < 0.5 else f"{people:.0f} people's judgements"
    )
    return f"it cost about {cost:.2f} of the interval's width{of}, about {judgements}"


def bounded_words(report: Mapping[str, Any], section: Mapping[str, Any]) -> JsonObject | None:
    """Under the bound rule with people's judgements missing on the sample, the people's own
    result (``report["summary"]`` and ``statement``, counted on what was judged) reworded so
    that each line says it is a bound; with two sides, the exact test at the two worst fills
    (every missing comparison won by one side, then by the other). None when not bounded."""
    if section.get("status") != "bounded" or not report.get("summary"):
        return None
    missing = max(int(p.get("n_missing") or 0) for p in section["pairs"])
    sampled = int(section["sample"]["comparisons"])
    judged = sampled - missing
    summary = dict(report["summary"])
    fills = ""
    if len(section["pairs"]) == 1 and "wins" in report and "losses" in report:
        fills = _worst_fills(report, missing)
    said = (
        f"A bound, not a result on the whole sample: {missing} of the people's {sampled} "
        f"sampled comparisons have no judgement and could go either way. On the {judged} "
        "judged: "
    )
    summary["verdict"] = said + str(summary.get("verdict") or "")
    for key in ("sure", "size"):
        if summary.get(key):
            text = str(summary[key]).rstrip(".")
            summary[key] = (
                f"{text} (the {judged} judged only: a bound{fills if key == 'sure' else ''})."
            )
    return {"summary": summary, "statement": said + str(report.get("statement") or "")}


def _worst_fills(report: Mapping[str, Any], missing: int) -> str:
    from blindtest.stats.preference import preference_test

    alpha = float(report.get("alpha") or 0.05)
    wins, losses = int(report["wins"]), int(report["losses"])
    shown = (report.get("candidates") or {}).get("shown") or {}
    a, b = shown.get("A", "A"), shown.get("B", "B")
    low = preference_test(wins, losses + missing, alpha=alpha).p_value
    high = preference_test(wins + missing, losses, alpha=alpha).p_value
    return (
        f"; with the {missing} missing all won by {b}, {format_p(low)}; all won by {a}, "
        f"{format_p(high)}"
    )


def _calibration_line(found: Mapping[str, Any]) -> str:
    share = found["agreement"]
    kappa = (found.get("kappa") or {}).get("statistic")
    kappa_words = f"; Cohen's kappa {kappa:.2f}" if kappa is not None else ""
    brier = found.get("brier")
    brier_words = (
        f"; its confidence's Brier score {brier['estimate']:.3f} over {found['with_confidence']}"
        if brier and brier.get("estimate") is not None
        else ""
    )
    return (
        f"The judge against people on the sample: the same verdict on {found['agreed']} of "
        f"{found['n']} ({pct(share['estimate'])}, 95% interval {pct(share['lo'])} to "
        f"{pct(share['hi'])}){kappa_words} (verdicts coded by position, left, tie or right, as "
        f"the agreement gate codes them){brier_words}."
    )


def _pair_line(pair: Mapping[str, Any], shown: Mapping[str, str]) -> str:
    first, second = (
        shown.get(pair["first"], pair["first"]),
        shown.get(pair["second"], pair["second"]),
    )
    name = f"{first} over {second}"
    status = pair["status"]
    if status == "not estimated":
        return f"{name}: not estimated ({pair['reason']})."
    if status == "void":
        return f"{name}: void: {pair['reason']}."
    if status == "bounded":
        interval = pair.get("interval") or {}
        if interval.get("lo") is None:
            return f"{name}: a bound with no interval: {pair['reason']}."
        return (
            f"{name}: a bound, between {float(interval['lo']):.2f} and "
            f"{float(interval['hi']):.2f} (95%, the worst case): {pair['reason']}."
        )
    result = pair["result"]
    holm_p = f", Holm p {pair['p_holm']:.3g}" if pair.get("p_holm") is not None else ""
    worth = result["judge_worth"]
    worth_words = (
        f" The judge was worth about {max(0.0, float(worth['estimate'])):.0f} people's "
        f"judgements" + (f" ({_span(worth)})." if worth.get("lo") is not None else ".")
        if worth.get("estimate") is not None
        else ""
    )
    method = {
        "ppi-normal": "prediction-powered",
        "people-normal": "people's own: the judge-corrected interval could not be trusted",
        "people-exact": "people's exact interval: too few judgements for a normal one",
    }[str(result["method"])]
    return (
        f"{name}: {result['estimate']:.2f} ({_span(result['interval'])}, 95%, {method}; "
        f"p {result['p_value']:.3g}{holm_p}). People alone: "
        f"{result['people_only']['estimate']:.2f} ({_span(result['people_only'])}); the judge "
        f"alone (what it prefers, not people): {result['judge_only']['estimate']:.2f} "
        f"({_span(result['judge_only'])}).{worth_words}"
    )
