"""Sequential decisions: stop the moment an anytime-valid confidence sequence crosses a margin.

The confidence sequence is Waudby-Smith and Ramdas's (2024) betting sequence for a mean in
[0, 1] (`blindtest.stats.betting`, the predictable plug-in stakes for a sequence), two-sided
at ``1 - 2 alpha``: one wealth process per side and boundary, each at level ``alpha``, so each
one-sided claim has a false-claim probability of at most ``alpha`` over all time, whenever
the analyst looks and stops (Ville's inequality; Howard, Ramdas, McAuliffe and Sekhon 2021).

**One observation** is one comparison's score: the mean over its judges of 1 (challenger
preferred), 1/2 (tie) or 0, an LLM judge's two swap passes counting as one verdict (passes that
disagree read as a tie). For the ``untied-share`` estimand a comparison whose score is exactly
1/2 is skipped (it says nothing about the untied share), so t counts untied comparisons; for
``mean-score`` every comparison is an observation. The order is the order comparisons were
judged (for a panel, a comparison enters once all its judges have scored it).

**Outcomes.** The claim of the rule (`blindtest.stats.decision`) is "shown" at the first t at
which its wealth reaches ``1/alpha`` (equivalence: once both of its one-sided processes have,
each at its own time); "refuted" at the first t at which the opposite one does (the sequence
has crossed the margin the other way; for equivalence, either side). A stop for futility (the
pre-registered maximum reached, or the analyst stopping) is "not_shown", never a refutation.
If the claim and its refutation were to cross at the same comparison (the scores drift), the
outcome is "not_shown". The interval reported at the stop is the running intersection of the
sequence up to it. Pure; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from blindtest.stats.betting import (
    BettingSide,
    betting_bound,
    betting_log_wealth,
    first_crossing,
)
from blindtest.stats.decision import (
    ESTIMANDS,
    DecisionRule,
    Estimand,
    _check_scores,
    _margins,
    _tie_mask,
    parse_rule,
)
from blindtest.stats.intervals import (
    Interval,
    _check_alpha,
    _check_choice,
    _check_int,
    result_to_dict,
)

__all__ = ["SequentialDecisionResult", "crossing_times", "sequential_decision"]

Ints = npt.NDArray[np.int64]
_NEVER = np.iinfo(np.int64).max


@dataclass(frozen=True, slots=True)
class SequentialDecisionResult:
    """A sequential decision.

    ``comparisons`` seen and ``observations`` used (untied ones for the untied share) up to
    the stop; ``stopped_at`` is the 1-based comparison at which the decision was made (None
    when no crossing); ``stop`` is ``"shown"``, ``"refuted"``, ``"max_comparisons"`` (the
    cap reached: futility) or ``"ended"`` (the scores ran out, or the claim and refutation
    crossed together); ``outcome`` in `blindtest.stats.decision.OUTCOMES`. ``interval``: the
    running intersection of the ``interval_level`` (1 - 2 alpha) confidence sequence at the
    stop. ``e_value``: the claim's wealth at the stop (for equivalence the smaller of the
    running maxima of its two processes); ``e_refute``: the larger of the refutations'.
    """

    rule: str
    margin: float
    alpha: float
    estimand: str
    unit: str
    observation: str
    lower: float | None
    upper: float | None
    comparisons: int
    observations: int
    max_comparisons: int | None
    stopped_at: int | None
    stop: str
    outcome: str
    direction: str
    estimate: float
    interval: Interval
    interval_level: float
    e_value: float
    e_refute: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


Process = tuple[float, BettingSide]


def _processes(rule: DecisionRule) -> tuple[tuple[Process, ...], tuple[Process, ...]]:
    """(claim processes, refutation processes) as (null mean, side) pairs."""
    lower, upper = _margins(rule)
    if rule.rule != "equivalent":
        return ((lower, "above"),), ((lower, "below"),)
    return ((lower, "above"), (upper, "below")), ((lower, "below"), (upper, "above"))


def crossing_times(
    x: npt.ArrayLike,
    rule: str | DecisionRule,
    *,
    alpha: float = 0.05,
    lengths: npt.ArrayLike | None = None,
) -> tuple[Ints, Ints, Ints]:
    """Vectorised over runs (rows of ``x``, observations along the last axis): the 1-based
    observation at which the claim is shown (0 if never), at which it is refuted (0 if
    never), and the refutation's direction (0 below the margin, 1 above). ``lengths`` gives
    each row's number of real observations (the rest is padding). For simulation."""
    parsed = parse_rule(rule)
    alpha_value = _check_alpha(alpha)
    scores = np.atleast_2d(np.asarray(x, dtype=np.float64))
    valid = None
    if lengths is not None:
        count = np.asarray(lengths, dtype=np.int64).reshape(-1, 1)
        valid = np.arange(scores.shape[-1])[None, :] < count
    claims, refutes = _processes(parsed)

    def times(pairs: tuple[Process, ...]) -> Ints:
        out = []
        for m, side in pairs:
            wealth = betting_log_wealth(scores, m, alpha=alpha_value, side=side, valid=valid)
            first = first_crossing(wealth, alpha_value)
            out.append(np.where(first > 0, first, _NEVER))
        return np.asarray(np.stack(out), dtype=np.int64)

    claim_times = np.max(times(claims), axis=0)
    refute_each = times(refutes)
    refute_times = np.min(refute_each, axis=0)
    direction = np.argmin(refute_each, axis=0)
    return (
        np.asarray(np.where(claim_times == _NEVER, 0, claim_times), dtype=np.int64),
        np.asarray(np.where(refute_times == _NEVER, 0, refute_times), dtype=np.int64),
        np.asarray(direction, dtype=np.int64),
    )


def sequential_decision(
    scores: npt.ArrayLike,
    rule: str | DecisionRule,
    *,
    alpha: float = 0.05,
    estimand: Estimand = "untied-share",
    judges: int | Sequence[int] = 1,
    max_comparisons: int | None = None,
) -> SequentialDecisionResult:
    """Read the comparisons' scores in the order they were judged and stop at the first
    crossing (see the module docstring). ``max_comparisons`` is the pre-registered cap:
    reaching it without a crossing is a futility stop; scores past it are not read."""
    parsed = parse_rule(rule)
    if parsed.rule == "similar":
        raise ValueError(
            "similar:PD0 has no sequential form here; use superior, noninferior or equivalent"
        )
    alpha_value = _check_alpha(alpha)
    if alpha_value >= 0.5:
        raise ValueError(f"alpha must be below 0.5 (the sequence is 1 - 2 alpha), got {alpha!r}")
    _check_choice("estimand", estimand, ESTIMANDS)
    cap = None if max_comparisons is None else _check_int("max_comparisons", max_comparisons, 1)
    values, _ = _check_scores(scores, judges)
    if cap is not None:
        values = values[:cap]
    keep = ~_tie_mask(values) if estimand == "untied-share" else np.ones(values.size, dtype=bool)
    positions = np.flatnonzero(keep) + 1  # the comparison each observation is
    x = values[keep]
    if x.size:
        claim_t, refute_t, direction = (
            int(v[0]) for v in crossing_times(x, parsed, alpha=alpha_value)
        )
    else:
        claim_t, refute_t, direction = 0, 0, 0
    if claim_t and (not refute_t or claim_t < refute_t):
        stop, outcome, used = "shown", "shown", claim_t
    elif refute_t and (not claim_t or refute_t < claim_t):
        stop, outcome, used = "refuted", "refuted", refute_t
    else:
        used = int(x.size)
        stop = (
            "max_comparisons" if cap is not None and values.size >= cap and not claim_t else "ended"
        )
        outcome = "not_shown"
    seen = int(positions[used - 1]) if used and stop in ("shown", "refuted") else int(values.size)
    window = x[:used]
    claims, refutes = _processes(parsed)

    def peak(pairs: tuple[Process, ...], combine: Any) -> float:
        if window.size == 0:
            return 1.0
        peaks = [
            float(np.max(betting_log_wealth(window, m, alpha=alpha_value, side=side)))
            for m, side in pairs
        ]
        # The wealth starts at 1 before the first observation.
        return math.exp(min(700.0, max(0.0, combine(peaks))))

    lo = betting_bound(window, alpha=alpha_value, side="above", horizon=None)
    hi = betting_bound(window, alpha=alpha_value, side="below", horizon=None)
    estimate = float(window.mean()) if window.size else math.nan
    return SequentialDecisionResult(
        rule=parsed.rule,
        margin=parsed.margin,
        alpha=alpha_value,
        estimand=estimand,
        unit="comparison",
        observation=(
            "one untied comparison's score (its judges' mean; ties skipped)"
            if estimand == "untied-share"
            else "one comparison's score (its judges' mean; a tie is 1/2)"
        ),
        lower=parsed.lower,
        upper=parsed.upper,
        comparisons=seen,
        observations=used,
        max_comparisons=cap,
        stopped_at=seen if stop in ("shown", "refuted") else None,
        stop=stop,
        outcome=outcome,
        direction="above" if direction == 1 else "below",
        estimate=estimate,
        interval=Interval(estimate, lo, hi),
        interval_level=1.0 - 2.0 * alpha_value,
        e_value=peak(claims, min),
        e_refute=peak(refutes, max),
    )
