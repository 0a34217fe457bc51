"""Tests and confidence sequences for the mean of scores in [0, 1] by betting.

Waudby-Smith and Ramdas (2024), "Estimating means of bounded random variables by betting",
JRSS B 86(1): a gambler bets against the null mean ``m`` with stakes ``lambda_t`` fixed before
observation ``t``; the wealth ``K_t(m) = prod_{i <= t} (1 + lambda_i (x_i - m))`` is a
nonnegative martingale when the mean is ``m`` (a supermartingale when it is below ``m`` and
the stakes are nonnegative), so by Ville's inequality ``P(sup_t K_t >= 1/alpha) <= alpha``
whatever the law of the scores in [0, 1] (Howard, Ramdas, McAuliffe and Sekhon 2021, Annals
of Statistics 49(2), for the time-uniform framework). Nothing here assumes whole-number scores:
a panel's mean score such as 2/3 is an observation like any other.

* ``above``: the wealth of betting that the mean is above ``m``; its crossing of ``1/alpha``
  rejects ``H0: mean <= m``.
* ``below``: betting that the mean is below ``m``; rejects ``H0: mean >= m``.

Stakes are WSR's predictable plug-in empirical-Bernstein bets (their eqs. 26-27, the
"hedged capital" process): ``mu_t = (1/2 + sum_{i<=t} x_i) / (t + 1)``,
``s2_t = (1/4 + sum_{i<=t} (x_i - mu_i)^2) / (t + 1)``, and before observation ``t``

    lambda_t = sqrt(2 log(1/alpha) / (s2_{t-1} t log(1 + t)))     (a confidence sequence)
    lambda_t = sqrt(2 log(1/alpha) / (s2_{t-1} n))                (a test at a fixed n)

truncated at ``1/(2m)`` (``above``) or ``1/(2(1 - m))`` (``below``). Each factor then stays
at least 1/2, and the wealth is nonincreasing in ``m`` for ``above`` (nondecreasing for
``below``), so the set of ``m`` a crossing rejects is an interval and its end is found by
bisection. The running maximum of the wealth is a valid test too (Ville), so the fixed-n
p-value is ``min(1, 1 / max_{t <= n} K_t)`` and the running intersection of a confidence
sequence is the bisection of the running maximum. Pure; vectorised over leading axes; no I/O.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "BettingSide",
    "betting_bound",
    "betting_log_wealth",
    "betting_p_value",
]

BettingSide = Literal["above", "below"]
BETTING_SIDES: tuple[str, ...] = ("above", "below")
Floats = npt.NDArray[np.float64]

#: The stake is at most this share of what the null mean allows (WSR's truncation 1/2).
TRUNCATION = 0.5
#: Bisection steps for a bound: 2^-60 of the unit interval is below a double's resolution.
_BISECTION_STEPS = 60
#: Null means are kept this far inside (0, 1), where a stake of 1/(2m) is finite.
_EDGE = 1e-12


def _stakes(x: Floats, alpha: float, horizon: npt.ArrayLike | None) -> Floats:
    """WSR's predictable plug-in empirical-Bernstein stakes, before truncation."""
    t = np.arange(1, x.shape[-1] + 1, dtype=np.float64)
    mean = (0.5 + np.cumsum(x, axis=-1)) / (t + 1.0)
    spread = (0.25 + np.cumsum((x - mean) ** 2, axis=-1)) / (t + 1.0)
    previous = np.concatenate([np.full((*x.shape[:-1], 1), 0.25), spread[..., :-1]], axis=-1)
    scale = 2.0 * math.log(1.0 / alpha)
    if horizon is None:
        return np.asarray(np.sqrt(scale / (previous * t * np.log1p(t))), dtype=np.float64)
    count = np.asarray(horizon, dtype=np.float64)
    return np.asarray(np.sqrt(scale / (previous * np.maximum(count, 1.0))), dtype=np.float64)


def betting_log_wealth(
    x: npt.ArrayLike,
    m: npt.ArrayLike,
    *,
    alpha: float,
    side: BettingSide,
    horizon: npt.ArrayLike | None = None,
    valid: npt.ArrayLike | None = None,
) -> Floats:
    """``log K_t(m)`` for t = 1..n along the last axis of ``x`` (scores in [0, 1]).

    ``m`` broadcasts against ``x`` (pass ``m[..., None]`` for a grid of null means).
    ``horizon`` None gives the confidence-sequence stakes; a count (or an array of counts
    broadcasting as ``m`` does) gives the stakes tuned for a test at that many observations.
    ``valid`` (same shape as ``x``) marks real observations; the wealth does not move at the
    others, which must come after every real one in their row (padding for simulations).
    Arguments are not validated here (the callers have).
    """
    scores = np.asarray(x, dtype=np.float64)
    null = np.clip(np.asarray(m, dtype=np.float64), _EDGE, 1.0 - _EDGE)
    stakes = _stakes(scores, alpha, horizon)
    if side == "above":
        stake = np.minimum(stakes, TRUNCATION / null)
        factor = np.log1p(stake * (scores - null))
    else:
        stake = np.minimum(stakes, TRUNCATION / (1.0 - null))
        factor = np.log1p(-stake * (scores - null))
    if valid is not None:
        factor = np.where(np.asarray(valid, dtype=bool), factor, 0.0)
    return np.asarray(np.cumsum(factor, axis=-1), dtype=np.float64)


def betting_p_value(
    x: npt.ArrayLike, m: float, *, alpha: float, side: BettingSide, horizon: int | None
) -> float:
    # The wealth starts at 1 before the first observation: p is at most 1.
    """``min(1, 1 / max_t K_t(m))``: a valid p-value by Ville's inequality (1 with no data)."""
    scores = np.asarray(x, dtype=np.float64)
    if scores.size == 0:
        return 1.0
    peak = float(np.max(betting_log_wealth(scores, m, alpha=alpha, side=side, horizon=horizon)))
    return min(1.0, math.exp(-peak)) if peak > 0 else 1.0


def betting_bound(
    x: npt.ArrayLike, *, alpha: float, side: BettingSide, horizon: int | None
) -> float:
    """The end of the interval of null means not rejected at ``alpha`` by the running maximum
    of the wealth: the lower bound for ``above`` (every ``m`` below it is rejected), the upper
    bound for ``below``. 0 (or 1) when no null mean is rejected on that side; with no data 0
    (or 1)."""
    scores = np.asarray(x, dtype=np.float64)
    threshold = math.log(1.0 / alpha)
    if scores.size == 0:
        return 0.0 if side == "above" else 1.0

    def rejected(m: float) -> bool:
        wealth = betting_log_wealth(scores, m, alpha=alpha, side=side, horizon=horizon)
        return bool(np.max(wealth) >= threshold)

    # Rejected means lie below the bound ("above") or above it ("below").
    inner, outer = (_EDGE, 1.0 - _EDGE) if side == "above" else (1.0 - _EDGE, _EDGE)
    if not rejected(inner):
        return 0.0 if side == "above" else 1.0
    if rejected(outer):
        return 1.0 if side == "above" else 0.0
    for _ in range(_BISECTION_STEPS):
        middle = 0.5 * (inner + outer)
        if rejected(middle):
            inner = middle
        else:
            outer = middle
    return inner


def first_crossing(log_wealth: Floats, alpha: float) -> Any:
    """Per leading index, the first t (1-based) with ``log K_t >= log(1/alpha)``, or 0."""
    crossed = log_wealth >= math.log(1.0 / alpha)
    first = np.argmax(crossed, axis=-1) + 1
    return np.where(crossed.any(axis=-1), first, 0)
