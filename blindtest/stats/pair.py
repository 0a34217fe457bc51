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
and has no exact interval.

Primary effect size: ``pd = |2 Pc - 1|``, the share of trials on which the judge saw which model
was which. Folded, because the test is two-sided: a judge who sees the difference on a share pd
of trials and guesses on the rest is consistent with probability ``1/2 + pd/2`` when the
nicknames run with the true mapping and ``1/2 - pd/2`` when they run against it, and the test
counts both as discrimination (the same pd as the pair similarity test,
``stats.similarity``). The interval is the image of Pc's two-sided Clopper-Pearson interval
under the fold: it holds pd = 0 exactly when it holds Pc = 1/2, which at p0 = 1/2 (a symmetric
null, where the two-sided exact p is twice the smaller tail) is exactly when the two-sided
exact test at 1 - confidence does not reject; so the interval and the test never disagree. The
point estimate is the fold of Pc's, biased upward under the null (E|2X/n - 1| > 0), which is
why a null is reported by the interval's upper end, never by the estimate. Pure functions; no
I/O.
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

__all__ = ["PairResult", "pair_dprime_from_pc", "pair_pc_from_dprime", "pair_pd", "pair_test"]

PAIR_GUESS = 0.5


def pair_dprime_from_pc(pc: float) -> float:
    """Signed 2AFC d' = sqrt(2) * Phi^-1(pc): -inf at pc = 0, 0 at 1/2, +inf at pc = 1."""
    value = _check_closed("pc", pc)
    return math.sqrt(2.0) * float(special.ndtri(value))


def pair_pc_from_dprime(dprime: float) -> float:
    """Inverse of `pair_dprime_from_pc`: ``Pc = Phi(d' / sqrt 2)``."""
    value = _check_real("dprime", dprime)
    return float(special.ndtr(value / math.sqrt(2.0)))


def pair_pd(pc: Interval) -> Interval:
    """pd = |2 Pc - 1| with the fold's image of Pc's interval (see the module docstring):
    lo is 0 when the interval holds 1/2, else the end nearer 1/2 folded; hi the farther end."""
    for name, value in (("pc.estimate", pc.estimate), ("pc.lo", pc.lo), ("pc.hi", pc.hi)):
        _check_closed(name, value)
    if not pc.lo <= pc.estimate <= pc.hi:
        raise ValueError(f"pc must satisfy lo <= estimate <= hi, got {pc}")
    estimate = abs(2.0 * pc.estimate - 1.0)
    lo = max(0.0, 2.0 * pc.lo - 1.0, 1.0 - 2.0 * pc.hi)
    hi = max(2.0 * pc.hi - 1.0, 1.0 - 2.0 * pc.lo)
    return Interval(estimate, lo, min(1.0, hi))


@dataclass(frozen=True, slots=True)
class PairResult:
    """Pair-mode test of ``H0: P(consistent) = 1/2``, two-sided.

    ``statistic`` is consistent / n; ``pc`` carries the two-sided Clopper-Pearson interval;
    ``dprime`` is the signed 2AFC d' with the mapped interval (infinite ends are null in JSON);
    ``pd`` (a property, not serialised by ``to_dict``) is the folded ``|2 Pc - 1|``.
    """

    consistent: int
    n: int
    statistic: float
    p_value: float
    pc: Interval
    dprime: Interval
    confidence_level: float
    interval_method: str = "clopper-pearson"

    @property
    def pd(self) -> Interval:
        """Share of trials where the judge saw which model was which, ``|2 Pc - 1|``."""
        return pair_pd(self.pc)

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
