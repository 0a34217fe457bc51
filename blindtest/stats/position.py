"""The position gate: did the judges choose by position, with the comparison as the unit.

**Unit.** One comparison: every judge who saw it and every pass of it together (an LLM judge's
two passes of the position swap are one comparison; a panel's judges on one comparison are one
comparison). Judges who share a signal pick together, so their picks are not independent
trials: counted one by one, an unbiased panel of 3 to 5 judges who agree comparison by
comparison fails an exact binomial test on the picks in 15-31% of runs at a nominal 5%
(docs/statistics.md).

**Left share.** Comparison i has ``left[i]`` untied picks naming the output shown on the left
(shown first, in a pass of the swap) and ``right[i]`` naming the other one; ties carry no
position and drop out, and a comparison every pick of which tied drops out whole. Its left
share is ``s_i = left[i] / (left[i] + right[i])`` and the run's left share is the mean of the
``s_i`` over the comparisons that have one: each comparison counts once, however many judges
or passes it had. With the swap, a comparison whose two passes named the same output has
``s_i = 1/2`` (position decided nothing), one whose passes both named the output shown first
``s_i = 1``. With one judge and one pass this is the plain share of left picks.

**Test of "position moved no pick"** (``p_value``): the exact randomisation (sign-flip) test
over comparisons. The design puts each comparison's outputs left or right at random, and a
judge that ignores position gives the mirrored picks under the mirrored placement, so given
the ``|s_i - 1/2|`` the signs are fair coins (Fisher 1935, section 21; the paired
randomisation test). Its distribution is exact by convolution (``p_method = "exact"``), or
the normal approximation with the exact randomisation variance when the lattice is larger than
``EXACT_SUPPORT`` points (thousands of comparisons with ties and a panel; ``"normal"``).
With one judge and one pass it is the exact two-sided binomial test of today's gate. The
design balances the placements (half A on the left) rather than drawing each: then the exact
distribution is the permutation one, whose variance is at most ``N / (N - 1)`` times the
sign-flip variance; the simulation in docs/statistics.md shows the size holds.

**Interval** (``share``, ``share_tost``): the Korn and Graubard (1998, Survey Methodology
24:193-201) interval for a proportion from clustered data, as the NCHS data presentation
standards use it (Parker et al. 2017, Vital Health Stat 2(175)): the Clopper-Pearson interval
at the effective sample size ``n_eff = share (1 - share) / v`` with the cluster (comparison)
variance ``v = sum (s_i - share)^2 / N^2``, the design effect floored at 1 (``n_eff`` at most
the number of untied picks), ``n_eff`` scaled by ``(t(n - 1) / t(N - 1))^2`` for the N - 1
degrees of freedom of N comparisons; and ``n_eff = N`` (unscaled) when every share is 0 or
every share 1 (no variance to estimate: Clopper-Pearson over the comparisons, each one pick).
With one judge and one pass the interval is exactly Clopper-Pearson. With the swap it is
conservative (its passes are negatively correlated, which the floor at 1 does not credit).

**Verdict with a margin m** (two one-sided tests; Schuirmann 1987, J Pharmacokin Biopharm
15:657-680): ``pass`` when the ``1 - 2 alpha`` interval lies inside ``(1/2 - m, 1/2 + m)``
(``p_within <= alpha``), ``fail`` when the ``1 - alpha`` interval lies wholly outside
``[1/2 - m, 1/2 + m]`` (``p_beyond <= alpha``), ``warn`` otherwise: the data neither bound the
lean within the margin nor show it beyond. ``significant`` (``p_value <= alpha``) tells a
warning with a shown lean from one with too few comparisons to say.

**Default margin** ``POSITION_MARGIN = 0.05`` on the left share. Positions are randomised, so a
lean does not bias the A-versus-B test; it spends verdicts: a judge whose left share is
``1/2 + m`` lets position decide a share ``2m`` of its picks, which pulls every win rate toward
1/2 by that share (at m = 0.05, 10%: a 60% win rate reads 59%, 70% reads 68%). At 45,000
comparisons a 50.6% left share (decided: 1.2% of picks; a 60% rate moves 0.12 points) passes;
a judge on the left 60% of the time (20% of its picks decided by position) fails once its
interval clears 55%. Bounding a lean inside 5 points takes many comparisons: one honest judge
passes in 5% of runs at 300 comparisons, 44% at 500 and 86% at 1,000 (exact; a panel needs
fewer); short of that the run warns that it cannot bound the lean (``significant`` False),
which is no failure. A margin of 0.10 would pass half of honest single-judge runs at about 130
comparisons, but fail a judge only once it is shown beyond a 60% left share (a fifth of its
verdicts by position). Spec 003's 5% limit, read on the left share, is the same figure.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from blindtest.stats.intervals import (
    Interval,
    _check_alpha,
    _check_int,
    _check_open,
    result_to_dict,
)

__all__ = [
    "EXACT_SUPPORT",
    "POSITION_MARGIN",
    "ClusteredShareResult",
    "PositionCounts",
    "PositionGateResult",
    "clustered_share",
    "position_gate",
    "sign_flip_test",
    "tally_positions",
]

#: The default margin m on the left share (see the module docstring for why 0.05).
POSITION_MARGIN = 0.05
#: The sign-flip distribution is convolved exactly up to this many lattice points.
EXACT_SUPPORT = 1 << 18

Verdict = Literal["pass", "warn", "fail"]


# ----------------------------------------------------------------- counting picks by position


@dataclass(frozen=True, slots=True)
class PositionCounts:
    """Per comparison (in the order first seen): its key, the untied picks naming the left
    output, those naming the right one, and its ties."""

    keys: tuple[Hashable, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    ties: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (keys as given)."""
        return {
            "keys": list(self.keys),
            "left": list(self.left),
            "right": list(self.right),
            "ties": list(self.ties),
        }


def tally_positions(picks: Iterable[tuple[Hashable, str]]) -> PositionCounts:
    """Count ``(comparison key, position)`` picks, position ``"left"``, ``"right"`` or
    ``"tie"``: one entry per judge and pass (an LLM judge's second pass of the swap names the
    position as it was shown in that pass)."""
    index: dict[Hashable, int] = {}
    rows: list[list[int]] = []
    column = {"left": 0, "right": 1, "tie": 2}
    for number, (key, position) in enumerate(picks):
        if position not in column:
            raise ValueError(
                f"picks[{number}]: position must be 'left', 'right' or 'tie', got {position!r}"
            )
        row = index.setdefault(key, len(rows))
        if row == len(rows):
            rows.append([0, 0, 0])
        rows[row][column[position]] += 1
    return PositionCounts(
        keys=tuple(index),
        left=tuple(r[0] for r in rows),
        right=tuple(r[1] for r in rows),
        ties=tuple(r[2] for r in rows),
    )


def _counts(name: str, values: Sequence[int]) -> npt.NDArray[np.int64]:
    array = np.asarray(values)
    if array.ndim != 1 or array.dtype.kind not in "iu" or (array.size and array.min() < 0):
        for i, value in enumerate(values):  # name the first bad entry
            _check_int(f"{name}[{i}]", value, 0)
        if array.ndim != 1:
            raise ValueError(f"{name} must be a flat sequence of counts, got shape {array.shape}")
    return array.astype(np.int64, copy=False)


def _pairs(
    first_name: str, first: Sequence[int], second_name: str, second: Sequence[int]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Validated counts, the comparisons with no count in either dropped."""
    if len(first) != len(second):
        raise ValueError(
            f"{first_name} and {second_name} must have one entry per comparison, got "
            f"{len(first)} and {len(second)}"
        )
    a, b = _counts(first_name, first), _counts(second_name, second)
    kept = (a + b) > 0
    if not kept.any():
        raise ValueError(
            f"no comparison has a count in {first_name} or {second_name} "
            f"({len(first)} comparisons given)"
        )
    return a[kept], b[kept]


# ----------------------------------------------------------------- the clustered proportion


@dataclass(frozen=True, slots=True)
class ClusteredShareResult:
    """A proportion whose unit is the comparison: the mean over ``comparisons`` of each
    comparison's share ``k_i / n_i``, ``picks`` the sum of the ``n_i``. ``interval`` is
    Korn and Graubard's (see the module docstring) at ``confidence_level``, computed at the
    effective sample size ``effective_n``; ``design_effect`` the cluster variance over the
    binomial variance of ``picks`` independent picks (None when every share is 0 or 1)."""

    comparisons: int
    picks: int
    interval: Interval
    effective_n: float
    design_effect: float | None
    confidence_level: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def _moments(k: npt.NDArray[np.int64], n: npt.NDArray[np.int64]) -> tuple[float, float]:
    """The mean share over comparisons and its cluster variance sum (s_i - mean)^2 / N^2."""
    shares = k / n
    mean = float(shares.mean())
    return mean, float(((shares - mean) ** 2).sum()) / shares.size**2


def _effective_n(
    mean: float, var: float, picks: int, comparisons: int
) -> tuple[float, float | None]:
    """Korn and Graubard's effective sample size before the degrees-of-freedom factor, and the
    design effect."""
    if mean <= 0.0 or mean >= 1.0:
        return float(comparisons), None  # no variance to estimate: one pick per comparison
    binomial = mean * (1.0 - mean) / picks
    deff = var / binomial
    # The design effect is floored at 1 (NCHS standards): never more than the picks.
    return (float(picks) if deff <= 1.0 else mean * (1.0 - mean) / var), deff


def _df_factor(picks: int, comparisons: int, tail: float) -> float:
    """(t_{n-1} / t_{N-1})^2 at the interval's tail: N comparisons give N - 1 degrees of
    freedom, not n - 1 (Korn and Graubard 1998); 1 when they are the same."""
    from scipy import special

    if picks == comparisons:
        return 1.0
    if comparisons < 2:
        return 0.0  # one comparison of several picks: no degrees of freedom at all
    # stdtrit(df, q) is the t quantile at q (scipy.stats.t.ppf without its overhead).
    ratio = float(special.stdtrit(picks - 1, tail)) / float(special.stdtrit(comparisons - 1, tail))
    return ratio * ratio


def _beta_interval(mean: float, n_eff: float, tail: float) -> tuple[float, float]:
    """Clopper-Pearson at ``n_eff`` pseudo-trials and ``n_eff * mean`` pseudo-successes, each
    tail ``tail``; the whole of [0, 1] when ``n_eff`` is 0."""
    from scipy import special

    if n_eff <= 0.0:
        return 0.0, 1.0
    x = n_eff * mean
    # betaincinv / betainccinv are scipy.stats.beta.ppf / .isf without the overhead.
    lo = 0.0 if mean <= 0.0 else float(special.betaincinv(x, n_eff - x + 1.0, tail))
    hi = 1.0 if mean >= 1.0 else float(special.betainccinv(x + 1.0, n_eff - x, tail))
    return lo, hi


def _interval_at(k: Any, n: Any, level: float) -> tuple[Interval, float, float | None]:
    mean, var = _moments(k, n)
    picks, comparisons = int(n.sum()), int(n.size)
    tail = (1.0 - level) / 2.0
    base, deff = _effective_n(mean, var, picks, comparisons)
    # Every share 0 or every share 1: Clopper-Pearson over the N comparisons themselves, whose
    # degrees of freedom need no correction.
    n_eff = base if deff is None else base * _df_factor(picks, comparisons, tail)
    lo, hi = _beta_interval(mean, n_eff, tail)
    return Interval(mean, lo, hi), n_eff, deff


def clustered_share(
    successes: Sequence[int], totals: Sequence[int], *, confidence_level: float = 0.95
) -> ClusteredShareResult:
    """The mean over comparisons of ``successes[i] / totals[i]`` with Korn and Graubard's
    interval (comparisons with ``totals[i] == 0`` drop out). Used for the left share and for
    a judge's tie rate on the hidden controls."""
    level = _check_open("confidence_level", confidence_level)
    k_all, n_all = _counts("successes", successes), _counts("totals", totals)
    if k_all.size != n_all.size:
        raise ValueError(
            "successes and totals must have one entry per comparison, got "
            f"{k_all.size} and {n_all.size}"
        )
    bad = np.flatnonzero(k_all > n_all)
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"successes[{i}] must be at most totals[{i}] = {n_all[i]}, got {k_all[i]}")
    kept = n_all > 0
    if not kept.any():
        raise ValueError(f"no comparison has a total above 0 ({n_all.size} comparisons given)")
    k, n = k_all[kept], n_all[kept]
    interval, n_eff, deff = _interval_at(k, n, level)
    return ClusteredShareResult(
        comparisons=int(n.size),
        picks=int(n.sum()),
        interval=interval,
        effective_n=n_eff,
        design_effect=deff,
        confidence_level=level,
    )


# ----------------------------------------------------------------- the sign-flip test


def _lattice(left: Any, total: Any) -> tuple[npt.NDArray[np.int64], int]:
    """Each comparison's |s_i - 1/2| on an integer lattice: |2 L_i - n_i| * (D / n_i) with D
    the least common multiple of the n_i; and D."""
    scale = 1
    for value in np.unique(total):
        scale = math.lcm(scale, int(value))
    u = np.abs(2 * left - total) * (scale // total)
    step = math.gcd(*u.tolist()) or 1  # the coarsest lattice the values sit on
    return u // step, scale


def sign_flip_test(left: Sequence[int], right: Sequence[int]) -> tuple[float, str]:
    """The exact two-sided sign-flip (randomisation) p-value of "position moved no pick"
    over comparisons (see the module docstring), and ``"exact"`` or ``"normal"``."""
    from scipy import signal, stats

    k, r = _pairs("left", left, "right", right)
    n = k + r
    u, _ = _lattice(k, n)
    observed = int((np.sign(2 * k - n) * u).sum())
    values, counts = np.unique(u[u > 0], return_counts=True)
    if values.size == 0:
        return 1.0, "exact"
    if values.size == 1:  # one step size: S = u (2B - c), exactly binomial
        heads = (observed // int(values[0]) + int(counts[0])) // 2
        return float(stats.binomtest(heads, int(counts[0]), 0.5).pvalue), "exact"
    support = 2 * int((values * counts).sum()) + 1
    if support > EXACT_SUPPORT:
        sd = math.sqrt(float((u.astype(np.float64) ** 2).sum()))
        return min(1.0, float(2.0 * stats.norm.sf(abs(observed) / sd))), "normal"
    # S = sum over step sizes v of v (2 B_v - c_v), B_v ~ Bin(c_v, 1/2): convolve on the lattice.
    pmf = np.ones(1)
    for value, count in zip(values.tolist(), counts.tolist(), strict=True):
        grid = np.zeros(2 * value * count + 1)
        grid[:: 2 * value] = stats.binom.pmf(np.arange(count + 1), count, 0.5)
        pmf = (
            signal.fftconvolve(pmf, grid)
            if pmf.size * grid.size > 1 << 16
            else np.convolve(pmf, grid)
        )
    pmf = np.clip(pmf, 0.0, None)
    centre = (pmf.size - 1) // 2
    # Values within 1/2 of |observed| on the lattice (integers): |S| >= |observed|.
    outer = np.abs(np.arange(pmf.size) - centre) >= abs(observed)
    return min(1.0, float(pmf[outer].sum() / pmf.sum())), "exact"


# ----------------------------------------------------------------- the gate


@dataclass(frozen=True, slots=True)
class PositionGateResult:
    """The position gate over comparisons (see the module docstring).

    ``share`` is the left share with its ``1 - alpha`` interval and ``share_tost`` the same
    estimate with the ``1 - 2 alpha`` interval the two one-sided tests use; ``effective_n``
    and ``design_effect`` are those of ``share``. ``p_value`` is the exact sign-flip test of
    no position effect (``p_method`` says whether exact or normal); ``p_within`` the larger of
    the two one-sided p-values against the margin (pass when at most ``alpha``);
    ``p_beyond`` the p-value that the share lies outside the margin on the side it leans
    (twice the one-sided p; fail when at most ``alpha``)."""

    comparisons: int
    picks: int
    left: int
    right: int
    share: Interval
    share_tost: Interval
    effective_n: float
    design_effect: float | None
    p_value: float
    p_method: str
    p_within: float
    p_beyond: float
    alpha: float
    margin: float
    significant: bool
    verdict: Verdict
    unit: str = "comparison"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def _p_greater(mean: float, n_eff: float, theta: float) -> float:
    """One-sided p of H0: share <= theta, by the beta form of the Clopper-Pearson bound (the
    exact binomial upper tail at integer counts)."""
    from scipy import special

    if mean <= 0.0 or n_eff <= 0.0 or theta >= 1.0:
        return 1.0
    if theta <= 0.0:
        return 0.0
    x = n_eff * mean
    return float(special.betainc(x, n_eff - x + 1.0, theta))  # the beta cdf at theta


def _p_less(mean: float, n_eff: float, theta: float) -> float:
    """One-sided p of H0: share >= theta (the mirror of `_p_greater`)."""
    return _p_greater(1.0 - mean, n_eff, 1.0 - theta)


def _n_eff(k: Any, n: Any, level: float) -> float:
    return _interval_at(k, n, level)[1]


def position_gate(
    left: Sequence[int],
    right: Sequence[int],
    *,
    alpha: float = 0.05,
    margin: float = POSITION_MARGIN,
) -> PositionGateResult:
    """The position gate: ``left[i]`` and ``right[i]`` are comparison i's untied picks naming
    the output on the left and on the right, over every judge and pass (ties left out;
    :func:`tally_positions` counts them from picks). Comparisons with neither drop out; at
    least one must remain. Pass, warn or fail as the module docstring says."""
    alpha_value = _check_alpha(alpha)
    if alpha_value >= 0.5:
        raise ValueError(f"alpha must be below 0.5 for a 1 - 2 alpha interval, got {alpha!r}")
    margin_value = _check_open("margin", margin, 0.0, 0.5)
    k, r = _pairs("left", left, "right", right)
    n = k + r
    share, n_eff, deff = _interval_at(k, n, 1.0 - alpha_value)
    tost, n_eff_tost, _ = _interval_at(k, n, 1.0 - 2.0 * alpha_value)
    mean = share.estimate
    low, high = 0.5 - margin_value, 0.5 + margin_value
    # TOST at the 1 - 2 alpha interval's effective size (its own degrees-of-freedom factor).
    p_within = max(_p_less(mean, n_eff_tost, high), _p_greater(mean, n_eff_tost, low))
    # Beyond: the 1 - alpha two-sided interval, so each side is tested at alpha / 2.
    p_beyond = min(1.0, 2.0 * min(_p_greater(mean, n_eff, high), _p_less(mean, n_eff, low)))
    p_value, method = sign_flip_test(k.tolist(), r.tolist())
    verdict: Verdict = (
        "pass" if p_within <= alpha_value else "fail" if p_beyond <= alpha_value else "warn"
    )
    return PositionGateResult(
        comparisons=int(n.size),
        picks=int(n.sum()),
        left=int(k.sum()),
        right=int(r.sum()),
        share=share,
        share_tost=tost,
        effective_n=n_eff,
        design_effect=deff,
        p_value=p_value,
        p_method=method,
        p_within=p_within,
        p_beyond=p_beyond,
        alpha=alpha_value,
        margin=margin_value,
        significant=p_value <= alpha_value,
        verdict=verdict,
    )
