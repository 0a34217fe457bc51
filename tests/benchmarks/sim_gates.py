"""The gates' size, coverage and power by seeded, vectorised simulation: the full grid behind
docs/statistics.md's tables "Position gate", "Agreement gate" and "Deterministic side".

    nice -n 10 .venv/bin/python tests/benchmarks/sim_gates.py > /tmp/sim_gates.md

Prints Markdown tables (about 20 minutes on one core of the 2-core machine). Every cell names its
runs; a rate's Monte Carlo standard error is sqrt(r (1 - r) / runs) (0.007 for 5% at 1,000
runs). The data model is tests/benchmarks/gate_simulation.py's. Not run by make bench.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gate_simulation as sim

from blindtest.stats.agreement import _alpha_from_weights, kappa_with_se
from blindtest.stats.determinism import (
    CANNED_MIN_PROMPTS,
    CANNED_SHARE,
    DETERMINISTIC_MISS,
    MIN_PAIRS,
    STOP_EVIDENCE,
    chance_of_repeat,
)
from blindtest.stats.position import POSITION_MARGIN, position_gate

SEED = 20261205
ALPHA = 0.05


def _rate(flags: Any) -> str:
    return f"{float(np.mean(flags)):.3f}"


def margin_table() -> None:
    """Exact: how often one honest judge (left share 1/2, one pass) passes, by margin."""
    from blindtest.stats.intervals import clopper_pearson

    print("### Position gate: how many comparisons a pass needs (exact, one judge)\n")
    print(
        "The chance that one judge with no position bias passes (the 90% Clopper-Pearson "
        "interval of its left share inside 1/2 +- m), summed exactly over the binomial.\n"
    )
    sizes = (20, 50, 100, 200, 300, 500, 1000)
    print("| m | " + " | ".join(f"N = {n}" for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for margin in (0.05, 0.075, 0.1):
        cells = []
        for n in sizes:
            passes = 0.0
            for k in range(n + 1):
                found = clopper_pearson(k, n, confidence_level=1 - 2 * ALPHA)
                if found.lo > 0.5 - margin and found.hi < 0.5 + margin:
                    passes += float(stats.binom.pmf(k, n, 0.5))
            cells.append(f"{passes:.2f}")
        print(f"| {margin} | " + " | ".join(cells) + " |")
    print()


def position_table(runs: int) -> None:
    """Unbiased panels sharing a signal, and panels at the margin."""
    print("### Position gate: size over comparisons, and the two one-sided tests at the margin\n")
    print(
        f"Seed {SEED}; {runs} runs per cell; alpha {ALPHA}, margin {POSITION_MARGIN}. "
        "Judges share a per-comparison preference (Beta(0.25, 0.25): they agree comparison "
        "by comparison, no side better overall), balanced placement as the design draws it. "
        "`sig` = the exact sign-flip test rejects (the size of 'position moved the picks'); "
        "`naive` = the exact binomial over every pick (the gate this replaces); at left share "
        "1/2 + m (`edge`), `pass` is the two one-sided tests' error (at most alpha) and `fail` "
        "the fail rule's (at most alpha/2); `fail@0.65` is the power against a left share "
        "of 0.65. With the swap (passes 2) each judge keeps its preference and tie across the "
        "passes but for 30% of second passes, drawn afresh.\n"
    )
    print("| passes | judges | N | ties | sig | naive | fail | pass | edge pass | edge fail "
          "| fail@0.65 |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(SEED)
    for passes in (1, 2):
        for judges in (1, 2, 3, 5):
            for n in (10, 30, 100, 300):
                for tau in (0.0, 0.3):
                    cells = []
                    for bias in (0.0, 2 * POSITION_MARGIN, 0.3):
                        left, right = sim.position_counts(
                            rng, runs, n, judges, passes=passes, bias=bias, p=0.5, kappa=0.5,
                            tau=tau, redraw=0.3,
                        )  # fmt: skip
                        found = [
                            position_gate(left[r].tolist(), right[r].tolist())
                            for r in range(runs)
                            if (left[r] + right[r]).any()
                        ]
                        cells.append((found, left, right))
                    null, _, _ = cells[0]
                    left0, right0 = cells[0][1], cells[0][2]
                    naive = [
                        stats.binomtest(int(a), int(a + b), 0.5).pvalue <= ALPHA
                        for a, b in zip(left0.sum(1), right0.sum(1), strict=True)
                        if a + b
                    ]
                    edge = cells[1][0]
                    power = cells[2][0]
                    print(
                        f"| {passes} | {judges} | {n} | {tau} "
                        f"| {_rate([f.significant for f in null])} | {_rate(naive)} "
                        f"| {_rate([f.verdict == 'fail' for f in null])} "
                        f"| {_rate([f.verdict == 'pass' for f in null])} "
                        f"| {_rate([f.verdict == 'pass' for f in edge])} "
                        f"| {_rate([f.verdict == 'fail' for f in edge])} "
                        f"| {_rate([f.verdict == 'fail' for f in power])} |"
                    )
    print()
    print("Independent fair placements instead of the balanced one (3 judges, one pass):\n")
    print("| N | ties | sig | naive | edge pass | edge fail |")
    print("|---|---|---|---|---|---|")
    for n in (10, 30, 100, 300):
        for tau in (0.0, 0.3):
            rows = []
            for bias in (0.0, 2 * POSITION_MARGIN):
                left, right = sim.position_counts(
                    rng, runs, n, 3, bias=bias, p=0.5, kappa=0.5, tau=tau, balanced=False
                )
                rows.append(
                    (
                        [position_gate(left[r].tolist(), right[r].tolist()) for r in range(runs)],
                        left,
                        right,
                    )
                )
            null, left0, right0 = rows[0]
            naive = [
                stats.binomtest(int(a), int(a + b), 0.5).pvalue <= ALPHA
                for a, b in zip(left0.sum(1), right0.sum(1), strict=True)
            ]
            print(
                f"| {n} | {tau} | {_rate([f.significant for f in null])} | {_rate(naive)} "
                f"| {_rate([f.verdict == 'pass' for f in rows[1][0]])} "
                f"| {_rate([f.verdict == 'fail' for f in rows[1][0]])} |"
            )
    print()


def _bootstrap_alpha(freq: np.ndarray, patterns: np.ndarray, n: int, judges: int,
                     rng: np.random.Generator, resamples: int) -> tuple[float, float]:  # fmt: skip
    sizes = np.full(len(patterns), float(judges))
    draws = rng.multinomial(n, freq / n, size=resamples).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = _alpha_from_weights(draws, patterns, sizes)[0]
    values = values[~np.isnan(values)]
    if values.size == 0:
        return math.nan, math.nan
    lo, hi = np.quantile(values, [0.025, 0.975])
    return float(lo), float(hi)


def agreement_table(runs: int, resamples: int) -> None:
    print("### Agreement gate: Krippendorff's alpha by position, percentile bootstrap over "
          "comparisons\n")  # fmt: skip
    print(
        f"Seed {SEED}; {runs} runs per cell, {resamples} resamples each (the package draws "
        "2,000). Independent honest judges with a per-comparison preference p for the better "
        "side, ties with probability tau, balanced placement. True alpha = 1 - D_o / D_e in "
        "the population ((2p - 1)^2 without ties). `cover` = the 95% interval holds the true "
        "alpha; `lo>` / `hi<` = it misses above / below; `fail` = the gate fails (the interval "
        "reaches 0, or alpha is undefined in a run: every pick one answer). At p = 0.5 there is "
        "no shared signal and `1 - fail` is the gate's false pass rate.\n"
    )
    print("| judges | N | p | ties | true alpha | cover | lo> | hi< | fail |")
    print("|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(SEED + 1)
    for judges in (2, 3, 4, 5):
        patterns, _ = sim.pattern_table(judges)
        for n in (10, 30, 100, 300):
            for p in (0.5, 0.6, 0.7, 0.8, 0.9):
                for tau in (0.0, 0.3):
                    left, right, ties = sim.agreement_counts(rng, runs, n, judges, p=p, tau=tau)
                    freq = sim.pattern_frequencies(left, right, ties, judges).astype(np.float64)
                    truth = sim.true_alpha(p, tau)
                    bounds = np.array(
                        [
                            _bootstrap_alpha(freq[r], patterns, n, judges, rng, resamples)
                            for r in range(runs)
                        ]
                    )
                    ok = ~np.isnan(bounds[:, 0])
                    lo, hi = bounds[ok, 0], bounds[ok, 1]
                    print(
                        f"| {judges} | {n} | {p} | {tau} | {truth:.3f} "
                        f"| {_rate((lo <= truth) & (truth <= hi))} | {_rate(lo > truth)} "
                        f"| {_rate(hi < truth)} "
                        f"| {_rate(~ok | (np.nan_to_num(bounds[:, 0], nan=-1.0) <= 0))} |"
                    )
    print()


def kappa_table(runs: int) -> None:
    print("### Cohen's kappa by position, Fleiss-Cohen-Everitt Wald interval (two judges)\n")
    print(
        f"Seed {SEED}; {runs} runs per cell; the model above with two judges. `cover` = the "
        "95% interval (kappa +- 1.96 se, clipped) holds the true kappa (equal to the true "
        "alpha here); `none` = no interval (a degenerate table); `sig` = the FCE test of "
        "kappa = 0 rejects at 5% (its size at p = 0.5).\n"
    )
    print("| N | p | ties | true kappa | cover | none | sig |")
    print("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(SEED + 2)
    codes = np.array(["left", "right", "tie"])
    for n in (10, 30, 100, 300):
        for p in (0.5, 0.7, 0.9):
            for tau in (0.0, 0.3):
                a_left = sim.placements(rng, runs, n, True)
                prefers = rng.random((runs, n, 2)) < p
                tied = rng.random((runs, n, 2)) < tau
                pick = np.where(tied, 2, np.where(prefers == a_left[..., None], 0, 1))
                truth = sim.true_alpha(p, tau)
                covered, missing, significant = [], 0, []
                for r in range(runs):
                    found = kappa_with_se(
                        codes[pick[r, :, 0]].tolist(), codes[pick[r, :, 1]].tolist()
                    )
                    if found.interval is None:
                        missing += 1
                    else:
                        covered.append(found.interval.lo <= truth <= found.interval.hi)
                    significant.append(found.p_value <= ALPHA if found.p_value == found.p_value
                                       else False)  # fmt: skip
                print(
                    f"| {n} | {p} | {tau} | {truth:.3f} | {_rate(covered)} "
                    f"| {missing / runs:.3f} | {_rate(significant)} |"
                )
    print()


def determinism_tables(runs: int) -> None:
    print("### Deterministic side: the e-process over twin pairs\n")
    bar = math.log10(STOP_EVIDENCE)
    print(
        "Pairs a deterministic side needs before it is refused (every pair identical; judged "
        f"from the {MIN_PAIRS}th pair, or all the design holds):\n"
    )
    print("| words | H0 chance of repeat | factor per pair | pairs to refuse |")
    print("|---|---|---|---|")
    for words in (1, 2, 3, 5, 8, 12, 20, 42):
        q = chance_of_repeat(words)
        factor = (1 - DETERMINISTIC_MISS) / q
        need = "never" if factor <= 1 else str(math.ceil(bar / math.log10(factor) - 1e-12))
        print(f"| {words} | {q:.4g} | {factor:.3g} | {need} |")
    print()
    print(
        f"Seed {SEED}; {runs} sampling sides per cell, each word of a twin agreeing with "
        "probability c (a whole answer of w words repeats with c^w). Share of sides refused "
        "within 10, 30 and 100 pairs. H0 allows c^w up to 0.8^(w-1): c = 0.8 is at the bound, "
        "0.9 and 0.95 are beyond it (answers that repeat far more often than H0 allows).\n"
    )
    print("| words | c | refused by 10 | by 30 | by 100 |")
    print("|---|---|---|---|---|")
    rng = np.random.default_rng(SEED + 3)
    for words in (1, 2, 3, 5, 8, 20):
        for c in (0.5, 0.8, 0.9, 0.95):
            identical = sim.twin_pairs(rng, runs, 100, words, c)
            gain = math.log10((1 - DETERMINISTIC_MISS) / chance_of_repeat(words))
            paths = np.cumsum(np.where(identical, gain, math.log10(DETERMINISTIC_MISS)), axis=1)
            over = paths >= bar
            over[:, : MIN_PAIRS - 1] = False
            cells = [_rate(over[:, :k].any(axis=1)) for k in (10, 30, 100)]
            print(f"| {words} | {c} | {' | '.join(cells)} |")
    print()
    print(
        f"Prompt independence: one text of 2+ words answering at least {CANNED_MIN_PROMPTS} "
        f"prompts and {CANNED_SHARE:.0%} of them. A side that gives a canned refusal to each "
        f"prompt with probability r ({runs} sides per cell): share of sides it fires on.\n"
    )
    print("| prompts | r = 0.1 | 0.3 | 0.5 | 0.7 | 1.0 |")
    print("|---|---|---|---|---|---|")
    for prompts in (5, 10, 30, 100):
        cells = []
        for r in (0.1, 0.3, 0.5, 0.7, 1.0):
            canned = (rng.random((runs, prompts)) < r).sum(axis=1)
            fires = (canned >= CANNED_MIN_PROMPTS) & (canned >= CANNED_SHARE * prompts)
            cells.append(_rate(fires))
        print(f"| {prompts} | {' | '.join(cells)} |")
    print()


def main() -> None:
    started = time.perf_counter()
    print(f"<!-- tests/benchmarks/sim_gates.py, seed {SEED} -->\n")
    determinism_tables(20_000)
    kappa_table(1000)
    agreement_table(1000, 1000)
    margin_table()
    position_table(1000)
    print(f"<!-- {time.perf_counter() - started:.0f} s -->")


if __name__ == "__main__":
    main()
