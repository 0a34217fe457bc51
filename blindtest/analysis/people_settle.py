"""The n that would settle a decision on the people's estimate (the ``settle`` of a
`blindtest.analysis.decision` item whose estimand is ``people-mean-score``): how many of a
challenger's comparisons with the champion people would have to judge, the LLM judge still
judging every one, for the decision to be settled with the design's planned power. Planned by
`blindtest.stats.ppi_plan` at the values this run observed: the people's estimate of the
score, and the judge agreeing (and tying) with people as often as it did on the sample. It is
a plan at the observed values, not a promise: the estimate and the agreement are uncertain
themselves, and the planner's model (a uniform sample, one verdict per comparison) is a model.

**What is observed** (`sample_agreement`, per challenger, on the sampled comparisons people
judged): the people's side of a comparison is the sign of their mean score about 1/2 (exactly
1/2: a tie), the judge's side its verdict's (a verdict it left out, or none, is a tie: the
estimate reads it as 1/2). The agreement is the share of those comparisons where the two sides
are the same; each tie rate is that one's share of ties.

**Which way it settles**, at the observed estimate s (`people_settle`): a boundary b is
cleared from below (non-inferiority: b = 1/2 - M; superiority: b = 1/2) when the one-sided
test of "above b" rejects: the planner's test at margin 1/2 - b; from above (the claim
refuted) by the same test on the mirror image (score 1 - s, margin b - 1/2). Equivalence
(inside 1/2 +- M) is shown when both one-sided tests reject: in the planner's model, whose
tests read one estimate and one standard error, that happens with probability
``P(lower) + P(upper) - 1`` (when positive), so the plan is the smallest n where that reaches
the power; refuted past the nearer bound, one one-sided test. An estimate on a boundary: no
size settles it. The one-sided alpha is the caller's: the decision's, or with m challengers
Holm's first step, alpha / m. Pure.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from blindtest.analysis.common import excluded_reason
from blindtest.errors import message_of
from blindtest.model.candidates import comparison_sides
from blindtest.model.people_sample import people_trials
from blindtest.model.picks import Pick
from blindtest.model.scoring import preferred_side
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord
from blindtest.stats.decision import DecisionRule
from blindtest.stats.ppi_core import MIN_DEGREES_OF_FREEDOM
from blindtest.stats.ppi_plan import people_sample_row, plan_people_sample

__all__ = ["ON_BOUNDARY", "people_settle", "sample_agreement"]

#: How close to a boundary an estimate counts as on it (a float's rounding, no more).
ON_BOUNDARY = 1e-9
UNIT = (
    "comparisons of the challenger with the champion judged by people (the people's sample), "
    "the LLM judge on every comparison"
)
#: A plan's n, or None with why (a reason code and, where the planner says more, its words).
_Found = tuple[int | None, tuple[str, str | None] | None]


def _side(design: DesignRecord, pick: Pick, challenger: str) -> float:
    side = preferred_side(design, pick.trial, pick.pick)
    return 0.5 if side is None else float(side == challenger)


def sample_agreement(
    design: DesignRecord, champion: str, people: Sequence[Pick], judge: Sequence[Pick]
) -> JsonObject:
    """Per challenger of ``champion``: on its sampled comparisons people judged, how many
    (``n``), on how many the judge's side was the people's (``agreed``), and how many each
    tied (``people_ties``, ``judge_ties``) (module doc)."""
    sampled = set(people_trials(design) or ())
    verdicts = {p.trial: p for p in judge if excluded_reason(p) is None}
    own: dict[int, list[Pick]] = defaultdict(list)
    for pick in people:
        if pick.trial in sampled:
            own[pick.trial].append(pick)
    counts: dict[str, list[int]] = {}
    for entry in design["arrangement"]:
        trial = int(entry["trial"])
        sides = comparison_sides(entry)
        if not own.get(trial) or champion not in sides or "planted" in entry:
            continue
        challenger = sides[1] if sides[0] == champion else sides[0]
        if challenger == champion:  # a hidden control shows one side twice
            continue
        mean = sum(_side(design, p, challenger) for p in own[trial]) / len(own[trial])
        theirs = _sign(mean)
        verdict = verdicts.get(trial)
        mine = _sign(_side(design, verdict, challenger)) if verdict is not None else 0
        found = counts.setdefault(challenger, [0, 0, 0, 0])
        found[0] += 1
        found[1] += theirs == mine
        found[2] += theirs == 0
        found[3] += mine == 0
    return {
        name: {"n": n, "agreed": agreed, "people_ties": people_ties, "judge_ties": judge_ties}
        for name, (n, agreed, people_ties, judge_ties) in sorted(counts.items())
    }


def _sign(score: float) -> int:
    return 0 if score == 0.5 else 1 if score > 0.5 else -1


def people_settle(
    rule: DecisionRule,
    estimate: float | None,
    *,
    alpha: float,
    power: float,
    comparisons: int,
    people_judged: int,
    observed: Mapping[str, Any] | None,
) -> JsonObject | None:
    """The settle record of an unsettled decision on the people's estimate (module doc), or
    None without an estimate (a bounded one) or without the sample's agreement."""
    if estimate is None or not observed or not observed.get("n"):
        return None
    n = int(observed["n"])
    record: JsonObject = {
        "n": None,
        "stable_n": None,
        "unit": UNIT,
        "power": power,
        "alpha": alpha,
        "true": estimate,
        "ties": observed["people_ties"] / n,
        "judge_ties": observed["judge_ties"] / n,
        "agreement": observed["agreed"] / n,
        "agreed": int(observed["agreed"]),
        "sample": n,
        "people_judged": people_judged,
        "comparisons": comparisons,
        "settles": None,
        "reason": None,
        "note": None,
        "basis": (
            "a plan at the observed values, not a promise: the people's score as estimated and "
            "the judge agreeing and tying with people as often as on the sample "
            "(blindtest.stats.ppi_plan; a uniform sample, one verdict per comparison)"
        ),
    }
    lower, upper = float(rule.lower or 0.0), rule.upper
    bounds = (lower,) if upper is None else (lower, float(upper))
    if any(abs(estimate - b) <= ON_BOUNDARY for b in bounds):
        record["reason"] = "boundary"
        return record
    if comparisons < 3 or people_judged >= comparisons:
        record["reason"] = "more comparisons"
        return record
    inside = upper is None or lower < estimate < float(upper)
    record["settles"] = "shown" if inside and estimate > lower else "refuted"
    try:
        if upper is not None and inside:
            found, why = _both_sides(record, rule.margin, comparisons)
        else:
            boundary = lower if upper is None or estimate < lower else float(upper)
            found, why = _one_side(record, boundary, comparisons)
    except ValueError as error:  # the observed values lie outside what the model can take
        record.update(reason="outside the model", note=message_of(error))
        return record
    record["n"] = found
    if why is not None:
        record.update(reason=why[0], note=why[1])
    return record


def _inputs(record: Mapping[str, Any], total: int) -> dict[str, Any]:
    return {
        "total": total,
        "agreement": record["agreement"],
        "people_tie_rate": record["ties"],
        "judge_tie_rate": record["judge_ties"],
        "alpha": record["alpha"],
    }


def _one_side(record: Mapping[str, Any], boundary: float, total: int) -> _Found:
    """The one-sided test past ``boundary`` from where the estimate is (the mirror below it)."""
    s = float(record["true"])
    score, margin = (s, 0.5 - boundary) if s > boundary else (1.0 - s, boundary - 0.5)
    plan = plan_people_sample(
        score=score, margin=margin, power=record["power"], **_inputs(record, total)
    )
    if plan.n is not None:
        return plan.n, None
    if plan.n_normal is None:
        return None, ("more comparisons", None)
    return None, ("degrees of freedom", plan.note)


def _both_sides(record: Mapping[str, Any], margin: float, total: int) -> _Found:
    """Equivalence shown: the smallest n where both one-sided tests reject with the power
    (``P(lower) + P(upper) - 1`` in the planner's model) and the normal interval's degrees of
    freedom are reached, as `blindtest.stats.ppi_plan.plan_people_sample` asks of one."""
    s, inputs = float(record["true"]), _inputs(record, total)

    def meets(n: int) -> bool:
        low = people_sample_row(n, score=s, margin=margin, **inputs)
        high = people_sample_row(n, score=1.0 - s, margin=margin, **inputs)
        both = low.power + high.power - 1.0
        return both >= record["power"] and low.expected_df >= MIN_DEGREES_OF_FREEDOM

    lo, hi = 2, total - 1
    if not meets(hi):
        return None, ("more comparisons", None)
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if meets(mid) else (mid + 1, hi)
    return lo, None
