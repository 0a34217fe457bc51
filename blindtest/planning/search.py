"""bt-plan's --target-power search: the smallest n whose exact power reaches a target, and
the stable n from which every larger n does, for a protocol's difference or similarity test.

Built on the same tail functions as `blindtest.stats.power`, over whole blocks of n at once;
each answer is confirmed with the exact row. The protocol's rules (chance, sidedness, the
Wilson gate of a preference verdict, its statistical model) come from its
`blindtest.model.protocols.Protocol`. Pure; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from scipy import special

from blindtest.model.protocols import PROTOCOLS
from blindtest.stats.binomial import lower_tail, upper_tail
from blindtest.stats.power import PowerProtocol, power_row, similarity_power_row
from blindtest.stats.similarity import SimilarityProtocol, pc_at_pd

#: The largest design bt-plan computes: one exact row costs O(n) time and memory (about 20 ms
#: and a few MB at 100,000), and a --target-power search scans every n up to its answer.
MAX_TRIALS = 100_000


@dataclass(frozen=True, slots=True)
class SmallestN:
    """The answer to --target-power at one alternative.

    ``n`` is the smallest trial count whose exact power reaches the target (None when none up
    to ``searched_to`` does). Exact power is a sawtooth in n, so ``dips`` lists the larger n up
    to ``checked_to`` (twice the answer, within the bound) that fall below the target again.
    ``at_chance`` is True when the alternative is chance itself, which no n can detect.
    """

    target: float
    n: int | None
    power: float | None
    searched_to: int
    checked_to: int
    dips: tuple[int, ...] = ()
    at_chance: bool = False
    #: The stable n: the smallest n from which every larger n reaches the target too. It is
    #: certain when ``stable_sure`` (every n from it up to ``stable_checked_to`` was computed
    #: exactly, and past that a Hoeffding bound on the power stays above the target); when
    #: the bound lies past the most bt-plan computes, it holds up to ``stable_checked_to``.
    stable_n: int | None = None
    stable_checked_to: int = 0
    stable_sure: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "n": self.n,
            "power": self.power,
            "searched_to": self.searched_to,
            "checked_to": self.checked_to,
            "dips": list(self.dips),
            "stable_n": self.stable_n,
            "stable_checked_to": self.stable_checked_to,
            "stable_sure": self.stable_sure,
        }


def power_model(protocol: str) -> PowerProtocol:
    """The `blindtest.stats.power` model of a protocol's difference test."""
    return cast(PowerProtocol, PROTOCOLS[protocol].model)


def similarity_model(protocol: str) -> SimilarityProtocol:
    """The `blindtest.stats.similarity` model of a protocol (one with ``similarity``)."""
    return cast(SimilarityProtocol, PROTOCOLS[protocol].model)


# --- the --target-power search ---------------------------------------------------------------
#
# The exact rows (`stats.power`, as bt-plan's table shows them) cost O(n) each, so scanning
# every n to 100,000 one row at a time would take minutes. The search below computes the same
# rejection regions for a whole block of n at once, with the same tail functions
# (`stats.binomial`) and the same Wilson formula, and then confirms the answer with the exact
# row. Blocks grow by four (1-256, 257-1024, ...), so the work is proportional to the answer,
# not to the bound.

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def _first_true(
    ns: Ints, start: Ints, holds: Callable[[Ints, Ints], npt.NDArray[np.bool_]], *, down: bool
) -> Ints:
    """Per n, the smallest k in [start-or-below, n + 1] where ``holds(k, n)`` (monotone: false
    then true); ``n + 1`` when it never holds. ``down`` allows stepping below ``start``."""
    k: Ints = np.asarray(np.clip(start, 0, ns + 1), dtype=np.int64)
    while down:
        lower = np.flatnonzero(k > 0)
        moved = lower[holds(k[lower] - 1, ns[lower])]
        if moved.size == 0:
            break
        k[moved] -= 1
    while True:
        open_ = np.flatnonzero(k <= ns)
        moved = open_[~holds(k[open_], ns[open_])]
        if moved.size == 0:
            return k
        k[moved] += 1


def _normal_guess(ns: Ints, p0: float, z: float) -> Ints:
    guess = np.ceil(ns * p0 + z * np.sqrt(ns * p0 * (1 - p0)))
    return np.asarray(guess, dtype=np.int64)


def _difference_region(ns: Ints, protocol: str, alpha: float) -> tuple[Ints, Ints]:
    """(lower, upper) rejection bounds per n, as `stats.power` computes them one n at a time."""
    rules = PROTOCOLS[protocol]
    if not rules.two_sided:  # one-sided against the chance (triangle)
        p0 = rules.chance
        upper = _first_true(
            ns,
            _normal_guess(ns, p0, -float(special.ndtri(alpha))),
            lambda k, n: upper_tail(k, n, p0) <= alpha,
            down=True,
        )
        return np.full_like(ns, -1), upper
    # Two-sided at 1/2: R's p-value is twice the upper tail above the middle.
    upper = _first_true(
        ns,
        _normal_guess(ns, 0.5, -float(special.ndtri(alpha / 2))),
        lambda k, n: (2 * k > n) & (np.minimum(1.0, 2.0 * upper_tail(k, n, 0.5)) <= alpha),
        down=True,
    )
    if rules.prefers:  # the verdict also needs the Wilson interval to exclude 1/2
        z = -float(special.ndtri(alpha / 2.0))

        def wilson_above_half(k: Ints, n: Ints) -> npt.NDArray[np.bool_]:
            root = np.sqrt(z * z + 4.0 * k * (n - k) / n)
            lo = np.where(k == 0, 0.0, 2.0 * k * k / (n * (2.0 * k + z * z + z * root)))
            return np.asarray(lo > 0.5)

        start = np.maximum(upper, -((-(ns + 2)) // 2))
        upper = _first_true(ns, start, wilson_above_half, down=False)
    lower = np.where(upper <= ns, ns - upper, -1)
    return lower, upper


def _difference_power(ns: Ints, protocol: str, alpha: float, pc: float) -> Floats:
    lower, upper = _difference_region(ns, protocol, alpha)
    power = lower_tail(lower, ns, pc) + upper_tail(upper, ns, pc)
    return np.asarray(np.minimum(1.0, power), dtype=np.float64)


def _similarity_power(ns: Ints, protocol: str, alpha: float, pd0: float, pd: float) -> Floats:
    """P(declare similarity) per n: ``lo <= k <= hi`` as `stats.power._similarity_region`."""
    guess = similarity_model(protocol)
    pc0 = pc_at_pd(pd0, guess)
    z = -float(special.ndtri(alpha))
    above = _first_true(
        ns, _normal_guess(ns, pc0, z), lambda k, n: lower_tail(k, n, pc0) > alpha, down=True
    )
    hi = above - 1
    lo = np.zeros_like(ns)
    if PROTOCOLS[protocol].two_sided:  # two one-sided tests: inverted nicknames too (pair)
        q0 = 1.0 - pc0
        lo = _first_true(
            ns, _normal_guess(ns, q0, z), lambda k, n: upper_tail(k, n, q0) <= alpha, down=True
        )
    pc = pc_at_pd(pd, guess)
    inside = lower_tail(hi, ns, pc) - lower_tail(lo - 1, ns, pc)
    return np.asarray(np.where(lo > hi, 0.0, np.clip(inside, 0.0, 1.0)), dtype=np.float64)


#: Untied counts further than this many standard deviations from the mean carry less than
#: 1e-30 of the probability together: the mixture over ties leaves them out.
_TIE_SPREAD = 12.0


def power_with_ties(ns: Ints, protocol: str, alpha: float, win: float, ties: float) -> Floats:
    """P(verdict) per n comparisons when each is a tie with probability ``ties``: ties leave
    the test, so the verdict is decided on U ~ Bin(n, 1 - ties) untied comparisons, of which
    each goes to the side with probability ``win``. Power = sum_u P(U = u) power(u)."""
    from scipy import stats  # deferred: scipy.stats costs 0.5 s at start-up

    top = int(ns.max()) if ns.size else 0
    untied = np.zeros(top + 1, dtype=np.float64)
    if top:
        untied[1:] = _difference_power(np.arange(1, top + 1, dtype=np.int64), protocol,
                                       alpha, win)  # fmt: skip
    out = np.empty(ns.size, dtype=np.float64)
    kept = 1.0 - ties
    for index, n in enumerate(ns.tolist()):
        mean, spread = n * kept, _TIE_SPREAD * math.sqrt(n * ties * kept) + 1.0
        lo, hi = max(0, math.floor(mean - spread)), min(n, math.ceil(mean + spread))
        us = np.arange(lo, hi + 1)
        out[index] = float(stats.binom.pmf(us, n, kept) @ untied[lo : hi + 1])
    return np.asarray(np.clip(out, 0.0, 1.0), dtype=np.float64)


def certain_power_from(
    protocol: str, alpha: float, pc: float, target: float, ties: float = 0.0
) -> int | None:
    """An n from which the power at ``pc`` is certainly at or above ``target`` for every
    larger n; None at chance.

    Hoeffding bounds both sides. The critical count of n trials is at most
    ``n p0 + a sqrt(n) + 1`` (triangle ``a = sqrt(ln(1/alpha)/2)``; two-sided at 1/2
    ``a = sqrt(ln(2/alpha)/2)``; preference also needs its Wilson interval to exclude 1/2,
    which is ``k > n/2 + z sqrt(n)/2``). The count at the alternative falls short of that with
    probability at most ``exp(-2 f^2)``, ``f = delta sqrt(n) - a - 1/sqrt(n)``, which only
    shrinks as n grows: so power >= target once ``f >= sqrt(ln(1/(1 - target))/2)``. With
    ties, the untied count reaches ``n (1 - t) - c sqrt(n)`` with probability >= sqrt(target),
    and that many untied comparisons have power >= sqrt(target) by the same bound.
    """
    rules = PROTOCOLS[protocol]
    if not rules.two_sided:
        a, delta = math.sqrt(math.log(1.0 / alpha) / 2.0), pc - rules.chance
    else:
        a, delta = math.sqrt(math.log(2.0 / alpha) / 2.0), abs(pc - rules.chance)
        if rules.prefers:
            a = max(a, -float(special.ndtri(alpha / 2.0)) / 2.0)
    if delta <= 0:
        return None

    def untied_needed(power: float) -> float:
        b = math.sqrt(math.log(1.0 / (1.0 - power)) / 2.0)
        root = ((a + b) + math.sqrt((a + b) ** 2 + 4.0 * delta)) / (2.0 * delta)
        return root * root

    if ties <= 0:
        return math.ceil(untied_needed(target))
    share = math.sqrt(target)
    need, c = untied_needed(share), math.sqrt(math.log(1.0 / (1.0 - share)) / 2.0)
    kept = 1.0 - ties
    root = (c + math.sqrt(c * c + 4.0 * kept * need)) / (2.0 * kept)
    return math.ceil(root * root)


def difference_smallest_n(
    target: float, protocol: str, alpha: float, pc: float, ties: float = 0.0
) -> SmallestN:
    """`find_smallest_n` for the difference test of ``protocol`` at the alternative ``pc``
    (preference: a win rate among untied comparisons, with ``ties`` the expected tie rate)."""
    if ties > 0:

        def block(ns: Ints) -> Floats:
            return power_with_ties(ns, protocol, alpha, pc, ties)

        def exact(n: int) -> float:
            return float(block(np.array([n], dtype=np.int64))[0])

    else:

        def block(ns: Ints) -> Floats:
            return _difference_power(ns, protocol, alpha, pc)

        def exact(n: int) -> float:
            model = power_model(protocol)
            return power_row(n, protocol=model, alpha=alpha, pcs=[pc]).power[pc]

    return find_smallest_n(
        target,
        block,
        exact=exact,
        at_chance=_at_chance(protocol, pc),
        certain_from=certain_power_from(protocol, alpha, pc, target, ties),
    )


def similarity_smallest_n(
    target: float, protocol: str, alpha: float, pd0: float, pd: float
) -> SmallestN:
    def block(ns: Ints) -> Floats:
        return _similarity_power(ns, protocol, alpha, pd0, pd)

    def exact(n: int) -> float:
        model = similarity_model(protocol)
        return similarity_power_row(n, pd0, protocol=model, alpha=alpha, pds=[pd]).power[pd]

    return find_smallest_n(target, block, exact=exact)


def _at_chance(protocol: str, pc: float) -> bool:
    rules = PROTOCOLS[protocol]
    return pc == rules.chance if rules.two_sided else pc <= rules.chance


#: The stable-n scan computes at most this many n at once (memory, not time).
_STABLE_BLOCK = 16_384


def find_smallest_n(
    target: float,
    powers: Callable[[Ints], Floats],
    *,
    exact: Callable[[int], float],
    at_chance: bool = False,
    bound: int = MAX_TRIALS,
    certain_from: int | None = None,
) -> SmallestN:
    """Smallest n <= ``bound`` whose power (``powers`` over a block of n; ``exact`` for one n)
    reaches ``target``; the larger n up to twice the answer that fall below it again; and the
    stable n, from which no larger n falls below: every n is computed up to ``certain_from``
    (past which a bound guarantees the target), or up to twice the answer without one."""
    if at_chance:
        return SmallestN(target, None, None, 0, 0, at_chance=True)
    low, high = 1, 256
    while low <= bound:
        high = min(high, bound)
        ns = np.arange(low, high + 1, dtype=np.int64)
        for index in np.flatnonzero(powers(ns) >= target - 1e-12):
            n = int(ns[index])
            power = exact(n)
            if power >= target:
                return _with_stable_n(target, n, power, powers, bound, certain_from)
        low, high = high + 1, high * 4
    return SmallestN(target, None, None, bound, bound)


def _with_stable_n(
    target: float,
    n: int,
    power: float,
    powers: Callable[[Ints], Floats],
    bound: int,
    certain_from: int | None,
) -> SmallestN:
    checked_to = min(bound, 2 * n)
    scan_to = min(bound, max(checked_to, certain_from or 0))
    below: list[int] = []
    for start in range(n + 1, scan_to + 1, _STABLE_BLOCK):
        ns = np.arange(start, min(scan_to, start + _STABLE_BLOCK - 1) + 1, dtype=np.int64)
        below += [int(d) for d in ns[powers(ns) < target]]
    stable = below[-1] + 1 if below else n
    return SmallestN(
        target,
        n,
        power,
        n,
        checked_to,
        tuple(d for d in below if d <= checked_to),
        stable_n=stable if stable <= scan_to else None,
        stable_checked_to=scan_to,
        stable_sure=certain_from is not None and certain_from <= scan_to,
    )
