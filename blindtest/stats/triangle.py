"""Triangle test: exact one-sided p-value, Pc, pd and Thurstonian d' with their intervals.

What scipy lacks and this module adds: the guessing correction pd = (3 Pc - 1) / 2 (Abbott,
1925) and the Thurstonian triangle psychometric function (Frijters, 1979; Ennis, 1993;
Brockhoff and Christensen, 2010)

    Pc(d') = 2 * int_0^inf [Phi(-z sqrt3 + d' sqrt(2/3)) + Phi(-z sqrt3 - d' sqrt(2/3))] phi(z) dz

with its inverse. The p-value is ``P(X >= k)``, ``X ~ Bin(n, 1/3)``, from the regularized
incomplete beta (ISO 4120). Pure functions; no I/O.

Interval convention (reproduces spec 000: 9/20 -> pd 0% to 53%; 14/20 -> pd 55%, 19% to 82%):
Pc gets the two-sided Clopper-Pearson interval at ``confidence_level``; pd and d' are that
interval mapped through the monotone transforms, each clipped at chance (pd = 0, d' = 0 for
Pc <= 1/3). d' is +inf at Pc = 1 (written as null in JSON, see `blindtest.stats.intervals`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import optimize, special

from blindtest.stats.binomial import upper_tail
from blindtest.stats.intervals import (
    Interval,
    _check_closed,
    _check_count,
    _check_real,
    clopper_pearson,
    result_to_dict,
)

__all__ = [
    "TRIANGLE_GUESS",
    "TriangleResult",
    "dprime_from_pc",
    "pc_from_dprime",
    "pc_from_pd",
    "pd_from_pc",
    "triangle_test",
]

TRIANGLE_GUESS = 1.0 / 3.0
_SQRT3 = math.sqrt(3.0)
_SHIFT = math.sqrt(2.0 / 3.0)


def pd_from_pc(pc: float) -> float:
    """Proportion of discriminators ``(3 Pc - 1) / 2``, clipped to [0, 1] (0 at or below chance)."""
    value = _check_closed("pc", pc)
    return min(1.0, max(0.0, (3.0 * value - 1.0) / 2.0))


def pc_from_pd(pd: float) -> float:
    """Proportion correct ``1/3 + 2 pd / 3`` implied by a proportion of discriminators ``pd``."""
    value = _check_closed("pd", pd)
    return TRIANGLE_GUESS + 2.0 * value / 3.0


# Composite Gauss-Legendre: 20 nodes per panel of width 1/2. The integrands are entire
# functions varying on a scale of about 1/sqrt(3), so each panel is exact to rounding; a fixed
# rule is deterministic, warning-free and fast enough to sit inside a root finder.
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(20)
_PANEL = 0.5
# Beyond 12 standard units past the knee, phi(z) is below 1e-31 of its value at the knee.
_TAIL = 12.0
# Below this d', Pc - 1/3 comes from its Taylor series (next term relatively O(d'^6) < 1e-18).
_SERIES_BELOW = 1e-3
# Above this d', 1 - Pc < 1e-80: Pc rounds to 1 in double precision.
_SATURATED_ABOVE = 40.0


def _nodes(dprime: float) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Quadrature nodes and weights on [0, knee + 12], with a panel edge at the knee."""
    # The integrand changes fastest where -z sqrt3 + d' sqrt(2/3) = 0.
    knee = dprime * _SHIFT / _SQRT3
    edges = [np.linspace(0.0, knee, max(1, math.ceil(knee / _PANEL)) + 1)] if knee > 0 else []
    edges.append(np.linspace(knee, knee + _TAIL, math.ceil(_TAIL / _PANEL) + 1))
    points = []
    weights = []
    for grid in edges:
        left, right = grid[:-1, None], grid[1:, None]
        half = (right - left) / 2.0
        points.append((left + half * (_GL_NODES + 1.0)).ravel())
        weights.append((half * _GL_WEIGHTS).ravel())
    z = np.concatenate(points)
    w = np.concatenate(weights) * np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return z, w


def _excess_over_chance(dprime: float) -> float:
    """``Pc(d') - 1/3`` as one integral, accurate near chance (no subtraction of 1/3)."""
    if dprime < _SERIES_BELOW:
        # Pc(d') = 1/3 + d'^2 / (2 sqrt3 pi) - sqrt3 d'^4 / (72 pi) + O(d'^6): the second and
        # fourth Taylor terms of the integrand, integrated in closed form.
        d2 = dprime * dprime
        return d2 / (2.0 * _SQRT3 * math.pi) - _SQRT3 * d2 * d2 / (72.0 * math.pi)
    z, w = _nodes(dprime)
    shift = dprime * _SHIFT
    a = -z * _SQRT3
    bracket = special.ndtr(a + shift) + special.ndtr(a - shift) - 2.0 * special.ndtr(a)
    return 2.0 * float(np.dot(w, bracket))


def _miss(dprime: float) -> float:
    """``1 - Pc(d')`` as one integral, accurate near Pc = 1."""
    z, w = _nodes(dprime)
    shift = dprime * _SHIFT
    a = z * _SQRT3
    bracket = special.ndtr(a - shift) - special.ndtr(-a - shift)
    return 2.0 * float(np.dot(w, bracket))


def pc_from_dprime(dprime: float) -> float:
    """Triangle psychometric function: proportion correct at Thurstonian ``d' >= 0``.

    ``Pc(0) = 1/3`` and ``Pc(inf) = 1``. Evaluated by composite Gauss-Legendre quadrature of the
    integral in the module docstring, written as the excess over chance below Pc = 1/2 and as
    the miss rate above it, so that neither end loses digits to a subtraction.
    """
    value = _check_real("dprime", dprime)
    if value < 0.0:
        raise ValueError(f"dprime must be in [0, inf], got {dprime!r}")
    if value > _SATURATED_ABOVE:
        return 1.0
    if value == 0.0:
        return TRIANGLE_GUESS
    excess = _excess_over_chance(value)
    if excess < 0.5 - TRIANGLE_GUESS:
        return TRIANGLE_GUESS + excess
    return 1.0 - _miss(value)


def dprime_from_pc(pc: float) -> float:
    """Thurstonian triangle d' for a proportion correct ``pc`` in [0, 1].

    Convention: d' = 0 at or below chance (Pc <= 1/3, no discrimination reading) and
    d' = +inf at Pc = 1. Otherwise the root of the psychometric function by Brent's method,
    on the excess over chance below Pc = 1/2 and on the miss rate above it.
    """
    value = _check_closed("pc", pc)
    if value <= TRIANGLE_GUESS:
        return 0.0
    if value == 1.0:
        return math.inf
    if value < 0.5:
        target = value - TRIANGLE_GUESS

        def gap(d: float) -> float:
            return _excess_over_chance(d) - target

    else:
        target = 1.0 - value

        def gap(d: float) -> float:
            return target - _miss(d)

    # gap(0) < 0 because value > 1/3; double the upper end until the sign changes.
    lo, hi = 0.0, 1.0
    while gap(hi) < 0.0:
        lo, hi = hi, 2.0 * hi
    return float(optimize.brentq(gap, lo, hi, xtol=1e-15, rtol=1e-13, maxiter=200))


@dataclass(frozen=True, slots=True)
class TriangleResult:
    """Triangle test of ``H0: Pc = 1/3`` against ``Pc > 1/3``.

    ``statistic`` is the observed proportion correct; ``p_value`` is ``P(X >= correct)``;
    ``pc`` has a two-sided Clopper-Pearson interval, ``pd`` and ``dprime`` the mapped one.
    """

    correct: int
    n: int
    statistic: float
    p_value: float
    pc: Interval
    pd: Interval
    dprime: Interval
    confidence_level: float
    interval_method: str = "clopper-pearson"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values; an infinite d' bound is null."""
        return result_to_dict(self)


def triangle_test(correct: int, n: int, *, confidence_level: float = 0.95) -> TriangleResult:
    """Exact one-sided triangle test with Pc, pd and d' (estimate and interval).

    Spec 000's figures hold: 9/20 gives p = 0.19 and pd upper bound 53%; 14/20 gives
    p = 0.0009 and pd = 55% (95%: 19% to 82%).
    """
    _check_count("correct", correct, "n", n)
    pc = clopper_pearson(correct, n, confidence_level=confidence_level)
    return TriangleResult(
        correct=int(correct),
        n=int(n),
        statistic=correct / n,
        # P(X >= k) = I_{1/3}(k, n - k + 1); k = 0 gives exactly 1.
        p_value=float(upper_tail(correct, n, TRIANGLE_GUESS)),
        pc=pc,
        pd=Interval(pd_from_pc(pc.estimate), pd_from_pc(pc.lo), pd_from_pc(pc.hi)),
        dprime=Interval(dprime_from_pc(pc.estimate), dprime_from_pc(pc.lo), dprime_from_pc(pc.hi)),
        confidence_level=float(confidence_level),
    )
