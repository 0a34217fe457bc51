"""Size at the margin of a non-inferiority decision made on the people's prediction-powered
estimate (`blindtest.analysis.decision` with ``estimand: people-mean-score``): how often the
claim is shown when the people's true mean score is exactly 1/2 - margin, by seeded,
vectorised simulation of the library's own arithmetic (`blindtest.stats.ppi_core`: the
"auto" choice of interval, then the one-sided p-value of the chosen method,
`ppi_core.one_sided_p`, read through the bound it inverts, `ppi_core.one_sided_bound`:
shown when the one-sided 1 - alpha lower bound is above 1/2 - margin, i.e. p <= alpha).

    .venv/bin/python tests/benchmarks/sim_ppi_decision.py              # 4,000 data sets a row
    .venv/bin/python tests/benchmarks/sim_ppi_decision.py --reps 1000  # a quicker look

The model is tests/benchmarks/sim_ppi.py's (people's win/tie/loss, a judge that agrees with
people some of the time, fair or biased toward a side or toward length), plus a judge biased
*against* the challenger ("against": the side judge with the sides swapped). Two columns:
"Student t" is the normal interval's plain one-sided test (what shipped before), "shipped" the
larger of it and Hall's skewness-corrected p-value (`ppi_core.normal_one_sided_p`). At the
margin a valid one-sided test at alpha = 0.05 shows the claim at most 5% of the time. Of 108
rows at exactly alpha about two would land above alpha + 2 Monte Carlo standard errors by
chance, so such a row is run again on a stream of its own, ten times larger (last column).
Prints a markdown table. Not part of ``make bench``.
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

sys.path.insert(0, str(Path(__file__).parent))
from sim_ppi import Truth, draw

F64 = npt.NDArray[np.float64]
SEED = 20261206
ALPHA = 0.05
MARGIN = 0.1
#: A row above alpha + 2 Monte Carlo standard errors is run again this many times larger (of
#: 108 rows at exactly alpha, about 2 would land there by chance).
CONFIRM = 10
#: People's shares (win, tie) whose score is 1/2 - margin = 0.40: no ties, some, many.
AT_MARGIN = (Truth(0.40, 0.0), Truth(0.30, 0.20), Truth(0.15, 0.50))
JUDGES = (
    ("fair", 0.9),
    ("fair", 0.7),
    ("fair", 0.5),
    ("side", 0.7),
    ("against", 0.7),
    ("length", 0.7),
)


def draw_cell(
    rng: np.random.Generator, reps: int, total: int, truth: Truth, kind: str, a: float
) -> tuple[F64, F64]:
    """`sim_ppi.draw`, with "against": the side judge's model with the sides swapped (people's
    win and loss shares exchanged, then every score reflected), so it favours the champion."""
    if kind != "against":
        return draw(rng, reps, total, truth, kind, a)
    swapped = Truth(1.0 - truth.win - truth.tie, truth.tie)
    y, j = draw(rng, reps, total, swapped, "side", a)
    return 1.0 - y, 1.0 - j


def lower_bounds(
    y: F64, f: F64, fu: F64, tail: float, *, skew: bool
) -> tuple[F64, npt.NDArray[np.int64]]:
    """Each data set's one-sided ``1 - tail`` lower bound by the rule, and its method."""
    vec = core.intervals([y], [f], [fu], [1.0], confidence_level=1.0 - 2.0 * tail)
    bound = core.one_sided_bound(vec, [y], [1.0], core.VERDICT_SCORES, tail, lower=True, skew=skew)
    return bound, vec.method


def shown_rate(
    rng: np.random.Generator, reps: int, total: int, n: int, truth: Truth, kind: str, a: float
) -> tuple[float, float, float]:
    """The share of data sets whose decision shows non-inferiority, by the plain t and by the
    shipped rule, and the share decided on the prediction-powered normal interval."""
    plain = shipped = normal = 0.0
    done = 0
    while done < reps:
        size = min(2500, reps - done)
        y_all, j_all = draw_cell(rng, size, total, truth, kind, a)
        y, f, fu = y_all[:, :n], j_all[:, :n], j_all[:, n:]
        t_bound, method = lower_bounds(y, f, fu, ALPHA, skew=False)
        s_bound, _ = lower_bounds(y, f, fu, ALPHA, skew=True)
        plain += float(np.sum(t_bound > 0.5 - MARGIN))
        shipped += float(np.sum(s_bound > 0.5 - MARGIN))
        normal += float(np.sum(method == 0))
        done += size
    return plain / reps, shipped / reps, normal / reps


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(SEED)
    se = math.sqrt(ALPHA * (1 - ALPHA) / args.reps)
    print(
        f"### Non-inferiority on the people's estimate at the margin ({args.reps:,} data sets "
        f"per row, seed {SEED}, alpha {ALPHA}, margin {MARGIN}: true score {0.5 - MARGIN:.2f}; "
        f"Monte Carlo standard error {se:.4f})\n"
    )
    print(
        "| people's win/tie | comparisons | people | judge | agrees | Student t | shipped "
        f"| PPI normal used | shipped, again at {CONFIRM * args.reps:,} |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    worst = [0.0, 0.0]
    rates: list[float] = []
    normal_rates: list[float] = []
    confirmed: list[float] = []
    cells = [
        (truth, total, n, kind, a)
        for truth in AT_MARGIN
        for total in (200, 1000)
        for n in (20, 50, 100)
        for kind, a in JUDGES
    ]
    for index, (truth, total, n, kind, a) in enumerate(cells):
        plain, shipped, normal = shown_rate(rng, args.reps, total, n, truth, kind, a)
        worst = [max(worst[0], plain), max(worst[1], shipped)]
        rates.append(shipped)
        if normal > 0.5:
            normal_rates.append(shipped)
        again = "-"
        if shipped > ALPHA + 2 * se:  # a second look, on a stream of its own, ten times larger
            more = np.random.default_rng([SEED, index])
            confirmed.append(shown_rate(more, CONFIRM * args.reps, total, n, truth, kind, a)[1])
            again = f"{confirmed[-1]:.4f}"
        print(
            f"| {truth.win:.2f}/{truth.tie:.2f} | {total} | {n} | {kind} | {a:.0%} "
            f"| {plain:.3f} | {shipped:.3f} | {normal:.0%} | {again} |"
        )
    over = sum(r > ALPHA + 2 * se for r in rates)
    print(
        f"\nlargest size: Student t {worst[0]:.3f}, shipped {worst[1]:.3f} (alpha {ALPHA}); "
        f"shipped rows above alpha + 2 SE ({ALPHA + 2 * se:.4f}): {over} of {len(rates)}; "
        f"mean over the {len(normal_rates)} rows decided mostly on a normal interval "
        f"{np.mean(normal_rates):.4f} (its standard error {se / math.sqrt(len(normal_rates)):.4f})"
    )
    if confirmed:
        se_again = math.sqrt(ALPHA * (1 - ALPHA) / (CONFIRM * args.reps))
        print(
            f"again at {CONFIRM * args.reps:,} data sets: largest {max(confirmed):.4f} "
            f"(alpha + 2 SE {ALPHA + 2 * se_again:.4f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
