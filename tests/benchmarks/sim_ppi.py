"""Coverage of the prediction-powered estimate of the people's score, by seeded, vectorised
simulation of the library's own arithmetic (`blindtest.stats.ppi_core`), over people's samples
of 20, 50 and 100 among 200 and 1,000 comparisons and judges that agree with people 90%, 70%
and 50% of the time, biased toward one side or toward length.

    .venv/bin/python tests/benchmarks/sim_ppi.py                  # the full grid (minutes)
    .venv/bin/python tests/benchmarks/sim_ppi.py --reps 2000      # a quicker look
    .venv/bin/python tests/benchmarks/sim_ppi.py --alternatives   # + the rejected fallbacks
    .venv/bin/python tests/benchmarks/sim_ppi.py --sections weights,plan

It prints markdown tables (pasted into docs/statistics.md). Not part of ``make bench``.

**The model.** Each comparison is a prompt drawn from the workload. People's verdict: win,
tie, loss with probabilities ``(win, tie, 1 - win - tie)``, scored 1, 1/2, 0; the true score
is ``win + tie / 2`` (the workload's, not the sample's). A length covariate ``L ~ N(0.5, 1)``
(side A tends to write longer) moves the judge but never people. The judge gives the people's
verdict with probability ``agreement``; otherwise:

* ``fair``: one of the two other verdicts, at random;
* ``side``: A wins (a tie if people said A wins): biased toward side A;
* ``length``: the longer answer wins (a tie if people said so already): biased toward length.

People judge the first ``n`` comparisons (the comparisons are exchangeable, so these are a
uniform sample); the judge judges all ``total``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import special, stats

from blindtest.stats import ppi_core as core

F64 = npt.NDArray[np.float64]
SEED = 20261206
SCORES = np.array([1.0, 0.5, 0.0])  # win, tie, loss
LENGTH_SHIFT = 0.5


@dataclass(frozen=True)
class Truth:
    """People's verdict shares (loss is the rest)."""

    win: float
    tie: float

    @property
    def probs(self) -> F64:
        return np.array([self.win, self.tie, 1.0 - self.win - self.tie])

    @property
    def score(self) -> float:
        return self.win + self.tie / 2.0


TRUTHS = (Truth(0.45, 0.20), Truth(0.80, 0.10), Truth(0.30, 0.10))
JUDGES = (
    ("fair", 0.9),
    ("fair", 0.7),
    ("fair", 0.5),
    ("side", 0.9),
    ("side", 0.7),
    ("length", 0.9),
    ("length", 0.7),
)


def draw(
    rng: np.random.Generator, reps: int, total: int, truth: Truth, kind: str, agreement: float
) -> tuple[F64, F64]:
    """People's and the judge's scores, ``reps`` x ``total`` (the model in the module doc)."""
    u = rng.random((reps, total))
    y = np.where(u < truth.win, 1.0, np.where(u < truth.win + truth.tie, 0.5, 0.0))
    agree = rng.random((reps, total)) < agreement
    if kind == "fair":
        others = np.array([[0.5, 1.0], [0.0, 1.0], [0.0, 0.5]])  # rows: y = 0, 1/2, 1
        pick = (rng.random((reps, total)) < 0.5).astype(int)
        wrong = others[(y * 2).astype(int), pick]
    elif kind == "side":
        wrong = np.where(y < 1.0, 1.0, 0.5)
    else:
        longer = np.where(rng.normal(LENGTH_SHIFT, 1.0, (reps, total)) > 0, 1.0, 0.0)
        wrong = np.where(longer == y, 0.5, longer)
    return y, np.where(agree, y, wrong)


def joint(truth: Truth, kind: str, agreement: float) -> F64:
    """The exact table ``P(people y, judge j)`` of the model, win/tie/loss order."""
    p_longer_a = float(special.ndtr(LENGTH_SHIFT))
    table = np.zeros((3, 3))
    for i, py in enumerate(truth.probs):
        table[i, i] += agreement * py
        wrong = np.zeros(3)
        if kind == "fair":
            wrong[[k for k in range(3) if k != i]] = 0.5
        elif kind == "side":
            wrong[1 if i == 0 else 0] = 1.0
        else:
            wrong[1 if i == 0 else 0] += p_longer_a  # A longer: A wins, or a tie
            wrong[1 if i == 2 else 2] += 1.0 - p_longer_a
        table[i] += (1.0 - agreement) * py * wrong
    return table


def true_effective_n(table: F64, n: int, total: int) -> float:
    """People's judgements the estimate is worth at the PPI++ weight: ``n (n + N') / (n + (1 -
    rho^2) N')`` with the model's correlation of people's and the judge's scores."""
    py, pj = table.sum(axis=1), table.sum(axis=0)
    var_y = float(py @ SCORES**2) - float(py @ SCORES) ** 2
    var_j = float(pj @ SCORES**2) - float(pj @ SCORES) ** 2
    cov = float(SCORES @ table @ SCORES) - float(py @ SCORES) * float(pj @ SCORES)
    rho = max(cov / math.sqrt(var_y * var_j), 0.0)
    rest = total - n
    return n * (n + rest) / (n + (1 - rho**2) * rest)


@dataclass(frozen=True)
class Cell:
    coverage: float
    width: float
    people_width: float
    ppi_share: float
    plain_coverage: float
    effective_coverage: float
    effective_given: float
    agreement: float
    judge_bias: float


def run_cell(
    rng: np.random.Generator, reps: int, total: int, n: int, truth: Truth, kind: str, a: float
) -> Cell:
    """One cell of the grid, in batches of at most 2,500 data sets."""
    hits = plain = eff_hits = eff_count = ppi = 0.0
    width = people_width = agreed = bias = 0.0
    table = joint(truth, kind, a)
    eff_true = true_effective_n(table, n, total)
    z = float(special.ndtri(0.975))
    done = 0
    while done < reps:
        size = min(2500, reps - done)
        y_all, j_all = draw(rng, size, total, truth, kind, a)
        y, f, fu = y_all[:, :n], j_all[:, :n], j_all[:, n:]
        vec = core.intervals([y], [f], [fu], [1.0])
        theta = truth.score
        hits += float(np.sum((vec.lo <= theta) & (theta <= vec.hi)))
        width += float(np.sum(vec.hi - vec.lo))
        people_width += float(np.sum(vec.people_hi - vec.people_lo))
        ppi += float(np.sum(vec.method == 0))
        # ppi_py's own interval: plug-in weight, z, never a fallback.
        plug = core.combine([core.stratum_parts(y, f, fu, "plug-in")], [1.0])
        half = z * np.sqrt(plug.variance)
        plain += float(np.sum(np.abs(plug.estimate - theta) <= half))
        comb = vec.combined
        given = np.isfinite(comb.effective_lo) & (n >= core.EFFECTIVE_N_INTERVAL_FROM)
        inside = (comb.effective_lo <= eff_true) & (eff_true <= comb.effective_hi)
        eff_hits += float(np.sum(given & inside))
        eff_count += float(np.sum(given))
        agreed += float(np.mean(y_all == j_all)) * size
        bias += float(np.mean(j_all) - theta) * size
        done += size
    return Cell(
        coverage=hits / reps,
        width=width / reps,
        people_width=people_width / reps,
        ppi_share=ppi / reps,
        plain_coverage=plain / reps,
        effective_coverage=eff_hits / eff_count if eff_count else math.nan,
        effective_given=eff_count / reps,
        agreement=agreed / reps,
        judge_bias=bias / reps,
    )


def main_grid(
    reps: int, rng: np.random.Generator
) -> list[tuple[Truth, int, int, str, float, Cell]]:
    rows = []
    for truth in TRUTHS:
        for total in (200, 1000):
            for n in (20, 50, 100):
                for kind, a in JUDGES:
                    rows.append(
                        (truth, total, n, kind, a, run_cell(rng, reps, total, n, truth, kind, a))
                    )
    return rows


def print_grid(rows: Sequence[tuple[Truth, int, int, str, float, Cell]], reps: int) -> None:
    print(f"### Coverage of the 95% interval ({reps:,} data sets per row, seed {SEED})\n")
    print("| people's score | comparisons | people | judge | agrees | judge's bias | covers | "
          "width | people-only width | width ratio | PPI normal used | ppi_py interval covers | "
          "effective n covers |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for truth, total, n, kind, a, c in rows:
        effective = f"{c.effective_coverage:.3f}" if c.effective_given else "-"
        print(
            f"| {truth.score:.2f} | {total} | {n} | {kind} {a:.0%} | {c.agreement:.2f} | "
            f"{c.judge_bias:+.3f} | {c.coverage:.3f} | {c.width:.3f} | {c.people_width:.3f} | "
            f"{c.width / c.people_width:.2f} | {c.ppi_share:.0%} | {c.plain_coverage:.3f} | "
            f"{effective} |"
        )
    covs = np.array([c.coverage for *_, c in rows])
    below = int(np.sum(covs < 0.94))
    mc_se = math.sqrt(0.95 * 0.05 / reps)
    print(f"\nLowest coverage {covs.min():.3f}; rows below 0.94: {below} of {len(rows)} (Monte "
          f"Carlo standard error {mc_se:.4f}).\n")  # fmt: skip


def stratified(reps: int, rng: np.random.Generator) -> None:
    """Two tags of different sizes, truths and judges; the sample proportional to the tags."""
    tags = (
        ("code", 400, Truth(0.60, 0.10), "side", 0.9),
        ("chat", 600, Truth(0.35, 0.25), "length", 0.7),
    )
    theta = sum(size / 1000 * truth.score for _, size, truth, _, _ in tags)
    print(f"### Stratified by tag (true score {theta:.3f}; {reps:,} data sets per row)\n")
    print("| people | allocation | covers | width | people-only width | PPI normal used |")
    print("|---|---|---|---|---|---|")
    for n, allocation in ((50, (20, 30)), (100, (40, 60)), (100, (50, 50))):
        ys, fs, fus = [], [], []
        for (_, size, truth, kind, a), m in zip(tags, allocation, strict=True):
            y, j = draw(rng, reps, size, truth, kind, a)
            ys.append(y[:, :m])
            fs.append(j[:, :m])
            fus.append(j[:, m:])
        vec = core.intervals(ys, fs, fus, [0.4, 0.6])
        cover = np.mean((vec.lo <= theta) & (theta <= vec.hi))
        print(f"| {n} | {allocation[0]} + {allocation[1]} | {cover:.3f} | "
              f"{np.mean(vec.hi - vec.lo):.3f} | {np.mean(vec.people_hi - vec.people_lo):.3f} | "
              f"{np.mean(vec.method == 0):.0%} |")  # fmt: skip
    print()


def untied(reps: int, rng: np.random.Generator) -> None:
    """The untied share's coverage, through the public function (one data set at a time)."""
    from blindtest.stats.ppi import ppi_preference

    truth = TRUTHS[0]
    share = truth.win / (1.0 - truth.tie)
    print(f"### Untied share (true {share:.3f}; {reps:,} data sets per row, 1,000 comparisons)\n")
    print("| people | judge | covers | width | PPI normal used |")
    print("|---|---|---|---|---|")
    for n in (50, 100):
        for kind, a in (("fair", 0.9), ("fair", 0.7), ("side", 0.9), ("length", 0.7)):
            y, j = draw(rng, reps, 1000, truth, kind, a)
            hit = wide = used = 0.0
            for r in range(reps):
                res = ppi_preference(y[r, :n].tolist(), j[r, :n].tolist(), j[r, n:].tolist())
                u = res.untied_share
                assert u is not None
                hit += u.interval.lo <= share <= u.interval.hi
                wide += u.interval.hi - u.interval.lo
                used += u.method == "ppi-normal"
            cells = f"{hit / reps:.3f} | {wide / reps:.3f} | {used / reps:.0%}"
            print(f"| {n} | {kind} {a:.0%} | {cells} |")
    print()


def weight_rules(reps: int, rng: np.random.Generator) -> None:
    """The weight rule at sizes where "auto" switches from cross-fit to plug-in."""
    print(f"### Cross-fitted against plug-in weight ({reps:,} data sets per row, 1,000 "
          "comparisons, the interval rule as shipped): coverage / mean width\n")  # fmt: skip
    print("| people | people's score | judge | cross-fit | plug-in |")
    print("|---|---|---|---|---|")
    for n in (50, 100, 200, 300):
        for truth in (TRUTHS[0], TRUTHS[1]):
            for kind, a in (("side", 0.9), ("fair", 0.7)):
                y_all, j_all = draw(rng, reps, 1000, truth, kind, a)
                words = []
                for rule in ("cross-fit", "plug-in"):
                    vec = core.intervals([y_all[:, :n]], [j_all[:, :n]], [j_all[:, n:]], [1.0],
                                         weight=rule)  # fmt: skip
                    cover = np.mean((vec.lo <= truth.score) & (truth.score <= vec.hi))
                    words.append(f"{cover:.3f} / {np.mean(vec.hi - vec.lo):.3f}")
                print(f"| {n} | {truth.score:.2f} | {kind} {a:.0%} | " + " | ".join(words) + " |")
    print()


def plan_check(reps: int, rng: np.random.Generator) -> None:
    """`blindtest.stats.ppi_plan`'s predictions against the simulated estimator (the plan's
    model: a fair judge, people's ties 20%, score 0.55)."""
    from blindtest.stats.ppi_plan import people_sample_row

    truth = TRUTHS[0]
    print(f"### The plan's predictions against simulation ({reps:,} data sets per row, 1,000 "
          "comparisons, fair judge)\n")  # fmt: skip
    print("| people | agrees | predicted width | simulated width | expected df | "
          "PPI normal used |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for n in (50, 100):
        for a in (0.9, 0.7, 0.5):
            row = people_sample_row(n, total=1000, agreement=a, people_tie_rate=truth.tie,
                                    score=truth.score)  # fmt: skip
            y_all, j_all = draw(rng, reps, 1000, truth, "fair", a)
            vec = core.intervals([y_all[:, :n]], [j_all[:, :n]], [j_all[:, n:]], [1.0])
            ok = vec.method == 0
            width = float(np.mean((vec.normal_hi - vec.normal_lo)[np.isfinite(vec.normal_lo)]))
            print(f"| {n} | {a:.0%} | {row.width:.3f} | {width:.3f} | {row.expected_df:.0f} | "
                  f"{np.mean(ok):.0%} |")  # fmt: skip
    print()


# ----------------------------------------------- the fallbacks that were tried and rejected


def _cp_lower(k: F64, n: F64, tail: float | F64) -> F64:
    k, n, tails = np.broadcast_arrays(k, n, tail)
    out = np.zeros(k.shape)
    ok = (k > 0) & (n > 0)
    out[ok] = stats.beta.ppf(tails[ok], k[ok], n[ok] - k[ok] + 1)
    return out


def stratified_exact(y: F64, f: F64, fu: F64, tail: float) -> tuple[F64, F64]:
    """Strata of the judge's verdict, each stratum's people's mean with layer Clopper-Pearson
    bounds, the strata's shares bounded from the unsampled comparisons; Bonferroni over all."""
    values = (0.0, 0.5, 1.0)
    m = np.stack([(f == v).sum(1) for v in values], 1).astype(float)
    pieces = 2 * (m > 0).sum(1, keepdims=True) + 2
    each = tail / pieces
    layers = [
        np.stack([((f == v) & (y >= s)).sum(1) for v in values], 1).astype(float)
        for s in (0.5, 1.0)
    ]

    lo_v = np.where(m > 0, sum(0.5 * _cp_lower(c, m, each) for c in layers), 0.0)
    hi_v = np.where(m > 0, 1.0 - sum(0.5 * _cp_lower(m - c, m, each) for c in layers), 1.0)
    counts_u = np.stack([(fu == v).sum(1) for v in values], 1).astype(float)
    n_u = np.full(len(y), float(fu.shape[1]))

    def share_lower(w: F64) -> F64:
        order = np.argsort(w, 1)
        ws = np.take_along_axis(w, order, 1)
        cs = np.take_along_axis(counts_u, order, 1)
        out: F64 = ws[:, 0].copy()
        for j in (1, 2):
            out += (ws[:, j] - ws[:, j - 1]) * _cp_lower(cs[:, j:].sum(1), n_u, each[:, 0])
        return out

    return share_lower(lo_v), 1.0 - share_lower(1.0 - hi_v)


def betting_lower(x: F64, x_min: F64, tail: float, lo: float, hi: float) -> F64:
    """One-sided betting lower bound (Waudby-Smith and Ramdas 2024, predictable plug-in bets,
    truncated so that every factor stays positive), by bisection."""
    reps, n = x.shape
    t = np.arange(1, n + 1)
    past = np.concatenate([np.zeros((reps, 1)), np.cumsum(x, 1)[:, :-1]], 1)
    mean_prev = (0.5 + past) / t
    dev = np.concatenate([np.zeros((reps, 1)), np.cumsum((x - mean_prev) ** 2, 1)[:, :-1]], 1)
    bet = np.sqrt(2 * np.log(1 / tail) / (n * (0.25 + dev) / t))
    a, b = np.full(reps, lo), np.full(reps, hi)
    for _ in range(40):
        m = (a + b) / 2
        gap = np.maximum(m[:, None] - x_min, 1e-12)
        log_k = np.log1p(np.minimum(bet, 0.75 / gap) * (x - m[:, None])).sum(1)
        rejected = log_k >= np.log(1 / tail)
        a, b = np.where(rejected, m, a), np.where(rejected, b, m)
    return a


def betting_ppi(y: F64, f: F64, fu: F64, tail: float) -> tuple[F64, F64]:
    """PPI with a predictable weight and betting bounds for both terms (Bonferroni)."""
    reps, n = y.shape
    zeros, ones = np.zeros_like(fu), np.ones_like(fu)
    f_lo = betting_lower(fu, zeros, tail / 4, 0.0, 1.0)
    f_hi = -betting_lower(-fu, -ones, tail / 4, -1.0, 0.0)
    k = np.arange(n)
    with np.errstate(invalid="ignore", divide="ignore"):
        cy = np.concatenate([np.zeros((reps, 1)), np.cumsum(y, 1)[:, :-1]], 1) / k
        cf = np.concatenate([np.zeros((reps, 1)), np.cumsum(f, 1)[:, :-1]], 1) / k
        cyf = np.concatenate([np.zeros((reps, 1)), np.cumsum(y * f, 1)[:, :-1]], 1) / k
        lam = (cyf - cy * cf) / ((1 + n / fu.shape[1]) * fu.var(1)[:, None])
    lam = np.clip(np.where(np.isfinite(lam) & (k >= 3), lam, 0.0), 0.0, 1.0)
    lower = betting_lower(
        y - lam * (f - f_lo[:, None]), -lam * (1 - f_lo[:, None]), 3 * tail / 4, -1.0, 2.0
    )
    upper = -betting_lower(
        -(y - lam * (f - f_hi[:, None])), -(1 + lam * f_hi[:, None]), 3 * tail / 4, -2.0, 1.0
    )
    return np.clip(lower, 0, 1), np.clip(upper, 0, 1)


def alternatives(reps: int, rng: np.random.Generator) -> None:
    print(f"### Conservative fallbacks compared ({reps:,} data sets per row, 1,000 comparisons, "
          "people's score 0.55): coverage / mean width\n")  # fmt: skip
    print("| people | judge | people's exact (used) | judge-verdict strata, exact | betting PPI |")
    print("|---|---|---|---|---|")
    truth = TRUTHS[0]
    for n in (20, 50, 100):
        for kind, a in (("fair", 0.9), ("side", 0.9), ("fair", 0.5)):
            y_all, j_all = draw(rng, reps, 1000, truth, kind, a)
            y, f, fu = y_all[:, :n], j_all[:, :n], j_all[:, n:]
            cells = []
            lo, hi = core.exact_bounds([y], [1.0], core.VERDICT_SCORES, 0.025)
            cells.append((lo, hi))
            cells.append(stratified_exact(y, f, fu, 0.025))
            cells.append(betting_ppi(y, f, fu, 0.025))
            theta = truth.score
            words = [
                f"{np.mean((lo <= theta) & (theta <= hi)):.3f} / {np.mean(hi - lo):.3f}"
                for lo, hi in cells
            ]
            print(f"| {n} | {kind} {a:.0%} | " + " | ".join(words) + " |")
    print()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10_000)
    parser.add_argument("--alternatives", action="store_true")
    parser.add_argument(
        "--sections",
        default="grid,stratified,untied",
        help="comma-separated: grid, stratified, untied, weights, plan, alternatives",
    )
    args = parser.parse_args(argv)
    sections = set(args.sections.split(",")) | ({"alternatives"} if args.alternatives else set())
    start = time.perf_counter()
    rng = np.random.default_rng(SEED)
    if "grid" in sections:
        print_grid(main_grid(args.reps, rng), args.reps)
    if "stratified" in sections:
        stratified(args.reps, rng)
    if "untied" in sections:
        untied(max(args.reps // 20, 100), rng)
    if "weights" in sections:
        weight_rules(min(args.reps, 4000), rng)
    if "plan" in sections:
        plan_check(min(args.reps, 4000), rng)
    if "alternatives" in sections:
        alternatives(min(args.reps, 2000), rng)
    print(f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
