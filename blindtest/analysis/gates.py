"""The gates of a preference run (spec 002) and the figures they read, for every number of
candidates: the position gate over comparisons with a margin, panel agreement coded by
position with the near-chance rule (and per pair of candidates beside it), and the sentences a
failed gate is said in (``gates_failed``; `blindtest.analysis.warnings` gives each a code).

**Position** (:func:`position_check`): every pick of every judge and pass is a position pick,
``left``, ``right`` or ``tie`` (:func:`position_of`: a person's or a bot's pick as made; an LLM
judge's pass as it was shown in that pass, left being the output shown first), the hidden
controls' picks beside the real ones (a comparison is a comparison: under no position effect a
control's picks mirror with its placement as a real one's do). The unit is the comparison
(`blindtest.stats.position.position_gate`): its left share is the mean over comparisons of each
one's share of left picks, tested by the exact sign-flip test over comparisons, with Korn and
Graubard's clustered interval; ``fail`` (the gate: exit 1) when the ``1 - alpha`` interval lies
wholly beyond 1/2 +- margin, ``pass`` when the ``1 - 2 alpha`` interval lies inside it, ``warn``
otherwise (a serious warning when a lean is shown, a notice when the comparisons are too few
to bound it). The margin is the design's (``bt-design --position-margin``), else the one given
to the analysis, else `blindtest.stats.position.POSITION_MARGIN`
(`blindtest.analysis.common.position_margin`).

Triangle and pair have no left and right: a triangle's odd position is drawn uniformly, so a
judge's taste for a position cannot make the odd one look found (the test stays exact, and a
panel's randomization test conditions on each judge's picks per position); a pair judge names
nicknames, not positions. Neither has a position gate; an LLM triangle judge's first-position
share is a diagnostic (`blindtest.analysis.llm_diagnostics`).

**Agreement** (:func:`agreement`): Krippendorff's alpha over the comparisons two or more judges
saw, picks coded by position (so chance agreement does not grow with the effect), through
`blindtest.stats.agreement.agreement_gate`: the gate fails when alpha's bootstrap interval
reaches 0 (not distinguishable from chance), or, with ``--min-kappa`` (a stricter rule the
user chooses), when alpha is below it; a unanimous panel passes. From three candidates each
pair of candidates gets its own alpha beside the pooled one
(`blindtest.stats.agreement.agreement_by_pair`): a description, gating nothing.

Pure; opens no file.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from blindtest.analysis.common import MIN_SHARED_TRIALS, AnalysisOptions, planned_trials
from blindtest.analysis.llm_diagnostics import shown_position
from blindtest.model.candidates import comparison_sides
from blindtest.model.rng import IndexStream
from blindtest.model.scoring import arrangement_entry
from blindtest.reportfmt import count, format_p
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord
from blindtest.stats import AGREEMENT_CAVEAT, kappa_with_se, percent_agreement
from blindtest.stats.agreement import agreement_by_pair, agreement_gate
from blindtest.stats.position import PositionGateResult, position_gate, tally_positions

if TYPE_CHECKING:
    from blindtest.model.picks import Pick

__all__ = [
    "AGREEMENT_METHOD",
    "AGREEMENT_PAIRS_STREAM",
    "AGREEMENT_STREAM",
    "GATE_AGREEMENT",
    "GATE_AGREEMENT_UNMEASURED",
    "GATE_NOTHING_COUNTED",
    "GATE_POSITION",
    "GATE_UNSURE",
    "PositionCheck",
    "agreement",
    "gate_problems",
    "per_judge_needed",
    "position_check",
    "position_of",
]

#: How each gate's message starts: the warnings name a failed gate by it
#: (`blindtest.analysis.warnings`).
GATE_POSITION = "position bias: "
GATE_AGREEMENT = "agreement: "
GATE_AGREEMENT_UNMEASURED = "agreement is not measured: "
GATE_NOTHING_COUNTED = "excluded: "
#: An LLM judge whose every verdict fell below --min-confidence
#: (`blindtest.analysis.llm_diagnostics.unsure_gate`).
GATE_UNSURE = "unsure: "

#: The labels of the agreement bootstraps' index streams (with the design seed).
AGREEMENT_STREAM = "agreement"
AGREEMENT_PAIRS_STREAM = "agreement by pair"

AGREEMENT_METHOD = (
    "Krippendorff's alpha, nominal (the answer on the left preferred, the one on the right, or "
    "tie: every judge saw a comparison in the same positions); comparisons one judge saw drop "
    "out; the gate fails when its bootstrap interval reaches 0 (not distinguishable from chance)"
)
POSITION_METHOD = (
    "the left share: each comparison's share of left picks among its untied picks (every judge "
    "and every pass of the position swap, an LLM judge's pass read as it was shown), averaged "
    "over comparisons; the exact sign-flip test over comparisons; Korn and Graubard's clustered "
    "interval; pass when the 1 - 2 alpha interval lies inside 1/2 +- margin, fail when the "
    "1 - alpha interval lies wholly outside it, warn otherwise (two one-sided tests)"
)


# --------------------------------------------------------------------------- position


def position_of(pick: Pick) -> str:
    """The position a pick named (`blindtest.analysis.llm_diagnostics.shown_position`): an LLM
    judge's pass as it was shown in that pass, anyone else's pick as made."""
    record = {**pick.extra, "pass": pick.pass_number, "pick": pick.pick}
    return shown_position(record, llm=pick.kind == "llm")


def _percent(value: float) -> str:
    """A share near one half, to a tenth of a point (50.6%)."""
    return f"{100 * value:.1f}%"


def _level(alpha: float) -> str:
    return f"{100 * (1 - alpha):g}%"


@dataclass(frozen=True, slots=True)
class PositionCheck:
    """The position gate of a run (module doc): ``gate`` over every comparison with a position
    pick, ``controls`` of them hidden controls; ``judges`` how many judges picked (for the
    words)."""

    gate: PositionGateResult
    controls: int
    judges: int

    @property
    def verdict(self) -> str:
        return self.gate.verdict

    def _lean(self) -> str:
        return "left" if self.gate.share.estimate > 0.5 else "right"

    def _where(self) -> str:
        gate = self.gate
        inside = f", {self.controls} of them hidden controls" if self.controls else ""
        return (
            f"over {count(gate.comparisons, 'comparison')}{inside} "
            f"({count(gate.picks, 'untied pick')}, each comparison counted once)"
        )

    def _bounds(self) -> str:
        m = self.gate.margin
        return f"{_percent(0.5 - m)} to {_percent(0.5 + m)}"

    def statement(self) -> str:
        """The screen's position line: the left share, and what the gate made of it."""
        gate = self.gate
        share, tost = gate.share, gate.share_tost
        head = (
            f"Position: left chosen in {_percent(share.estimate)} of untied picks {self._where()}"
        )
        sign = f"sign-flip test over comparisons {format_p(gate.p_value)}"
        if gate.verdict == "pass":
            return (
                f"{head}; its {_level(2 * gate.alpha)} interval {_percent(tost.lo)} to "
                f"{_percent(tost.hi)} lies within {self._bounds()} (the margin): position "
                "decided few picks, if any."
            )
        interval = f"{_level(gate.alpha)} interval {_percent(share.lo)} to {_percent(share.hi)}"
        if gate.verdict == "fail":
            return f"{head}; its {interval} lies beyond {self._bounds()} ({sign})."
        if gate.significant:
            return (
                f"{head}: a lean to the {self._lean()} ({sign}), not shown beyond "
                f"{self._bounds()} ({interval}). Position decided some picks, which pulls every "
                "win rate toward half; a serious warning, not a failed gate."
            )
        return (
            f"{head}: no lean shown ({sign}), but too few comparisons to bound it within "
            f"{self._bounds()} ({interval}): a note, not a fault."
        )

    def gate_message(self) -> str | None:
        """The failed gate's sentence (None unless the verdict is ``fail``)."""
        if self.gate.verdict != "fail":
            return None
        gate = self.gate
        who, pronoun = ("the judge", "it") if self.judges == 1 else ("the judges", "they")
        share = gate.share
        return (
            f"{GATE_POSITION}{who} chose the output on the {self._lean()} in "
            f"{_percent(max(share.estimate, 1 - share.estimate))} of untied picks "
            f"{self._where()}; the {_level(gate.alpha)} interval of the left share, "
            f"{_percent(share.lo)} to {_percent(share.hi)}, lies beyond {self._bounds()} "
            f"(sign-flip test over comparisons {format_p(gate.p_value)}); {pronoun} responded "
            "to position, so every win rate here is void."
        )

    def to_dict(self) -> JsonObject:
        """``report["position_bias"]``: the gate's figures, the controls among its comparisons,
        the method and the screen's sentence."""
        return {
            **self.gate.to_dict(),
            "controls": self.controls,
            "method": POSITION_METHOD,
            "statement": self.statement(),
        }


def position_check(
    picks: Sequence[Pick],
    alpha: float,
    margin: float,
    *,
    controls: Collection[int] = (),
    judges: int = 1,
) -> PositionCheck | None:
    """The position gate over ``picks`` (every pass of every judge, the hidden controls'
    included: their trials in ``controls``); None when no comparison has an untied pick."""
    counts = tally_positions((p.trial, position_of(p)) for p in picks)
    if not any(a + b for a, b in zip(counts.left, counts.right, strict=True)):
        return None
    # The two one-sided tests take a 1 - 2 alpha interval: a design's alpha of 1/2 (the most
    # bt-design allows) reads as just below it.
    level = min(float(alpha), math.nextafter(0.5, 0.0))
    gate = position_gate(counts.left, counts.right, alpha=level, margin=margin)
    shown = {
        key
        for key, a, b in zip(counts.keys, counts.left, counts.right, strict=True)
        if key in controls and a + b
    }
    return PositionCheck(gate=gate, controls=len(shown), judges=judges)


# --------------------------------------------------------------------------- agreement


def per_judge_needed(judges: int, trials: int, shared: int) -> int:
    """The ``--per-judge`` under which ``judges`` reviewers dealt round the ring of ``trials``
    (blindtest.model.assignment) give ``shared`` trials two or more reviewers: N x judges places
    cover the ring once and then min(trials, N x judges - trials) trials a second time."""
    return min(trials, -(-(trials + shared) // judges))


def _trials(n: int) -> str:
    return {0: "No trial was", 1: "Only 1 trial was"}.get(n, f"Only {n} trials were")


def _candidate_pairs(
    design: DesignRecord,
    trials: Sequence[int],
    units: Sequence[Sequence[str]],
) -> list[JsonObject] | None:
    """From three candidates, agreement per pair of candidates (None for two: the pair is the
    pooled figure)."""
    names = {name for t in trials for name in comparison_sides(arrangement_entry(design, t))}
    if len(names) < 3:
        return None
    kept = [(t, u) for t, u in zip(trials, units, strict=True) if len(u) >= 2]
    if not kept:
        return []
    pairs = [comparison_sides(arrangement_entry(design, t)) for t, _ in kept]
    found = agreement_by_pair(
        [u for _, u in kept],
        pairs,
        rng=IndexStream(str(design["seed"]), AGREEMENT_PAIRS_STREAM),
    )
    return [
        {
            "candidates": list(one.pair),
            "comparisons": one.comparisons,
            "alpha": one.gate.alpha.to_dict(),
            "distinguishable": one.gate.distinguishable,
            "verdict": one.gate.verdict,
            "reason": one.gate.reason,
        }
        for one in found
    ]


def agreement(
    design: DesignRecord,
    judges: Mapping[str, Sequence[Pick]],
    options: AnalysisOptions | None = None,
) -> JsonObject | None:
    """Panel agreement over every comparison two or more judges saw, each pick coded by
    position (module doc): Krippendorff's alpha (nominal) with a bootstrap interval over those
    comparisons from the design's ``"agreement"`` stream and the near-chance gate (``gate``),
    percent agreement, Cohen's kappa for each pair of judges who share comparisons, and from
    three candidates alpha per pair of candidates (``candidate_pairs``). ``measurable`` is
    False when fewer than ``MIN_SHARED_TRIALS`` comparisons (every one, in a smaller design)
    were seen by two judges. None with one judge."""
    if len(judges) < 2:
        return None
    options = options or AnalysisOptions()
    names = sorted(judges)
    votes = {j: {p.trial: str(p.pick) for p in judges[j]} for j in names}
    trials = sorted({t for v in votes.values() for t in v})
    units = [[votes[j][t] for j in names if t in votes[j]] for t in trials]
    shared = [u for u in units if len(u) >= 2]
    planned = planned_trials(design)
    need = min(MIN_SHARED_TRIALS, planned)
    gate = agreement_gate(
        units,
        rng=IndexStream(str(design["seed"]), AGREEMENT_STREAM),
        min_alpha=options.min_kappa,
    )
    alpha = gate.alpha
    pairs = []
    for index, first in enumerate(names):
        for second in names[index + 1 :]:
            both = sorted(set(votes[first]) & set(votes[second]))
            if not both:
                continue
            kappa = kappa_with_se([votes[first][t] for t in both], [votes[second][t] for t in both])
            pairs.append({"judges": [first, second], **kappa.to_dict()})
    found: JsonObject = {
        "method": AGREEMENT_METHOD,
        "n_items": len(shared),
        "n_judges": len(names),
        "min_shared": need,
        "measurable": len(shared) >= need,
        "alpha": alpha.to_dict(),
        "gate": {
            "verdict": gate.verdict,
            "reason": gate.reason,
            "distinguishable": gate.distinguishable,
            "min_alpha": gate.min_alpha,
            "coding": gate.coding,
            "unit": gate.unit,
        },
        "percent": percent_agreement(shared).to_dict() if shared else None,
        "pairs": pairs,
        "candidate_pairs": _candidate_pairs(design, trials, units),
        "caveat": AGREEMENT_CAVEAT,
    }
    if len(shared) < need:
        per_judge = per_judge_needed(len(names), planned, need)
        found["per_judge_needed"] = per_judge
        found["statement"] = (
            f"{_trials(len(shared))} seen by two or more judges; agreement needs {need}. "
            f"Deal the {len(names)} judges --per-judge {per_judge} (of {planned} "
            "trials) so that it can be measured."
        )
    elif math.isnan(alpha.statistic):
        found["statement"] = (
            "Every judge gave the same answer on every shared trial: the panel is unanimous, "
            "so agreement by chance is already total and alpha is undefined."
        )
    return found


def _agreement_problem(found: Mapping[str, Any]) -> str | None:
    gate = found.get("gate") or {}
    if gate.get("verdict") != "fail":
        return None
    alpha = found["alpha"]
    estimate = alpha.get("statistic")
    shown = "undefined" if estimate is None else f"{estimate:.2f}"
    if gate.get("reason") == "below_min":
        return (
            f"{GATE_AGREEMENT}Krippendorff's alpha {shown} is below --min-kappa "
            f"{gate['min_alpha']:g}, the stricter rule chosen for this run; the panel agrees "
            "less than that rule asks."
        )
    interval = alpha.get("interval") or {}
    bounds = (
        f" (95% interval {interval['lo']:.2f} to {interval['hi']:.2f})"
        if interval.get("lo") is not None
        else ""
    )
    return (
        f"{GATE_AGREEMENT}Krippendorff's alpha {shown}{bounds}, picks coded by position, is not "
        "distinguishable from chance: the panel shows no signal its judges share, so the win "
        "rate cannot be told from noise however decisive it looks. A moderate preference needs "
        "a larger panel or more comparisons before agreement shows (docs/statistics.md)."
    )


def gate_problems(
    bias: PositionCheck | None,
    found: Mapping[str, Any] | None,
    *,
    judge_gates: Sequence[str] = (),
) -> list[str]:
    """Spec 002's gates, one sentence each: position (``bias``: its verdict ``fail``),
    agreement (``found``: not distinguishable from chance, below ``--min-kappa``, or too few
    comparisons shared to measure it; a unanimous panel passes), and the gates the judges' own
    diagnostics failed (``judge_gates``: an LLM judge's position gate, which names the judge
    and so replaces the pooled position sentence; a judge whose every verdict fell below
    --min-confidence)."""
    problems = []
    if bias is not None and (said := bias.gate_message()) is not None:
        problems.append(said)
    if found is not None and not found["measurable"]:
        problems.append(f"{GATE_AGREEMENT_UNMEASURED}{found['statement']}")
    elif found is not None and (said := _agreement_problem(found)) is not None:
        problems.append(said)
    if any(g.startswith(GATE_POSITION) for g in judge_gates):
        problems = [g for g in problems if not g.startswith(GATE_POSITION)]
    return [*judge_gates, *problems]
