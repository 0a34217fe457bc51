"""Seeded, vectorised simulation of several-candidate runs for the separations' error rates
(imported by tests/stats/test_stats_separation_error.py and by
tests/benchmarks/sim_ranking_error.py, which runs the full grid).

The data-generating process, per data set:

* k candidates with true strengths ``truth`` (log-odds scale); ``prompts`` prompts.
* Each candidate's answer to a prompt has its own quality, strength + ``answer_sd`` x N(0, 1):
  answers vary from prompt to prompt, and one answer serves every comparison of that prompt
  it is in, so comparisons on one prompt are not independent.
* Each prompt has its own tie propensity: nu_p = ``nu`` x exp(``tie_sd`` x N(0, 1)) (some
  prompts leave the judge with little to choose between).
* A comparison of i with j on prompt p follows Davidson's model with d = q_ip - q_jp and
  nu_p: P(i) = e^(d/2) / D, P(j) = e^(-d/2) / D, P(tie) = nu_p / D.
* Pairing "all": every pair on every prompt. "reference": every candidate against the
  reference (candidate ``reference``) on every prompt.

A claim "i ahead of j" is false when truth_i <= truth_j (with the answers' noise symmetric and
alike for every candidate, the order of the truth is the order of every population summary).
Everything is batched over data sets: the counts per pair are drawn for ``sets`` data sets at
once, and `blindtest.stats.separation`'s vectorised functions make the claims.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from blindtest.stats.comparisons import pairs_of
from blindtest.stats.separation import closure, ordered_claims, rank_bounds

F = np.ndarray


@dataclass(frozen=True)
class Cell:
    """One cell's counts of data sets: any false claim, every rank interval holding the
    truth's rank range, every best candidate in the best set; the mean size of the best set
    and the mean number of true claims made."""

    sets: int
    false_claim: int
    ranks_covered: int
    best_covered: int
    best_size: float
    true_claims: float


def truth_of(kind: str, k: int) -> F:
    """ "null": all equal. "top2": the top two equal at 0, the rest 1.5 lower and equal.
    "top2-spread": the top two equal at 0, the rest spread from -1 down by 0.5 each."""
    if kind == "null":
        return np.zeros(k)
    if kind == "top2":
        top2: F = np.r_[0.0, 0.0, np.full(max(k - 2, 0), -1.5)][:k]
        return top2
    if kind == "top2-spread":
        spread: F = np.r_[0.0, 0.0, -1.0 - 0.5 * np.arange(max(k - 2, 0))][:k]
        return spread
    raise ValueError(kind)


def pair_counts(
    gen: np.random.Generator,
    truth: F,
    sets: int,
    prompts: int,
    pairing: str,
    *,
    reference: int = 1,
    answer_sd: float = 0.5,
    nu: float = 0.5,
    tie_sd: float = 0.7,
) -> tuple[F, F, F, F]:
    """(wins, losses, ties) per pair (sets, m) in ``np.triu_indices`` order, and which pairs
    met (m,)."""
    k = truth.size
    pi, pj = pairs_of(k)
    if pairing == "all":
        met = np.ones(pi.size, dtype=bool)
    elif pairing == "reference":
        met = (pi == reference) | (pj == reference)
    else:
        raise ValueError(pairing)
    a, b = pi[met], pj[met]
    quality = truth[None, None, :] + answer_sd * gen.standard_normal((sets, prompts, k))
    tie_nu = nu * np.exp(tie_sd * gen.standard_normal((sets, prompts, 1)))
    d = quality[:, :, a] - quality[:, :, b]
    first = np.exp(d / 2.0)
    second = np.exp(-d / 2.0)
    u = gen.random(d.shape) * (first + second + tie_nu)
    won = u < first
    lost = (u >= first) & (u < first + second)
    wins = np.zeros((sets, pi.size))
    losses = np.zeros((sets, pi.size))
    ties = np.zeros((sets, pi.size))
    wins[:, met] = won.sum(axis=1)
    losses[:, met] = lost.sum(axis=1)
    ties[:, met] = prompts - wins[:, met] - losses[:, met]
    return wins, losses, ties, met


def judge(truth: F, wins: F, losses: F, met: F, alpha: float) -> Cell:
    """The claims of every data set, and how they stand against the truth."""
    k = truth.size
    direct = ordered_claims(wins, losses, met, k, alpha)
    ahead, _ = closure(direct)
    false = ahead & (truth[:, None] <= truth[None, :])[None]
    true = ahead & (truth[:, None] > truth[None, :])[None]
    lo, hi = rank_bounds(ahead)
    best_true = 1 + (truth[None, :] > truth[:, None]).sum(axis=1)  # 1 + number truly above
    worst_true = k - (truth[None, :] < truth[:, None]).sum(axis=1)
    covered = ((lo <= best_true[None]) & (hi >= worst_true[None])).all(axis=1)
    top = truth == truth.max()
    in_best = lo == 1
    return Cell(
        sets=wins.shape[0],
        false_claim=int(false.any(axis=(1, 2)).sum()),
        ranks_covered=int(covered.sum()),
        best_covered=int(in_best[:, top].all(axis=1).sum()),
        best_size=float(in_best.sum(axis=1).mean()),
        true_claims=float(true.sum(axis=(1, 2)).mean()),
    )


def simulate(
    *,
    k: int,
    prompts: int,
    pairing: str,
    truth_kind: str,
    sets: int,
    seed: int,
    alpha: float = 0.05,
    chunk: int = 2000,
) -> Cell:
    """One cell, in chunks of data sets (memory), from one seeded generator."""
    truth = truth_of(truth_kind, k)
    gen = np.random.default_rng(seed)
    totals = [0, 0, 0, 0]
    best_size = true_claims = 0.0
    done = 0
    while done < sets:
        size = min(chunk, sets - done)
        wins, losses, _, met = pair_counts(gen, truth, size, prompts, pairing)
        cell = judge(truth, wins, losses, met, alpha)
        totals[0] += cell.sets
        totals[1] += cell.false_claim
        totals[2] += cell.ranks_covered
        totals[3] += cell.best_covered
        best_size += cell.best_size * size
        true_claims += cell.true_claims * size
        done += size
    return Cell(totals[0], totals[1], totals[2], totals[3], best_size / sets, true_claims / sets)
