"""The tie-inclusive estimand for one judge: the mean score, a tie counting as half a win.

With one judge per comparison each comparison is a win (1), a tie (1/2) or a loss (0) for the
challenger, and the mean score is ``mu = p_win + p_tie / 2 = (1 + Delta) / 2`` with
``Delta = p_win - p_loss``. Testing ``mu`` against a null value is testing the difference of
two paired proportions against a margin, as for matched pairs (wins and losses are the two
kinds of discordant pair, ties the concordant ones). Its null is composite: at ``Delta0`` the
tie rate ``tau`` may be anything in ``[0, 1 - |Delta0|]``.

* Statistic: Tango's (1998, Statistics in Medicine 17: 891-908) score statistic
  ``Z = (W - L - n Delta0) / sqrt(n (2 q + Delta0 (1 - Delta0)))``, with ``q`` the maximum
  likelihood estimate of ``p_loss`` under ``Delta = Delta0``, the root of
  ``2n q^2 - [(W + L) - Delta0 (2n - W + L)] q - L Delta0 (1 - Delta0) = 0``
  (derived from the trinomial likelihood; checked against a numerical maximisation).
* p-value: exact unconditional, the largest tail probability over the nuisance
  (Barnard 1947; Suissa and Shuster 1985; for matched pairs with a margin, Sidik 2003,
  Statistics in Medicine 22: 265-278): ``p = sup_tau P_{Delta0, tau}(Z >= z_obs)``. Given the
  untied count U ~ Bin(n, 1 - tau), W ~ Bin(U, 1/2 + Delta0 / (2 (1 - tau))), and Z rises with
  W at fixed U (checked for every U <= n <= 300 at seven nulls), so the tail is a sum over U of
  binomial tails. The supremum is taken on a 129-point grid of tie rates, refined twice
  around the four highest local maxima (33 points each, then 33 again); the test's size at
  the null is checked over 1,001 tie rates for every n <= 200 (`tests/stats/`).
* Interval: the values not rejected by either one-sided test, found by bisection.

``mu`` is on the 0..1 scale throughout; ``Delta0 = 2 mu0 - 1``. Pure; no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import optimize, special

from blindtest.stats.intervals import (
    Interval,
    _check_confidence,
    _check_int,
    _check_open,
    result_to_dict,
)

__all__ = [
    "MeanScoreResult",
    "mean_score_critical",
    "mean_score_interval",
    "mean_score_p_value",
    "mean_score_rejection",
    "mean_score_test",
    "tango_statistic",
]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
MeanAlternative = Literal["greater", "less"]

_GRID = 65
_PER_ROOT_N = 8.0
_ZOOM = 17
_PEAKS = 6
# Z values this close (relative) count as equal: the observed table is always in its own tail.
_Z_TOLERANCE = 1e-9
_BOUND_TOLERANCE = 1e-10


def tango_statistic(wins: npt.ArrayLike, losses: npt.ArrayLike, n: int, delta0: float) -> Floats:
    """Tango's score statistic for ``H0: p_win - p_loss = delta0`` (elementwise; 0 when its
    variance is 0, which happens only at delta0 = 0 with every comparison tied)."""
    w = np.asarray(wins, dtype=np.float64)
    loss = np.asarray(losses, dtype=np.float64)
    b = (w + loss) - delta0 * (2.0 * n - w + loss)
    # The discriminant is >= 0 in exact arithmetic; rounding can take it to -1e-13.
    root = np.sqrt(np.maximum(b * b + 8.0 * n * loss * delta0 * (1.0 - delta0), 0.0))
    q = (b + root) / (4.0 * n)
    variance = 2.0 * q + delta0 * (1.0 - delta0)
    positive = variance > 1e-15
    safe = np.where(positive, variance, 1.0)
    z = np.where(positive, (w - loss - n * delta0) / np.sqrt(n * safe), 0.0)
    return np.asarray(z, dtype=np.float64)


def _first_wins(n: int, delta0: float, z0: float) -> Ints:
    """Per untied count U = 0..n, the fewest wins whose Z reaches ``z0`` (U + 1 if none)."""
    untied = np.arange(n + 1, dtype=np.int64)
    lo = np.zeros(n + 1, dtype=np.int64)
    hi = untied + 1
    while True:
        active = lo < hi
        if not active.any():
            return lo
        middle = (lo + hi) // 2
        reaches = tango_statistic(middle, untied - middle, n, delta0) >= z0
        hi = np.where(active & reaches, middle, hi)
        lo = np.where(active & ~reaches, middle + 1, lo)


def _log_binomial_pmf(n: int, p: Floats) -> Floats:
    """``log P(U = u)`` for u = 0..n (columns) at each p (rows), U ~ Bin(n, p)."""
    u = np.arange(n + 1, dtype=np.float64)
    log_choose = special.gammaln(n + 1.0) - special.gammaln(u + 1.0) - special.gammaln(n - u + 1.0)
    col = p[:, None]
    with np.errstate(divide="ignore"):
        # xlogy and xlog1py take 0 log 0 = 0: U = 0 at p = 0 and U = n at p = 1 are certain.
        log_pmf = log_choose + special.xlogy(u, col) + special.xlog1py(n - u, -col)
    return np.asarray(log_pmf, dtype=np.float64)


#: Untied counts whose probability is below this carry nothing a p-value can show.
_LOG_NEGLIGIBLE = math.log(1e-40)


def _tail(n: int, delta0: float, first: Ints, taus: Floats) -> Floats:
    """``P_{delta0, tau}(W >= first[U])`` for each tie rate in ``taus``."""
    kept = 1.0 - taus
    log_weight = _log_binomial_pmf(n, kept)
    pi = np.clip(0.5 + delta0 / (2.0 * np.where(kept > 0, kept, 1.0)), 0.0, 1.0)
    rows, untied = np.nonzero(log_weight > _LOG_NEGLIGIBLE)
    w = first[untied]
    # P(W >= w | U) is 1 at w <= 0 and 0 at w > U; betainc only in between.
    upper = (w <= 0).astype(np.float64)
    inside = np.flatnonzero((w >= 1) & (w <= untied))
    upper[inside] = special.betainc(
        w[inside].astype(np.float64),
        (untied[inside] - w[inside] + 1).astype(np.float64),
        pi[rows[inside]],
    )
    weights = np.exp(log_weight[rows, untied]) * upper
    total = np.bincount(rows, weights=weights, minlength=taus.size)
    return np.asarray(np.clip(total, 0.0, 1.0), dtype=np.float64)


def _tie_grid(n: int, top: float) -> tuple[Floats, float]:
    """Tie rates evenly spaced in ``phi = arcsin(sqrt(tau))`` over ``[0, top]``, and the step.

    The tail is a Bernstein-type polynomial in the untied share, smooth over about
    ``sqrt(tau (1 - tau) / n)`` in tau, which is a constant ``1 / (2 sqrt(n))`` in phi: an even
    grid in phi is as fine near tau = 0, where the features are narrowest, as elsewhere.
    """
    phi_top = math.asin(math.sqrt(top))
    points = max(_GRID, math.ceil(_PER_ROOT_N * math.sqrt(n) * phi_top) + 1)
    phis = np.linspace(0.0, phi_top, points)
    return np.sin(phis) ** 2, phi_top / (points - 1)


def _supremum(n: int, delta0: float, first: Ints) -> float:
    """``sup_tau`` of `_tail` over ``[0, 1 - |delta0|]``: a grid even in phi (see
    `_tie_grid`), zoomed twice on its highest local maxima."""
    top = 1.0 - abs(delta0)
    taus, width = _tie_grid(n, top)
    values = _tail(n, delta0, first, taus)
    best = float(values.max())
    if top <= 0.0:
        return min(1.0, best)
    phi_top = math.asin(math.sqrt(top))
    centres = np.arcsin(np.sqrt(taus[_peaks(values)]))
    for _ in range(2):
        offsets = np.linspace(-width, width, _ZOOM)
        phis = np.clip(centres[:, None] + offsets[None, :], 0.0, phi_top)
        zoomed = _tail(n, delta0, first, (np.sin(phis) ** 2).ravel()).reshape(phis.shape)
        best = max(best, float(zoomed.max()))
        centres = phis[np.arange(centres.size), np.argmax(zoomed, axis=1)]
        width = 2.0 * width / (_ZOOM - 1)
    return min(1.0, best)


def _peaks(values: Floats) -> npt.NDArray[np.intp]:
    """Indices of the highest local maxima of a sampled curve (at most `_PEAKS`)."""
    left = np.concatenate([[-np.inf], values[:-1]])
    right = np.concatenate([values[1:], [-np.inf]])
    local = np.flatnonzero((values >= left) & (values >= right))
    order = np.argsort(-values[local], kind="stable")
    return np.asarray(local[order[:_PEAKS]], dtype=np.intp)


def _check_counts(wins: int, ties: int, losses: int) -> int:
    _check_int("wins", wins)
    _check_int("ties", ties)
    _check_int("losses", losses)
    n = int(wins) + int(ties) + int(losses)
    if n < 1:
        raise ValueError("wins + ties + losses must be at least 1, got 0")
    return n


def mean_score_p_value(
    wins: int, ties: int, losses: int, null: float, *, alternative: MeanAlternative = "greater"
) -> float:
    """Exact unconditional p-value for ``H0: mu <= null`` ("greater") or ``mu >= null``
    ("less"), the tie rate a nuisance (supremum over it)."""
    n = _check_counts(wins, ties, losses)
    mu0 = _check_open("null", null)
    if alternative == "less":
        wins, losses, mu0 = losses, wins, 1.0 - mu0
    elif alternative != "greater":
        raise ValueError(f"alternative must be one of 'greater', 'less'; got {alternative!r}")
    delta0 = 2.0 * mu0 - 1.0
    z0 = float(tango_statistic(wins, losses, n, delta0))
    return _supremum(n, delta0, _first_wins(n, delta0, z0 - _Z_TOLERANCE * max(1.0, abs(z0))))


def _xlog(count: Floats, p: float) -> Floats:
    """``count log p`` with ``0 log 0 = 0`` (a scalar p, so one logarithm)."""
    if p > 0.0:
        return count * math.log(p)
    return np.where(count > 0, -np.inf, 0.0)


def _grid_tails(n: int, delta0: float) -> tuple[Floats, Floats]:
    """Every distinct Z of an n-comparison table (ascending) and, for each, the largest
    ``P(Z >= z)`` over the coarse tie-rate grid (a lower bound of the supremum)."""
    w, untied = np.triu_indices(n + 1)  # every (W, U) with W <= U <= n
    z = tango_statistic(w, untied - w, n, delta0)
    order = np.argsort(-z, kind="stable")
    z_sorted = z[order]
    w_f = w[order].astype(np.float64)
    u_f = untied[order].astype(np.float64)
    log_choose = (
        special.gammaln(n + 1.0)
        - special.gammaln(w_f + 1.0)
        - special.gammaln(u_f - w_f + 1.0)
        - special.gammaln(n - u_f + 1.0)
    )
    # Group ends: a tail includes every table whose Z is within the tolerance of its own.
    last = np.append(
        np.diff(z_sorted) < -_Z_TOLERANCE * np.maximum(1.0, np.abs(z_sorted[1:])), True
    )
    best = np.zeros(int(last.sum()), dtype=np.float64)
    # A lower bound only (it sets where the search starts): the coarse grid is enough.
    phis = np.linspace(0.0, math.asin(math.sqrt(1.0 - abs(delta0))), _GRID)
    for tau in np.sin(phis) ** 2:
        p_win, p_loss = (1.0 - tau + delta0) / 2.0, (1.0 - tau - delta0) / 2.0
        log_pmf = log_choose + _xlog(w_f, p_win) + _xlog(u_f - w_f, p_loss) + _xlog(n - u_f, tau)
        best = np.maximum(best, np.cumsum(np.exp(log_pmf))[last])
    return np.asarray(z_sorted[last][::-1], dtype=np.float64), best[::-1]


def mean_score_critical(n: int, null: float, alpha: float) -> float:
    """The smallest Z of an n-comparison table that the one-sided ("greater") exact
    unconditional test at ``null`` rejects at ``alpha`` (inf when none can)."""
    _check_int("n", n, 1)
    delta0 = 2.0 * _check_open("null", null) - 1.0
    alpha_value = _check_open("alpha", alpha)
    values, coarse = _grid_tails(n, delta0)
    # The coarse tails only rise as z falls; the first z they allow is confirmed (and the
    # next ones tried) with the refined supremum, which can only be larger.
    allowed = np.flatnonzero(coarse <= alpha_value)
    if allowed.size == 0:
        return math.inf

    def rejects(index: int) -> bool:
        z0 = float(values[index])
        first = _first_wins(n, delta0, z0 - _Z_TOLERANCE * max(1.0, abs(z0)))
        return _supremum(n, delta0, first) <= alpha_value

    # The refined supremum can only exceed the coarse one, so the answer is at or above the
    # first index the coarse tails allow: gallop up to a rejecting index, then bisect.
    lo, step = int(allowed[0]), 1
    hi = lo
    while not rejects(hi):
        lo = hi + 1
        if hi == values.size - 1:
            return math.inf
        hi = min(values.size - 1, hi + step)
        step *= 2
    while lo < hi:
        middle = (lo + hi) // 2
        if rejects(middle):
            hi = middle
        else:
            lo = middle + 1
    return float(values[lo])


def mean_score_rejection(
    n: int, null: float, critical: float, *, mean: float, ties: npt.ArrayLike
) -> Floats:
    """``P(Z >= critical)`` when the true mean score is ``mean`` at each tie rate in ``ties``
    (the size at ``mean = null``, the power elsewhere); Z is Tango's statistic at ``null``."""
    delta0 = 2.0 * _check_open("null", null) - 1.0
    delta = 2.0 * float(mean) - 1.0
    taus = np.atleast_1d(np.asarray(ties, dtype=np.float64))
    if math.isinf(critical):
        return np.zeros(taus.size, dtype=np.float64)
    first = _first_wins(n, delta0, critical - _Z_TOLERANCE * max(1.0, abs(critical)))
    return _tail(n, delta, first, taus)


def mean_score_interval(
    wins: int, ties: int, losses: int, *, confidence_level: float = 0.9
) -> Interval:
    """The mean score with the values neither one-sided exact unconditional test rejects at
    ``(1 - confidence_level) / 2`` (a 90% interval reads the two 5% tests)."""
    n = _check_counts(wins, ties, losses)
    level = _check_confidence(confidence_level)
    estimate = (wins + ties / 2.0) / n
    if level == 1.0:
        return Interval(estimate, 0.0, 1.0)
    tail = (1.0 - level) / 2.0

    def bound(alternative: MeanAlternative) -> float:
        # "greater" rejects the nulls below the estimate, "less" those above it. The p-value
        # jumps where the tables' order by Z changes, so Brent's method finds the change of
        # sign of p - tail, as bisection would, in fewer steps.
        edge = 1e-9 if alternative == "greater" else 1.0 - 1e-9
        middle = min(max(estimate, 1e-9), 1.0 - 1e-9)

        def excess(mu0: float) -> float:
            return mean_score_p_value(wins, ties, losses, mu0, alternative=alternative) - tail

        if excess(edge) > 0:
            return 0.0 if alternative == "greater" else 1.0
        if excess(middle) <= 0:  # only when every comparison went one way
            return middle
        return float(optimize.brentq(excess, edge, middle, xtol=_BOUND_TOLERANCE))

    return Interval(estimate, bound("greater"), bound("less"))


@dataclass(frozen=True, slots=True)
class MeanScoreResult:
    """Exact unconditional tests of the mean score against ``lower`` and ``upper`` nulls.

    ``p_greater`` tests ``H0: mu <= lower`` (None without a lower null), ``p_less`` tests
    ``H0: mu >= upper``; ``interval`` is the ``confidence_level`` inversion of the two tests.
    """

    wins: int
    ties: int
    losses: int
    n: int
    estimate: float
    interval: Interval
    confidence_level: float
    p_greater: float | None
    p_less: float | None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def mean_score_test(
    wins: int,
    ties: int,
    losses: int,
    *,
    lower: float | None,
    upper: float | None,
    confidence_level: float = 0.9,
) -> MeanScoreResult:
    """Both one-sided exact unconditional tests and the interval, for one table."""
    n = _check_counts(wins, ties, losses)
    interval = mean_score_interval(wins, ties, losses, confidence_level=confidence_level)
    p_greater = None if lower is None else mean_score_p_value(wins, ties, losses, lower)
    p_less = (
        None if upper is None else mean_score_p_value(wins, ties, losses, upper, alternative="less")
    )
    return MeanScoreResult(
        wins=int(wins),
        ties=int(ties),
        losses=int(losses),
        n=n,
        estimate=interval.estimate,
        interval=interval,
        confidence_level=float(confidence_level),
        p_greater=p_greater,
        p_less=p_less,
    )
