"""The pre-registered decision in the analysis: ``report["decision"]`` and the exit code it
gives. Wires `blindtest.stats.decision`, `blindtest.stats.sensitivity` and
`blindtest.stats.anytime` to the run; computes no statistic itself. Pure; opens no file.

**The unit is the comparison.** A comparison is one prompt's champion answer against one
challenger's. Each judge's verdict on it is its pick record that counts (an LLM judge's pass-1
record, which holds the comparison's verdict from both passes of the position swap: passes that
disagree, or a confidence below ``--min-confidence``, read as a tie; a comparison the judge
excluded, for leakage or an inconsistent swap under ``--inconsistent exclude``, is not a
verdict). Its score for the challenger is 1 (preferred), 1/2 (tie) or 0; several judges on one
comparison count as the mean of their scores (never a majority, which would change the
estimand with the panel's size), and `blindtest.stats.decision.decide` is told how many judges
each mean is over. The comparisons are read in the design's order (trial order), fixed before
any answer; a sequential decision reads them in the order they were judged.

**On the people's estimate.** A design with a people's sample pre-registers its decision on
the estimand ``people-mean-score``: the people's mean score for the challenger (a win 1, a tie
1/2, a loss 0; the margin is on this scale, so 0.05 means "at least 0.45"), estimated by
prediction-powered inference from people on the sample and the LLM judge on every comparison
(`blindtest.analysis.people_estimate`, its ``decision`` record). Non-inferiority is shown
when the one-sided p-value that the score is above 1/2 - margin is at most alpha (Holm's
adjusted p-value with m challengers), refuted when the opposite's is; superiority the same at
1/2; equivalence both one-sided p-values within 1/2 +- margin (two one-sided tests). The
interval shown is the unadjusted 1 - 2 alpha one those p-values invert. A sampled comparison
left unjudged voids the run (exit 1) or, under the design's ``missing: bound``, widens the
interval to the worst case. No sensitivity check: the estimate
stays valid whatever the judge does, so the people's gates apply instead. A decision given to
bt-analyze after the fact on such a design is made the same way (on the people's estimate,
labelled not pre-registered; bt-analyze refuses it when no LLM judge's picks are there). Not
settled: the people's judgements that would settle it, the judge on every comparison, planned
at the observed estimate and the judge's observed agreement with people
(`blindtest.analysis.people_settle`): a plan at the observed values, not a promise.

**Planted comparisons** (`blindtest.model.planted`) never enter the estimate: their scores,
for the champion's own answer against its degraded copy, are the sensitivity check's.

**Outcomes and exit codes.** ``shown`` 0, ``refuted`` 4, ``not_shown`` 5 (with the n that
would settle it at the design's planning values), ``no_result`` 1 (a gate failed: the run is
void, unusable or incomplete, so there is nothing to decide). A non-inferiority or equivalence
claim also needs a passing sensitivity check and no position warning; without them a claim
the test shows is left ``not_shown`` and the reasons say why (superiority and similarity need
neither). With several challengers Holm runs across them, and the worst outcome is the exit
code (1, then 4, then 5, then 0). A decision not in the design (``bt-analyze --decide``) is
labelled not pre-registered and exits 5 at best. ``fail_on`` warning codes (and ``strict``:
every serious one; `blindtest.analysis.warnings.failing`) make the exit 1 whatever the
decision says, as they do without a decision.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from blindtest.analysis.common import AnalysisOptions, AnalysisResult
from blindtest.analysis.controls import main_files
from blindtest.analysis.people_settle import people_settle
from blindtest.analysis.warnings import CODES, SERIOUS, failing, listed_warnings
from blindtest.errors import EXIT_NOT_SETTLED, EXIT_REFUTED, BadInput, CheckFailed, option
from blindtest.model.candidates import (
    candidates_of,
    comparison_sides,
    shares_answers,
    shown_name,
)
from blindtest.model.people_sample import PEOPLE_ESTIMAND, sample_of
from blindtest.model.picks import JudgeView, PicksFile
from blindtest.model.planted import applied_degradation, planted_of, planted_trials
from blindtest.model.protocols import protocol_of
from blindtest.model.sides import side_label
from blindtest.reportfmt import pct
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord, ReportRecord
from blindtest.stats.anytime import sequential_decision
from blindtest.stats.decision import (
    DecisionResult,
    DecisionRule,
    Planning,
    adjust_decisions,
    decide,
    p_value_outcome,
    parse_rule,
    similarity_decision,
)
from blindtest.stats.sensitivity import SensitivityResult, sensitivity_check

__all__ = [
    "EXIT_CODES",
    "POSITION_CODES",
    "DecisionSpec",
    "attach_decision",
    "decision_section",
    "decision_spec",
    "planted_texts",
    "planted_trials",
    "with_decision",
    "without_planted",
    "worst_exit",
]

#: The exit code of each outcome (DESIGN.md's table; stable).
EXIT_CODES: Mapping[str, int] = {
    "shown": 0,
    "refuted": EXIT_REFUTED,
    "not_shown": EXIT_NOT_SETTLED,
    "no_result": CheckFailed.exit_code,
}
#: From worst to best: the exit code of several decisions is the first of these among them.
_WORST_FIRST = (1, 4, 5, 0)
#: The report's warnings that leave a non-inferiority or equivalence claim not shown: a lean to
#: one position shown (by the judges together, or by an LLM judge over its comparisons) but not
#: beyond the margin (beyond it, the gate fails and there is no result). The notice
#: ``position.margin`` (too few comparisons to bound the left share within the margin, no lean
#: shown) holds nothing: below some 270 comparisons a 5-point margin cannot be shown at all.
POSITION_CODES = frozenset({"position.lean", "llm.position"})
#: Why a decision on the people's prediction-powered estimate has no sensitivity check.
PEOPLE_SENSITIVITY_NOTE = (
    "no sensitivity check: the decision is on the people's estimate, which stays valid "
    "whatever the LLM judge does (a judge that cannot tell worse from better only widens the "
    "interval, it cannot pull it toward 1/2), so the people's gates (position, agreement) "
    "apply instead"
)
#: How a decision on the people's estimate is made.
PEOPLE_METHOD = (
    "the people's mean score for the challenger (a win 1, a tie 1/2, a loss 0) estimated by "
    "prediction-powered inference (PPI++: Angelopoulos, Duchi and Zrnic 2024) from people on "
    "the design's sample and the LLM judge on every comparison; decided by one-sided p-values "
    "(Student's t on the normal estimate, or Hall's skewness-corrected statistic where larger; "
    "the exact interval inverted where the normal one cannot be trusted) at alpha, Holm "
    "across challengers; the interval shown is the 1 - 2 alpha one they invert"
)
#: Each rule's claim and its opposite, for the headline.
_CLAIMS = {
    "noninferior": (
        "{challenger} is not worse than {champion} by more than {margin}",
        "{challenger} is worse than {champion} by more than {margin}",
    ),
    "superior": ("{challenger} is better than {champion}", "{challenger} is worse than {champion}"),
    "equivalent": (
        "{challenger} is within {margin} of {champion}",
        "{challenger} differs from {champion} by more than {margin}",
    ),
    "similar": (
        "{challenger} is similar to {champion} (pd below {margin})",
        "{challenger} differs from {champion} (pd above {margin})",
    ),
}


@dataclass(frozen=True, slots=True)
class DecisionSpec:
    """The decision to make: design.json's ``decision``, or bt-analyze's ``--decide`` (then
    ``pre_registered`` is False)."""

    rule: str
    margin: float
    alpha: float
    estimand: str
    champion: str
    planning: Planning
    sensitivity: int
    sequential: bool
    pre_registered: bool

    @property
    def parsed(self) -> DecisionRule:
        """The rule as `blindtest.stats.decision` takes it."""
        return DecisionRule(self.rule, self.margin)


def decision_spec(
    design: DesignRecord,
    decide_rule: str | None = None,
    champion: str | None = None,
    estimand: str | None = None,
) -> DecisionSpec | None:
    """The design's decision, or the one given to bt-analyze (None when neither). BadInput
    when bt-analyze is given a decision the design already pre-registers otherwise."""
    recorded = cast(Mapping[str, Any] | None, design.get("decision"))
    if recorded is not None:
        if decide_rule is not None or champion is not None or estimand is not None:
            raise BadInput(
                f"the design pre-registers {option('decide')} {_rule_text(recorded)}; the "
                "analysis reads "
                f"it from design.json: drop {option('decide')}, {option('champion')} and "
                f"{option('estimand')}"
            )
        planning = recorded["planning"]
        sensitivity = recorded.get("sensitivity") or {}
        return DecisionSpec(
            rule=str(recorded["rule"]),
            margin=float(recorded["margin"]),
            alpha=float(recorded["alpha"]),
            estimand=str(recorded["estimand"]),
            champion=str(recorded["champion"]),
            planning=Planning(planning["true"], planning["ties"], planning["power"]),
            sensitivity=int(sensitivity.get("comparisons", 0)),
            sequential=bool(recorded.get("sequential")),
            pre_registered=True,
        )
    if decide_rule is None:
        if champion is not None or estimand is not None:
            given = option("champion") if champion is not None else option("estimand")
            raise BadInput(
                f"{given} goes with {option('decide')} RULE; add {option('decide')} or drop {given}"
            )
        return None
    return _post_hoc(design, decide_rule, champion, estimand)


def _rule_text(recorded: Mapping[str, Any]) -> str:
    rule = str(recorded["rule"])
    return rule if rule == "superior" else f"{rule}:{float(recorded['margin']):g}"


def _post_hoc(
    design: DesignRecord, text: str, champion: str | None, estimand: str | None
) -> DecisionSpec:
    try:
        rule = parse_rule(text)
    except ValueError as error:
        raise BadInput(f"{option('decide')} {text}: {error}") from None
    prefers = protocol_of(design).prefers
    if (rule.rule == "similar") == prefers:
        wanted = "noninferior:MARGIN, superior or equivalent:MARGIN" if prefers else "similar:PD0"
        raise BadInput(f"{option('decide')} {text}: a {design['protocol']} run decides {wanted}")
    if rule.rule != "similar" and design["alpha"] >= 0.5:
        raise BadInput(
            f"{option('decide')} {text}: the design's alpha {design['alpha']} must be below 0.5"
        )
    chosen = estimand or ("pd" if rule.rule == "similar" else "untied-share")
    if rule.rule == "similar" and chosen != "pd":
        raise BadInput(
            f"{option('estimand')} {chosen} is for preference rules; drop {option('estimand')}"
        )
    if rule.rule != "similar" and sample_of(design) is not None:
        chosen = _people_estimand(text, estimand)
    sides = list(candidates_of(design) or ("A", "B"))
    names = {
        side: (side, side_label(design, side), design["models"][side]["model"]) for side in sides
    }
    found = sides[0] if champion is None else None
    if champion is not None:
        matches = {side for side, known in names.items() if champion in known}
        if len(matches) != 1:
            raise BadInput(
                f"{option('champion')} {champion}: "
                + ("names more than one side" if matches else "no side of that name")
                + f"; give one of {', '.join(sides)}"
            )
        found = matches.pop()
    true = 0.0 if rule.rule == "similar" else 0.6 if rule.rule == "superior" else 0.5
    return DecisionSpec(
        rule=rule.rule,
        margin=rule.margin,
        alpha=float(design["alpha"]),
        estimand=chosen,
        champion=str(found),
        planning=Planning(true, 0.0, 0.8),
        sensitivity=0,
        sequential=False,
        pre_registered=False,
    )


def _people_estimand(text: str, estimand: str | None) -> str:
    """A decision given after the fact on a design with a people's sample is made as a
    pre-registered one would be: on the people's prediction-powered estimate of their mean
    score, not on the people's picks of the sample alone (which leave the judge's verdicts on
    every other comparison unused)."""
    if estimand is not None and estimand != PEOPLE_ESTIMAND:
        raise BadInput(
            f"{option('estimand')} {estimand}: this design draws a people's sample, so "
            f"{option('decide')} {text} is decided on the people's estimate of their mean score "
            f"({PEOPLE_ESTIMAND}, a tie as half a win; prediction-powered, with the LLM judge "
            f"on every comparison): drop {option('estimand')}"
        )
    return PEOPLE_ESTIMAND


def with_decision(design: DesignRecord, spec: DecisionSpec | None) -> DesignRecord:
    """The design as the people's estimate reads its decision: a decision on the people's
    estimate given to bt-analyze after the fact joins it as design.json's would (its rule,
    margin, alpha, estimand and champion), so that `blindtest.analysis.people_estimate`
    estimates each challenger at the decision's level. Nothing is written: design.json and its
    hash stay as they are. Any other design comes back as it is."""
    if spec is None or spec.pre_registered or spec.estimand != PEOPLE_ESTIMAND:
        return design
    return cast(DesignRecord, {**design, "decision": _rule_fields(spec)})


# --------------------------------------------------------------------------- the scores


@dataclass(frozen=True, slots=True)
class Scores:
    """One score per comparison (its judges' mean), how many judges each is over, the
    trials, and when each was judged (its last judge's time, for a sequential decision)."""

    scores: tuple[float, ...]
    judges: tuple[int, ...]
    trials: tuple[int, ...]
    judged_at: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.scores)

    def subset(self, trials: Iterable[int]) -> Scores:
        keep = set(trials)
        at = [i for i, t in enumerate(self.trials) if t in keep]
        return Scores(
            tuple(self.scores[i] for i in at),
            tuple(self.judges[i] for i in at),
            tuple(self.trials[i] for i in at),
            tuple(self.judged_at[i] for i in at),
        )

    def judged_order(self) -> Scores:
        """The comparisons in the order their last judge judged them (then by trial)."""
        order = sorted(range(len(self)), key=lambda i: (self.judged_at[i], self.trials[i]))
        return Scores(
            tuple(self.scores[i] for i in order),
            tuple(self.judges[i] for i in order),
            tuple(self.trials[i] for i in order),
            tuple(self.judged_at[i] for i in order),
        )


def _verdicts(picks: Iterable[Any]) -> dict[int, dict[str, Any]]:
    """Trial -> judge -> the pick record that counts (an excluded comparison is none)."""
    found: dict[int, dict[str, Any]] = defaultdict(dict)
    for pick in picks:
        if pick.kind == "llm" and pick.extra.get("excluded"):
            continue
        found[int(pick.trial)][str(pick.judge)] = pick
    return found


def _scores(
    entries: Sequence[Mapping[str, Any]],
    verdicts: Mapping[int, Mapping[str, Any]],
    score_of: Any,
) -> Scores:
    scores, judges, trials, at = [], [], [], []
    for entry in entries:
        trial = int(entry["trial"])
        own = verdicts.get(trial) or {}
        if not own:
            continue
        values = [score_of(entry, pick.pick) for pick in own.values()]
        scores.append(sum(values) / len(values))
        judges.append(len(values))
        trials.append(trial)
        at.append(max(str(pick.at or "") for pick in own.values()))
    return Scores(tuple(scores), tuple(judges), tuple(trials), tuple(at))


def _challenger_score(challenger: str) -> Any:
    def score(entry: Mapping[str, Any], pick: Any) -> float:
        if pick == "tie":
            return 0.5
        left, right = comparison_sides(entry)
        return 1.0 if (left if pick == "left" else right) == challenger else 0.0

    return score


def _original_score(entry: Mapping[str, Any], pick: Any) -> float:
    if pick == "tie":
        return 0.5
    planted = planted_of(entry) or {}
    return 1.0 if (1 if pick == "left" else 2) == int(planted["original"]) else 0.0


def _real(entry: Mapping[str, Any]) -> bool:
    return "control" not in entry and "planted" not in entry


def challengers_of(design: DesignRecord, champion: str) -> list[str]:
    """Every side but the champion, in the design's order."""
    return [side for side in (candidates_of(design) or ("A", "B")) if side != champion]


def challenger_scores(
    design: DesignRecord, picks: Iterable[Any], champion: str, challenger: str
) -> Scores:
    """The challenger's score on each real comparison with the champion, in trial order."""
    entries = [
        e
        for e in design["arrangement"]
        if _real(e) and set(comparison_sides(e)) == {champion, challenger}
    ]
    return _scores(entries, _verdicts(picks), _challenger_score(challenger))


def planted_scores(design: DesignRecord, picks: Iterable[Any]) -> Scores:
    """The champion's own answer's score on each planted comparison, in trial order."""
    entries = [e for e in design["arrangement"] if "planted" in e]
    return _scores(entries, _verdicts(picks), _original_score)


# --------------------------------------------------------------------------- the section


def worst_exit(codes: Iterable[int]) -> int:
    """The exit code of several decisions: 1, then 4, then 5, then 0."""
    found = set(codes)
    return next((code for code in _WORST_FIRST if code in found), 0)


def _warning(code: str, message: str | None = None, **more: Any) -> JsonObject:
    severity, title = CODES[code]
    return {"code": code, "severity": severity, "title": title, "message": message or title, **more}


def _gates(report: Mapping[str, Any]) -> tuple[list[JsonObject], str | None]:
    """The gates that ran and the reason there is no result (None: there is one)."""
    verdict = str(report.get("verdict"))
    failed = list(report.get("gates_failed") or ())
    gates: list[JsonObject] = [
        {
            "gate": "the run is finished and whole",
            "passed": verdict not in ("void", "incomplete"),
        },
        {
            "gate": "the judges' gates (position bias, agreement, LLM judge position)",
            "passed": not failed,
            "failed": failed,
        },
    ]
    if verdict == "void":
        return gates, "the fixed design is unfinished (void), so there is nothing to decide"
    if verdict == "incomplete":
        return gates, "the run is incomplete: " + str(report.get("statement", ""))
    if failed or verdict == "unusable":
        return gates, "a gate failed: " + " ".join(str(f) for f in failed)
    return gates, None


def _settle(result: DecisionResult | None) -> JsonObject | None:
    if result is None or result.settle is None:
        return None
    size = result.settle
    return {
        "n": size.smallest_n,
        "stable_n": size.stable_n,
        "power": size.target,
        "true": size.true,
        "ties": size.ties,
        "basis": size.basis,
    }


def _people_settle(
    design: DesignRecord, spec: DecisionSpec, item: Mapping[str, Any], section: Mapping[str, Any]
) -> JsonObject | None:
    """A people's decision not settled: the people's judgements that would settle it, with
    the judge on every comparison, planned at the observed estimate and the judge's observed
    agreement with people on the sample (`blindtest.analysis.people_settle`), at the design's
    planned power and, with m challengers, at Holm's first step (alpha / m), as the other
    decisions plan theirs."""
    observed = (section.get("decision_sample") or {}).get(str(item["challenger"]))
    return people_settle(
        spec.parsed,
        item.get("estimate"),
        alpha=spec.alpha / len(challengers_of(design, spec.champion)),
        power=spec.planning.power,
        comparisons=int(item["comparisons"]),
        people_judged=int(item["people_judged"]),
        observed=observed,
    )


def _cost(generation: Mapping[str, Any] | None, side: str) -> float | None:
    role = ((generation or {}).get("roles") or {}).get(side) or {}
    cost, answers = role.get("cost"), role.get("responses")
    return float(cost) / int(answers) if cost is not None and answers else None


def _name(design: DesignRecord, side: str) -> str:
    """``A (sim-large)``: a side with its label; a candidate by its name."""
    return shown_name(design, side)


def champion_name(design: DesignRecord, spec: DecisionSpec) -> str:
    """The champion as the screen names it."""
    return _name(design, spec.champion)


def _margin_words(spec: DecisionSpec) -> str:
    if spec.rule == "similar":
        return pct(spec.margin)
    return f"{round(100 * spec.margin, 2):g} points"


def _headline(design: DesignRecord, spec: DecisionSpec, item: JsonObject) -> str:
    """``B (cheap) is not worse than A (big) by more than 5 points: SHOWN (untied share 52%,
    90% interval 47% to 57%) [exit 0]``; a refutation states the opposite as shown."""
    words = {
        "champion": _name(design, spec.champion),
        "challenger": _name(design, str(item["challenger"])),
        "margin": _margin_words(spec),
    }
    claim, opposite = (text.format(**words) for text in _CLAIMS[spec.rule])
    said = {
        "shown": f"{claim}: SHOWN",
        "refuted": f"{opposite}: SHOWN, so the claim is REFUTED",
        "not_shown": (
            f"{claim}: NOT SHOWN, though its test alone would show it"
            if item.get("test_outcome") == "shown"
            else f"{claim}: NOT SHOWN, nor its opposite"
        ),
        "no_result": f"{claim}: NO RESULT",
    }[str(item["outcome"])]
    if item.get("interval") is not None and item["interval"].get("lo") is not None:
        interval = item["interval"]
        level = f"{round(100 * float(item['interval_level']))}%"
        scale = {
            "untied-share": "untied share",
            "mean-score": "mean score",
            "pd": "pd",
            PEOPLE_ESTIMAND: "people's mean score",
        }
        estimate = interval.get("estimate")
        said += (
            f" ({scale[spec.estimand]}"
            + (f" {pct(estimate)}" if estimate is not None else ", bounded by the worst case")
            + (", prediction-powered" if spec.estimand == PEOPLE_ESTIMAND else "")
            + f", {level} interval {pct(interval['lo'])} to {pct(interval['hi'])})"
        )
    if item["reasons"]:
        said += "; " + "; ".join(item["reasons"])
    if not spec.pre_registered:
        said += "; NOT PRE-REGISTERED: given to bt-analyze, not in the design, so exit 5 at best"
    return said + f" [exit {item['exit_code']}]"


def _sensitivity(
    design: DesignRecord, spec: DecisionSpec, picks: Sequence[Any], texts: Mapping[int, str]
) -> tuple[JsonObject | None, SensitivityResult | None]:
    if not spec.sensitivity:
        return None, None
    scores = planted_scores(design, picks)
    planted = [e for e in design["arrangement"] if "planted" in e]
    applied: dict[str, int] = defaultdict(int)
    for entry in planted:
        record = planted_of(entry) or {}
        text = texts.get(int(entry["trial"]))
        how = str(record["degradation"])
        applied[applied_degradation(text, how) if text is not None else how] += 1
    section: JsonObject = {
        "planted": len(planted),
        "judged": len(scores),
        "degradations": dict(sorted(applied.items())),
        "unit": "a planted comparison: the champion's answer against its degraded copy "
        "(its judges' mean score for the answer)",
    }
    if not len(scores):
        section.update(passed=False, result=None)
        return section, None
    result = sensitivity_check(
        list(scores.scores), alpha=spec.alpha, estimand=_estimand(spec), judges=list(scores.judges)
    )
    section.update(passed=result.passed, result=result.to_dict())
    return section, result


def _estimand(spec: DecisionSpec) -> Any:
    return spec.estimand if spec.estimand in ("untied-share", "mean-score") else "untied-share"


def _decide_margin(
    design: DesignRecord, spec: DecisionSpec, picks: Sequence[Any], challengers: Sequence[str]
) -> dict[str, tuple[Scores, DecisionResult | JsonObject | None]]:
    """Each challenger's scores and its decision (a sequential decision's dict, or None when
    no comparison of it was judged), Holm across the fixed ones."""
    found: dict[str, tuple[Scores, Any]] = {}
    fixed: dict[str, DecisionResult] = {}
    for challenger in challengers:
        scores = challenger_scores(design, picks, spec.champion, challenger)
        if not len(scores):
            found[challenger] = (scores, None)
        elif spec.sequential:
            found[challenger] = (scores, _sequential(design, spec, scores, len(challengers)))
        else:
            fixed[challenger] = decide(
                list(scores.scores),
                spec.parsed,
                alpha=spec.alpha,
                estimand=_estimand(spec),
                judges=list(scores.judges),
                planning=spec.planning,
            )
            found[challenger] = (scores, fixed[challenger])
    if len(fixed) > 1:
        for name, adjusted in zip(fixed, adjust_decisions(list(fixed.values())), strict=True):
            found[name] = (found[name][0], adjusted)
    return found


def _sequential(design: DesignRecord, spec: DecisionSpec, scores: Scores, k: int) -> JsonObject:
    """A sequential decision over the comparisons in the order they were judged; with k
    challengers each runs at alpha / k (Bonferroni: the confidence sequences have no
    p-values for Holm), capped at the design's comparisons with the champion."""
    ordered = scores.judged_order()
    planned = sum(
        1 for e in design["arrangement"] if _real(e) and spec.champion in comparison_sides(e)
    )
    result = sequential_decision(
        list(ordered.scores),
        spec.parsed,
        alpha=spec.alpha / k,
        estimand=_estimand(spec),
        judges=list(ordered.judges),
        max_comparisons=max(1, planned // max(1, k)) if shares_answers(design) else planned,
    )
    return result.to_dict()


def _people_item(
    design: DesignRecord, spec: DecisionSpec, report: Mapping[str, Any], challenger: str
) -> JsonObject:
    """A challenger's decision on the people's prediction-powered estimate of its mean score
    (`blindtest.analysis.people_estimate`'s ``decision`` record): decided by its one-sided
    p-values at alpha (`blindtest.stats.decision.p_value_outcome`), Holm-adjusted across m
    challengers (``holm:m``) as the other decisions are; its interval is the unadjusted
    1 - 2 alpha one those p-values invert (non-inferiority shown when its lower bound is above
    1/2 - margin: with one challenger exactly when the p-value is at most alpha). No estimate
    (no judge, a void or unestimated pair): no result."""
    section = report.get("people_estimate") or {}
    found = (section.get("decision") or {}).get(challenger)
    if found is None or found.get("interval") is None:
        status = section.get("status")
        why = (
            found.get("reason")
            if found
            else "no people's picks on the sample: people judge it with bt-judge (a person's "
            "picks, not a machine's), then analyse them with the judge's picks as --against FILE"
            if not section
            else "no judge's picks on every comparison: give the LLM judge's with --against FILE"
            if status == "no judge"
            else f"the people's estimate is {status}"
        )
        return {
            "challenger": challenger,
            "outcome": "no_result",
            "reasons": [f"no prediction-powered estimate of the people's score: {why}"],
        }
    bounds = found["interval"]
    p_claim = _first(found.get("p_adjusted"), found.get("p_value"))
    p_refute = _first(found.get("p_refute_adjusted"), found.get("p_refute"))
    outcome = p_value_outcome(p_claim, p_refute, spec.alpha)
    item: JsonObject = {
        "challenger": challenger,
        "comparisons": sum(
            1
            for e in design["arrangement"]
            if _real(e) and set(comparison_sides(e)) == {spec.champion, challenger}
        ),
        "people_judged": int(found["n_sampled"]) - int(found["n_missing"]),
        "estimate": bounds.get("estimate"),
        "interval": bounds,
        "interval_level": found["confidence_level"],
        "p_value": p_claim,
        "p_value_unadjusted": found.get("p_value"),
        "p_refute": p_refute,
        "tie_rate": None,
        "method": f"prediction-powered ({found['method']}), one-sided p-values",
        "adjustment": found.get("adjustment"),
        "outcome": outcome,
        "test_outcome": outcome,
        "settle": None,
        "note": found.get("reason") if found.get("status") == "bounded" else None,
        "reasons": [],
        "result": dict(found),
    }
    if outcome == "not_shown":
        item["settle"] = _people_settle(design, spec, item, section)
    return item


def _similar(report: Mapping[str, Any], spec: DecisionSpec, protocol: str) -> DecisionResult | None:
    correct, n = report.get("correct"), report.get("n")
    if correct is None or not n:
        return None
    return similarity_decision(
        int(correct),
        int(n),
        spec.margin,
        protocol=cast(Any, protocol),
        alpha=spec.alpha,
        planning=spec.planning,
    )


def _item(
    spec: DecisionSpec,
    challenger: str,
    result: DecisionResult | JsonObject | None,
    scores: Scores | None,
) -> JsonObject:
    if result is None:
        return {
            "challenger": challenger,
            "outcome": "no_result",
            "reasons": ["no comparison of it with the champion was judged"],
        }
    found = result.to_dict() if isinstance(result, DecisionResult) else dict(result)
    item: JsonObject = {
        "challenger": challenger,
        "comparisons": len(scores) if scores is not None else found.get("n"),
        "judges": (
            {str(k): v for k, v in sorted(_count(scores.judges).items())}
            if scores is not None
            else None
        ),
        "estimate": found.get("estimate"),
        "interval": found.get("interval"),
        "interval_level": found.get("interval_level"),
        "p_value": _first(found.get("p_adjusted"), found.get("p_value")),
        "p_value_unadjusted": found.get("p_value"),
        "p_refute": _first(found.get("p_refute_adjusted"), found.get("p_refute")),
        "tie_rate": found.get("tie_rate"),
        "method": found.get("method", "betting confidence sequence"),
        "adjustment": found.get("adjustment"),
        "outcome": str(found["outcome"]),
        "test_outcome": str(found["outcome"]),
        "settle": _settle(result) if isinstance(result, DecisionResult) else None,
        "note": found.get("note") or None,
        "reasons": [],
        "result": found,
    }
    if not isinstance(result, DecisionResult):  # sequential: where it stopped, and why
        item.update(
            judged=len(scores) if scores is not None else None,
            comparisons=found["comparisons"],
            stopped_at=found["stopped_at"],
            stop=found["stop"],
            observation=found["observation"],
            e_value=found["e_value"],
            e_refute=found["e_refute"],
        )
    return item


def _first(*values: Any) -> Any:
    return next((value for value in values if value is not None), None)


def _count(values: Iterable[int]) -> dict[int, int]:
    counted: dict[int, int] = defaultdict(int)
    for value in values:
        counted[value] += 1
    return dict(counted)


def _hold(item: JsonObject, spec: DecisionSpec, sensitivity: JsonObject | None,
          warnings: Sequence[JsonObject]) -> None:  # fmt: skip
    """What keeps a non-inferiority or equivalence claim from standing though its test shows
    it: a missing or failed sensitivity check, a position warning."""
    if spec.rule not in ("noninferior", "equivalent") or item["outcome"] != "shown":
        return
    reasons = []
    if spec.estimand == PEOPLE_ESTIMAND:
        pass  # the people's estimate is valid whatever the judge does: no sensitivity check
    elif sensitivity is None:
        reasons.append(
            "no sensitivity check was pre-registered (bt-design --sensitivity N), so nothing "
            "shows this judge could have seen a regression"
        )
    elif not sensitivity["passed"]:
        found = sensitivity.get("result")
        detail = (
            f"preferred the champion's own answer to its degraded copy in "
            f"{pct(found['estimate'])} of the untied planted comparisons, one-sided p = "
            f"{found['p_value']:.3g}"
            if found is not None and found.get("estimate") is not None
            else "no planted comparison was judged"
        )
        reasons.append(f"the sensitivity check failed: the judge {detail}")
    if any(w["code"] in POSITION_CODES for w in warnings):
        reasons.append("a position warning: the judge may answer by position")
    if reasons:
        item["outcome"] = "not_shown"
        item["reasons"] = reasons


def decision_section(
    design: DesignRecord,
    picks: Sequence[Any],
    report: Mapping[str, Any],
    spec: DecisionSpec,
    *,
    generation: Mapping[str, Any] | None = None,
    texts: Mapping[int, str] | None = None,
    fail_on: Sequence[str] = (),
    strict: bool = False,
    by_tag: bool = False,
) -> tuple[JsonObject, int]:
    """``report["decision"]`` and the exit code. ``design`` is the whole design (planted
    comparisons and controls included); ``picks`` every pick record that counts, of every
    file (pass 1 of an LLM judge's swap); ``report`` the analysis's report (its verdict, gates
    and warnings); ``texts`` the answer each planted comparison degraded (by trial), for the
    degradations applied."""
    gates, no_result = _gates(report)
    if spec.sequential and str(report.get("verdict")) == "void":
        no_result = None  # an anytime-valid decision may be read before the end
        gates[0]["note"] = "a sequential decision reads the comparisons judged so far"
    warnings = listed_warnings(report)
    sensitivity, _ = _sensitivity(design, spec, picks, texts or {})
    if spec.rule == "similar":
        result = None if no_result else _similar(report, spec, design["protocol"])
        challengers = challengers_of(design, spec.champion)
        items = [_item(spec, challengers[0], result, None)]
        per_scores: dict[str, Scores] = {}
    elif spec.estimand == PEOPLE_ESTIMAND:
        challengers = challengers_of(design, spec.champion)
        items = [_people_item(design, spec, report, name) for name in challengers]
        per_scores = {}
    else:
        challengers = challengers_of(design, spec.champion)
        decided = _decide_margin(design, spec, picks, challengers) if not no_result else {}
        empty: tuple[Scores | None, Any] = (None, None)
        items = [
            _item(spec, name, decided.get(name, empty)[1], decided.get(name, empty)[0])
            for name in challengers
        ]
        per_scores = {name: found[0] for name, found in decided.items()}
    own_warnings = _decision_warnings(spec, sensitivity, picks)
    for item in items:
        if no_result:
            item["outcome"] = "no_result"
            item["reasons"] = [no_result]
        _hold(item, spec, sensitivity, warnings)
        code = EXIT_CODES[str(item["outcome"])]
        if not spec.pre_registered and code == 0:
            code = EXIT_CODES["not_shown"]  # never 0: what was not pre-registered is a lead
        item["exit_code"] = code
        item["challenger_name"] = _name(design, str(item["challenger"]))
        item["cost_per_answer"] = {
            "champion": _cost(generation, spec.champion),
            "challenger": _cost(generation, str(item["challenger"])),
        }
        item["headline"] = _headline(design, spec, item)
    code = worst_exit(int(item["exit_code"]) for item in items)
    every = [*warnings, *own_warnings]
    failed_on = sorted({w["code"] for w in failing(every, fail_on, strict=strict)})
    section: JsonObject = {
        **_rule_fields(spec),
        "champion_name": champion_name(design, spec),
        "sequential": spec.sequential,
        "unit": _unit(spec),
        "planning": {
            "true": spec.planning.true,
            "ties": spec.planning.ties,
            "power": spec.planning.power,
        },
        "decisions": items,
        "sensitivity": sensitivity,
        "gates": gates,
        "warnings": own_warnings,
        "outcome": _overall(items),
        "exit_code": 1 if failed_on else code,
        "decision_exit_code": code,
        "fail_on": list(fail_on),
        "strict": strict,
        "failed_on": failed_on,
    }
    if spec.estimand == PEOPLE_ESTIMAND:
        gates[1]["gate"] = (
            "the people's gates (position bias, agreement; the LLM judge's flaws are "
            "warnings, not gates)"
        )
        section["sensitivity_note"] = PEOPLE_SENSITIVITY_NOTE
        section["method"] = PEOPLE_METHOD
    if len(items) == 1:  # the one decision's figures beside the rule, as a reader looks
        only = items[0]
        for key in ("challenger", "estimate", "interval", "interval_level", "p_value"):
            section[key] = only.get(key)
    section["by_tag"] = _by_tag(design, spec, per_scores, by_tag) if per_scores else None
    return section, int(section["exit_code"])


def _overall(items: Sequence[JsonObject]) -> str:
    code = worst_exit(int(item["exit_code"]) for item in items)
    return next(str(i["outcome"]) for i in items if int(i["exit_code"]) == code)


def _unit(spec: DecisionSpec) -> str:
    if spec.rule == "similar":
        return "a trial (one judge's pick)"
    if spec.estimand == PEOPLE_ESTIMAND:
        return (
            "a comparison: the champion's and the challenger's answers to one prompt; people "
            "judge the comparisons of the prompts the design sampled for them (several people "
            "on one: the mean of their scores, 1 preferred, 1/2 tie, 0), the LLM judge every "
            "comparison (its swap passes are one verdict); the prompt is the sampling unit"
        )
    base = (
        "a comparison: the champion's and the challenger's answers to one prompt; an LLM "
        "judge's two swap passes are one verdict (passes that disagree are a tie); several "
        "judges count as the mean of their scores (1 preferred, 1/2 tie, 0)"
    )
    if spec.sequential:
        base += (
            "; one observation of the sequence is one comparison's score, in the order "
            "judged (a panel's comparison once all its judges have judged it)"
            + ("; ties are skipped" if spec.estimand == "untied-share" else "")
        )
    return base


def _decision_warnings(
    spec: DecisionSpec, sensitivity: JsonObject | None, picks: Sequence[Any]
) -> list[JsonObject]:
    out = []
    if not spec.pre_registered:
        out.append(_warning("decision.not_pre_registered"))
    if spec.rule in ("noninferior", "equivalent") and spec.estimand != PEOPLE_ESTIMAND:
        if sensitivity is None:
            out.append(_warning("sensitivity.missing"))
        elif not sensitivity["passed"]:
            out.append(_warning("sensitivity.failed"))
    excluded = sum(1 for p in picks if p.kind == "llm" and p.extra.get("excluded"))
    if excluded:
        out.append(
            _warning(
                "llm.excluded",
                f"{excluded} comparison verdict(s) were excluded by the LLM judge",
                excluded=excluded,
            )
        )
    return out


def _by_tag(
    design: DesignRecord, spec: DecisionSpec, per_scores: Mapping[str, Scores], decide_each: bool
) -> JsonObject | None:
    """Per prompt tag and challenger: the estimate and interval over that tag's comparisons
    (a prompt with several tags counts in each); with ``decide_each``, the rule decided per
    tag with Holm across the tags (reported, never the exit code)."""
    tags = {p["id"]: p.get("tags", []) for p in design["prompts"]}
    prompt_of = {int(e["trial"]): e["prompt_id"] for e in design["arrangement"]}
    out: JsonObject = {}
    for challenger, scores in per_scores.items():
        by: dict[str, list[int]] = defaultdict(list)
        for trial in scores.trials:
            for tag in tags.get(prompt_of[trial], ()):
                by[tag].append(trial)
        if not by:
            continue
        results = {
            tag: decide(
                list(scores.subset(trials).scores),
                spec.parsed,
                alpha=spec.alpha,
                estimand=_estimand(spec),
                judges=list(scores.subset(trials).judges),
            )
            for tag, trials in sorted(by.items())
        }
        if decide_each and len(results) > 1:
            results = dict(zip(results, adjust_decisions(list(results.values())), strict=True))
        out[challenger] = {
            tag: {
                "comparisons": r.n,
                "estimate": _finite(r.estimate),
                "interval": r.interval.to_dict(),
                "tie_rate": _finite(r.tied / r.n),
                **(
                    {
                        "outcome": r.outcome,
                        "p_value": r.p_adjusted if r.p_adjusted is not None else r.p_value,
                    }
                    if decide_each
                    else {}
                ),
            }
            for tag, r in results.items()
        }
    if not out:
        return None
    return {
        "decided": decide_each,
        "adjustment": "holm across tags" if decide_each else None,
        "note": "per-tag figures describe; the exit code is the whole decision's",
        "by_challenger": out,
    }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _rule_fields(spec: DecisionSpec) -> JsonObject:
    """What the design fixed in advance, at the head of every decision section."""
    return {
        "pre_registered": spec.pre_registered,
        "rule": spec.rule,
        "margin": spec.margin,
        "alpha": spec.alpha,
        "estimand": spec.estimand,
        "champion": spec.champion,
    }


def void_decision(spec: DecisionSpec) -> tuple[JsonObject, int]:
    """What a void report says of the decision: nothing about the picks, exit 1."""
    section: JsonObject = {
        **_rule_fields(spec),
        "sequential": spec.sequential,
        "outcome": "no_result",
        "exit_code": 1,
        "decision_exit_code": 1,
        "decisions": [],
        "reason": "the fixed design is unfinished (void), so there is nothing to decide",
    }
    return section, 1


def attach_decision(
    result: AnalysisResult,
    design: DesignRecord,
    picks: Sequence[Any],
    spec: DecisionSpec,
    options: AnalysisOptions,
    *,
    generation: Mapping[str, Any] | None = None,
    texts: Mapping[int, str] | None = None,
) -> AnalysisResult:
    """The report with its ``decision`` and the exit code the decision gives (the analysis's
    own 1 stays 1). bt-analyze's decision options go into ``analysis_options`` when given, so
    bt-verify recomputes the same decision."""
    report = cast(dict[str, Any], dict(result.report))
    recorded = dict(report.get("analysis_options") or {})
    recorded.update(options.decision_options())
    report["analysis_options"] = recorded
    if str(report.get("verdict")) == "void" and not spec.sequential:
        section, code = void_decision(spec)
    else:
        section, code = decision_section(
            design,
            picks,
            report,
            spec,
            generation=generation,
            texts=texts,
            fail_on=options.fail_on,
            strict=options.strict,
            by_tag=options.by_tag,
        )
    report["decision"] = section
    _list_warnings(report, section.get("warnings") or [])
    if result.exit_code == 1 and not (spec.sequential and report.get("verdict") == "void"):
        code = 1
    return replace(result, report=cast(ReportRecord, report), exit_code=code)


def _list_warnings(report: dict[str, Any], found: Sequence[JsonObject]) -> None:
    """The decision's warnings join the report's one top-level list (serious ones first)."""
    listed = report.get("warnings")
    if not isinstance(listed, list):
        return
    seen = {(w.get("code"), w.get("message")) for w in listed if isinstance(w, Mapping)}
    listed.extend(dict(w) for w in found if (w["code"], w["message"]) not in seen)
    listed.sort(key=lambda w: 0 if isinstance(w, Mapping) and w.get("severity") == SERIOUS else 1)


def without_planted(
    design: DesignRecord,
    picks: list[Any],
    files: list[PicksFile],
    planted: Mapping[int, Any],
) -> tuple[DesignRecord, list[Any], list[PicksFile]]:
    """The design, picks and files the analysis sees: without the planted comparisons
    (``trials`` counts the rest), as it sees them without hidden controls."""
    if not planted:
        return design, picks, files  # the same objects: the caller tells "none left" by identity
    main = dict(design)
    main["arrangement"] = [e for e in design["arrangement"] if int(e["trial"]) not in planted]
    main["trials"] = int(design["trials"]) - sum(
        1 for e in design["arrangement"] if int(e["trial"]) in planted
    )
    kept = [p for p in picks if p.trial not in planted]
    return cast(DesignRecord, main), kept, main_files(files, planted)


def planted_texts(design: DesignRecord, view: JudgeView) -> dict[int, str]:
    """Planted trial -> the answer its copy was made from, as the judge saw it."""
    shown = {t.number: t.options for t in view.trials}
    out = {}
    for trial, record in planted_trials(design).items():
        options = shown.get(trial)
        if options:
            out[trial] = options[int(record["original"]) - 1]
    return out
