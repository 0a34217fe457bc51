"""Family-wise error of a release decision on the people's prediction-powered estimate with m
challengers (Holm across them, `blindtest.analysis.people_estimate`): how often any
challenger whose people's true score is exactly 1/2 - margin is shown non-inferior, by seeded,
vectorised simulation of the library's own arithmetic (`blindtest.stats.ppi_core`'s choice of
interval and one-sided p-values, `blindtest.stats.multiple.holm`).

    .venv/bin/python tests/benchmarks/sim_ppi_holm.py               # 2,000 families a row
    .venv/bin/python tests/benchmarks/sim_ppi_holm.py --reps 500    # a quicker look

Each challenger's comparisons with the champion are drawn independently from
tests/benchmarks/sim_ppi_decision.py's model (Holm holds under any dependence; independence
is where the challengers' errors add up most). Two families: every challenger at the margin
(score 0.40), and one clearly better (people's win/tie 0.50/0.20, score 0.60) with the others
at the margin, where Holm's later steps test at alpha / (m - 1) and Bonferroni's would not.

Holm compares each p-value only with alpha / k (k = 1..m), so each p-value is read as the
smallest of those levels whose one-sided bound clears the margin (`ppi_core.one_sided_bound`;
p <= alpha / k exactly when it clears at alpha / k): the same rejections as the exact p-values,
without a bisection per data set. Prints a markdown table. Not part of ``make bench``.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from blindtest.stats import ppi_core as core
from blindtest.stats.multiple import holm

sys.path.insert(0, str(Path(__file__).parent))
from sim_ppi import Truth
from sim_ppi_decision import ALPHA, AT_MARGIN, MARGIN, SEED, draw_cell

F64 = npt.NDArray[np.float64]
BETTER = Truth(0.50, 0.20)
JUDGES = (("fair", 0.9), ("side", 0.7), ("against", 0.7))


def grid_p_values(y: F64, f: F64, fu: F64, m: int) -> F64:
    """Each data set's one-sided p-value that its score is above 1/2 - margin, rounded up to
    the nearest of alpha / m, ..., alpha / 1 (1 past alpha): exact for Holm's comparisons."""
    vec = core.intervals([y], [f], [fu], [1.0])
    p = np.ones(y.shape[0])
    for k in range(1, m + 1):  # alpha, alpha / 2, ...: the last level that clears is the p
        bound = core.one_sided_bound(vec, [y], [1.0], core.VERDICT_SCORES, ALPHA / k, lower=True)
        p = np.where(bound > 0.5 - MARGIN, ALPHA / k, p)
    return p


def family_error(
    rng: np.random.Generator,
    reps: int,
    m: int,
    cell: tuple[int, int, Truth, str, float],
    *,
    better: bool = False,
) -> float:
    """The share of ``reps`` families of m challengers (the first clearly better when
    ``better``) in which Holm shows any challenger at the margin non-inferior."""
    total, n, truth, kind, a = cell
    columns = []
    for j in range(m):
        y, judge = draw_cell(rng, reps, total, BETTER if better and j == 0 else truth, kind, a)
        columns.append(grid_p_values(y[:, :n], judge[:, :n], judge[:, n:], m))
    ps = np.stack(columns, axis=1)
    nulls = slice(1, None) if better else slice(None)
    wrong = 0
    for row in ps:
        adjusted = np.asarray(holm(row.tolist()))
        wrong += int(np.any(adjusted[nulls] <= ALPHA))
    return wrong / reps


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(SEED)
    se = math.sqrt(ALPHA * (1 - ALPHA) / args.reps)
    print(
        f"### Family-wise error of Holm across m challengers at the margin ({args.reps:,} "
        f"families per cell, seed {SEED}, alpha {ALPHA}, margin {MARGIN}; Monte Carlo "
        f"standard error {se:.4f})\n"
    )
    print("| people's win/tie | comparisons | people | judge | agrees | family | m = 2 | m = 3 "
          "| m = 4 |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    rows = 0
    over = 0
    for truth in AT_MARGIN:
        for n in (20, 50, 100):
            for kind, a in JUDGES:
                for better in (False, True):
                    cell = (1000, n, truth, kind, a)
                    errors = [
                        family_error(rng, args.reps, m, cell, better=better) for m in (2, 3, 4)
                    ]
                    worst = max(worst, *errors)
                    rows += len(errors)
                    over += sum(e > ALPHA + 2 * se for e in errors)
                    family = "one better" if better else "all at margin"
                    print(
                        f"| {truth.win:.2f}/{truth.tie:.2f} | 1000 | {n} | {kind} | {a:.0%} | "
                        f"{family} | " + " | ".join(f"{e:.3f}" for e in errors) + " |"
                    )
    print(
        f"\nlargest family-wise error: {worst:.3f} (alpha {ALPHA}); above alpha + 2 SE "
        f"({ALPHA + 2 * se:.4f}): {over} of {rows}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
