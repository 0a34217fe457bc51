"""Size (and some power) of the pre-registered decisions, by exact enumeration and seeded
vectorised simulation. Prints the tables quoted in docs/statistics.md.

    nice -n 10 .venv/bin/python tests/benchmarks/bench_decision_size.py            # everything
    nice -n 10 .venv/bin/python tests/benchmarks/bench_decision_size.py sequential # one part

Parts (each a function the suite runs in small: tests/stats/test_stats_decision_simulation.py):

* ``untied``: the exact conditional test's size at the margin, the largest over every untied
  count U <= 200 (exact enumeration; the size at any tie rate is a mixture of these).
* ``meanscore``: the exact unconditional test of the mean score (one judge): its size at the
  margin over 2,002 tie rates in [0, 1 - 2 margin] (1,001 even in tau and 1,001 even in
  arcsin(sqrt(tau)), finer near 0), for every n <= 200 (exact enumeration).
* ``fixed``: fixed-n decisions over the range users meet: k = 2 to 12 candidates (k - 1
  challengers against one champion, Holm across them), 10 to 100 prompts, panels of 1 to 5,
  every challenger at the margin (null) or half of them better (partial null); 10,000 runs.
  The challengers share the champion's answer on each prompt, so their comparisons are
  correlated (a Gaussian copula with correlation 0.5 across challengers within a prompt;
  each comparison's law is exactly the null law). Reported: the family-wise rate of
  "shown" for a challenger at the margin.
* ``fixedmean``: the mean score with a panel (the fixed-n betting test over every
  comparison), one challenger at the margin, tie rates 0 to 85%; 10,000 runs.
* ``sequential``: the sequential rule with a peeker who stops at the first crossing: 20,000
  runs to 500 comparisons per scenario, the rate of a false "shown" by 100, 200 and 500
  comparisons, and at the planning value (no difference) the share shown by 500 and the
  median stopping comparison.

Laws on a panel's lattice: J judges each score 1, 1/2 or 0; a comparison's latent preference
q ~ Beta(4 q0, 4 (1 - q0)) and each judge, independently given q, ties with probability 0.2
and otherwise prefers the challenger with probability q (judges agree more than chance). The
lattice law of the mean is computed exactly by quadrature over q and then exponentially tilted
so that its mean (for the untied share: its mean given the score is not 1/2) is exactly the
null value; for the mean score the tie mass is set to each tie rate and the rest tilted.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import optimize, special, stats

from blindtest.stats.anytime import crossing_times
from blindtest.stats.betting import betting_log_wealth
from blindtest.stats.binomial import upper_tail
from blindtest.stats.mean_score import mean_score_critical, mean_score_rejection
from blindtest.stats.sizing import untied_critical

Floats = npt.NDArray[np.float64]
SEED = 20261206
ALPHA = 0.05


# --- laws on a panel's lattice ------------------------------------------------------------


def panel_base_law(judges: int, judge_ties: float = 0.2) -> tuple[Floats, Floats]:
    """Support (multiples of 1/(2J)) and probabilities of a J-judge panel's mean score under
    the latent model of the module docstring (centred at 1/2, before tilting)."""
    nodes, weights = np.polynomial.legendre.leggauss(200)
    q = (nodes + 1.0) / 2.0
    density = stats.beta.pdf(q, 2.0, 2.0) * weights / 2.0
    support = np.arange(2 * judges + 1) / (2.0 * judges)
    probs = np.zeros(support.size)
    for wins in range(judges + 1):
        for ties in range(judges - wins + 1):
            losses = judges - wins - ties
            coef = math.factorial(judges) / (
                math.factorial(wins) * math.factorial(ties) * math.factorial(losses)
            )
            p_win, p_loss = (1 - judge_ties) * q, (1 - judge_ties) * (1 - q)
            mass = coef * p_win**wins * judge_ties**ties * p_loss**losses
            probs[2 * wins + ties] += float(np.sum(density * mass))
    return support, probs / probs.sum()


def tilt(support: Floats, probs: Floats, mean: float) -> Floats:
    """Exponential tilt of a law on [0, 1] to the given mean (exact to 1e-13)."""
    if support.min() >= mean or support.max() <= mean:
        raise ValueError(f"mean {mean} outside the support")

    def gap(eta: float) -> float:
        w = probs * np.exp(eta * (support - 0.5))
        return float(np.sum(w * support) / np.sum(w) - mean)

    eta = optimize.brentq(gap, -60.0, 60.0, xtol=1e-14)
    w = probs * np.exp(eta * (support - 0.5))
    return np.asarray(w / w.sum(), dtype=np.float64)


def untied_law(judges: int, mean: float) -> tuple[Floats, Floats]:
    """The panel law given the score is not 1/2, tilted to the untied-share null ``mean``."""
    support, probs = panel_base_law(judges)
    keep = np.abs(support - 0.5) > 1e-12
    return support[keep], tilt(support[keep], probs[keep] / probs[keep].sum(), mean)


def mean_score_law(judges: int, mean: float, tie_rate: float) -> tuple[Floats, Floats]:
    """The panel law with P(score = 1/2) = tie_rate and overall mean ``mean``."""
    support, probs = panel_base_law(judges)
    keep = np.abs(support - 0.5) > 1e-12
    rest_mean = (mean - tie_rate / 2.0) / (1.0 - tie_rate)
    rest = tilt(support[keep], probs[keep] / probs[keep].sum(), rest_mean)
    out = np.zeros(support.size)
    out[keep] = (1.0 - tie_rate) * rest
    out[~keep] = tie_rate
    return support, out


def draw(support: Floats, probs: Floats, uniforms: Floats) -> Floats:
    """Scores by the inverse of the law's distribution function (any shape of uniforms)."""
    cumulative = np.cumsum(probs)
    cumulative[-1] = 1.0
    return np.asarray(support[np.searchsorted(cumulative, uniforms, side="right")])


# --- exact parts --------------------------------------------------------------------------


def untied_sizes(
    alphas: tuple[float, ...], margins: tuple[float, ...], top: int = 200
) -> dict[tuple[float, float], tuple[float, int]]:
    """(largest conditional size over U <= top, the U where it is) per (alpha, margin)."""
    untied = np.arange(1, top + 1)
    out = {}
    for alpha in alphas:
        for margin in margins:
            null = 0.5 - margin
            size = upper_tail(untied_critical(untied, null, alpha, "above"), untied, null)
            out[(alpha, margin)] = (float(size.max()), int(untied[np.argmax(size)]))
    return out


def mean_score_sizes(
    alpha: float, margin: float, ns: range, tie_points: int = 1001
) -> tuple[float, int, float]:
    """(largest size over n in ns and tie rates, its n, its tie rate) at the margin."""
    null, top = 0.5 - margin, 1.0 - 2.0 * margin
    # Even in tau and even in arcsin(sqrt(tau)), which is finer near tau = 0.
    phis = np.linspace(0.0, math.asin(math.sqrt(top)), tie_points)
    ties = np.unique(np.r_[np.linspace(0.0, top, tie_points), np.sin(phis) ** 2])
    worst, at_n, at_tie = 0.0, 0, 0.0
    for n in ns:
        critical = mean_score_critical(n, null, alpha)
        size = mean_score_rejection(n, null, critical, mean=null, ties=ties)
        if size.max() > worst:
            worst, at_n, at_tie = float(size.max()), n, float(ties[np.argmax(size)])
    return worst, at_n, at_tie


# --- fixed-n decisions with several challengers ----------------------------------------------


def holm_shown(p: Floats, alpha: float) -> npt.NDArray[np.bool_]:
    """Holm's step-down rejections per row of p-values (rows: runs; columns: challengers)."""
    m = p.shape[-1]
    order = np.argsort(p, axis=-1)
    sorted_p = np.take_along_axis(p, order, axis=-1)
    thresholds = alpha / (m - np.arange(m))
    passing = np.cumprod(sorted_p <= thresholds, axis=-1).astype(bool)
    shown = np.zeros_like(passing)
    np.put_along_axis(shown, order, passing, axis=-1)
    return shown


def correlated_uniforms(
    rng: np.random.Generator, runs: int, challengers: int, prompts: int, rho: float
) -> Floats:
    """Uniforms with a shared prompt effect across challengers (Gaussian copula)."""
    shared = rng.standard_normal((runs, 1, prompts))
    own = rng.standard_normal((runs, challengers, prompts))
    z = math.sqrt(rho) * shared + math.sqrt(1.0 - rho) * own
    return np.asarray(special.ndtr(z), dtype=np.float64)


def fixed_p_values(scores: Floats, judges: int, null: float, alpha: float) -> Floats:
    """The untied-share claim's p-values for each (run, challenger) row of comparison scores:
    exact binomial for one judge, the fixed-n betting test for a panel."""
    tie = np.abs(scores - 0.5) < 1e-12
    untied = (~tie).sum(axis=-1)
    if judges == 1:
        wins = (scores > 0.5).sum(axis=-1)
        return np.asarray(np.where(untied > 0, upper_tail(wins, untied, null), 1.0))
    # Compact the untied scores to the front of each row, padding after them.
    order = np.argsort(tie, axis=-1, kind="stable")
    compact = np.take_along_axis(scores, order, axis=-1)
    valid = np.arange(scores.shape[-1]) < untied[..., None]
    wealth = betting_log_wealth(
        compact, null, alpha=alpha, side="above", horizon=untied[..., None], valid=valid
    )
    peak = np.maximum(wealth.max(axis=-1), 0.0)
    return np.asarray(np.exp(-peak), dtype=np.float64)


def fixed_size(
    rng: np.random.Generator,
    *,
    candidates: int,
    prompts: int,
    judges: int,
    partial: bool,
    runs: int,
    margin: float = 0.05,
    alpha: float = ALPHA,
    rho: float = 0.5,
) -> float:
    """Family-wise rate of "shown" for a challenger at the margin (noninferior:margin)."""
    challengers = candidates - 1
    null = 0.5 - margin
    at_margin = np.ones(challengers, dtype=bool)
    if partial:
        at_margin[challengers // 2 :] = False
        if challengers == 1:
            at_margin[:] = True
    support, probs = panel_base_law(judges)
    null_law = untied_law(judges, null)
    better_law = untied_law(judges, 0.6)
    tie_mass = probs[np.abs(support - 0.5) < 1e-12].sum() if judges > 1 else 0.3
    u = correlated_uniforms(rng, runs, challengers, prompts, rho)
    tied = rng.random((runs, challengers, prompts)) < tie_mass
    scores = np.empty_like(u)
    for index in range(challengers):
        law = null_law if at_margin[index] else better_law
        scores[:, index, :] = draw(law[0], law[1], u[:, index, :])
    scores = np.where(tied, 0.5, scores)
    p = fixed_p_values(scores, judges, null, alpha)
    shown = holm_shown(p, alpha)
    return float((shown & at_margin[None, :]).any(axis=-1).mean())


def fixed_mean_score_size(
    rng: np.random.Generator,
    *,
    judges: int,
    prompts: int,
    tie_rate: float,
    runs: int,
    margin: float = 0.05,
    alpha: float = ALPHA,
) -> float:
    """Rate of "shown" for one panel challenger at the mean-score margin (fixed-n betting
    test over every comparison, ties scoring 1/2)."""
    null = 0.5 - margin
    support, probs = mean_score_law(judges, null, tie_rate)
    scores = draw(support, probs, rng.random((runs, prompts)))
    wealth = betting_log_wealth(scores, null, alpha=alpha, side="above", horizon=prompts)
    return float((wealth.max(axis=-1) >= math.log(1.0 / alpha)).mean())


# --- sequential -----------------------------------------------------------------------------


def sequential_runs(
    rng: np.random.Generator,
    *,
    rule: str,
    law: tuple[Floats, Floats],
    runs: int,
    horizon: int,
    untied_only: bool,
    alpha: float = ALPHA,
) -> tuple[Floats, Floats, Floats]:
    """Claim and refutation crossing comparison (0: none) per run, and observations used.

    Scores are drawn i.i.d. from ``law`` for ``horizon`` comparisons; for the untied share the
    comparisons scoring 1/2 are skipped (compacted out, as the decision reads them) and the
    crossing is mapped back to the comparison at which it happened."""
    scores = draw(law[0], law[1], rng.random((runs, horizon)))
    if untied_only:
        tie = np.abs(scores - 0.5) < 1e-12
        order = np.argsort(tie, axis=-1, kind="stable")
        compact = np.take_along_axis(scores, order, axis=-1)
        lengths = (~tie).sum(axis=-1)
        claim, refute, _ = crossing_times(compact, rule, alpha=alpha, lengths=lengths)

        def to_comparison(t: npt.NDArray[np.int64]) -> Floats:
            picked = np.take_along_axis(order, np.maximum(t - 1, 0)[:, None], axis=-1)[:, 0]
            return np.asarray(np.where(t > 0, picked + 1, 0), dtype=np.float64)

        return to_comparison(claim), to_comparison(refute), lengths.astype(np.float64)
    claim, refute, _ = crossing_times(scores, rule, alpha=alpha)
    return claim.astype(np.float64), refute.astype(np.float64), np.full(runs, float(horizon))


def false_claim_rates(claim: Floats, refute: Floats, horizons: tuple[int, ...]) -> dict[int, float]:
    """The peeker stops at the first crossing: a false claim by h is a claim crossing at or
    before h that comes before any refutation."""
    first_is_claim = (claim > 0) & ((refute == 0) | (claim < refute))
    return {h: float((first_is_claim & (claim <= h)).mean()) for h in horizons}


def sequential_scenarios() -> list[dict[str, Any]]:
    """(label, rule, law, untied_only, null?) scenarios of the sequential table."""
    out: list[dict[str, Any]] = []
    tie_law = 0.3
    for judges in (1, 2, 3, 5):
        if judges == 1:
            support = np.array([0.0, 0.5, 1.0])
            # One judge: ties at 30%, untied wins at the margin 0.45.
            null_probs = np.array([0.7 * 0.55, tie_law, 0.7 * 0.45])
            plan_probs = np.array([0.35, tie_law, 0.35])
            null_law, plan_law = (support, null_probs), (support, plan_probs)
        else:
            base_support, base = panel_base_law(judges)
            keep = np.abs(base_support - 0.5) > 1e-12
            tie_mass = float(base[~keep].sum())

            def with_ties(
                mean: float,
                s: Floats = base_support,
                k: Any = keep,
                t: float = tie_mass,
                b: Floats = base,
            ) -> tuple[Floats, Floats]:
                probs = np.zeros(s.size)
                probs[k] = (1 - t) * tilt(s[k], b[k] / b[k].sum(), mean)
                probs[~k] = t
                return s, probs

            null_law, plan_law = with_ties(0.45), with_ties(0.5)
        out.append(
            {
                "label": f"noninferior:0.05, untied share, {judges} judge(s)",
                "rule": "noninferior:0.05",
                "null": null_law,
                "plan": plan_law,
                "untied_only": True,
            }
        )
    support = np.array([0.0, 0.5, 1.0])
    bern = (support, np.array([0.5, 0.0, 0.5]))
    out.append(
        {
            "label": "superior, untied share, 1 judge",
            "rule": "superior",
            "null": bern,
            "plan": (support, np.array([0.4, 0.0, 0.6])),
            "untied_only": True,
        }
    )
    for edge in (0.4, 0.6):
        out.append(
            {
                "label": f"equivalent:0.1 at {edge}, 1 judge",
                "rule": "equivalent:0.1",
                "null": (support, np.array([1 - edge, 0.0, edge])),
                "plan": (support, np.array([0.5, 0.0, 0.5])),
                "untied_only": True,
            }
        )
    for tie_rate in (0.0, 0.3, 0.6, 0.9):
        p_win = 0.45 - tie_rate / 2
        law = (support, np.array([1 - tie_rate - p_win, tie_rate, p_win]))
        plan = (support, np.array([(1 - tie_rate) / 2, tie_rate, (1 - tie_rate) / 2]))
        out.append(
            {
                "label": f"noninferior:0.05, mean score, ties {tie_rate:.0%}",
                "rule": "noninferior:0.05",
                "null": law,
                "plan": plan,
                "untied_only": False,
            }
        )
    for judges in (3,):
        law = mean_score_law(judges, 0.45, 0.3)
        plan = mean_score_law(judges, 0.5, 0.3)
        out.append(
            {
                "label": f"noninferior:0.05, mean score, {judges} judges, ties 30%",
                "rule": "noninferior:0.05",
                "null": law,
                "plan": plan,
                "untied_only": False,
            }
        )
    return out


# --- the report -------------------------------------------------------------------------------


def run_untied() -> None:
    alphas, margins = (0.01, 0.025, 0.05, 0.1), (0.01, 0.02, 0.05, 0.1, 0.2)
    sizes = untied_sizes(alphas, margins)
    print("| alpha | " + " | ".join(f"margin {m:g}" for m in margins) + " |")
    print("|---" * (len(margins) + 1) + "|")
    for alpha in alphas:
        cells = [f"{sizes[(alpha, m)][0]:.4f} (U = {sizes[(alpha, m)][1]})" for m in margins]
        print(f"| {alpha:g} | " + " | ".join(cells) + " |")


def run_mean_score() -> None:
    print(
        "| alpha | margin | largest size over n <= 200 and 2,002 tie rates | at n | at tie rate |"
    )
    print("|---|---|---|---|---|")
    for alpha in (0.05, 0.025):
        for margin in (0.02, 0.05, 0.1, 0.2):
            worst, n, tie = mean_score_sizes(alpha, margin, range(1, 201))
            print(f"| {alpha:g} | {margin:g} | {worst:.6f} | {n} | {tie:.3f} |")


def run_fixed(runs: int = 10_000) -> None:
    rng = np.random.default_rng(SEED)
    print(
        f"{runs:,} runs per cell, seed {SEED}; noninferior:0.05, alpha 0.05, "
        "Holm across the k - 1 challengers"
    )
    print("| k | prompts | judges | null | partial null |")
    print("|---|---|---|---|---|")
    for candidates in (2, 3, 5, 8, 12):
        for prompts in (10, 30, 100):
            for judges in (1, 2, 3, 5):
                null = fixed_size(
                    rng,
                    candidates=candidates,
                    prompts=prompts,
                    judges=judges,
                    partial=False,
                    runs=runs,
                )
                partial = fixed_size(
                    rng,
                    candidates=candidates,
                    prompts=prompts,
                    judges=judges,
                    partial=True,
                    runs=runs,
                )
                print(f"| {candidates} | {prompts} | {judges} | {null:.4f} | {partial:.4f} |")


def run_fixed_mean_score(runs: int = 10_000) -> None:
    rng = np.random.default_rng(SEED + 2)
    print(
        f"{runs:,} runs per cell, seed {SEED + 2}; "
        "noninferior:0.05 on the mean score, a panel, alpha 0.05"
    )
    print("| judges | prompts | ties 0% | ties 30% | ties 60% | ties 85% |")
    print("|---|---|---|---|---|---|")
    for judges in (2, 3, 5):
        for prompts in (10, 30, 100):
            cells = [
                fixed_mean_score_size(rng, judges=judges, prompts=prompts, tie_rate=t, runs=runs)
                for t in (0.0, 0.3, 0.6, 0.85)
            ]
            print(f"| {judges} | {prompts} | " + " | ".join(f"{c:.4f}" for c in cells) + " |")


def run_sequential(runs: int = 20_000, horizon: int = 500) -> None:
    rng = np.random.default_rng(SEED + 1)
    print(
        f"{runs:,} runs per row to {horizon} comparisons, seed {SEED + 1}; "
        "alpha 0.05 per side (a 90% sequence)"
    )
    print(
        "| scenario | false shown by 100 | by 200 | by 500 "
        "| shown by 500 at the planning value | median stop (comparison) |"
    )
    print("|---|---|---|---|---|---|")
    for scenario in sequential_scenarios():
        claim, refute, _ = sequential_runs(
            rng,
            rule=scenario["rule"],
            law=scenario["null"],
            runs=runs,
            horizon=horizon,
            untied_only=scenario["untied_only"],
        )
        rates = false_claim_rates(claim, refute, (100, 200, 500))
        claim_p, refute_p, _ = sequential_runs(
            rng,
            rule=scenario["rule"],
            law=scenario["plan"],
            runs=runs,
            horizon=horizon,
            untied_only=scenario["untied_only"],
        )
        shown = (claim_p > 0) & ((refute_p == 0) | (claim_p < refute_p))
        median = float(np.median(claim_p[shown])) if shown.any() else math.nan
        print(
            f"| {scenario['label']} | {rates[100]:.4f} | {rates[200]:.4f} | {rates[500]:.4f} "
            f"| {shown.mean():.3f} | {median:.0f} |"
        )


PARTS: dict[str, Callable[[], None]] = {
    "untied": run_untied,
    "meanscore": run_mean_score,
    "fixed": run_fixed,
    "fixedmean": run_fixed_mean_score,
    "sequential": run_sequential,
}


def main(argv: list[str]) -> None:
    for name in argv or list(PARTS):
        started = time.process_time()
        print(f"\n## {name}\n")
        PARTS[name]()
        print(f"\n({time.process_time() - started:.0f} s of CPU)")


if __name__ == "__main__":
    main(sys.argv[1:])
