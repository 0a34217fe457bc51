"""Exact power and sample size of a pre-registered decision on the untied share (bt-plan).

The unit is the comparison. Of ``n`` comparisons each is a tie with probability ``ties``, so
the untied count is ``U ~ Bin(n, 1 - ties)``; given ``U = u`` the challenger's untied wins are
``W ~ Bin(u, true)`` and the test is the exact conditional binomial test of
`blindtest.stats.decision` (one-sided at ``alpha``; two one-sided tests for equivalence):

    power(n) = sum_u P(U = u) P(W in the rule's region | u).

Regions per untied count u (``b`` the rule's null boundary on the untied-share scale):

* ``noninferior`` (b = 1/2 - margin) and ``superior`` (b = 1/2): W >= c(u), the smallest c
  with ``P(Bin(u, b) >= c) <= alpha``;
* ``equivalent``: c_lo(u) <= W <= c_hi(u), c_lo at 1/2 - margin as above and c_hi the largest
  c with ``P(Bin(u, 1/2 + margin) <= c) <= alpha``.

No region exists at u = 0 (no untied comparison: power 0). The size at the rule's null
boundary is the same sum at ``true = b`` and is at most alpha for every tie rate, because each
conditional size is. Exact power is a sawtooth in n; besides the smallest n reaching a target
this module finds the stable n, from which every larger n reaches it: every n is computed up
to a point past which a Hoeffding bound guarantees the target (see `_certain_from`).
Untied counts further than 12 standard deviations from the mean carry below 1e-30 of the
probability and are left out of the sum. Pure; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np
import numpy.typing as npt
from scipy import special

from blindtest.stats.binomial import lower_tail, upper_tail
from blindtest.stats.intervals import (
    _check_alpha,
    _check_choice,
    _check_closed,
    _check_int,
    _check_open,
    result_to_dict,
)
from blindtest.stats.similarity import SIMILARITY_PROTOCOLS, SimilarityProtocol, pc_at_pd

__all__ = [
    "DecisionPowerRow",
    "PowerRule",
    "SampleSize",
    "decision_power",
    "decision_power_table",
    "decision_sample_size",
    "decision_size",
    "sensitivity_power",
    "sensitivity_sample_size",
    "similarity_power",
    "similarity_sample_size",
    "untied_critical",
]

PowerRule = Literal["noninferior", "superior", "equivalent"]
POWER_RULES: tuple[str, ...] = ("noninferior", "superior", "equivalent")
Side = Literal["above", "below"]
Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]

#: The largest design searched (as `blindtest.planning.search.MAX_TRIALS` for bt-plan).
MAX_COMPARISONS = 100_000
_TIE_SPREAD = 12.0
_BLOCK = 512


def _boundaries(rule: str, margin: float) -> tuple[float, float | None]:
    """(lower null boundary, upper null boundary or None) on the untied-share scale."""
    if rule == "superior":
        return 0.5, None
    if rule == "noninferior":
        return 0.5 - margin, None
    return 0.5 - margin, 0.5 + margin


def _check_rule(rule: object, margin: object) -> tuple[PowerRule, float]:
    name = cast(PowerRule, _check_choice("rule", rule, POWER_RULES))
    if name == "superior":
        if margin not in (None, 0, 0.0):
            raise ValueError(f"superior takes no margin, got {margin!r}")
        return name, 0.0
    return name, _check_open("margin", margin, 0.0, 0.5)


def untied_critical(untied: npt.ArrayLike, null: float, alpha: float, side: Side) -> Ints:
    """Per untied count u: ``"above"``, the smallest c with ``P(Bin(u, null) >= c) <= alpha``
    (u + 1 when none); ``"below"``, the largest c with ``P(Bin(u, null) <= c) <= alpha``
    (-1 when none). Vectorised bisection on the exact tails."""
    us = np.asarray(untied, dtype=np.int64)
    lo = np.zeros_like(us) if side == "above" else np.full_like(us, -1)
    hi = us + 1 if side == "above" else us.copy()
    while True:
        active = lo < hi
        if not active.any():
            return lo
        if side == "above":
            middle = (lo + hi) // 2
            holds = upper_tail(middle, us, null) <= alpha
            hi = np.where(active & holds, middle, hi)
            lo = np.where(active & ~holds, middle + 1, lo)
        else:
            middle = (lo + hi + 1) // 2
            holds = lower_tail(middle, us, null) <= alpha
            lo = np.where(active & holds, middle, lo)
            hi = np.where(active & ~holds, middle - 1, hi)


def _conditional_power(untied: Ints, rule: str, margin: float, alpha: float, true: float) -> Floats:
    """P(the rule's claim is shown | U = u) for each u (0 at u = 0)."""
    lower, upper = _boundaries(rule, margin)
    c_lo = untied_critical(untied, lower, alpha, "above")
    power = upper_tail(c_lo, untied, true)
    if upper is not None:
        c_hi = untied_critical(untied, upper, alpha, "below")
        inside = lower_tail(c_hi, untied, true) - lower_tail(c_lo - 1, untied, true)
        power = np.where(c_lo <= c_hi, np.clip(inside, 0.0, 1.0), 0.0)
    return np.asarray(np.where(untied > 0, power, 0.0), dtype=np.float64)


def _mixed_power(ns: Ints, by_untied: Floats, ties: float) -> Floats:
    """``sum_u P(U = u) by_untied[u]`` for U ~ Bin(n, 1 - ties), per n (blocks of n)."""
    if ties <= 0.0:
        return np.asarray(by_untied[ns], dtype=np.float64)
    kept = 1.0 - ties
    out = np.empty(ns.size, dtype=np.float64)
    for start in range(0, ns.size, _BLOCK):
        block = ns[start : start + _BLOCK].astype(np.float64)
        spread = _TIE_SPREAD * np.sqrt(block * ties * kept) + 1.0
        lo = np.maximum(0.0, np.floor(block * kept - spread))
        hi = np.minimum(block, np.ceil(block * kept + spread))
        width = int((hi - lo).max()) + 1
        u = lo[:, None] + np.arange(width, dtype=np.float64)[None, :]
        valid = u <= hi[:, None]
        u = np.where(valid, u, lo[:, None])
        n = block[:, None]
        log_pmf = (
            special.gammaln(n + 1.0)
            - special.gammaln(u + 1.0)
            - special.gammaln(n - u + 1.0)
            + special.xlogy(u, kept)
            + special.xlog1py(n - u, -kept)
        )
        weights = np.where(valid, np.exp(log_pmf), 0.0)
        out[start : start + _BLOCK] = np.sum(weights * by_untied[u.astype(np.int64)], axis=1)
    return np.asarray(np.clip(out, 0.0, 1.0), dtype=np.float64)


def _check_ns(ns: Iterable[int] | int) -> Ints:
    values = [ns] if isinstance(ns, (int, np.integer)) else list(ns)
    checked = [_check_int("n", n, 1) for n in values]
    return np.asarray(checked, dtype=np.int64)


def decision_power(
    ns: Iterable[int] | int,
    rule: PowerRule,
    margin: float | None = None,
    *,
    true: float,
    ties: float = 0.0,
    alpha: float = 0.05,
) -> Floats:
    """Exact probability that the rule's claim is shown with n comparisons, per n in ``ns``,
    when the challenger's untied share is ``true`` and each comparison ties with probability
    ``ties``."""
    name, margin_value = _check_rule(rule, margin)
    true_value = _check_closed("true", true)
    ties_value = _check_closed("ties", ties, 0.0, 1.0)
    if ties_value == 1.0:
        raise ValueError("ties must be below 1 (every comparison a tie decides nothing), got 1")
    alpha_value = _check_alpha(alpha)
    values = _check_ns(ns)
    if values.size == 0:
        return np.zeros(0, dtype=np.float64)
    untied = np.arange(int(values.max()) + 1, dtype=np.int64)
    by_untied = _conditional_power(untied, name, margin_value, alpha_value, true_value)
    return _mixed_power(values, by_untied, ties_value)


def decision_size(
    ns: Iterable[int] | int,
    rule: PowerRule,
    margin: float | None = None,
    *,
    ties: float = 0.0,
    alpha: float = 0.05,
) -> Floats:
    """Exact size at the rule's null boundary (the largest over both boundaries for
    equivalence): the probability of "shown" when the claim is false by exactly the margin."""
    name, margin_value = _check_rule(rule, margin)
    lower, upper = _boundaries(name, margin_value)
    size = decision_power(ns, name, margin_value, true=lower, ties=ties, alpha=alpha)
    if upper is not None:
        other = decision_power(ns, name, margin_value, true=upper, ties=ties, alpha=alpha)
        size = np.maximum(size, other)
    return size


@dataclass(frozen=True, slots=True)
class DecisionPowerRow:
    """One row of bt-plan's table for a decision: ``power`` at the planning value, ``size``
    at the null boundary (same tie rate), and the expected untied count ``n (1 - ties)``."""

    n: int
    power: float
    size: float
    expected_untied: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def decision_power_table(
    ns: Iterable[int],
    rule: PowerRule,
    margin: float | None = None,
    *,
    true: float,
    ties: float = 0.0,
    alpha: float = 0.05,
) -> tuple[DecisionPowerRow, ...]:
    """`decision_power` and `decision_size` as rows, one per n."""
    values = _check_ns(ns)
    power = decision_power(values, rule, margin, true=true, ties=ties, alpha=alpha)
    size = decision_size(values, rule, margin, ties=ties, alpha=alpha)
    kept = 1.0 - float(ties)
    return tuple(
        DecisionPowerRow(int(n), float(p), float(s), round(float(n) * kept, 9))
        for n, p, s in zip(values, power, size, strict=True)
    )


@dataclass(frozen=True, slots=True)
class SampleSize:
    """The n (comparisons, ties included) at which a claim is shown with ``target`` power.

    ``smallest_n``: the first n whose exact power reaches the target (None if none up to
    ``searched_to``). ``stable_n``: the first n from which every larger n reaches it; certain
    when ``stable_sure`` (every n up to ``stable_checked_to`` computed exactly, and beyond it a
    Hoeffding bound holds), otherwise checked up to ``stable_checked_to`` only. ``basis`` says
    what the figure is the power of.
    """

    target: float
    true: float
    ties: float
    smallest_n: int | None
    power_at_smallest: float | None
    stable_n: int | None
    stable_checked_to: int
    stable_sure: bool
    searched_to: int
    basis: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def _hoeffding_miss(untied: float, gaps: tuple[float, ...], alpha: float) -> float:
    """Upper bound on P(not shown | U >= untied): each critical count lies within
    ``a sqrt(u) + 1`` of ``u b`` (a = sqrt(log(1/alpha) / 2)), and W falls short of it by
    ``gap u - a sqrt(u)`` with probability at most ``exp(-2 (gap sqrt(u) - a)^2)``."""
    a = math.sqrt(math.log(1.0 / alpha) / 2.0)
    total = 0.0
    root = math.sqrt(max(untied, 0.0))
    for gap in gaps:
        excess = gap * root - a
        if excess <= 0:
            return 1.0
        total += math.exp(-2.0 * excess * excess)
    return min(1.0, total)


def _power_bound(n: int, gaps: tuple[float, ...], ties: float, alpha: float) -> float:
    """A lower bound on the exact power at n: U >= n k - c sqrt(n) with probability at least
    1 - exp(-2 c^2) (Hoeffding), and then the conditional bound above; best c on a grid."""
    kept = 1.0 - ties
    if ties <= 0.0:
        return 1.0 - _hoeffding_miss(n, gaps, alpha)
    best = 0.0
    for c in np.linspace(0.05, 6.0, 120):
        untied = n * kept - c * math.sqrt(n)
        if untied <= 0:
            break
        best = max(best, 1.0 - math.exp(-2.0 * c * c) - _hoeffding_miss(untied, gaps, alpha))
    return best


def _certain_from(
    target: float, gaps: tuple[float, ...], ties: float, alpha: float, limit: int
) -> int | None:
    """An n from which `_power_bound` stays at or above the target (it only rises with n once
    it is positive), or None if not within ``limit``."""
    n = 1
    while _power_bound(n, gaps, ties, alpha) < target:
        if n >= limit:
            return None
        n = min(limit, n * 2)
    lo, hi = n // 2 + 1, n
    while lo < hi:
        middle = (lo + hi) // 2
        if _power_bound(middle, gaps, ties, alpha) >= target:
            hi = middle
        else:
            lo = middle + 1
    return lo


def _gaps(rule: str, margin: float, true: float) -> tuple[float, ...]:
    lower, upper = _boundaries(rule, margin)
    if upper is None:
        return (true - lower,)
    return (true - lower, upper - true)


def decision_sample_size(
    rule: PowerRule,
    margin: float | None = None,
    *,
    true: float,
    ties: float = 0.0,
    power: float = 0.8,
    alpha: float = 0.05,
    n_max: int = MAX_COMPARISONS,
) -> SampleSize:
    """Smallest and stable n for `decision_power` to reach ``power`` (see `SampleSize`)."""
    name, margin_value = _check_rule(rule, margin)
    target = _check_open("power", power)
    limit = _check_int("n_max", n_max, 1)
    true_value = _check_closed("true", true)
    ties_value = _check_closed("ties", ties, 0.0, 1.0)
    alpha_value = _check_alpha(alpha)
    basis = f"exact conditional binomial test of the untied share, {name}"
    gaps = _gaps(name, margin_value, true_value)

    def powers(ns: Ints) -> Floats:
        return decision_power(
            ns,
            name,
            margin_value,
            true=true_value,
            ties=ties_value,
            alpha=alpha_value,
        )

    return _search(target, true_value, ties_value, powers, gaps, alpha_value, limit, basis)


def _search(
    target: float,
    true: float,
    ties: float,
    powers: Any,
    gaps: tuple[float, ...],
    alpha: float,
    limit: int,
    basis: str,
) -> SampleSize:
    none = SampleSize(target, true, ties, None, None, None, 0, False, limit, basis)
    if min(gaps) <= 0 or ties >= 1.0:  # at or beyond a null boundary: power <= alpha
        return none
    certain = _certain_from(target, gaps, ties, alpha, limit)
    smallest: int | None = None
    power_at = 0.0
    low, high = 1, 256
    while low <= limit and smallest is None:
        high = min(high, limit)
        ns = np.arange(low, high + 1, dtype=np.int64)
        values = powers(ns)
        hits = np.flatnonzero(values >= target)
        if hits.size:
            smallest, power_at = int(ns[hits[0]]), float(values[hits[0]])
        low, high = high + 1, high * 4
    if smallest is None:
        return none
    scan_to = min(limit, max(2 * smallest, certain or 0))
    last_below = 0
    for start in range(smallest + 1, scan_to + 1, 16_384):
        ns = np.arange(start, min(scan_to, start + 16_383) + 1, dtype=np.int64)
        below = np.flatnonzero(powers(ns) < target)
        if below.size:
            last_below = int(ns[below[-1]])
    stable = max(smallest, last_below + 1)
    return SampleSize(
        target=target,
        true=true,
        ties=ties,
        smallest_n=smallest,
        power_at_smallest=power_at,
        stable_n=stable if stable <= scan_to else None,
        stable_checked_to=scan_to,
        stable_sure=certain is not None and certain <= scan_to,
        searched_to=limit,
        basis=basis,
    )


def sensitivity_power(
    ns: Iterable[int] | int, *, true: float, ties: float = 0.0, alpha: float = 0.05
) -> Floats:
    """Exact power of the sensitivity check with n planted comparisons: the one-sided exact
    test that the judge prefers the champion's own answer to its degraded copy in more than
    half the untied planted comparisons, when it does so with probability ``true``."""
    return decision_power(ns, "superior", true=true, ties=ties, alpha=alpha)


def sensitivity_sample_size(
    *, true: float, ties: float = 0.0, power: float = 0.8, alpha: float = 0.05
) -> SampleSize:
    """Smallest and stable number of planted comparisons for `sensitivity_power`."""
    found = decision_sample_size("superior", true=true, ties=ties, power=power, alpha=alpha)
    basis = "exact one-sided binomial test of the planted comparisons (sensitivity check)"
    return SampleSize(
        found.target,
        found.true,
        found.ties,
        found.smallest_n,
        found.power_at_smallest,
        found.stable_n,
        found.stable_checked_to,
        found.stable_sure,
        found.searched_to,
        basis,
    )


def similarity_power(
    ns: Iterable[int] | int,
    pd0: float,
    *,
    protocol: SimilarityProtocol = "triangle",
    pd: float = 0.0,
    alpha: float = 0.05,
) -> Floats:
    """Exact probability that `blindtest.stats.similarity.similarity_test` declares
    similarity at ``pd0`` with n trials when the true proportion of discriminators is ``pd``:
    the triangle's region is ``k <= c(n)`` (c the largest with ``P(Bin(n, pc0) <= c) <=
    alpha``), the pair's ``c_lo(n) <= k <= c(n)`` with c_lo at ``1 - pc0`` from above."""
    pd0_value = _check_open("pd0", pd0)
    _check_choice("protocol", protocol, SIMILARITY_PROTOCOLS)
    pc = pc_at_pd(_check_closed("pd", pd), protocol)
    alpha_value = _check_alpha(alpha)
    values = _check_ns(ns)
    pc0 = pc_at_pd(pd0_value, protocol)
    hi = untied_critical(values, pc0, alpha_value, "below")
    if protocol == "triangle":
        return np.asarray(np.where(hi >= 0, lower_tail(hi, values, pc), 0.0), dtype=np.float64)
    lo = untied_critical(values, 1.0 - pc0, alpha_value, "above")
    inside = lower_tail(hi, values, pc) - lower_tail(lo - 1, values, pc)
    return np.asarray(np.where(lo <= hi, np.clip(inside, 0.0, 1.0), 0.0), dtype=np.float64)


def similarity_sample_size(
    pd0: float,
    *,
    protocol: SimilarityProtocol = "triangle",
    pd: float = 0.0,
    power: float = 0.8,
    alpha: float = 0.05,
    n_max: int = MAX_COMPARISONS,
) -> SampleSize:
    """Smallest and stable n for `similarity_power` to reach ``power`` (the Hoeffding bound
    as for the margin rules: the region's edges lie within ``a sqrt(n) + 1`` of ``n pc0`` and
    ``n (1 - pc0)``)."""
    pd0_value = _check_open("pd0", pd0)
    _check_choice("protocol", protocol, SIMILARITY_PROTOCOLS)
    pd_value = _check_closed("pd", pd)
    target = _check_open("power", power)
    alpha_value = _check_alpha(alpha)
    limit = _check_int("n_max", n_max, 1)
    pc0, pc = pc_at_pd(pd0_value, protocol), pc_at_pd(pd_value, protocol)
    gaps = (pc0 - pc,) if protocol == "triangle" else (pc0 - pc, pc - (1.0 - pc0))

    def powers(ns: Ints) -> Floats:
        return similarity_power(ns, pd0_value, protocol=protocol, pd=pd_value, alpha=alpha_value)

    basis = f"exact similarity test ({protocol}) at pd0 = {pd0_value:g}"
    return _search(target, pd_value, 0.0, powers, gaps, alpha_value, limit, basis)
