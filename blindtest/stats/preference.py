"""Preference mode: the blind-panel verdict rule (spec 002) and the two-task margin (spec 001).

A directional verdict needs all three of: the Wilson interval of the win rate excludes 1/2,
the exact two-sided binomial test reaches alpha (``p <= alpha``), and the margin
``|wins - losses|`` is at least two tasks. Anything else is "inconclusive". Ties are counted and
reported but excluded from the win rate and from both tests: a tie says nothing about which
candidate is preferred. Pure functions; no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from blindtest.stats.binomial import binomial_p_value
from blindtest.stats.intervals import (
    Interval,
    _check_alpha,
    _check_confidence,
    _check_int,
    result_to_dict,
    wilson,
)

__all__ = ["MIN_MARGIN", "PreferenceResult", "Verdict", "preference_test"]

Verdict = Literal["better", "worse", "inconclusive"]

# Spec 001: "no conclusion from a margin smaller than two tasks".
MIN_MARGIN = 2


@dataclass(frozen=True, slots=True)
class PreferenceResult:
    """Blind-panel preference result for the candidate whose wins are counted.

    ``n = wins + losses`` (ties excluded); ``statistic`` is the win rate wins / n (NaN, null in
    JSON, when every comparison tied); ``win_rate`` carries the two-sided Wilson interval;
    ``p_value`` is the exact two-sided binomial test against 1/2. ``verdict`` is "better" or
    "worse" only when ``interval_excludes_half``, ``significant`` and ``margin_ok`` all hold.
    """

    wins: int
    losses: int
    ties: int
    n: int
    statistic: float
    p_value: float
    win_rate: Interval
    alpha: float
    confidence_level: float
    interval_excludes_half: bool
    significant: bool
    margin: int
    margin_ok: bool
    verdict: str
    interval_method: str = "wilson"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values; an undefined win rate is null."""
        return result_to_dict(self)


def preference_test(
    wins: int,
    losses: int,
    ties: int = 0,
    *,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
) -> PreferenceResult:
    """Win rate with a Wilson interval, exact two-sided p and the spec 001/002 verdict.

    Ties are excluded from the win rate (it is wins / (wins + losses)) and from the tests.
    Spec 002's table holds: 4/4 -> [0.510, 1.000], p = 0.125, inconclusive; 80/110 ->
    [0.637, 0.802], p = 0.000002, better; 0/20 -> [0.000, 0.161], p = 0.000002, worse.
    """
    _check_int("wins", wins)
    _check_int("losses", losses)
    _check_int("ties", ties)
    level = _check_confidence(confidence_level)
    alpha_value = _check_alpha(alpha)
    n = int(wins) + int(losses)
    margin = abs(int(wins) - int(losses))
    if n == 0:
        # Convention: with every comparison tied (or none made) the win rate is undefined and
        # every value in [0, 1] is consistent with the data; the test cannot reject.
        interval = Interval(math.nan, 0.0, 1.0)
        p_value = 1.0
    else:
        interval = wilson(wins, n, confidence_level=level)
        p_value = binomial_p_value(wins, n, 0.5, "two-sided")
    excludes_half = interval.lo > 0.5 or interval.hi < 0.5
    significant = p_value <= alpha_value
    margin_ok = margin >= MIN_MARGIN
    verdict: Verdict = "inconclusive"
    if excludes_half and significant and margin_ok:
        verdict = "better" if wins > losses else "worse"
    return PreferenceResult(
        wins=int(wins),
        losses=int(losses),
        ties=int(ties),
        n=n,
        statistic=interval.estimate,
        p_value=p_value,
        win_rate=interval,
        alpha=alpha_value,
        confidence_level=level,
        interval_excludes_half=excludes_half,
        significant=significant,
        margin=margin,
        margin_ok=margin_ok,
        verdict=verdict,
    )
