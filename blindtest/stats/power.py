"""Exact power and sample size for triangle, pair and preference designs (no simulation).

A design's rejection region is the exact set of outcomes ``k`` its test rejects at ``alpha``;
power is the binomial probability of that set at the alternative, and the achieved alpha is
its probability under the null (below nominal, because the binomial is discrete).

* triangle: one-sided, ``P(X >= k | 1/3) <= alpha``: reject at ``k >= critical``.
* pair: the set where the two-sided binomtest p (R convention) is ``<= alpha``. At p0 = 1/2
  it is symmetric: reject when ``k >= critical`` or ``k <= n - critical``.
* preference: the set where spec 002's verdict is directional: two-sided binomtest
  ``p <= alpha`` AND the Wilson ``1 - alpha`` interval excludes 1/2 AND ``|wins - losses| >= 2``
  (spec 001). ``n`` counts untied comparisons. Symmetric as for pair.

Similarity rows give the region where `blindtest.stats.similarity.similarity_test` declares
similarity, its size at ``pd = pd0`` and its power at smaller true pd. Pure; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from blindtest.stats.binomial import ALTERNATIVES, Alternative, lower_tail, upper_tail
from blindtest.stats.intervals import (
    _check_alpha,
    _check_choice,
    _check_closed,
    _check_int,
    _check_open,
    result_to_dict,
    wilson,
)
from blindtest.stats.preference import MIN_MARGIN
from blindtest.stats.similarity import (
    SIMILARITY_PROTOCOLS,
    SimilarityProtocol,
    pc_at_pd,
)

__all__ = [
    "PowerProtocol",
    "PowerRow",
    "RejectionRegion",
    "SimilarityPowerRow",
    "critical_value",
    "power_row",
    "power_table",
    "rejection_region",
    "similarity_power_row",
    "similarity_smallest_n",
    "smallest_n",
]

PowerProtocol = Literal["triangle", "pair", "preference"]
POWER_PROTOCOLS: tuple[str, ...] = ("triangle", "pair", "preference")
# R's binom.test tolerance on "no more likely than the observed outcome".
_RELATIVE_ERROR = 1.0 + 1e-7


@dataclass(frozen=True, slots=True)
class RejectionRegion:
    """Outcomes ``k <= lower`` or ``k >= upper`` out of ``n`` (or ``lower <= k <= upper`` when
    ``inside``). ``lower = -1`` means no lower tail, ``upper = n + 1`` no upper tail."""

    n: int
    lower: int
    upper: int
    inside: bool = False

    def rejects(self, k: int) -> bool:
        """True when outcome ``k`` is in the region."""
        if self.inside:
            return self.lower <= k <= self.upper
        return k <= self.lower or k >= self.upper

    def probability(self, p: float) -> float:
        """``P(K in region)`` for ``K ~ Bin(n, p)``."""
        if self.inside:
            if self.lower > self.upper:
                return 0.0
            inner = float(lower_tail(self.upper, self.n, p) - lower_tail(self.lower - 1, self.n, p))
            return min(1.0, max(0.0, inner))
        total = float(lower_tail(self.lower, self.n, p) + upper_tail(self.upper, self.n, p))
        return min(1.0, total)

    @property
    def empty(self) -> bool:
        """True when no outcome can reject."""
        if self.inside:
            return self.lower > self.upper
        return self.lower < 0 and self.upper > self.n

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def _two_sided_p_values(n: int, p0: float) -> np.ndarray[Any, np.dtype[np.float64]]:
    """R binom.test two-sided p for every k = 0..n: the total probability of outcomes whose
    probability is at most ``pmf(k) * (1 + 1e-7)``."""
    from scipy import stats  # deferred: scipy.stats costs 0.5 s at start-up

    pmf = stats.binom.pmf(np.arange(n + 1), n, p0)
    order = np.sort(pmf)
    cumulative = np.cumsum(order)
    index = np.searchsorted(order, pmf * _RELATIVE_ERROR, side="right")
    return np.asarray(np.minimum(1.0, cumulative[index - 1]), dtype=np.float64)


def rejection_region(
    n: int, p0: float, alpha: float, alternative: Alternative = "greater"
) -> RejectionRegion:
    """Exact rejection region of the binomial test of ``H0: p = p0`` at level ``alpha``.

    ``"greater"``: ``P(X >= k) <= alpha``; ``"less"``: ``P(X <= k) <= alpha``;
    ``"two-sided"``: R binom.test's p (scipy.stats.binomtest) ``<= alpha``, which is always two
    tails because that p-value only grows with the probability of the outcome.
    """
    _check_int("n", n, 1)
    p0_value = _check_open("p0", p0)
    alpha_value = _check_alpha(alpha)
    _check_choice("alternative", alternative, ALTERNATIVES)
    ks = np.arange(n + 1)
    lower, upper = -1, n + 1
    if alternative == "greater":
        hits = np.flatnonzero(upper_tail(ks, n, p0_value) <= alpha_value)
        upper = int(hits[0]) if hits.size else n + 1
    elif alternative == "less":
        hits = np.flatnonzero(lower_tail(ks, n, p0_value) <= alpha_value)
        lower = int(hits[-1]) if hits.size else -1
    else:
        rejected = _two_sided_p_values(n, p0_value) <= alpha_value
        mode = math.floor((n + 1) * p0_value)
        low_hits = np.flatnonzero(rejected[: mode + 1])
        high_hits = np.flatnonzero(rejected[mode:]) + mode
        lower = int(low_hits[-1]) if low_hits.size else -1
        upper = int(high_hits[0]) if high_hits.size else n + 1
    return RejectionRegion(n=int(n), lower=lower, upper=upper)


def critical_value(
    n: int, p0: float, alpha: float, alternative: Alternative = "greater"
) -> int | None:
    """The critical count of `rejection_region`, or None when nothing can reject.

    ``"greater"``: the smallest rejecting k; ``"less"``: the largest; ``"two-sided"``: the
    smallest rejecting k of the upper tail (at p0 = 1/2 the lower tail is ``k <= n - critical``).
    """
    region = rejection_region(n, p0, alpha, alternative)
    if alternative == "less":
        return region.lower if region.lower >= 0 else None
    return region.upper if region.upper <= n else None


def _preference_region(n: int, alpha: float) -> RejectionRegion:
    binomial = rejection_region(n, 0.5, alpha, "two-sided")
    start = max(binomial.upper, math.ceil((n + MIN_MARGIN) / 2))
    # Wilson's lower bound rises with k, so the first k above 1/2 is the region's edge.
    upper = next(
        (k for k in range(start, n + 1) if wilson(k, n, confidence_level=1.0 - alpha).lo > 0.5),
        n + 1,
    )
    # At p0 = 1/2 all three conditions are symmetric in k <-> n - k.
    lower = n - upper if upper <= n else -1
    return RejectionRegion(n=n, lower=lower, upper=upper)


def _protocol_region(n: int, protocol: str, alpha: float) -> tuple[RejectionRegion, float]:
    if protocol == "triangle":
        return rejection_region(n, 1.0 / 3.0, alpha, "greater"), 1.0 / 3.0
    if protocol == "pair":
        return rejection_region(n, 0.5, alpha, "two-sided"), 0.5
    return _preference_region(n, alpha), 0.5


@dataclass(frozen=True, slots=True)
class PowerRow:
    """One row of a power table.

    ``critical`` is the smallest rejecting count (triangle: correct; pair: consistent;
    preference: wins), None when n is too small to reject; for the two-sided protocols
    ``lower_critical = n - critical`` is the largest rejecting count of the lower tail.
    ``power`` maps each alternative Pc (win rate, for preference) to its exact power.
    """

    n: int
    protocol: str
    alpha: float
    critical: int | None
    lower_critical: int | None
    achieved_alpha: float
    power: dict[float, float]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (``power`` keys become strings such as "0.6")."""
        return result_to_dict(self)


def _check_pcs(pcs: Iterable[float]) -> tuple[float, ...]:
    values = tuple(_check_closed("pc", pc) for pc in pcs)
    return values


def power_row(
    n: int,
    *,
    protocol: PowerProtocol = "triangle",
    alpha: float = 0.05,
    pcs: Sequence[float] = (0.6, 0.7),
) -> PowerRow:
    """Critical count, achieved alpha and exact power at each Pc for an ``n``-trial design.

    Spec 000's table: n = 20 rejects at 11 correct, achieved alpha 0.038, power 0.76 at
    Pc = 0.6 and 0.95 at Pc = 0.7.
    """
    _check_int("n", n, 1)
    _check_choice("protocol", protocol, POWER_PROTOCOLS)
    alpha_value = _check_alpha(alpha)
    values = _check_pcs(pcs)
    region, p0 = _protocol_region(int(n), protocol, alpha_value)
    two_sided = protocol != "triangle"
    return PowerRow(
        n=int(n),
        protocol=protocol,
        alpha=alpha_value,
        critical=region.upper if region.upper <= n else None,
        lower_critical=region.lower if two_sided and region.lower >= 0 else None,
        achieved_alpha=region.probability(p0),
        power={pc: region.probability(pc) for pc in values},
    )


def power_table(
    ns: Iterable[int],
    *,
    protocol: PowerProtocol = "triangle",
    alpha: float = 0.05,
    pcs: Sequence[float] = (0.6, 0.7),
) -> tuple[PowerRow, ...]:
    """`power_row` for each trial count in ``ns``."""
    return tuple(power_row(n, protocol=protocol, alpha=alpha, pcs=pcs) for n in ns)


def smallest_n(
    target_power: float,
    pc: float,
    *,
    protocol: PowerProtocol = "triangle",
    alpha: float = 0.05,
    n_max: int = 1000,
) -> int | None:
    """Smallest n whose exact power at ``pc`` reaches ``target_power``; None if none <= n_max.

    Exact power is a sawtooth in n (the achieved alpha jumps as the critical count moves), so
    a few larger n can fall back below the target; bt-plan prints the rows around the answer.
    """
    target = _check_open("target_power", target_power)
    pc_value = _check_closed("pc", pc)
    _check_choice("protocol", protocol, POWER_PROTOCOLS)
    alpha_value = _check_alpha(alpha)
    limit = _check_int("n_max", n_max, 1)
    for n in range(1, limit + 1):
        region, _ = _protocol_region(n, protocol, alpha_value)
        if not region.empty and region.probability(pc_value) >= target:
            return n
    return None


# --- similarity ---


@dataclass(frozen=True, slots=True)
class SimilarityPowerRow:
    """One row of a similarity power table.

    Similarity is declared for ``similar_lo <= k <= similar_hi`` (triangle: ``similar_lo`` is
    0); both are None when no outcome can declare it. ``achieved_alpha`` is the probability of
    declaring similarity at pd = pd0 (the worst case of the null); ``power`` maps each true
    pd to the probability of declaring similarity.
    """

    n: int
    protocol: str
    pd0: float
    alpha: float
    similar_lo: int | None
    similar_hi: int | None
    achieved_alpha: float
    power: dict[float, float]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (``power`` keys become strings)."""
        return result_to_dict(self)


def _similarity_region(n: int, pd0: float, protocol: str, alpha: float) -> RejectionRegion:
    pc0 = pc_at_pd(pd0, "pair" if protocol == "pair" else "triangle")
    ks = np.arange(n + 1)
    declared = lower_tail(ks, n, pc0) <= alpha
    if protocol == "pair":
        declared &= upper_tail(ks, n, 1.0 - pc0) <= alpha
    hits = np.flatnonzero(declared)
    if hits.size == 0:
        return RejectionRegion(n=n, lower=1, upper=0, inside=True)
    return RejectionRegion(n=n, lower=int(hits[0]), upper=int(hits[-1]), inside=True)


def similarity_power_row(
    n: int,
    pd0: float,
    *,
    protocol: SimilarityProtocol = "triangle",
    alpha: float = 0.05,
    pds: Sequence[float] = (0.0,),
) -> SimilarityPowerRow:
    """Region, size and power of the similarity test at ``pd0`` for an ``n``-trial design."""
    _check_int("n", n, 1)
    pd0_value = _check_open("pd0", pd0)
    _check_choice("protocol", protocol, SIMILARITY_PROTOCOLS)
    alpha_value = _check_alpha(alpha)
    true_pds = tuple(_check_closed("pd", pd) for pd in pds)
    region = _similarity_region(int(n), pd0_value, protocol, alpha_value)
    return SimilarityPowerRow(
        n=int(n),
        protocol=protocol,
        pd0=pd0_value,
        alpha=alpha_value,
        similar_lo=None if region.empty else region.lower,
        similar_hi=None if region.empty else region.upper,
        achieved_alpha=region.probability(pc_at_pd(pd0_value, protocol)),
        power={pd: region.probability(pc_at_pd(pd, protocol)) for pd in true_pds},
    )


def similarity_smallest_n(
    target_power: float,
    pd0: float,
    *,
    pd: float = 0.0,
    protocol: SimilarityProtocol = "triangle",
    alpha: float = 0.05,
    n_max: int = 1000,
) -> int | None:
    """Smallest n at which the similarity test at ``pd0`` has ``target_power`` when the true
    proportion of discriminators is ``pd`` (default 0); None if none <= n_max."""
    target = _check_open("target_power", target_power)
    pd0_value = _check_open("pd0", pd0)
    pd_value = _check_closed("pd", pd)
    _check_choice("protocol", protocol, SIMILARITY_PROTOCOLS)
    alpha_value = _check_alpha(alpha)
    limit = _check_int("n_max", n_max, 1)
    pc = pc_at_pd(pd_value, protocol)
    for n in range(1, limit + 1):
        region = _similarity_region(n, pd0_value, protocol, alpha_value)
        if not region.empty and region.probability(pc) >= target:
            return n
    return None
