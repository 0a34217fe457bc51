"""Which candidates the data put ahead of which: exact per-pair tests, Holm over ordered
pairs, and the sets that follow (simultaneous rank intervals, a confidence set for the best).

**The unit** is a comparison: two candidates' answers to one prompt, judged once (with a
panel, the panel's one outcome for it), with its outcome a preference or a tie.

**The claim and its test.** For every ordered pair (i, j) of candidates that met, the
hypothesis H(i, j) "i is not better than j" is tested by the exact one-sided sign test over
their untied comparisons: with w comparisons where i was preferred out of n untied ones,
p = P(Bin(n, 1/2) >= w). Rejecting H(i, j) is the claim "i is ahead of j". Ties are left out
and the test is conditional on their number: a tie says nothing about the direction.

*When it is exact.* Under "i and j are equal", meaning that on every prompt the two answers
are exchangeable (the prompt may be hard or easy, may make ties likely or rare, and answers
may vary in quality from prompt to prompt: only the labels i and j must not matter), and the
positions are randomised or balanced, each untied comparison goes either way with
probability 1/2 whatever the prompt. Comparisons on different prompts are independent, so
given the number of untied ones the count of i's wins is Bin(n, 1/2) exactly: the test
holds its level at any number of prompts, any quality variation and any tie rate. When i is
truly worse the tail probability is smaller (a one-sided null). The schedules of
`blindtest.model.pairing` never put one pair twice on a prompt. Should the data hold a pair several
times on one prompt (those comparisons share the prompt, and perhaps the answers, and are not
independent), the prompt is the unit for that pair: its comparisons there are summed to a
net margin (wins minus losses), and the test is the exact sign-flip (randomisation) test of
the sum of the margins over prompts (Fisher, 1935), which is the sign test when every margin
is -1, 0 or 1. It assumes the pair's outcomes on one prompt are symmetric in distribution
when i and j swap labels.

**The family and Holm.** Every ordered pair of candidates that met (two hypotheses per pair,
2 m in all: the pairs are fixed by the design, not by the outcomes; a pair that only tied
stays in, with p = 1) is one family, and Holm's step-down (1979) controls the probability
of any false claim "i is ahead of j", in either direction, at alpha under any dependence
between the tests (pairs share candidates and prompts). This is the construction of
Mogstad, Romano, Shaikh and Wilhelm (2024, "Inference for ranks with applications to
mobility across neighbourhoods and academic achievement across countries", Review of
Economic Studies 91:476-518), with the finite-sample multinomial variant of Bazylik,
Mogstad, Romano, Shaikh and Wilhelm (R package csranks, ``csranks_multinom``: exact binomial
tests conditional on the pair's total, Holm over ordered pairs), and the step-down over
one-sided pairs of Al Mohamad, Goeman and van Zwet (2022, "Simultaneous confidence
intervals for ranks using the partitioning principle", Electronic Journal of Statistics
16:2608-2646; ICRanks' "SeqTukey"). Two-sided Holm over the m pairs with the direction read
from the sign would reject more at its later steps, but its control of directional errors
is proved only for independent tests; the ordered family needs no such condition. At the
first step both test at alpha / (2 m) one-sided.

**What follows, all at once with probability at least 1 - alpha** (on the event that no
claim is false):

* *Transitivity.* "i ahead of j" and "j ahead of l" imply "i ahead of l", so the claims are
  closed under transitivity (this is how a reference design, where only the reference meets
  the others, says anything about two others). Should the claims form a cycle (some false
  claim, an event of probability at most alpha) the direct claims are kept and it is said.
* *Rank intervals.* A candidate's rank (1 = best; tied candidates share the range of
  ranks their tie spans) lies in ``[1 + the number shown ahead of it, k - the number shown
  behind it]``, simultaneously for every candidate (Mogstad et al. 2024, section 3).
* *The best.* The candidates not shown behind any other (rank interval starting at 1) hold
  every candidate of the highest strength: a confidence set for the best in the sense of
  Hsu's multiple comparisons with the best, here from the same separations, so that it
  agrees with the rank intervals (Mogstad et al.'s tau-best set with tau = 1).

**Before the data.** `separable_after` says, for a design, how many untied comparisons of
one pair (and how many prompts) the smallest attainable p-value needs before any claim can
be made: with Holm over 2 m ordered pairs, a pair must reach 0.5^n <= alpha / (2 m).

Pure; no I/O; every array function is vectorised over a leading batch axis for simulation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from blindtest.stats.comparisons import Outcomes, pair_index, pairs_of
from blindtest.stats.intervals import _check_alpha, _check_choice, _check_int, result_to_dict

__all__ = [
    "CORRECTIONS",
    "PairSeparation",
    "RankInterval",
    "SeparableDesign",
    "Separations",
    "closure",
    "holm_reject",
    "rank_bounds",
    "separable_after",
    "separate",
    "sign_test_p",
]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
B8 = npt.NDArray[np.bool_]

#: Multiplicity corrections over the ordered pairs (``none`` only for `separable_after`).
CORRECTIONS = ("holm", "bonferroni")
TEST = "exact one-sided sign test over untied comparisons, conditional on their number"
FLIP_TEST = "exact sign-flip test over prompts of the pair's net margin"
ADJUSTMENT = "holm over ordered pairs"
METHOD = (
    "Mogstad, Romano, Shaikh and Wilhelm (2024): exact pair tests, Holm over the ordered "
    "pairs, rank intervals and the best from the claims (closed under transitivity)"
)


# --- the vectorised core ---


def sign_test_p(wins: npt.ArrayLike, n: npt.ArrayLike) -> F64:
    """One-sided exact p of ``wins`` or more out of ``n`` untied comparisons at 1/2:
    P(Bin(n, 1/2) >= wins), 1 where n = 0. Vectorised."""
    w = np.asarray(wins, dtype=np.float64)
    total = np.asarray(n, dtype=np.float64)
    p: F64 = np.where(total > 0, sps.binom.sf(w - 1.0, np.maximum(total, 1.0), 0.5), 1.0)
    return np.minimum(p, 1.0)


def holm_adjust(p: F64) -> F64:
    """Holm-adjusted p-values along the last axis (R's ``p.adjust(p, "holm")``), batched."""
    p = np.asarray(p, dtype=np.float64)
    h = p.shape[-1]
    if h == 0:
        empty: F64 = p.copy()
        return empty
    order = np.argsort(p, axis=-1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=-1)
    factors = np.arange(h, 0, -1, dtype=np.float64)
    running = np.maximum.accumulate(np.minimum(1.0, factors * ranked), axis=-1)
    adjusted = np.empty_like(running)
    np.put_along_axis(adjusted, order, running, axis=-1)
    return adjusted


def holm_reject(p: F64, alpha: float, correction: str = "holm") -> B8:
    """Which hypotheses (last axis) the correction rejects at ``alpha``, batched."""
    p = np.asarray(p, dtype=np.float64)
    if correction == "bonferroni":
        rejected: B8 = np.minimum(1.0, p.shape[-1] * p) <= alpha
        return rejected
    rejected = holm_adjust(p) <= alpha
    return rejected


def closure(ahead: B8) -> tuple[B8, npt.NDArray[np.bool_]]:
    """The transitive closure of ``ahead[..., i, j]`` ("i ahead of j") and, per batch row,
    whether it holds a cycle (then the row keeps its direct claims)."""
    ahead = np.asarray(ahead, dtype=bool)
    k = ahead.shape[-1]
    reach = ahead.astype(np.float64)
    for _ in range(max(1, math.ceil(math.log2(max(k, 2))))):
        reach = np.minimum(reach + reach @ reach, 1.0)
    closed = reach > 0.5
    cyclic: B8 = np.asarray(np.diagonal(closed, axis1=-2, axis2=-1).any(axis=-1), dtype=bool)
    result: B8 = np.where(cyclic[..., None, None], ahead, closed)
    return result, cyclic


def rank_bounds(ahead: B8) -> tuple[I64, I64]:
    """Rank intervals from claims ``ahead[..., i, j]``: (1 + number ahead of i, k - number
    behind i), batched."""
    k = ahead.shape[-1]
    lo: I64 = (1 + ahead.sum(axis=-2)).astype(np.int64)
    hi: I64 = (k - ahead.sum(axis=-1)).astype(np.int64)
    return lo, hi


def ordered_claims(
    wins: F64, losses: F64, met: B8, k: int, alpha: float, correction: str = "holm"
) -> B8:
    """Direct claims ``(B, k, k)`` from per-pair counts ``(B, m)`` (pairs in
    ``np.triu_indices`` order; ``met`` (m,) says which pairs are in the family)."""
    wins = np.atleast_2d(wins)
    losses = np.atleast_2d(losses)
    n = wins + losses
    p_first = sign_test_p(wins[:, met], n[:, met])
    p_second = sign_test_p(losses[:, met], n[:, met])
    rejected = holm_reject(np.concatenate([p_first, p_second], axis=1), alpha, correction)
    half = int(met.sum())
    pi, pj = pairs_of(k)
    ahead = np.zeros((wins.shape[0], k, k), dtype=bool)
    ahead[:, pi[met], pj[met]] = rejected[:, :half]
    ahead[:, pj[met], pi[met]] = rejected[:, half:]
    return ahead


# --- one data set ---


@dataclass(frozen=True, slots=True)
class PairSeparation:
    """One pair that met. ``wins``/``losses``/``ties`` count comparisons (``first``
    preferred, ``second`` preferred, tie); ``n`` is what the test counts (untied comparisons,
    or prompts with a non-zero net margin under the sign-flip test); ``p_first_ahead`` and
    ``p_second_ahead`` are the one-sided exact p-values of the two claims, ``p_adjusted``
    the Holm-adjusted p of the likelier claim within the family of ordered pairs, and
    ``ahead`` the candidate shown ahead (None: not separated by its own test; transitivity
    may still order the two, see `Separations.ahead`)."""

    first: str
    second: str
    wins: int
    losses: int
    ties: int
    n: int
    p_first_ahead: float
    p_second_ahead: float
    p_adjusted: float
    ahead: str | None
    test: str

    def to_dict(self) -> dict[str, Any]:
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class RankInterval:
    """The ranks a candidate may hold (1 = best), simultaneous with every other candidate's,
    and the candidates shown ahead of and behind it."""

    candidate: str
    rank_best: int
    rank_worst: int
    behind_of: tuple[str, ...]
    ahead_of: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class Separations:
    """The claims the data support at family-wise level alpha (module doc). ``pairs``: every
    pair that met, in the candidates' order; ``ahead``: every claim (winner, loser),
    direct or by transitivity; ``ranks``: per candidate, in the candidates' order; ``best``:
    the candidates not shown behind any other (a confidence set for the best);
    ``hypotheses``: the size of the Holm family (2 x pairs that met); ``problem``: words when
    the claims are not transitive (then only the direct ones are used)."""

    candidates: tuple[str, ...]
    pairs: tuple[PairSeparation, ...]
    ahead: tuple[tuple[str, str], ...]
    ranks: tuple[RankInterval, ...]
    best: tuple[str, ...]
    alpha: float
    correction: str
    hypotheses: int
    problem: str | None
    unit: str = "comparison"
    test: str = TEST
    adjustment: str = ADJUSTMENT
    method: str = METHOD

    def to_dict(self) -> dict[str, Any]:
        return result_to_dict(self)

    def matrix(self) -> B8:
        """``ahead[i, j]``: candidate i shown ahead of candidate j (candidates' order)."""
        index = {name: n for n, name in enumerate(self.candidates)}
        k = len(self.candidates)
        out = np.zeros((k, k), dtype=bool)
        for winner, loser in self.ahead:
            out[index[winner], index[loser]] = True
        return out


def _flip_p(margins: Sequence[int]) -> float:
    """P(sum of e_p |D_p| >= sum D_p) for independent fair signs e_p: the exact one-sided
    sign-flip p-value, by convolution over the integer margins."""
    sizes = [abs(int(d)) for d in margins if d != 0]
    observed = int(sum(margins))
    total = sum(sizes)
    dist = np.zeros(2 * total + 1)
    dist[total] = 1.0  # index = sum + total
    for size in sizes:
        dist = 0.5 * (np.roll(dist, size) + np.roll(dist, -size))
    p = float(dist[observed + total :].sum())
    return min(1.0, p)


def _pair_counts(data: Outcomes) -> tuple[I64, I64, I64, B8, dict[int, F64] | None]:
    """Per pair (triu order): first's wins, losses, ties, whether the pair met, and for
    pairs met more than once on some prompt, their net margins per prompt."""
    k = len(data.candidates)
    m = k * (k - 1) // 2
    pair = pair_index(k, data.first, data.second)
    lower_first = data.first < data.second
    # +1 when the lower-indexed candidate was preferred, -1 when the other, 0 for a tie
    sign = np.where(lower_first, data.result, -data.result)
    wins = np.bincount(pair, weights=(sign == 1), minlength=m).astype(np.int64)
    losses = np.bincount(pair, weights=(sign == -1), minlength=m).astype(np.int64)
    ties = np.bincount(pair, weights=(sign == 0), minlength=m).astype(np.int64)
    met = np.bincount(pair, minlength=m) > 0
    prompts = max(len(data.prompt_ids), 1)
    key = pair * prompts + data.prompt
    repeated = np.bincount(key, minlength=m * prompts) > 1 if key.size else np.zeros(0, bool)
    margins: dict[int, F64] | None = None
    if repeated.any():
        margins = {}
        weights = sign.astype(np.float64)
        net: F64 = np.bincount(key, weights=weights, minlength=m * prompts).astype(np.float64)
        for pair_number in np.unique(np.flatnonzero(repeated) // prompts):
            start = int(pair_number) * prompts
            margins[int(pair_number)] = net[start : start + prompts]
    return wins, losses, ties, met, margins


def separate(data: Outcomes, *, alpha: float = 0.05, correction: str = "holm") -> Separations:
    """Exact per-pair tests, Holm over the ordered pairs, the claims closed under
    transitivity, rank intervals and the best (module doc)."""
    alpha = _check_alpha(alpha)
    correction = _check_choice("correction", correction, CORRECTIONS)
    names = data.candidates
    k = len(names)
    wins, losses, ties, met, margins = _pair_counts(data)
    pi, pj = pairs_of(k)
    p_first = sign_test_p(wins, wins + losses)
    p_second = sign_test_p(losses, wins + losses)
    n = wins + losses
    tests = [TEST] * pi.size
    for p, net in (margins or {}).items():
        p_first[p] = _flip_p(net.astype(np.int64).tolist())
        p_second[p] = _flip_p((-net).astype(np.int64).tolist())
        n[p] = int(np.count_nonzero(net))
        tests[p] = FLIP_TEST
    family = np.concatenate([p_first[met], p_second[met]])
    adjusted = (
        holm_adjust(family) if correction == "holm" else np.minimum(1.0, family.size * family)
    )
    half = int(met.sum())
    adj_first = np.ones(pi.size)
    adj_second = np.ones(pi.size)
    adj_first[met] = adjusted[:half]
    adj_second[met] = adjusted[half:]
    direct = np.zeros((k, k), dtype=bool)
    direct[pi, pj] = met & (adj_first <= alpha)
    direct[pj, pi] = met & (adj_second <= alpha)
    closed, cyclic = closure(direct[None])
    ahead = closed[0]
    problem = None
    if cyclic[0]:
        problem = (
            "the separations form a cycle (some candidate ahead of another that is, through "
            "others, ahead of it): at least one is a false claim, which the family allows "
            "with probability at most alpha; the ranks use the direct separations only"
        )
    lo, hi = rank_bounds(ahead)
    pairs = []
    for number in np.flatnonzero(met):
        p = int(number)
        i, j = int(pi[p]), int(pj[p])
        winner = names[i] if direct[i, j] else names[j] if direct[j, i] else None
        pairs.append(
            PairSeparation(
                first=names[i],
                second=names[j],
                wins=int(wins[p]),
                losses=int(losses[p]),
                ties=int(ties[p]),
                n=int(n[p]),
                p_first_ahead=float(p_first[p]),
                p_second_ahead=float(p_second[p]),
                p_adjusted=float(min(adj_first[p], adj_second[p])),
                ahead=winner,
                test=tests[p],
            )
        )
    ranks = tuple(
        RankInterval(
            candidate=names[c],
            rank_best=int(lo[c]),
            rank_worst=int(hi[c]),
            behind_of=tuple(names[o] for o in range(k) if ahead[o, c]),
            ahead_of=tuple(names[o] for o in range(k) if ahead[c, o]),
        )
        for c in range(k)
    )
    claims = tuple((names[i], names[j]) for i in range(k) for j in range(k) if ahead[i, j])
    return Separations(
        candidates=names,
        pairs=tuple(pairs),
        ahead=claims,
        ranks=ranks,
        best=tuple(names[c] for c in range(k) if lo[c] == 1),
        alpha=alpha,
        correction=correction,
        hypotheses=2 * half,
        problem=problem,
    )


# --- before the data ---


@dataclass(frozen=True, slots=True)
class SeparableDesign:
    """What a design allows before any data: with ``pairs`` pairs meeting (``hypotheses`` =
    2 x pairs ordered claims under ``correction``), the first claim needs one pair with
    ``comparisons`` untied comparisons all won by one side (one-sided p = 0.5^n, here
    ``smallest_p``, at most ``level``). ``prompts_any``: prompts before some pair can have
    met that often; ``prompts_every``: before every pair can. Ties add to both: a tie is
    not evidence, so read them as untied comparisons. With the design's ``prompts`` given,
    ``separable`` says whether they reach ``prompts_any`` (None when not given)."""

    k: int
    pairing: str
    pairs: int
    hypotheses: int
    alpha: float
    correction: str
    level: float
    comparisons: int
    smallest_p: float
    prompts_any: int
    prompts_every: int
    prompts: int | None
    separable: bool | None
    note: str

    def to_dict(self) -> dict[str, Any]:
        return result_to_dict(self)


def _parse_pairing(k: int, pairing: str) -> tuple[str, int, int]:
    """(kind, pairs in the family, pairs per prompt)."""
    m = k * (k - 1) // 2
    if pairing == "all":
        return "all", m, m
    if pairing == "reference" or pairing.startswith("reference:"):
        return "reference", k - 1, k - 1
    if pairing.startswith("sample:"):
        text = pairing.split(":", 1)[1]
        if not text.isdigit() or not 1 <= int(text) <= m:
            raise ValueError(f"pairing {pairing!r}: sample:M needs 1 <= M <= {m} for k = {k}")
        return "sample", m, int(text)
    raise ValueError(f"pairing must be 'all', 'reference[:NAME]' or 'sample:M'; got {pairing!r}")


def separable_after(
    k: int,
    *,
    pairing: str = "all",
    alpha: float = 0.05,
    correction: str = "holm",
    prompts: int | None = None,
) -> SeparableDesign:
    """The fewest untied comparisons of one pair, and the fewest prompts, before the data can
    put any candidate ahead of another (module doc). ``pairing`` as ``--pairs``: "all",
    "reference[:NAME]" or "sample:M" (M pairs per prompt, dealt evenly as
    `blindtest.model.pairing` does: every pair meets floor or ceil of prompts x M / pairs times);
    ``correction``: "holm", "bonferroni" (the first step is the same) or "none" (one pair
    alone, two-sided at alpha); ``prompts``: the design's, to say whether they are enough."""
    _check_int("k", k, 2)
    if prompts is not None:
        _check_int("prompts", prompts, 1)
    alpha = _check_alpha(alpha)
    correction = _check_choice("correction", correction, (*CORRECTIONS, "none"))
    kind, pairs, per_prompt = _parse_pairing(k, pairing)
    hypotheses = 2 * pairs
    divisor = 2 if correction == "none" else hypotheses
    comparisons = 1
    while divisor * 0.5**comparisons > alpha:  # the test's own rule: min(1, H p) <= alpha
        comparisons += 1
    if kind == "sample":
        # after n prompts the counts are floor or ceil of n M / pairs
        prompts_any = ((comparisons - 1) * pairs) // per_prompt + 1
        prompts_every = -(-comparisons * pairs // per_prompt)
    else:
        prompts_any = prompts_every = comparisons
    note = (
        f"with {k} candidates (pairs {pairing}), a pair can first be told apart after "
        f"{comparisons} untied comparisons all won by one side (p = 0.5^{comparisons} <= "
        f"alpha / {divisor}); that is {prompts_any} prompts at the soonest, "
        f"{prompts_every} before every pair can be; ties and split verdicts need more"
    )
    separable = None if prompts is None else prompts >= prompts_any
    if prompts is not None and not separable:
        note = (
            f"with {prompts} prompts no two of the {k} candidates can be told apart, whatever "
            f"the verdicts: a pair needs {comparisons} untied comparisons all one way "
            f"(with pairs {pairing}: {prompts_any} prompts at the soonest)"
        )
    return SeparableDesign(
        k=k,
        pairing=pairing,
        pairs=pairs,
        hypotheses=hypotheses,
        alpha=alpha,
        correction=correction,
        level=alpha / divisor,
        comparisons=comparisons,
        smallest_p=0.5**comparisons,
        prompts_any=prompts_any,
        prompts_every=prompts_every,
        prompts=prompts,
        separable=separable,
        note=note,
    )
