"""Sequential triangle analysis: the mixture likelihood-ratio e-process for the 1/3 null.

After ``k`` correct of ``n`` trials the e-value is the likelihood ratio averaged over a uniform
prior on ``p`` in (1/3, 1] (Wald, 1945; Robbins, 1970; Ramdas, Grunwald, Vovk and Shafer, 2023):

    E(n, k) = (3/2) int_{1/3}^{1} p^k (1 - p)^(n - k) dp / ((1/3)^k (2/3)^(n - k))
            = (3/2) B(k+1, n-k+1) [1 - I_{1/3}(k+1, n-k+1)] 3^k (3/2)^(n - k).

It is a nonnegative martingale under the null with E(0, 0) = 1, so by Ville's inequality the
chance that it ever reaches ``1/alpha`` is at most ``alpha``: stopping the moment
``E >= 1/alpha`` is valid at any data-dependent stopping time. Everything is computed in log
space (scipy.special.betaln and betaincc); where the tail ``1 - I`` would fall below 1e-280
(k far below n/3, large n) its log comes from the binomial lower-tail series instead, so the
values stay finite and accurate to n = 10,000 and beyond. Pure functions; randomness only
through an explicit ``numpy.random.Generator``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import special

from blindtest.stats.intervals import (
    _check_alpha,
    _check_closed,
    _check_count,
    _check_int,
    result_to_dict,
)

__all__ = [
    "CrossingResult",
    "SequentialResult",
    "crossing_boundary",
    "crossing_distribution",
    "e_process",
    "log_e_value",
    "log_e_values",
    "simulate_crossings",
]

_LOG_3 = math.log(3.0)
_LOG_3_2 = math.log(1.5)
_LOG_1_3 = math.log(1.0 / 3.0)
_LOG_2_3 = math.log(2.0 / 3.0)
# Below this the tail is computed from its series: betaincc's result would be subnormal.
_TAIL_FLOOR = 1e-280


def _log_lower_tail_series(k: int, m: int) -> float:
    """``log P(Y <= k)`` for ``Y ~ Bin(m, 1/3)`` when k is far below m/3.

    ``log pmf(k) + log sum_i pmf(k - i) / pmf(k)``; successive ratios are
    ``pmf(j - 1) / pmf(j) = 2 j / (m - j + 1) < 1`` there, so the sum converges geometrically.
    """
    log_pmf = -math.log(m + 1) - float(special.betaln(k + 1, m - k + 1))
    log_pmf += k * _LOG_1_3 + (m - k) * _LOG_2_3
    total, term, j = 1.0, 1.0, k
    while j > 0:
        term *= 2.0 * j / (m - j + 1)
        total += term
        if term < 1e-17 * total:
            break
        j -= 1
    return log_pmf + math.log(total)


def _log_e(k: npt.NDArray[np.float64], n: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Vectorized log E(n, k) for validated arrays (0 <= k <= n)."""
    tail = special.betaincc(k + 1.0, n - k + 1.0, 1.0 / 3.0)
    with np.errstate(divide="ignore"):
        log_tail = np.log(tail)
    for index in np.flatnonzero(tail < _TAIL_FLOOR):
        log_tail.flat[index] = _log_lower_tail_series(int(k.flat[index]), int(n.flat[index]) + 1)
    return np.asarray(
        _LOG_3_2
        + special.betaln(k + 1.0, n - k + 1.0)
        + log_tail
        + k * _LOG_3
        + (n - k) * _LOG_3_2,
        dtype=np.float64,
    )


def log_e_value(correct: int, n: int) -> float:
    """Natural log of the mixture e-value after ``correct`` of ``n`` triangle trials.

    ``n = 0`` gives 0 (E = 1: no evidence yet).
    """
    _check_count("correct", correct, "n", n, n_min=0)
    return float(_log_e(np.array([float(correct)]), np.array([float(n)]))[0])


def log_e_values(n: int) -> npt.NDArray[np.float64]:
    """Vectorized helper: log E(n, k) for every k = 0..n (increasing in k)."""
    _check_int("n", n, 0)
    ks = np.arange(n + 1, dtype=np.float64)
    return _log_e(ks, np.full_like(ks, float(n)))


@dataclass(frozen=True, slots=True)
class SequentialResult:
    """The e-process over a sequence of triangle outcomes.

    ``log_e_values[t - 1]`` is log E after trial t. ``crossed_at`` is the first trial (1-based)
    with ``E >= 1/alpha`` or None; ``stopped`` says the stop rule fired. ``statistic`` is the
    e-value where the analysis ends (the crossing, else the last trial); ``p_value`` is the
    anytime-valid ``min(1, 1 / max_t E_t)`` over that stretch.
    """

    n: int
    correct: int
    alpha: float
    threshold: float
    log_e_values: tuple[float, ...]
    crossed_at: int | None
    stopped: bool
    statistic: float
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def e_process(outcomes: Sequence[bool], *, alpha: float = 0.05) -> SequentialResult:
    """Run the e-process over ``outcomes`` (True = correct) with the stop rule E >= 1/alpha."""
    alpha_value = _check_alpha(alpha)
    flags = []
    for index, outcome in enumerate(outcomes):
        if not isinstance(outcome, (bool, np.bool_)):
            raise ValueError(f"outcomes[{index}] must be True or False, got {outcome!r}")
        flags.append(bool(outcome))
    correct = np.cumsum(np.array(flags, dtype=np.float64))
    trials = np.arange(1, len(flags) + 1, dtype=np.float64)
    logs = _log_e(correct, trials) if flags else np.zeros(0)
    threshold = math.log(1.0 / alpha_value)
    hits = np.flatnonzero(logs >= threshold)
    crossed_at = int(hits[0]) + 1 if hits.size else None
    end = crossed_at if crossed_at is not None else len(flags)
    # E_0 = 1, so the running maximum is at least 1 and the p-value at most 1.
    best = max(0.0, float(np.max(logs[:end]))) if end else 0.0
    final = float(logs[end - 1]) if end else 0.0
    return SequentialResult(
        n=len(flags),
        correct=int(sum(flags)),
        alpha=alpha_value,
        threshold=1.0 / alpha_value,
        log_e_values=tuple(float(value) for value in logs),
        crossed_at=crossed_at,
        stopped=crossed_at is not None,
        statistic=math.exp(final),
        p_value=min(1.0, math.exp(-best)),
    )


def crossing_boundary(horizon: int, *, alpha: float = 0.05) -> tuple[int | None, ...]:
    """Smallest k with ``E(n, k) >= 1/alpha`` for each n = 0..horizon (None: cannot cross)."""
    return _boundary(_check_int("horizon", horizon, 0), _check_alpha(alpha))


@functools.lru_cache(maxsize=32)
def _boundary(horizon: int, alpha: float) -> tuple[int | None, ...]:
    # Pure and immutable, so memoized: planning and simulations ask for the same boundary.
    threshold = math.log(1.0 / alpha)
    boundary: list[int | None] = []
    for n in range(horizon + 1):
        hits = np.flatnonzero(log_e_values(n) >= threshold)
        boundary.append(int(hits[0]) if hits.size else None)
    return tuple(boundary)


def _boundary_array(horizon: int, alpha: float) -> npt.NDArray[np.int64]:
    """Boundary for n = 0..horizon with ``n + 1`` (unreachable) in place of None."""
    bounds = crossing_boundary(horizon, alpha=alpha)
    return np.array([n + 1 if b is None else b for n, b in enumerate(bounds)], dtype=np.int64)


@dataclass(frozen=True, slots=True)
class CrossingResult:
    """Exact distribution of the first crossing time over a finite horizon.

    ``first_crossing[n - 1]`` is P(the process first reaches 1/alpha at trial n) when each
    trial is correct with probability ``pc``; ``probability`` is their sum; ``median`` is the
    smallest n with P(T <= n) >= 1/2 (None if the horizon is too short).
    """

    pc: float
    horizon: int
    alpha: float
    boundary: tuple[int | None, ...]
    first_crossing: tuple[float, ...]
    probability: float
    median: int | None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def crossing_distribution(pc: float, horizon: int, *, alpha: float = 0.05) -> CrossingResult:
    """Exact first-crossing probabilities by dynamic programming over (n, k).

    The state is the count of correct trials among paths that have not yet crossed; each trial
    moves k to k + 1 with probability ``pc``, and mass at or above the boundary is absorbed.
    At ``pc = 1/3`` ``probability`` is the exact false-positive rate of a peeker who stops at
    the first crossing (at most alpha by Ville's inequality).
    """
    pc_value = _check_closed("pc", pc)
    limit = _check_int("horizon", horizon, 1)
    alpha_value = _check_alpha(alpha)
    boundary = crossing_boundary(limit, alpha=alpha_value)
    edges = _boundary_array(limit, alpha_value)
    alive = np.zeros(limit + 2)
    alive[0] = 1.0
    first = np.zeros(limit)
    for n in range(1, limit + 1):
        moved = alive * (1.0 - pc_value)
        moved[1:] += alive[:-1] * pc_value
        first[n - 1] = moved[edges[n] :].sum()
        moved[edges[n] :] = 0.0
        alive = moved
    cumulative = np.cumsum(first)
    reached = np.flatnonzero(cumulative >= 0.5)
    return CrossingResult(
        pc=pc_value,
        horizon=limit,
        alpha=alpha_value,
        boundary=boundary,
        first_crossing=tuple(float(value) for value in first),
        probability=float(cumulative[-1]),
        median=int(reached[0]) + 1 if reached.size else None,
    )


def simulate_crossings(
    pc: float,
    runs: int,
    horizon: int,
    *,
    alpha: float = 0.05,
    rng: np.random.Generator,
) -> npt.NDArray[np.int64]:
    """Vectorized simulation: first crossing trial (1-based) of each run, 0 if none by horizon.

    Each run is ``horizon`` independent trials correct with probability ``pc``; a run stops at
    its first crossing, as an adversarial peeker would.
    """
    pc_value = _check_closed("pc", pc)
    count = _check_int("runs", runs, 1)
    limit = _check_int("horizon", horizon, 1)
    alpha_value = _check_alpha(alpha)
    edges = _boundary_array(limit, alpha_value)[1:]
    correct = np.cumsum(rng.random((count, limit)) < pc_value, axis=1, dtype=np.int32)
    crossed = correct >= edges
    first = np.argmax(crossed, axis=1) + 1
    return np.where(crossed.any(axis=1), first, 0).astype(np.int64)
