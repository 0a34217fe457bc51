"""How often Firth's profile penalised-likelihood intervals hold the true strengths when the
analysis uses them: only on data sets whose maximum-likelihood estimate does not exist (a
clear winner that never lost), so the coverage is conditional on that event, as a user meets
it. Behind docs/statistics.md's table on Firth's intervals.

The data (tests/stats/ranking_simulation.py's process): k candidates, every pair on every
prompt, each answer's quality varying by prompt (sd 0.5 on the log-odds scale), a tie
propensity per prompt (nu = 0.5 x exp(0.7 N(0, 1))). Truths: one clear winner at +5 or +4,
the rest spread evenly over [0, -0.6] (at +3 fewer than 1 data set in 50 at 10 prompts has
no maximum-likelihood estimate). The truth a strength's interval should hold: the Davidson
fit to 200,000 simulated prompts, mean-anchored (as sim_ranking_error.py part 2). Data sets
are drawn in batches until ``--sets`` of them have no maximum-likelihood estimate
(davidson_fit's divergence rule, as rank_candidates decides), or ``--draws`` data sets were
drawn; each such data set gets rank_candidates's Firth fit and its profile intervals (the
penalty of the full model at the constrained fit, chi-square(1)). Columns: the share of data
sets where Firth's fit is used, then over those: each strength's interval holding its truth
(pooled over candidates; Monte Carlo standard error over data sets), all k at once, each
difference's interval (pooled), and the winner's own interval.

Every cell has its own seed, numpy's SeedSequence((2026, 3, k, prompts, truth)). Run niced:

    nice -n 10 .venv/bin/python tests/benchmarks/sim_firth_coverage.py > firth.md
    nice -n 10 .venv/bin/python tests/benchmarks/sim_firth_coverage.py --sets 20   # smoke
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
sys.path.insert(0, str(HERE.parent))

from ranking_simulation import pair_counts  # noqa: E402
from sim_ranking_error import _firth_bounds, population  # noqa: E402

from blindtest.stats.comparisons import pairs_of  # noqa: E402
from blindtest.stats.ranking import davidson_fit  # noqa: E402

KS = (3, 4, 8)
PROMPTS = (10, 30)
TRUTHS = {"winner+5": 5.0, "winner+4": 4.0}


def truth_of(kind: str, k: int) -> np.ndarray:
    truth: np.ndarray = np.r_[TRUTHS[kind], np.linspace(0.0, -0.6, k - 1)]
    return truth


def cell(k: int, prompts: int, kind: str, sets: int, draws: int) -> str:
    t_index = list(TRUTHS).index(kind)
    seed = int(np.random.SeedSequence((2026, 3, k, prompts, t_index)).generate_state(1)[0])
    gen = np.random.default_rng(seed)
    truth = truth_of(kind, k)
    target = population(truth, seed=seed)
    pi, pj = pairs_of(k)
    target_diff = target[pi] - target[pj]
    drawn = used = joint = 0
    strengths: list[float] = []
    differences: list[float] = []
    winner: list[float] = []
    while used < sets and drawn < draws:
        batch = 500
        w, losses, t, _ = pair_counts(gen, truth, batch, prompts, "all")
        counts = np.zeros((batch, 3 * pi.size))
        counts[:, 0::3], counts[:, 1::3], counts[:, 2::3] = w, losses, t
        _, _, ok, _ = davidson_fit(counts, k)
        drawn += batch
        for row in np.flatnonzero(~ok):
            if used >= sets:
                break
            lo, hi, dlo, dhi = _firth_bounds(counts[row], k)
            held = (lo <= target) & (target <= hi)
            strengths.append(float(held.mean()))
            joint += int(held.all())
            differences.append(float(((dlo <= target_diff) & (target_diff <= dhi)).mean()))
            winner.append(float(held[0]))
            used += 1
    share = used / drawn if drawn else math.nan

    def mean_se(values: list[float]) -> str:
        if not values:
            return "-"
        a = np.asarray(values)
        se = a.std(ddof=1) / math.sqrt(a.size) if a.size > 1 else math.nan
        return f"{a.mean():.3f} ({se:.3f})"

    return (
        f"| {k} | {prompts} | {kind} | {seed} | {drawn} | {share:.3f} | {used} | "
        f"{mean_se(strengths)} | {joint / used if used else math.nan:.3f} | "
        f"{mean_se(differences)} | {mean_se(winner)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", type=int, default=200, help="Firth data sets per cell")
    parser.add_argument("--draws", type=int, default=50_000, help="data sets drawn at most")
    args = parser.parse_args()
    start = time.time()
    print(
        "| k | prompts | truth | seed | data sets drawn | share with Firth's fit | Firth data "
        "sets | each strength (MC se) | all k jointly | each difference (MC se) | the "
        "winner's (MC se) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k in KS:
        for prompts in PROMPTS:
            for kind in TRUTHS:
                print(cell(k, prompts, kind, args.sets, args.draws), flush=True)
    print(f"\n{time.time() - start:.0f} s of wall time", file=sys.stderr)


if __name__ == "__main__":
    main()
