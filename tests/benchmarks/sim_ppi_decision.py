"""Size at the margin of a non-inferiority decision made on the people's prediction-powered
estimate (`blindtest.analysis.decision` with ``estimand: people-mean-score``): how often the
claim is shown when the people's true mean score is exactly 1/2 - margin, by seeded,
vectorised simulation of the library's own arithmetic (`blindtest.stats.ppi_core.intervals`
at the decision's level 1 - 2 alpha, its "auto" choice of interval) and the decision rule
(shown when the interval's lower bound is above 1/2 - margin).

    .venv/bin/python tests/benchmarks/sim_ppi_decision.py              # 4,000 data sets a row
    .venv/bin/python tests/benchmarks/sim_ppi_decision.py --reps 1000  # a quicker look

The model is tests/benchmarks/sim_ppi.py's (people's win/tie/loss, a judge that agrees with
people some of the time, fair or biased toward a side or toward length). At the margin a
valid one-sided test at alpha = 0.05 shows the claim at most 5% of the time. Prints a markdown
table. Not part of ``make bench``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from blindtest.stats import ppi_core as core

sys.path.insert(0, str(Path(__file__).parent))
from sim_ppi import Truth, draw

SEED = 20261206
ALPHA = 0.05
MARGIN = 0.1
#: People's shares (win, tie) whose score is 1/2 - margin = 0.40: no ties, some, many.
AT_MARGIN = (Truth(0.40, 0.0), Truth(0.30, 0.20), Truth(0.15, 0.50))
JUDGES = (("fair", 0.9), ("fair", 0.7), ("fair", 0.5), ("side", 0.7), ("length", 0.7))


def shown_rate(
    rng: np.random.Generator, reps: int, total: int, n: int, truth: Truth, kind: str, a: float
) -> tuple[float, float]:
    """The share of data sets whose decision shows non-inferiority, and the share decided on
    the prediction-powered normal interval (the rest on the people's own)."""
    shown = normal = 0.0
    done = 0
    while done < reps:
        size = min(2500, reps - done)
        y_all, j_all = draw(rng, size, total, truth, kind, a)
        y, f, fu = y_all[:, :n], j_all[:, :n], j_all[:, n:]
        vec = core.intervals([y], [f], [fu], [1.0], confidence_level=1.0 - 2.0 * ALPHA)
        shown += float(np.sum(vec.lo > 0.5 - MARGIN))
        normal += float(np.sum(vec.method == 0))
        done += size
    return shown / reps, normal / reps


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(SEED)
    print(
        f"### Non-inferiority on the people's estimate at the margin ({args.reps:,} data sets "
        f"per row, seed {SEED}, alpha {ALPHA}, margin {MARGIN}: true score {0.5 - MARGIN:.2f})\n"
    )
    print(
        "| people's win/tie | comparisons | people | judge | agrees | shown (size) "
        "| PPI normal used |"
    )
    print("|---|---|---|---|---|---|---|")
    worst = 0.0
    for truth in AT_MARGIN:
        for total in (200, 1000):
            for n in (20, 50, 100):
                for kind, a in JUDGES:
                    rate, normal = shown_rate(rng, args.reps, total, n, truth, kind, a)
                    worst = max(worst, rate)
                    print(
                        f"| {truth.win:.2f}/{truth.tie:.2f} | {total} | {n} | {kind} | {a:.0%} "
                        f"| {rate:.3f} | {normal:.0%} |"
                    )
    print(f"\nlargest size: {worst:.3f} (alpha {ALPHA})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
