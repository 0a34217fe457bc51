"""The full simulation grid behind docs/statistics.md's tables for the several-candidate
separations, rank intervals, best set and strengths' intervals.

Part 1 (`blindtest.stats.separation`): for k in {2, 3, 4, 8, 12}, 10, 20, 30 and 100 prompts,
pairing "all" (every pair on every prompt) and "reference" (every candidate against one
reference, the second-strongest candidate, on every prompt), and three truths (all equal;
the top two equal and the rest 1.5 lower and equal; the top two equal and the rest spread
from -1 down by 0.5), 50,000 data sets per cell drawn as tests/stats/ranking_simulation.py
says (answers whose quality varies by prompt, sd 0.5 on the log-odds scale; a tie
propensity per prompt, nu = 0.5 x exp(0.7 N(0, 1))), alpha = 0.05. Per cell: the share of
data sets with any false claim "i ahead of j" (the family-wise error), with every candidate's
rank interval holding its true rank range, and with every best candidate in the best set;
the mean size of the best set and the mean number of true claims.

Part 2 (`blindtest.stats.ranking`'s bootstrap over prompts): for k in {2, 4, 8, 12}, 10, 30
and 100 prompts, pairing "all", strengths spread evenly over [-0.6, 0.6], the same answer and
tie variation: 400 data sets per cell, 500 resamples each (the same resampling and the same
fits as rank_candidates: maximum likelihood, Firth's where it does not exist), the marginal
coverage of the mean-anchored strengths' 95% percentile intervals (the truth: the fit to
200,000 simulated prompts), over candidates and data sets, all k jointly, and the marginal
coverage of the differences' intervals; Monte Carlo standard errors over data sets.

Every cell has its own seed, numpy's SeedSequence((2026, part, k, prompts, pairing, truth)).
Run niced, about 30 minutes on one core of the shared 2-core machine:

    nice -n 10 .venv/bin/python tests/benchmarks/sim_ranking_error.py > sim.md
    nice -n 10 .venv/bin/python tests/benchmarks/sim_ranking_error.py --quick   # a smoke run
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE.parents[1] / "stats"))

from ranking_simulation import pair_counts, simulate  # noqa: E402

from blindtest.stats.comparisons import pairs_of  # noqa: E402
from blindtest.stats.penalised import firth_fit, profile_bounds  # noqa: E402
from blindtest.stats.ranking import (  # noqa: E402
    _anchor,
    _contrasts,
    _fit_resamples,
    _percentile,
    davidson_fit,
)

KS = (2, 3, 4, 8, 12)
PROMPTS = (10, 20, 30, 100)
PAIRINGS = ("all", "reference")
TRUTHS = ("null", "top2", "top2-spread")
ALPHA = 0.05


def _se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-12) / n)


def part_one(sets: int) -> None:
    print(
        "| k | prompts | pairing | truth | data sets | seed | any false claim (MC se) |"
        " ranks all covered | best covered | best set size | true claims |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k in KS:
        for prompts in PROMPTS:
            for p_index, pairing in enumerate(PAIRINGS):
                for t_index, truth in enumerate(TRUTHS):
                    if k == 2 and (truth != "null" or pairing != "all"):
                        continue  # two candidates: one pair, and the top two are everyone
                    seed_seq = np.random.SeedSequence((2026, 1, k, prompts, p_index, t_index))
                    seed = int(seed_seq.generate_state(1)[0])
                    cell = simulate(
                        k=k,
                        prompts=prompts,
                        pairing=pairing,
                        truth_kind=truth,
                        sets=sets,
                        seed=seed,
                        alpha=ALPHA,
                    )
                    fwer = cell.false_claim / cell.sets
                    print(
                        f"| {k} | {prompts} | {pairing} | {truth} | {cell.sets} | {seed} | "
                        f"{fwer:.4f} ({_se(fwer, cell.sets):.4f}) | "
                        f"{cell.ranks_covered / cell.sets:.4f} | "
                        f"{cell.best_covered / cell.sets:.4f} | {cell.best_size:.2f} | "
                        f"{cell.true_claims:.2f} |",
                        flush=True,
                    )


def _counts_by_prompt(
    gen: np.random.Generator, truth: np.ndarray, sets: int, prompts: int
) -> np.ndarray:
    """(sets, prompts, 3 m) pair cells, one comparison of every pair per prompt."""
    k = truth.size
    m = k * (k - 1) // 2
    out = np.zeros((sets, prompts, 3 * m))
    for p in range(prompts):  # one prompt at a time through pair_counts
        w, losses, t, _ = pair_counts(gen, truth, sets, 1, "all")
        out[:, p, 0::3], out[:, p, 1::3], out[:, p, 2::3] = w, losses, t
    return out


def _mean_se(shares: list[float]) -> tuple[float, float]:
    """The mean of per-data-set shares and its Monte Carlo standard error (data sets are
    the independent units; candidates within one are not)."""
    values = np.asarray(shares)
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size))


def _firth_bounds(
    counts: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    s, theta, ok, _ = firth_fit(counts[None], k)
    assert ok[0]
    beta = np.r_[theta[0] if math.isfinite(theta[0]) else 0.0, s[0, 1:]]
    lo, hi = profile_bounds(counts, k, beta, _contrasts(k, None), 0.95)
    return lo[:k], hi[:k], lo[k:], hi[k:]


def population(truth: np.ndarray, seed: int) -> np.ndarray:
    gen = np.random.default_rng(seed)
    k = truth.size
    total = np.zeros(3 * (k * (k - 1) // 2))
    for _ in range(20):
        w, losses, t, _ = pair_counts(gen, truth, 1, 10_000, "all")
        total[0::3] += w[0]
        total[1::3] += losses[0]
        total[2::3] += t[0]
    s, _, ok, _ = davidson_fit(total[None], k)
    assert ok[0]
    centred: np.ndarray = s[0] - s[0].mean()
    return centred


def part_two(sets: int, resamples: int) -> None:
    print()
    print(
        "| k | prompts | data sets | resamples | seed | each strength (MC se) | all k jointly |"
        " each difference (MC se) | failed resamples | Firth resamples |"
        " Firth fits (profile intervals) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k in (2, 4, 8, 12):
        truth = np.linspace(0.6, -0.6, k)
        target = population(truth, seed=2026 + k)
        pi, pj = pairs_of(k)
        target_diff = target[pi] - target[pj]
        for prompts in (10, 30, 100):
            seed = int(np.random.SeedSequence((2026, 2, k, prompts)).generate_state(1)[0])
            gen = np.random.default_rng(seed)
            joint = used = failed_total = firth_total = profiled = 0
            shares: list[float] = []  # per data set: the share of strengths covered
            diff_shares: list[float] = []
            chunk = max(1, 20_000 // resamples)
            done = 0
            while done < sets:
                size = min(chunk, sets - done)
                cells = _counts_by_prompt(gen, truth, size, prompts)
                full = cells.sum(axis=1)
                est, _, ok, _ = davidson_fit(full, k)
                est = _anchor(est, None)
                picks = gen.integers(0, prompts, size=(size, resamples, prompts))
                weights = np.zeros((size, resamples, prompts))
                for s in range(size):
                    np.add.at(
                        weights[s],
                        (np.repeat(np.arange(resamples), prompts), picks[s].ravel()),
                        1.0,
                    )
                boot = np.einsum("srp,spc->src", weights, cells).reshape(size * resamples, -1)
                values, failed, firth = _fit_resamples(boot, k, True, None)
                values = values.reshape(size, resamples, k)
                failed = failed.reshape(size, resamples)
                firth_total += firth
                for s in range(size):
                    used += 1
                    if ok[s]:
                        lo, hi = _percentile(values[s], failed[s], 0.95)
                        d = values[s][:, pi] - values[s][:, pj]
                        d_lo, d_hi = _percentile(d, failed[s], 0.95)
                        failed_total += int(failed[s].sum())
                    else:  # no maximum-likelihood estimate: Firth, profile intervals
                        lo, hi, d_lo, d_hi = _firth_bounds(full[s], k)
                        profiled += 1
                    inside = (lo <= target) & (target <= hi)
                    shares.append(float(inside.mean()))
                    joint += int(inside.all())
                    d_in = (d_lo <= target_diff) & (target_diff <= d_hi)
                    diff_shares.append(float(d_in.mean()))
                done += size
            each, each_se = _mean_se(shares)
            diff, diff_se = _mean_se(diff_shares)
            print(
                f"| {k} | {prompts} | {used} | {resamples} | {seed} | {each:.3f} "
                f"({each_se:.3f}) | {joint / used:.3f} | {diff:.3f} ({diff_se:.3f}) | "
                f"{failed_total} | {firth_total} | {profiled} |",
                flush=True,
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: few data sets")
    parser.add_argument("--part", type=int, choices=(0, 1, 2), default=0, help="0: both")
    args = parser.parse_args()
    start = time.time()
    if args.part in (0, 1):
        part_one(500 if args.quick else 50_000)
    if args.part in (0, 2):
        part_two(20 if args.quick else 400, 100 if args.quick else 500)
    print(f"\n(wall time {time.time() - start:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
