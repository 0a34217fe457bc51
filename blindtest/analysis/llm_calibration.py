"""How a machine judge fares against what is known: the hidden control trials (the same model
on both sides, so there is nothing to find: is its non-tie rate on the real trials above the
controls'?) and a person's picks on the same trials (agreement and Cohen's kappa, spec 003's
advice to calibrate the judge on human labels).

The unit is the comparison, as in :mod:`blindtest.analysis.llm_diagnostics`, whose position
split and reading of the passes this shares. Pure: records in, a frozen result out. No file,
no network, no click.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blindtest.analysis.llm_diagnostics import (
    POSITION_ALPHA,
    PositionSplit,
    _comparisons,
    _plain,
    _position,
    shown_position,
)
from blindtest.stats.controls import (
    ControlsDescription,
    NonTieComparisonResult,
    compare_non_tie,
    describe_controls,
)
from blindtest.stats.position import tally_positions

__all__ = [
    "AgreementResult",
    "ControlResult",
    "control_result",
    "describe",
    "kappa_interval",
    "machine_vs_person",
]


# --------------------------------------------------------------------------- hidden controls


@dataclass(frozen=True, slots=True)
class ControlResult:
    """One judge on the hidden control trials: the same model on both sides, so there is
    nothing to find. The unit is the comparison (one judge's verdict on one trial; an LLM
    judge's two passes of the swap are one comparison, read as the real trials read them).

    ``controls`` comparisons were judged, ``excluded`` of them left out by the rule that
    leaves real comparisons out (identity leakage, ``--inconsistent exclude``); ``non_tie`` of
    the rest named an output in the comparison's verdict (an LLM judge's pass-1 record, after
    the swap and confidence rules: passes that disagree, or a confidence below
    --min-confidence, make a tie, as on the real trials); ``low_confidence`` the comparisons
    made ties by --min-confidence. ``position`` is where the comparisons went by position
    (:class:`PositionSplit`, the split the real trials' diagnostics use), and ``description``
    the judge's tie rate and left share over its picks (every pass), each a share over
    comparisons with its clustered interval. ``real_n`` and ``real_non_tie`` are the same
    judge's counted real comparisons and their non-ties, for
    :func:`blindtest.stats.compare_non_tie`, a description that decides nothing; ``p_holm``
    that test's p Holm-adjusted across the judges tested, ``alpha`` the design's level.
    ``verdicts`` counts the records read (every pass), for the record only."""

    judge: str
    kind: str | None
    controls: int
    verdicts: int
    excluded: int
    non_tie: int
    low_confidence: int | None
    position: PositionSplit
    real_n: int = 0
    real_non_tie: int = 0
    p_holm: float | None = None
    alpha: float = POSITION_ALPHA
    #: What the judge did where nothing differs (`blindtest.stats.controls.describe_controls`
    #: over its picks, every pass): tie rate and left share over comparisons.
    description: ControlsDescription | None = None

    @property
    def counted(self) -> int:
        return self.controls - self.excluded

    def comparison(self) -> NonTieComparisonResult:
        """The one-sided Fisher comparison of the real and control non-tie rates."""
        return compare_non_tie(self.real_non_tie, self.real_n, self.non_tie, self.counted)

    @property
    def distinguishable(self) -> bool | None:
        """True when the real trials' non-tie rate is shown above the controls' at ``alpha``
        (Holm-adjusted across judges), False when not, None when too few to test. Descriptive:
        no verdict depends on it."""
        p = self.p_holm if self.p_holm is not None else self.comparison().p_value
        return None if p is None else p <= self.alpha

    def to_dict(self) -> dict[str, Any]:
        comparison = self.comparison()
        split = self.position
        rate = comparison.control_rate()
        found = comparison.summary()
        found["p_holm"] = self.p_holm
        found["alpha"] = self.alpha
        found["distinguishable"] = self.distinguishable
        found["decides"] = "nothing: a description of the judge's calibration"
        swapped = self.kind == "llm" and split.swapped
        return {
            "judge": self.judge,
            "judge_kind": self.kind,
            "controls": self.controls,
            "unit": (
                "comparisons (the two passes of the position swap read as one verdict)"
                if swapped
                else "comparisons (one verdict each)"
            ),
            "verdicts": self.verdicts,
            "excluded": self.excluded,
            "counted": self.counted,
            "non_tie": self.non_tie,
            "share_non_tie": self.non_tie / self.counted if self.counted else None,
            "non_tie_rate": rate.to_dict() if rate is not None else None,
            "low_confidence": self.low_confidence,
            "position": split.to_dict(),
            # The first position's share of the comparisons position went with, its exact
            # test against 1/2 and interval (the position split's figures, by comparison).
            "left": split.first,
            "share_left": split.share_first.estimate if split.share_first else None,
            "interval": _plain(split.share_first),
            "p_value": split.p_value,
            "description": self.description.to_dict() if self.description is not None else None,
            "real_vs_controls": found,
        }


def _control_position(
    kind: str | None, comparisons: Sequence[Sequence[Mapping[str, Any]]]
) -> PositionSplit:
    if kind == "llm":
        swapped = any(len(c) > 1 for c in comparisons)
        return _position("preference", comparisons, swapped)
    picks = [str(c[-1].get("pick")) for c in comparisons]
    return PositionSplit(
        swapped=False,
        comparisons=len(picks),
        inconsistent=None,
        first=picks.count("left"),
        second=picks.count("right"),
    )


def control_result(
    judge: str,
    kind: str | None,
    records: Sequence[Mapping[str, Any]],
    *,
    real: Sequence[Mapping[str, Any]] = (),
    alpha: float = POSITION_ALPHA,
) -> ControlResult:
    """``judge``'s results on the control trials from its pick records there (an LLM judge's
    records of every pass; another judge's last word per trial), with ``real`` its counted
    pick records on the real trials (an LLM judge's pass-1 records, excluded ones left out)."""
    comparisons = _comparisons(records)
    verdicts = [c[0] for c in comparisons]  # pass 1 holds the comparison's verdict
    llm = kind == "llm"
    excluded = [bool(r.get("excluded")) if llm else False for r in verdicts]
    counted = [r for r, out in zip(verdicts, excluded, strict=True) if not out]
    low = sum("low_confidence" in (r.get("flagged") or ()) for r in counted) if llm else None
    return ControlResult(
        judge=judge,
        kind=kind,
        controls=len(comparisons),
        verdicts=len(records),
        excluded=sum(excluded),
        non_tie=sum(str(r.get("pick")) != "tie" for r in counted),
        low_confidence=low,
        position=_control_position(kind, comparisons),
        real_n=len(real),
        real_non_tie=sum(str(r.get("pick")) != "tie" for r in real),
        alpha=alpha,
        description=describe((int(r["trial"]), shown_position(r, llm)) for r in records),
    )


def describe(picks: Iterable[tuple[int, str]]) -> ControlsDescription | None:
    """`blindtest.stats.controls.describe_controls` over ``(trial, position)`` picks (every
    judge and pass), None without a pick."""
    counts = tally_positions(picks)
    if not counts.keys:
        return None
    return describe_controls(counts.left, counts.right, counts.ties)


# --------------------------------------------------------------------------- machine vs person


@dataclass(frozen=True, slots=True)
class AgreementResult:
    """How often a machine judge and a person gave the same pick on the trials both judged,
    and Cohen's kappa with a large-sample interval (spec 003's advice to calibrate the judge on
    human labels)."""

    machine: str
    person: str
    n: int
    agreed: int
    statistic: float
    lo: float
    hi: float
    confidence_level: float

    def to_dict(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {
            "machine": self.machine,
            "person": self.person,
            "n": self.n,
            "agreed": self.agreed,
            "kappa": {"estimate": num(self.statistic), "lo": num(self.lo), "hi": num(self.hi)},
            "confidence_level": self.confidence_level,
        }


def kappa_interval(
    first: Sequence[Any], second: Sequence[Any], confidence_level: float = 0.95
) -> tuple[float, float, float, float, float]:
    """Cohen's kappa and its interval kappa +- z * SE with Fleiss, Cohen and Everitt's (1969)
    large-sample standard error (`blindtest.stats.kappa_with_se`), clipped to [-1, 1].

    Returns (kappa, lo, hi, po, pe); the bounds are NaN where that interval does not apply
    (one shared trial, agreement on every trial, no spread), and kappa too when pe = 1 (every
    label the same: agreement by chance is already perfect)."""
    from blindtest.stats.agreement import kappa_with_se

    found = kappa_with_se(first, second, confidence_level=confidence_level)
    lo, hi = (found.interval.lo, found.interval.hi) if found.interval else (math.nan, math.nan)
    return found.statistic, lo, hi, found.observed, found.expected


def machine_vs_person(
    machine: str,
    person: str,
    machine_picks: Mapping[int, Any],
    person_picks: Mapping[int, Any],
    confidence_level: float = 0.95,
) -> AgreementResult | None:
    """Agreement on the trials both judged (picks by trial number), or None when none."""
    trials = sorted(set(machine_picks) & set(person_picks))
    if not trials:
        return None
    first = [machine_picks[t] for t in trials]
    second = [person_picks[t] for t in trials]
    kappa, lo, hi, _, _ = kappa_interval(first, second, confidence_level)
    agreed = sum(a == b for a, b in zip(first, second, strict=True))
    return AgreementResult(machine, person, len(trials), agreed, kappa, lo, hi, confidence_level)
