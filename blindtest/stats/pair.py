"""Pair mode: consistency of persistent nicknames with the true model mapping.

Under the null the judge's nickname for option 1 is independent of which model sits there, so
the number of trials consistent with the true mapping is ``Bin(n, 1/2)``. The test is the
two-sided exact binomial test against 1/2 (R binom.test convention, via scipy.stats.binomtest)
because systematically inverted nicknames are discrimination too (spec 000, FAQ).

Secondary effect size: 2AFC Thurstonian ``d' = sqrt(2) * Phi^-1(Pc)`` (Green and Swets, 1966),
signed. Choosing which model is "X" is a two-alternative forced choice between the two
presentation orders, so Pc = Phi(d' / sqrt 2). The sign says whether the judge's nicknames run
with (d' > 0) or against (d' < 0) the true mapping; |d'| is the discriminability. We map the
Clopper-Pearson interval of Pc = consistent / n through the same monotone transform rather than
folding Pc to max(k, n - k) / n: folding biases the estimate upward under the null (E[max] > n/2)
and has no exact interval. Pure functions; no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scipy import special

from blindtest.stats.binomial import binomial_p_value
from blindtest.stats.intervals import (
    Interval,
    _check_closed,
    _check_count,
    _check_real,
    clopper_pearson,
    result_to_dict,
)

__all__ = ["PairResult", "pair_dprime_from_pc", "pair_pc_from_dprime", "pair_test"]

PAIR_GUESS = 0.5


def pair_dprime_from_pc(pc: float) -> float:
    """Signed 2AFC d' = sqrt(2) * Phi^-1(pc): -inf at pc = 0, 0 at 1/2, +inf at pc = 1."""
    value = _check_closed("pc", pc)
    return math.sqrt(2.0) * float(special.ndtri(value))


def pair_pc_from_dprime(dprime: float) -> float:
    """Inverse of `pair_dprime_from_pc`: ``Pc = Phi(d' / sqrt 2)``."""
    value = _check_real("dprime", dprime)
    return float(special.ndtr(value / math.sqrt(2.0)))


@dataclass(frozen=True, slots=True)
class PairResult:
    """Pair-mode test of ``H0: P(consistent) = 1/2``, two-sided.

    ``statistic`` is consistent / n; ``pc`` carries the two-sided Clopper-Pearson interval;
    ``dprime`` is the signed 2AFC d' with the mapped interval (infinite ends are null in JSON).
    """

    consistent: int
    n: int
    statistic: float
    p_value: float
    pc: Interval
    dprime: Interval
    confidence_level: float
    interval_method: str = "clopper-pearson"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values; an infinite d' bound is null."""
        return result_to_dict(self)


def pair_test(consistent: int, n: int, *, confidence_level: float = 0.95) -> PairResult:
    """Exact two-sided binomial test of nickname consistency against 1/2, with Pc and d'."""
    _check_count("consistent", consistent, "n", n)
    pc = clopper_pearson(consistent, n, confidence_level=confidence_level)
    return PairResult(
        consistent=int(consistent),
        n=int(n),
        statistic=consistent / n,
        p_value=binomial_p_value(consistent, n, PAIR_GUESS, "two-sided"),
        pc=pc,
        dprime=Interval(
            pair_dprime_from_pc(pc.estimate),
            pair_dprime_from_pc(pc.lo),
            pair_dprime_from_pc(pc.hi),
        ),
        confidence_level=float(confidence_level),
    )
