"""Power planning for bt-plan: exact rows built on `blindtest.stats.power`. Pure; no I/O.

Grid values keep the text the user typed (``"0.6"``), because the JSON output is keyed by it
and ``str(0.6 + 0.0)`` is not always what was written.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from scipy import special

from blindtest.protocols import PROTOCOLS
from blindtest.stats.binomial import lower_tail, upper_tail
from blindtest.stats.power import (
    PowerProtocol,
    power_row,
    similarity_power_row,
)
from blindtest.stats.similarity import SimilarityProtocol, pc_at_pd

DEFAULT_TRIALS = (10, 15, 20, 23, 25, 30, 40, 50)
#: The largest design bt-plan computes: one exact row costs O(n) time and memory (about 20 ms
#: and a few MB at 100,000), and a --target-power search scans every n up to its answer.
MAX_TRIALS = 100_000
#: At most this many trials over all rows of one table (each row is exact and costs O(n)).
MAX_TOTAL_TRIALS = 1_000_000


@dataclass(frozen=True, slots=True)
class GridValue:
    """One alternative as written (``text``) and as the number the power function takes
    (``value``: a proportion correct or win rate; a pd for similarity rows)."""

    text: str
    value: float


@dataclass(frozen=True, slots=True)
class PlanResult:
    protocol: str
    alpha: float
    grid: str  # "pc", "pd" or "win rate"
    values: tuple[GridValue, ...]
    rows: tuple[dict[str, Any], ...]
    smallest: dict[str, SmallestN]
    similarity_pd0: float | None = None
    #: The expected tie rate of a preference plan (n then counts every comparison).
    ties: float = 0.0


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


def grid_values(
    protocol: str, pcs: Sequence[str] | None, pds: Sequence[str] | None
) -> tuple[str, tuple[GridValue, ...]]:
    """Turn the ``--pc``/``--pd`` texts into proportions correct for the protocol."""
    rules = PROTOCOLS[protocol]
    if pds is not None:
        if not rules.similarity:
            raise ValueError(f"--pd has no meaning for {protocol}; give win rates with --pc")
        guess = _similarity_model(protocol)
        return "pd", tuple(GridValue(t, pc_at_pd(_unit(t, "--pd"), guess)) for t in pds)
    texts = pcs if pcs is not None else rules.default_pcs
    kind = "win rate" if rules.prefers else "pc"
    return kind, tuple(GridValue(t, _unit(t, "--pc")) for t in texts)


def _power_model(protocol: str) -> PowerProtocol:
    """The `blindtest.stats.power` model of a protocol's difference test."""
    return cast(PowerProtocol, PROTOCOLS[protocol].model)


def _similarity_model(protocol: str) -> SimilarityProtocol:
    """The `blindtest.stats.similarity` model of a protocol (one with ``similarity``)."""
    return cast(SimilarityProtocol, PROTOCOLS[protocol].model)


def _unit(text: str, option: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{option}: {text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{option}: {text} is outside [0, 1]")
    return value


def build_plan(
    protocol: str,
    trials: Sequence[int],
    *,
    alpha: float,
    pcs: Sequence[str] | None = None,
    pds: Sequence[str] | None = None,
    target_power: float | None = None,
    ties: float = 0.0,
) -> PlanResult:
    """Critical count, achieved alpha and exact power at each grid value, for each n.

    ``ties`` (preference only) is the expected share of comparisons that are ties; n then
    counts every comparison and the win rates are among the untied ones."""
    grid, values = grid_values(protocol, pcs, pds)
    if ties:
        if not PROTOCOLS[protocol].prefers:  # only a preference judge may answer "tie"
            raise ValueError("--ties is for preference designs (triangle and pair have no ties)")
        if not 0 <= ties < 1:
            raise ValueError(f"--ties: {ties:g} is outside [0, 1)")
        return _plan_with_ties(protocol, trials, alpha, grid, values, target_power, ties)
    rows = []
    model = _power_model(protocol)
    for n in trials:
        row = power_row(n, protocol=model, alpha=alpha, pcs=[v.value for v in values])
        rows.append(
            {
                "n": row.n,
                "critical": row.critical,
                "lower_critical": row.lower_critical,
                "achieved_alpha": row.achieved_alpha,
                "power": {v.text: row.power[v.value] for v in values},
            }
        )
    smallest: dict[str, SmallestN] = {}
    if target_power is not None:
        for v in values:
            smallest[v.text] = difference_smallest_n(target_power, protocol, alpha, v.value)
    return PlanResult(protocol, alpha, grid, values, tuple(rows), smallest)


def _plan_with_ties(
    protocol: str,
    trials: Sequence[int],
    alpha: float,
    grid: str,
    values: tuple[GridValue, ...],
    target_power: float | None,
    ties: float,
) -> PlanResult:
    """Preference rows over n comparisons of which a share ``ties`` are expected to be ties:
    no fixed critical count (the verdict is decided on however many are untied)."""
    ns = np.asarray(trials, dtype=np.int64)
    nulls = _power_with_ties(ns, protocol, alpha, PROTOCOLS[protocol].chance, ties)
    powers = {v.text: _power_with_ties(ns, protocol, alpha, v.value, ties) for v in values}
    rows = tuple(
        {
            "n": int(n),
            "critical": None,
            "lower_critical": None,
            "achieved_alpha": float(nulls[i]),
            "power": {text: float(power[i]) for text, power in powers.items()},
            "ties": ties,
        }
        for i, n in enumerate(ns.tolist())
    )
    smallest: dict[str, SmallestN] = {}
    if target_power is not None:
        for v in values:
            smallest[v.text] = difference_smallest_n(target_power, protocol, alpha, v.value, ties)
    return PlanResult(protocol, alpha, grid, values, rows, smallest, ties=ties)


def build_similarity_plan(
    protocol: str,
    trials: Sequence[int],
    pd0: float,
    *,
    alpha: float,
    pds: Sequence[str] | None = None,
    target_power: float | None = None,
) -> PlanResult:
    """Rows for a pre-registered similarity claim at ``pd0``: power is the chance of
    declaring "indistinguishable within pd0" when the true pd is each grid value."""
    if not PROTOCOLS[protocol].similarity:
        raise ValueError("--similarity applies to the triangle and pair protocols")
    kind = _similarity_model(protocol)
    texts = pds if pds is not None else ("0",)
    values = tuple(GridValue(t, _unit(t, "--pd")) for t in texts)
    rows = []
    for n in trials:
        row = similarity_power_row(
            n,
            pd0,
            protocol=kind,
            alpha=alpha,
            pds=[v.value for v in values],
        )
        rows.append(
            {
                "n": row.n,
                "similar_lo": row.similar_lo,
                "similar_hi": row.similar_hi,
                "achieved_alpha": row.achieved_alpha,
                "power": {v.text: row.power[v.value] for v in values},
            }
        )
    smallest: dict[str, SmallestN] = {}
    if target_power is not None:
        for v in values:
            smallest[v.text] = _similarity_smallest_n(target_power, protocol, alpha, pd0, v.value)
    return PlanResult(protocol, alpha, "pd", values, tuple(rows), smallest, similarity_pd0=pd0)


# --- the --target-power search ---------------------------------------------------------------
#
# The exact rows above cost O(n) each, so scanning every n to 100,000 one row at a time would
# take minutes. The search below computes the same rejection regions for a whole block of n at
# once, with the same tail functions (`stats.binomial`) and the same Wilson formula, and then
# confirms the answer with the exact row. Blocks grow by four (1-256, 257-1024, ...), so the
# work is proportional to the answer, not to the bound.

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
    guess = _similarity_model(protocol)
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


def _power_with_ties(ns: Ints, protocol: str, alpha: float, win: float, ties: float) -> Floats:
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
            return _power_with_ties(ns, protocol, alpha, pc, ties)

        def exact(n: int) -> float:
            return float(block(np.array([n], dtype=np.int64))[0])

    else:

        def block(ns: Ints) -> Floats:
            return _difference_power(ns, protocol, alpha, pc)

        def exact(n: int) -> float:
            model = _power_model(protocol)
            return power_row(n, protocol=model, alpha=alpha, pcs=[pc]).power[pc]

    return find_smallest_n(
        target,
        block,
        exact=exact,
        at_chance=_at_chance(protocol, pc),
        certain_from=certain_power_from(protocol, alpha, pc, target, ties),
    )


def _similarity_smallest_n(
    target: float, protocol: str, alpha: float, pd0: float, pd: float
) -> SmallestN:
    def block(ns: Ints) -> Floats:
        return _similarity_power(ns, protocol, alpha, pd0, pd)

    def exact(n: int) -> float:
        model = _similarity_model(protocol)
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


def _label(result: PlanResult, value: GridValue) -> str:
    names = {"pc": "Pc", "pd": "pd", "win rate": "win rate"}
    return f"power if {names[result.grid]} = {value.text}"


def _decision(result: PlanResult, row: dict[str, Any]) -> str:
    if result.similarity_pd0 is not None:
        if row["similar_hi"] is None:
            return "never"
        rules = PROTOCOLS[result.protocol]
        if rules.two_sided:
            return f"{row['similar_lo']}..{row['similar_hi']} {rules.unit}"
        return f"<= {row['similar_hi']} {rules.unit}"
    if row.get("ties"):
        return "on the untied"
    if row["critical"] is None:
        return "never"
    rules = PROTOCOLS[result.protocol]
    if not rules.two_sided:
        return f"{row['critical']} {rules.unit}"
    return f"{row['critical']} {rules.unit} (or <= {row['lower_critical']})"


def times_in_100(probability: float) -> str:
    """A probability as "95 times in 100" (never "0" or "100" for what is merely rare/likely)."""
    count = round(probability * 100)
    if count < 1:
        return "less than once in 100"
    if count > 99 and probability < 1:
        return "more than 99 times in 100"
    return f"{count} time{'s' if count != 1 else ''} in 100"


def _who(result: PlanResult, value: GridValue) -> str:
    """The alternative in words: "a judge right 70% of the time"."""
    if result.similarity_pd0 is not None:
        return f"when judges truly tell the two apart on {float(value.text):.0%} of trials"
    if result.grid == "win rate" and result.ties:
        return (
            f"a side preferred in {value.value:.0%} of the untied comparisons, with "
            f"{result.ties:.0%} ties,"
        )
    if result.grid == "win rate":
        return f"a side preferred {value.value:.0%} of the time"
    if result.grid == "pd":
        apart = float(value.text)
        return f"a judge who truly tells them apart on {apart:.0%} of trials"
    return f"a judge right {value.value:.0%} of the time"


def reading(result: PlanResult) -> str:
    """The first row in one sentence, so the table needs no statistics to read."""
    row, value = result.rows[0], result.values[-1]
    power = row["power"][value.text]
    if result.similarity_pd0 is not None:
        return (
            f"Reading the first row: with {row['n']} trials, {_who(result, value)}, the claim "
            f"'indistinguishable within pd {result.similarity_pd0:g}' is made "
            f"{times_in_100(power)}."
        )
    if result.grid == "win rate":
        return (
            f"Reading the first row: with {row['n']} trials, {_who(result, value)} wins the "
            f"verdict {times_in_100(power)}; with no real preference, one side wrongly wins it "
            f"{times_in_100(row['achieved_alpha'])} (the achieved alpha)."
        )
    return (
        f"Reading the first row: {_who(result, value)} is detected {times_in_100(power)} "
        f"with {row['n']} trials; a judge who is only guessing is wrongly detected "
        f"{times_in_100(row['achieved_alpha'])} (the achieved alpha)."
    )


def _smallest_line(result: PlanResult, text: str, found: SmallestN) -> str:
    grid = result.values[[v.text for v in result.values].index(text)]
    target = _label(result, grid).removeprefix("power if ")
    if found.at_chance:
        return (
            f"smallest n reaching the target power at {target}: none; at chance the test "
            "rejects only as often as alpha, whatever n"
        )
    if found.n is None:
        return (
            f"smallest n reaching the target power at {target}: none up to {found.searched_to:,} "
            f"trials (the most bt-plan computes)"
        )
    line = f"smallest n reaching the target power at {target}: {found.n} (power {found.power:.3f})"
    return f"{line}; {_stable_words(found)}"


def _stable_words(found: SmallestN) -> str:
    """Where the power stops dipping below the target, and how far that was checked."""
    sure = (
        f"computed exactly to {found.stable_checked_to:,}, and a bound holds beyond"
        if found.stable_sure
        else f"computed exactly to {found.stable_checked_to:,}, the most bt-plan computes"
    )
    if found.stable_n == found.n:
        return f"every larger n reaches it too ({sure})"
    dips = [str(d) for d in found.dips]
    if not dips:
        fall = "larger n fall below it again"
    elif len(dips) == 1:
        fall = f"{dips[0]} falls below it again"
    elif len(dips) <= 4:
        fall = f"{', '.join(dips[:-1])} and {dips[-1]} fall below it again"
    else:
        fall = f"{len(dips)} larger n fall below it again ({', '.join(dips[:4])}, ...)"
    if found.stable_n is None:
        return (
            f"the power is a sawtooth in n: {fall}; it still dips at {found.stable_checked_to:,}"
            f" ({sure}), so no n is stable"
        )
    where = "on" if found.stable_sure else f"to {found.stable_checked_to:,}"
    return (
        f"the power is a sawtooth in n: {fall}; the stable n is {found.stable_n:,}: every n "
        f"from it {where} reaches the target ({sure})"
    )


def _table(result: PlanResult) -> list[list[str]]:
    """Header row, then one row per n (the narrow layout reads the header row too)."""
    decide = "similar at" if result.similarity_pd0 is not None else "reject at"
    columns = ["trials", decide, "achieved alpha", *(_label(result, v) for v in result.values)]
    table = [columns]
    for row in result.rows:
        cells = [str(row["n"]), _decision(result, row), f"{row['achieved_alpha']:.3f}"]
        cells += [f"{row['power'][v.text]:.2f}" for v in result.values]
        table.append(cells)
    return table


def _two_line_header(name: str) -> tuple[str, str]:
    if name.startswith("power if "):
        return "power if", name.removeprefix("power if ")
    if name == "achieved alpha":
        return "achieved", "alpha"
    return name, ""


def _table_lines(table: list[list[str]]) -> list[str]:
    head, *rows = table
    headers = [_two_line_header(name) for name in head]
    grid = [[h[0] for h in headers], [h[1] for h in headers], *rows]
    widths = [max(len(r[i]) for r in grid) for i in range(len(head))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in grid
    ]


def _wrap(text: str, width: int, indent: str = "") -> list[str]:
    """Wrap at spaces only (never inside "false-positive" or a number)."""
    return textwrap.wrap(
        text, width, subsequent_indent=indent, break_on_hyphens=False, break_long_words=False
    )


_HOLD = "\x00"


def _narrow_rows(table: list[list[str]], width: int) -> list[str]:
    """One wrapped paragraph per row, for terminals too narrow for the table."""
    head, *rows = table
    lines: list[str] = []
    for cells in rows:
        parts = [f"{head[1]} {cells[1]}", f"achieved alpha {cells[2]}"]
        # "Pc = 0.7" stays on one line: its spaces are held by a placeholder while wrapping.
        parts += [
            f"power {cell} if {name.removeprefix('power if ').replace(' ', _HOLD)}"
            for name, cell in zip(head[3:], cells[3:], strict=True)
        ]
        text = f"{cells[0]} trials: " + "; ".join(parts)
        lines += [line.replace(_HOLD, " ") for line in _wrap(text, width, indent="  ")]
    return lines


def format_plan(result: PlanResult, width: int = 80) -> str:
    """The power table as spec 000 prints it (alpha to 3 decimals, power to 2), with every
    sentence wrapped at word boundaries to ``width``; a table wider than that becomes one
    paragraph per row."""
    width = max(width, 20)
    if result.similarity_pd0 is not None:
        head = (
            f"{result.protocol} similarity test at pd0 = {result.similarity_pd0:g}, "
            f"alpha {result.alpha:g}: declares 'indistinguishable within pd0' when"
        )
    else:
        head = (
            f"{result.protocol} design, exact binomial against chance "
            f"{PROTOCOLS[result.protocol].plan_chance}, "
            f"alpha {result.alpha:g}"
        )
        if result.ties:
            head += (
                f"; {result.ties:.0%} of comparisons expected to be ties: trials count every "
                "comparison, ties leave the test, and the win rate is among the untied"
            )
    table = _table(result)
    rows = _table_lines(table)
    if max(len(r) for r in rows) > width:
        rows = _narrow_rows(table, width)
    lines = [*_wrap(head, width), "", *rows]
    for text, found in result.smallest.items():
        lines += _wrap(_smallest_line(result, text, found), width, indent="  ")
    lines += ["", *_wrap(reading(result), width)]
    if result.similarity_pd0 is None:
        lines += _wrap(
            "Achieved alpha is the real false-positive rate of the rule; the binomial is "
            "discrete, so it sits below the nominal alpha.",
            width,
        )
    return "\n".join(lines)


#: bt-design's warning: a design under this power at Pc (or win rate) 0.7 gets one line.
WEAK_POWER = 0.5
WEAK_AT = 0.7
WEAK_TARGET = 0.8


def weak_design_note(protocol: str, trials: int, alpha: float) -> str | None:
    """One line for a design with under 50% power at Pc 0.7 (win rate 0.7), naming the trial
    count that reaches 80%; None for a design that is not weak."""
    rules = PROTOCOLS[protocol]
    model = _power_model(protocol)
    power = power_row(trials, protocol=model, alpha=alpha, pcs=[WEAK_AT]).power[WEAK_AT]
    if power >= WEAK_POWER:
        return None
    found = difference_smallest_n(WEAK_TARGET, protocol, alpha, WEAK_AT)
    verb, who = (
        ("find", "a side preferred 70% of the time")
        if rules.prefers
        else ("detect", "a judge right 70% of the time")
    )
    head = f"with {trials} trial{'s' if trials != 1 else ''} this design"
    if power == 0:
        line = f"{head} can never {verb} {who}"
    else:
        line = f"{head} {verb}s {who} only {times_in_100(power)}"
    if not found.n:
        return line
    steady = found.stable_n
    reach = f"; {found.n} trials reach 80%"
    if steady is not None and steady != found.n:
        reach += f" and every count from {steady} on stays there"
    if rules.prefers:
        return line + reach + ", if no comparison is a tie (bt-plan --ties shows more)"
    return line + reach + " (bt-plan shows more)"
