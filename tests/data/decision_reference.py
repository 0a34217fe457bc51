"""Reference values for the pre-registered decisions (tests/stats: test_stats_sizing.py,
test_stats_mean_score.py, test_stats_betting.py, test_stats_sensitivity.py).

Writes tests/data/decision_reference.json. Does not import blindtest: every value comes from
the definitions written out below.

* Exact power of the untied-share decisions (Fraction arithmetic, Python integers): critical
  counts from integer comparisons of binomial tails with alpha, the conditional power, and
  the mixture over the untied count U ~ Bin(n, 1 - ties); every n scanned up to twice the
  smallest n reaching the target, so the smallest and stable n within that range are exact.
* Critical counts and conditional sizes of the non-inferiority test at 9/20 for U <= 200.
* The mean score (one judge): Tango's statistic with the restricted maximum likelihood found by
  mpmath (50 digits) maximising the trinomial likelihood numerically (not the closed-form
  root), and exact unconditional p-values by enumerating every (W, T, L) table, summing the
  trinomial probabilities of those at least as extreme, and maximising over the tie rate on a
  4,001-point grid refined by golden-section search in mpmath.
* The betting wealth of Waudby-Smith and Ramdas (2024) computed by the authors' own package,
  confseq (github.com/gostevehoward/confseq, commit 70b1ef3, version 0.0.11; its pure-Python
  `betting.betting_mart` and `betting_strategies.lambda_predmix_eb`), on seeded sequences.

Command (from the repository root; confseq's C++ extension does not build here, and only its
pure-Python modules are used, with stubs for the plotting and multiprocessing imports):

    git clone https://github.com/gostevehoward/confseq /tmp/confseq
    git -C /tmp/confseq checkout 70b1ef3
    python3 -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install numpy scipy mpmath
    CONFSEQ_SRC=/tmp/confseq/src /tmp/refvenv/bin/python tests/data/decision_reference.py

Tools: Python 3.11.7 (fractions, integers), mpmath 1.4.1, numpy 2.4.6 (confseq and the seeded
sequences only), confseq 0.0.11 at 70b1ef3. Generated 2026-12-06.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import sys
import types
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath as mp

OUT = Path(__file__).with_name("decision_reference.json")
ALPHA = Fraction(1, 20)


# --- untied share: exact power ------------------------------------------------------------


def tail_weights(u: int, p: Fraction) -> list[int]:
    """C(u, j) a^j b^(u-j) for p = a / (a + b): integer weights over the denominator d^u."""
    a, d = p.numerator, p.denominator
    b = d - a
    out, c = [], 1
    for j in range(u + 1):
        out.append(c * a**j * b ** (u - j))
        c = c * (u - j) // (j + 1)
    return out


def critical_above(u: int, p: Fraction, alpha: Fraction) -> int:
    """Smallest c with P(Bin(u, p) >= c) <= alpha (u + 1 if none)."""
    weights, total = tail_weights(u, p), p.denominator**u
    suffix = 0
    crit = u + 1
    for c in range(u, -1, -1):
        suffix += weights[c]
        if suffix * alpha.denominator <= total * alpha.numerator:
            crit = c
        else:
            break
    return crit


def critical_below(u: int, p: Fraction, alpha: Fraction) -> int:
    """Largest c with P(Bin(u, p) <= c) <= alpha (-1 if none)."""
    weights, total = tail_weights(u, p), p.denominator**u
    prefix, crit = 0, -1
    for c in range(u + 1):
        prefix += weights[c]
        if prefix * alpha.denominator <= total * alpha.numerator:
            crit = c
        else:
            break
    return crit


def conditional_numerator(u: int, lo: int, hi: int, p: Fraction) -> int:
    """P(lo <= Bin(u, p) <= hi) times p.denominator^u (0 at u = 0 or an empty region)."""
    if u == 0 or lo > hi:
        return 0
    return sum(tail_weights(u, p)[max(lo, 0) : min(hi, u) + 1])


def power_series(
    rule: str, margin: Fraction, true: Fraction, ties: Fraction, n_top: int
) -> list[Fraction]:
    """Exact power for n = 1..n_top, in integers over the common denominator (d q)^n."""
    lower = Fraction(1, 2) if rule == "superior" else Fraction(1, 2) - margin
    by_u = []
    for u in range(n_top + 1):
        lo = critical_above(u, lower, ALPHA)
        hi = critical_below(u, Fraction(1, 2) + margin, ALPHA) if rule == "equivalent" else u
        by_u.append(conditional_numerator(u, lo, hi, true))  # over q^u
    q = true.denominator
    if ties == 0:
        return [Fraction(by_u[n], q**n) for n in range(1, n_top + 1)]
    d = ties.denominator
    a, b = d - ties.numerator, ties.numerator  # kept = a / d, ties = b / d
    out = []
    for n in range(1, n_top + 1):
        total, c = 0, 1
        for u in range(n + 1):
            total += c * a**u * b ** (n - u) * by_u[u] * q ** (n - u)
            c = c * (n - u) // (u + 1)
        out.append(Fraction(total, (d * q) ** n))
    return out


def sample_size_case(
    rule: str, margin: Fraction, true: Fraction, ties: Fraction, target: Fraction, guess: int
) -> dict[str, Any]:
    series = power_series(rule, margin, true, ties, guess)
    smallest = next(n for n, p in enumerate(series, start=1) if p >= target)
    top = 2 * smallest
    if top > guess:
        series = power_series(rule, margin, true, ties, top)
    below = [n for n in range(smallest, top + 1) if series[n - 1] < target]
    return {
        "rule": rule,
        "margin": float(margin),
        "true": float(true),
        "ties": float(ties),
        "target": float(target),
        "smallest_n": smallest,
        "stable_n": (below[-1] + 1) if below else smallest,
        "checked_to": top,
        "power": {
            str(n): float(series[n - 1])
            for n in (1, 2, 10, 50, 100, smallest - 1, smallest, top)
            if 1 <= n <= len(series)
        },
    }


# --- mean score (one judge): mpmath -------------------------------------------------------

mp.mp.dps = 50


def restricted_loss_rate(w: int, t: int, loss: int, delta0: mp.mpf) -> mp.mpf:
    """Maximise W log(q + d) + L log q + T log(1 - 2q - d) over q numerically."""
    lo = max(mp.mpf(0), -delta0)
    hi = (1 - delta0) / 2

    def score(q: mp.mpf) -> mp.mpf:
        s = mp.mpf(0)
        if w:
            s += w / (q + delta0)
        if loss:
            s += loss / q
        if t:
            s -= 2 * t / (1 - 2 * q - delta0)
        return s

    eps = mp.mpf(10) ** -40
    a, b = lo + eps, hi - eps
    fa, fb = score(a), score(b)
    if fa <= 0:  # likelihood falling from the lower end: maximum at the boundary
        return lo
    if fb >= 0:
        return hi
    return mp.findroot(score, (a, b), solver="anderson")


def tango(w: int, t: int, loss: int, delta0: mp.mpf) -> mp.mpf:
    n = w + t + loss
    q = restricted_loss_rate(w, t, loss, delta0)
    v = 2 * q + delta0 * (1 - delta0)
    if v <= mp.mpf(10) ** -30:
        return mp.mpf(0)
    return (w - loss - n * delta0) / mp.sqrt(n * v)


def exact_unconditional(w: int, t: int, loss: int, null: Fraction, alternative: str) -> float:
    if alternative == "less":
        w, loss, null = loss, w, 1 - null
    n = w + t + loss
    delta0 = 2 * mp.mpf(null.numerator) / null.denominator - 1
    z_obs = tango(w, t, loss, delta0)
    tol = mp.mpf(10) ** -9 * max(1, abs(z_obs))
    extreme = []
    for ww in range(n + 1):
        for ll in range(n - ww + 1):
            if tango(ww, n - ww - ll, ll, delta0) >= z_obs - tol:
                extreme.append((ww, ll))

    coefs = [
        (
            mp.factorial(n) / (mp.factorial(ww) * mp.factorial(ll) * mp.factorial(n - ww - ll)),
            ww,
            ll,
        )
        for ww, ll in extreme
    ]

    def prob(tau: mp.mpf) -> mp.mpf:
        pw, pl = (1 - tau + delta0) / 2, (1 - tau - delta0) / 2
        return mp.fsum(c * pw**ww * pl**ll * tau ** (n - ww - ll) for c, ww, ll in coefs)

    top = 1 - abs(delta0)
    grid = [top * i / 4000 for i in range(4001)]
    values = [prob(g) for g in grid]
    best = max(values)
    order = sorted(range(len(grid)), key=lambda i: -values[i])[:5]
    for i in order:
        a, b = grid[max(i - 1, 0)], grid[min(i + 1, 4000)]
        invphi = (mp.sqrt(5) - 1) / 2
        c, d = b - invphi * (b - a), a + invphi * (b - a)
        for _ in range(60):
            if prob(c) > prob(d):
                b = d
            else:
                a = c
            c, d = b - invphi * (b - a), a + invphi * (b - a)
        best = max(best, prob((a + b) / 2))
    return float(min(best, 1))


# --- betting wealth: confseq ----------------------------------------------------------------


def load_confseq() -> tuple[Any, Any]:
    source = os.environ.get("CONFSEQ_SRC")
    if not source:
        raise SystemExit("set CONFSEQ_SRC to confseq's src directory (see the module docstring)")
    import numpy as np

    if not hasattr(np, "float_"):
        np.float_ = np.float64  # type: ignore[attr-defined]  # confseq's annotations, numpy 1
    for name in ("matplotlib", "matplotlib.pyplot", "multiprocess"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.path.insert(0, source)
    betting = importlib.import_module("confseq.betting")
    strategies = importlib.import_module("confseq.betting_strategies")
    return betting, strategies


def betting_cases() -> list[dict[str, Any]]:
    import numpy as np

    betting, strategies = load_confseq()
    rng = np.random.default_rng(20261206)
    bernoulli = (rng.random(40) < 0.6).astype(float)
    votes = rng.integers(0, 3, size=(60, 3)) / 2.0  # three judges, each 1, 1/2 or 0
    panel = votes.mean(axis=1)
    cases = []
    for label, x in (("bernoulli-40", bernoulli), ("panel3-60", panel)):
        for m in (0.3, 0.45, 0.5, 0.62):
            for fixed in (None, len(x)):

                def lam(y: Any, _m: float, fixed_n: int | None = fixed) -> Any:
                    return strategies.lambda_predmix_eb(y, alpha=0.05, fixed_n=fixed_n)

                bets = {"lambdas_fn_positive": lam, "lambdas_fn_negative": lam}
                up = betting.betting_mart(x, m, alpha=0.05, theta=1, trunc_scale=0.5, **bets)
                down = betting.betting_mart(x, m, alpha=0.05, theta=0, trunc_scale=0.5, **bets)
                cases.append(
                    {
                        "label": label,
                        "x": [float(v) for v in x],
                        "m": m,
                        "alpha": 0.05,
                        "horizon": fixed,
                        "log_wealth_above": [float(math.log(v)) for v in up],
                        "log_wealth_below": [float(math.log(v)) for v in down],
                    }
                )
    return cases


def main() -> None:
    half = Fraction(1, 2)
    sample_sizes = [
        sample_size_case(
            "noninferior", Fraction(1, 20), half, Fraction(3, 10), Fraction(4, 5), 1000
        ),
        sample_size_case("noninferior", Fraction(1, 20), half, Fraction(0), Fraction(4, 5), 700),
        sample_size_case("equivalent", Fraction(1, 10), half, Fraction(1, 5), Fraction(4, 5), 320),
        sample_size_case(
            "superior", Fraction(0), Fraction(11, 20), Fraction(1, 10), Fraction(4, 5), 800
        ),
        sample_size_case(
            "superior", Fraction(0), Fraction(4, 5), Fraction(1, 10), Fraction(4, 5), 40
        ),
    ]
    critical = []
    for u in range(1, 201):
        c = critical_above(u, Fraction(9, 20), ALPHA)
        size = Fraction(conditional_numerator(u, c, u, Fraction(9, 20)), 20**u)
        critical.append({"untied": u, "critical": c, "size": float(size)})
    mean_cases = []
    for w, t, loss, null, alt in (
        (12, 5, 3, Fraction(9, 20), "greater"),
        (4, 10, 6, Fraction(9, 20), "greater"),
        (20, 0, 10, Fraction(2, 5), "greater"),
        (3, 3, 9, Fraction(11, 20), "less"),
        (7, 7, 7, Fraction(2, 5), "greater"),
        (15, 10, 5, Fraction(1, 2), "greater"),
        (0, 12, 0, Fraction(9, 20), "greater"),
    ):
        delta0 = 2 * mp.mpf(null.numerator) / null.denominator - 1
        mean_cases.append(
            {
                "wins": w,
                "ties": t,
                "losses": loss,
                "null": float(null),
                "alternative": alt,
                "tango": float(tango(w, t, loss, delta0)),
                "p_value": exact_unconditional(w, t, loss, null, alt),
            }
        )
    payload = {
        "_provenance": (
            "do not edit; regenerate with tests/data/decision_reference.py (see its docstring: "
            "Python 3.11.7 fractions, mpmath 1.4.1, confseq 0.0.11 at 70b1ef3), 2026-12-06"
        ),
        "sample_sizes": sample_sizes,
        "noninferior_critical": critical,
        "mean_score": mean_cases,
        "betting": betting_cases(),
    }
    OUT.write_text(json.dumps(payload, indent=1) + "\n")


if __name__ == "__main__":
    main()
