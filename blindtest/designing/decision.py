"""The pre-registered decision of a design (``bt-design --decide RULE``): what it claims, about
whom, on which estimand, planned at which values, and how many planted comparisons check the
judge. Written into design.json as ``decision`` and hashed before any model is called; a
design without ``--decide`` has no such key and keeps its bytes. Pure; calls no model.

``design.json["decision"]``::

    {"rule": "noninferior" | "superior" | "equivalent" | "similar",
     "margin": 0.05,                 # 0 for superior; PD0 for similar
     "alpha": 0.05,                  # the design's alpha: each one-sided test's level
     "estimand": "untied-share" | "mean-score" | "pd" | "people-mean-score",
     "champion": "A" | CANDIDATE,    # every other side is a challenger
     "planning": {"true": 0.5, "ties": 0.0, "power": 0.8},
     "sensitivity": {"comparisons": N, "version": "blindtest/degrade@1"} | null,
     "sequential": false}

The rules are `blindtest.stats.decision`'s (``parse_rule``); ``similar:PD0`` is for the
triangle and pair protocols, the others for preference. The champion is side A unless
``--champion`` names B (by side, label or model), or the reference of ``--pairs
reference:NAME``; with candidates every other candidate is a challenger, and Holm runs across
them. ``planning.true`` is on the estimand's scale (the challenger's untied share or mean
score; for similar, the planning pd); it sets the n that would settle an unsettled decision,
never the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blindtest.errors import BadInput, option
from blindtest.model.people_sample import PEOPLE_ESTIMAND
from blindtest.model.planted import DEGRADE_VERSION
from blindtest.model.protocols import PROTOCOLS
from blindtest.stats.decision import ESTIMANDS, parse_rule

__all__ = ["DecisionSpec", "champion_side", "decision_line", "decision_spec", "per_challenger"]

#: The planning value of the challenger's true share when --plan-true is not given: as good
#: as the champion (superior: a share of 0.6, since at 1/2 no n could show it).
DEFAULT_PLAN_TRUE = 0.5
DEFAULT_PLAN_TRUE_SUPERIOR = 0.6
DEFAULT_POWER = 0.8


@dataclass(frozen=True, slots=True)
class DecisionSpec:
    """A parsed, checked ``--decide`` with its companions; ``to_dict`` is design.json's
    ``decision`` (the design's alpha goes in beside it)."""

    rule: str
    margin: float
    estimand: str
    champion: str
    plan_true: float
    plan_ties: float
    power: float = DEFAULT_POWER
    sensitivity: int = 0
    sequential: bool = False

    def to_dict(self, alpha: float) -> dict[str, Any]:
        planning: dict[str, Any] = {"true": self.plan_true, "ties": self.plan_ties}
        planning["power"] = self.power
        return {
            "rule": self.rule,
            "margin": self.margin,
            "alpha": alpha,
            "estimand": self.estimand,
            "champion": self.champion,
            "planning": planning,
            "sensitivity": (
                {"comparisons": self.sensitivity, "version": DEGRADE_VERSION}
                if self.sensitivity
                else None
            ),
            "sequential": self.sequential,
        }


def champion_side(given: str | None, labels: Sequence[tuple[str, Sequence[str | None]]]) -> str:
    """The side ``given`` names: a side ("A", "B", a candidate) or one of its labels or
    models. ``labels``: (side, its names) in order. BadInput when it names none, or two."""
    if given is None:
        return labels[0][0]
    sides = [side for side, _ in labels]
    if given in sides:
        return given
    named = [side for side, names in labels if given in names]
    if len(set(named)) == 1:
        return named[0]
    if named:
        raise BadInput(
            f"{option('champion')} {given}: names sides {' and '.join(sorted(set(named)))}; "
            f"give the side itself ({', '.join(sides)})"
        )
    raise BadInput(
        f"{option('champion')} {given}: no side of that name; give one of {', '.join(sides)}"
    )


def _rule(decide: str, protocol: str) -> tuple[str, float]:
    try:
        parsed = parse_rule(decide)
    except ValueError as error:
        raise BadInput(f"{option('decide')} {decide}: {error}") from None
    similar = parsed.rule == "similar"
    if similar and not PROTOCOLS[protocol].similarity:
        raise BadInput(
            f"{option('decide')} {decide}: similar:PD0 is for the triangle and pair protocols; a "
            "preference design decides noninferior:MARGIN, superior or equivalent:MARGIN"
        )
    if not similar and not PROTOCOLS[protocol].prefers:
        raise BadInput(
            f"{option('decide')} {decide}: a {protocol} design decides similar:PD0; "
            f"{parsed.rule} needs {option('protocol')} preference"
        )
    return parsed.rule, parsed.margin


def decision_spec(
    *,
    decide: str | None,
    protocol: str,
    champion: str,
    estimand: str | None = None,
    plan_true: float | None = None,
    plan_ties: float | None = None,
    sensitivity: int = 0,
    sequential: bool = False,
    people_sample: bool = False,
) -> DecisionSpec | None:
    """The decision of ``--decide`` (None without it; BadInput for its companions alone or
    for what does not go together). ``champion`` is already resolved to a side. With a
    people's sample (``people_sample``) the estimand is ``people-mean-score``: the decision
    reads the people's prediction-powered estimate (`_people`)."""
    if decide is None:
        given = [
            flag
            for flag, value in (
                (option("estimand"), estimand),
                (option("plan_true"), plan_true),
                (option("plan_ties"), plan_ties),
                (option("sensitivity"), sensitivity or None),
            )
            if value is not None
        ]
        if given:
            raise BadInput(
                f"{given[0]} goes with {option('decide')} RULE; add {option('decide')} or drop "
                f"{given[0]}"
            )
        return None
    rule, margin = _rule(decide, protocol)
    if rule == "similar":
        return _similar(margin, champion, estimand, plan_true, plan_ties, sensitivity)
    if people_sample:
        _people(estimand, sensitivity, sequential, plan_true, plan_ties)
    elif estimand == PEOPLE_ESTIMAND:
        raise BadInput(
            f"{option('estimand')} {PEOPLE_ESTIMAND} is the people's estimate from their sample: "
            f"add {option('people_sample')} N, or drop {option('estimand')}"
        )
    chosen = PEOPLE_ESTIMAND if people_sample else estimand or "untied-share"
    if chosen not in (*ESTIMANDS, PEOPLE_ESTIMAND):
        raise BadInput(f"{option('estimand')} {chosen}: give one of {', '.join(ESTIMANDS)}")
    if sensitivity < 0:
        raise BadInput(f"{option('sensitivity')} must be 0 or more, got {sensitivity}")
    default = DEFAULT_PLAN_TRUE_SUPERIOR if rule == "superior" else DEFAULT_PLAN_TRUE
    true = default if plan_true is None else plan_true
    ties = 0.0 if plan_ties is None else plan_ties
    if not 0 <= true <= 1:
        raise BadInput(f"{option('plan_true')} must be in [0, 1] (a share), got {true}")
    if not 0 <= ties < 1:
        raise BadInput(f"{option('plan_ties')} must be in [0, 1) (the tie rate), got {ties}")
    return DecisionSpec(
        rule=rule,
        margin=margin,
        estimand=chosen,
        champion=champion,
        plan_true=true,
        plan_ties=ties,
        sensitivity=sensitivity,
        sequential=sequential,
    )


def _people(
    estimand: str | None,
    sensitivity: int,
    sequential: bool,
    plan_true: float | None,
    plan_ties: float | None,
) -> None:
    """A decision beside a people's sample is made on the people's estimate: its estimand is
    their mean score (a tie 1/2), it needs no sensitivity check (the estimate is valid
    whatever the judge does; the people's gates apply instead), it is not sequential, and it
    takes no planning values: the n that would settle it is planned at the values the run
    observes (the people's estimate, the judge's agreement with people on the sample).
    The sample itself is sized before, by bt-plan --people-sample."""
    for flag, value in ((option("plan_true"), plan_true), (option("plan_ties"), plan_ties)):
        if value is not None:
            raise BadInput(
                f"{flag} plans the comparisons that would settle a decision on the judges' "
                f"picks; with {option('people_sample')} the decision is on the people's "
                "estimate, and what would settle it is planned at the score and the judge's "
                "agreement with people the run observes (size the sample beforehand with "
                "bt-plan --people-sample TOTAL --agreement SHARE --true SHARE --ties RATE): "
                f"drop {flag}"
            )
    if estimand is not None and estimand != PEOPLE_ESTIMAND:
        raise BadInput(
            f"{option('estimand')} {estimand}: with {option('people_sample')} the decision is "
            f"made on the people's estimate of their mean score ({PEOPLE_ESTIMAND}, a tie as "
            f"half a win): drop {option('estimand')}"
        )
    if sensitivity:
        raise BadInput(
            f"{option('sensitivity')} checks the LLM judge; with {option('people_sample')} the "
            "decision is made on the people's estimate, valid whatever the judge does (the "
            f"people's gates apply instead): drop {option('sensitivity')}"
        )
    if sequential:
        raise BadInput(
            f"{option('sequential')} with {option('people_sample')}: the people's estimate is "
            f"read once the sample is judged, not sequentially; drop {option('sequential')}"
        )


def _similar(
    pd0: float,
    champion: str,
    estimand: str | None,
    plan_true: float | None,
    plan_ties: float | None,
    sensitivity: int,
) -> DecisionSpec:
    if estimand is not None and estimand != "pd":
        raise BadInput(
            f"{option('estimand')} {estimand} is for preference rules; similar:PD0 decides on the "
            f"proportion of discriminators (pd): drop {option('estimand')}"
        )
    if sensitivity:
        raise BadInput(
            f"{option('sensitivity')} plants preference comparisons; a similar:PD0 decision "
            "needs none "
            "(the triangle and pair tests have no ties to pull toward chance): drop "
            f"{option('sensitivity')}"
        )
    if plan_ties is not None:
        raise BadInput(
            f"{option('plan_ties')} is for preference rules (pd has no ties): drop "
            f"{option('plan_ties')}"
        )
    true = 0.0 if plan_true is None else plan_true
    if not 0 <= true < pd0:
        raise BadInput(
            f"{option('plan_true')} (the planning pd) must be in [0, {pd0:g}), got {true}"
        )
    return DecisionSpec("similar", pd0, "pd", champion, true, 0.0)


def decision_line(spec: DecisionSpec, comparisons: int, alpha: float) -> str:
    """bt-design's line for a design with a decision: the claim, and its exact power with
    this many comparisons per challenger at the planning values, with the n that reaches the
    planned power (`blindtest.stats.sizing`; for similar:PD0, ``bt-plan --similarity``)."""
    from blindtest.reportfmt import fixed
    from blindtest.stats.sizing import decision_power, decision_sample_size

    rule = spec.rule if spec.rule == "superior" else f"{spec.rule}:{spec.margin:g}"
    head = f"decision {rule} against the champion {spec.champion}"
    sensitivity = (
        f"; a sensitivity check of {spec.sensitivity} planted comparisons"
        if spec.sensitivity
        else (
            "; no sensitivity check, so a non-inferiority or equivalence claim will not be "
            "shown (add --sensitivity N)"
            if spec.rule in ("noninferior", "equivalent")
            else ""
        )
    )
    if spec.rule == "similar":
        return f"{head}{sensitivity}; plan it with bt-plan --similarity {spec.margin:g}"
    if spec.estimand == PEOPLE_ESTIMAND:
        margin_words = "" if spec.rule == "superior" else f" --margin {spec.margin:g}"
        return (
            f"{head} on the people's prediction-powered estimate of their mean score (a tie "
            "as half a win; the margin on that scale), with no sensitivity check: the estimate "
            "is valid whatever the LLM judge does, and the people's gates apply; size the "
            f"people's sample with bt-plan --people-sample {comparisons} --agreement SHARE"
            f"{margin_words} --power {spec.power:g}"
        )
    margin = None if spec.rule == "superior" else spec.margin
    name: Any = spec.rule
    at = f"true share {spec.plan_true:g}, ties {spec.plan_ties:g}"
    power = float(
        decision_power(comparisons, name, margin, true=spec.plan_true, ties=spec.plan_ties,
                       alpha=alpha)[0]
    )  # fmt: skip
    size = decision_sample_size(
        name, margin, true=spec.plan_true, ties=spec.plan_ties, power=spec.power, alpha=alpha
    )
    needs = (
        f"{size.smallest_n:,} reach power {spec.power:g}"
        if size.smallest_n is not None
        else f"no n up to {size.searched_to:,} reaches power {spec.power:g}"
    )
    return (
        f"{head}{sensitivity}: with {comparisons:,} comparisons per challenger, power "
        f"{fixed(power, 2)} at the planning values ({at}); {needs} (bt-plan --decide {rule})"
    )


def per_challenger(design: Mapping[str, Any], champion: str) -> int:
    """The fewest real comparisons any challenger has with the champion."""
    counts: dict[str, int] = {}
    for entry in design["arrangement"]:
        if "planted" in entry or "control" in entry:
            continue
        sides = {str(entry["left"]), str(entry.get("right", ""))}
        if champion in sides:
            other = next(iter(sides - {champion}), "")
            counts[other] = counts.get(other, 0) + 1
    return min(counts.values(), default=0)
