"""Benchmark: the several-candidates schedule and ranking at the issue's scale.

10 candidates over 1,000 prompts, ``--pairs sample:3`` (3,000 comparisons) and ``--pairs
all`` (45,000): the pairing schedule, the outcome arrays, the per-pair table, and the ranking
(Davidson fit, the exact existence check, 2,000 bootstrap resamples over prompts) with
outcomes drawn from Davidson's model. Prints each step's wall time; exits 1 if the ranking at
45,000 comparisons takes 30 s or more (the analysis budget).

Run with ``python tests/benchmarks/bench_ranking.py`` (``make bench`` runs it).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from blindtest.model.pairing import schedule, schedule_size
from blindtest.model.rng import IndexStream
from blindtest.stats.pairwise import pair_table, tally
from blindtest.stats.ranking import outcomes, rank_candidates

BUDGET = 30.0


def main() -> int:
    import scipy.optimize
    import scipy.stats  # noqa: F401  # imported before timing: start-up is not the analysis

    names = [f"model-{i}" for i in range(10)]
    truth = dict(zip(names, np.linspace(0.8, -0.8, 10), strict=True))
    worst = 0.0
    for mode in ("sample:3", "all"):
        start = time.perf_counter()
        comparisons = schedule(names, 1000, mode, "bench")
        t_schedule = time.perf_counter() - start
        size = schedule_size(comparisons, names)
        gen = np.random.default_rng(1)
        rows: list[tuple[int, str, str, str | None]] = []
        for c in comparisons:
            a, b = np.exp(truth[c.left]), np.exp(truth[c.right])
            u = gen.random() * (a + b + 0.5 * np.sqrt(a * b))
            winner = c.left if u < a else c.right if u < a + b else None
            rows.append((c.prompt, c.left, c.right, winner))
        start = time.perf_counter()
        data = outcomes(names, rows)
        table = pair_table(tally(names, [(r[1], r[2], r[3]) for r in rows]))
        t_tables = time.perf_counter() - start
        start = time.perf_counter()
        result = rank_candidates(data, rng=IndexStream("bench", "ranking"))
        t_rank = time.perf_counter() - start
        worst = max(worst, t_rank)
        groups = Counter(len(g) for g in result.groups)
        print(
            f"--pairs {mode}: {size.comparisons} comparisons, {size.answers} answers; "
            f"schedule {t_schedule:.2f} s, outcomes + pair table {t_tables:.2f} s "
            f"({len(table.pairs)} pairs), ranking {t_rank:.2f} s "
            f"({result.resamples} resamples, {result.failed_resamples} failed, "
            f"{len(result.groups)} groups {dict(groups)})"
        )
    if worst >= BUDGET:
        print(f"MISSED: the ranking took {worst:.1f} s (budget {BUDGET:.0f} s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
