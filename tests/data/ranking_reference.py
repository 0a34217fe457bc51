"""Reference values for the several-candidates ranking (Bradley-Terry with Davidson ties).

Do not edit ranking_reference.json by hand; regenerate with
    .venv/bin/pip install choix   # only to make these numbers, never needed at run time
                                  # (or pip install --target DIR choix, PYTHONPATH=DIR)
    .venv/bin/python tests/data/ranking_reference.py > tests/data/ranking_reference.json
Made with mpmath 1.4.1 (mp.dps = 40), choix 0.4.1, scipy 1.17.1 and numpy 2.4.6 on
Python 3.11.7, 2026-12-03; the differences' percentile bounds added 2026-12-06. It does
not import blindtest.

* Davidson (1970) fits: the likelihood equations as Davidson wrote them, in pi = e^s and nu,
  solved by mpmath.findroot at 40 digits (pi_0 = 1), started from scipy's minimisation of
  the same likelihood written from the probabilities (scipy gives the start only). Strengths
  are reported as log pi with mean 0; the log-likelihood at the root is reported too.
* Plain Bradley-Terry (no ties): choix.ilsr_pairwise (Maystre and Grossglauser's iterative
  Luce spectral ranking, alpha = 0) and choix.opt_pairwise (alpha = 0, scipy Newton-CG), both
  centred to mean 0, next to the mpmath root of the Bradley-Terry likelihood equations.
* Bootstrap over prompts: the index stream re-derived from blindtest/rng@1 as documented
  (SHA-256 of the seed and label gives two 64-bit words, their 128-bit integer seeds numpy's
  PCG64, random_raw words with the rejection rule), each resample fitted by scipy.optimize.root
  on Davidson's equations (a different algorithm from the library's Newton), percentile bounds
  with numpy's linear rule, and the studentised-maximum critical value for the differences
  (blindtest.stats.ranking.bootstrap_bounds), and the differences' percentile bounds one at a
  time (what rank_candidates reports since the separations come from exact pair tests).
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import itertools
import json
import sys
from typing import Any

import mpmath
import numpy as np
from scipy import optimize

mpmath.mp.dps = 40


# --- data: pair counts (i, j, i preferred, j preferred, ties) ---

FOUR = {
    "candidates": ["a", "b", "c", "d"],
    "pairs": [
        [0, 1, 12, 8, 5],
        [0, 2, 15, 5, 4],
        [0, 3, 18, 3, 6],
        [1, 2, 10, 9, 7],
        [1, 3, 14, 6, 3],
        [2, 3, 11, 7, 9],
    ],
}
# A reference design: every candidate against "ref" (index 0) only.
STAR = {
    "candidates": ["ref", "x", "y", "z", "w"],
    "pairs": [[0, 1, 30, 22, 8], [0, 2, 18, 35, 7], [0, 3, 25, 25, 10], [0, 4, 40, 12, 8]],
}
# Seeded counts over six candidates with unequal numbers of meetings.
gen = np.random.default_rng(20261203)
SIX = {
    "candidates": [f"m{i}" for i in range(6)],
    "pairs": [
        [
            i,
            j,
            *(
                int(x)
                for x in gen.multinomial(
                    int(gen.integers(20, 60)), [0.4 + 0.05 * (j - i), 0.4 - 0.05 * (j - i), 0.2]
                )
            ),
        ]
        for i, j in itertools.combinations(range(6), 2)
    ],
}
NO_TIES = {
    "candidates": ["p", "q", "r", "s", "t"],
    "pairs": [
        [0, 1, 9, 6, 0],
        [0, 2, 12, 4, 0],
        [0, 3, 7, 7, 0],
        [0, 4, 15, 2, 0],
        [1, 2, 8, 5, 0],
        [1, 3, 6, 9, 0],
        [1, 4, 11, 3, 0],
        [2, 3, 4, 10, 0],
        [2, 4, 9, 6, 0],
        [3, 4, 13, 5, 0],
    ],
}


def davidson_loglik(pi: list[Any], nu: Any, pairs: list[list[int]]) -> Any:
    total = mpmath.mpf(0)
    for i, j, wins, losses, ties in pairs:
        root = mpmath.sqrt(pi[i] * pi[j])
        den = pi[i] + pi[j] + nu * root
        total += wins * mpmath.log(pi[i] / den) + losses * mpmath.log(pi[j] / den)
        if ties:
            total += ties * mpmath.log(nu * root / den)
    return total


def davidson_equations(k: int, pairs: list, with_ties: bool):  # type: ignore[no-untyped-def,type-arg]
    """Davidson's (1970) likelihood equations in (log pi_1..log pi_{k-1}, log nu)."""

    def equations(*x):  # type: ignore[no-untyped-def]
        pi = [mpmath.mpf(1)] + [mpmath.exp(v) for v in x[: k - 1]]
        nu = mpmath.exp(x[k - 1]) if with_ties else mpmath.mpf(0)
        score = [mpmath.mpf(0)] * k
        tie_score = mpmath.mpf(0)
        for i, j, wins, losses, ties in pairs:
            n = wins + losses + ties
            root = mpmath.sqrt(pi[i] * pi[j])
            den = pi[i] + pi[j] + nu * root
            # observed (wins + ties / 2) minus expected, for each side
            score[i] += wins + mpmath.mpf(ties) / 2 - n * (pi[i] + nu * root / 2) / den
            score[j] += losses + mpmath.mpf(ties) / 2 - n * (pi[j] + nu * root / 2) / den
            tie_score += ties - n * nu * root / den
        return score[1:] + ([tie_score] if with_ties else [])

    return equations


def start_point(k: int, pairs: list, with_ties: bool) -> list[float]:  # type: ignore[type-arg]
    def negative(x: np.ndarray) -> float:
        pi = np.exp(np.concatenate([[0.0], x[: k - 1]]))
        nu = float(np.exp(x[k - 1])) if with_ties else 0.0
        total = 0.0
        for i, j, wins, losses, ties in pairs:
            den = pi[i] + pi[j] + nu * np.sqrt(pi[i] * pi[j])
            total += wins * np.log(pi[i] / den) + losses * np.log(pi[j] / den)
            if ties:
                total += ties * np.log(nu * np.sqrt(pi[i] * pi[j]) / den)
        return -total

    size = k if with_ties else k - 1
    options = {"xatol": 1e-6, "fatol": 1e-9, "maxiter": 20000}
    found = optimize.minimize(negative, np.zeros(size), method="Nelder-Mead", options=options)
    return list(found.x)


def fit(data: dict) -> dict:  # type: ignore[type-arg]
    k = len(data["candidates"])
    pairs = data["pairs"]
    with_ties = any(p[4] for p in pairs)
    x0 = start_point(k, pairs, with_ties)
    root = mpmath.findroot(davidson_equations(k, pairs, with_ties), x0, tol=mpmath.mpf(10) ** -30)
    values = [root[i] for i in range(len(x0))] if len(x0) > 1 else [root]
    logs = [mpmath.mpf(0), *values[: k - 1]]
    mean = sum(logs) / k
    nu = mpmath.exp(values[k - 1]) if with_ties else mpmath.mpf(0)
    pi = [mpmath.exp(v) for v in logs]
    residual = max(abs(e) for e in davidson_equations(k, pairs, with_ties)(*values))
    assert residual < mpmath.mpf(10) ** -25, residual
    return {
        "candidates": data["candidates"],
        "pairs": pairs,
        "strengths": [float(v - mean) for v in logs],
        "nu": float(nu),
        "log_likelihood": float(davidson_loglik(pi, nu, pairs)),
    }


def choix_fit(data: dict) -> dict:  # type: ignore[type-arg]
    import choix

    k = len(data["candidates"])
    rows = []
    for i, j, wins, losses, _ in data["pairs"]:
        rows += [(i, j)] * wins + [(j, i)] * losses
    ilsr = choix.ilsr_pairwise(k, rows, alpha=0.0, tol=1e-14, max_iter=100_000)
    opt = choix.opt_pairwise(k, rows, alpha=0.0, tol=1e-12)
    return {"ilsr": [float(v) for v in ilsr - ilsr.mean()],
            "opt": [float(v) for v in opt - opt.mean()]}  # fmt: skip


# --- the bootstrap, re-derived ---


def index_rows(seed: str, label: str, rows: int, n: int) -> np.ndarray:
    prefix = b"blindtest/rng@1\x00" + seed.encode() + b"\x00" + label.encode()
    digest = hashlib.sha256(prefix + b"\x00" + b"0").digest()
    key = int.from_bytes(digest[0:8], "big") * 2**64 + int.from_bytes(digest[8:16], "big")
    bits = np.random.PCG64(key)
    limit = 2**64 - (2**64 % n)
    out: list[int] = []
    while len(out) < rows * n:
        for word in bits.random_raw(rows * n - len(out)):
            if int(word) < limit:
                out.append(int(word) % n)
    return np.array(out, dtype=np.int64).reshape(rows, n)


def scipy_fit(k: int, counts: dict, with_ties: bool) -> np.ndarray | None:  # type: ignore[type-arg]
    pairs = [[i, j, *c] for (i, j), c in counts.items()]

    def equations(x: np.ndarray) -> np.ndarray:
        pi = np.exp(np.concatenate([[0.0], x[: k - 1]]))
        nu = np.exp(x[k - 1]) if with_ties else 0.0
        score = np.zeros(k)
        tie_score = 0.0
        for i, j, wins, losses, ties in pairs:
            n = wins + losses + ties
            root = np.sqrt(pi[i] * pi[j])
            den = pi[i] + pi[j] + nu * root
            score[i] += wins + ties / 2 - n * (pi[i] + nu * root / 2) / den
            score[j] += losses + ties / 2 - n * (pi[j] + nu * root / 2) / den
            tie_score += ties - n * nu * root / den
        return np.concatenate([score[1:], [tie_score] if with_ties else []])

    size = k if with_ties else k - 1
    # A resample whose maximum is at infinity has no root; far out the equations are nearly
    # met, so a "root" beyond 15 on the log-odds scale counts as none.
    for method in ("hybr", "lm"):
        solved = optimize.root(equations, np.zeros(size), method=method, tol=1e-13)
        if np.abs(equations(solved.x)).max() < 1e-9 and np.abs(solved.x).max() < 15:
            break
    else:
        return None
    logs = np.concatenate([[0.0], solved.x[: k - 1]])
    centred: np.ndarray = logs - logs.mean()
    return centred


def bootstrap_case() -> dict:  # type: ignore[type-arg]
    k, prompts = 5, 30
    names = ["v1", "v2", "v3", "v4", "v5"]
    truth = np.array([0.6, 0.3, 0.0, -0.2, -0.7])
    nu = 0.6
    rng = np.random.default_rng(7)
    comparisons: list[list[str | None]] = []
    for p in range(prompts):
        shift = rng.normal(0.0, 0.4, size=k)  # the prompt's own taste: prompts are the unit
        for i, j in itertools.combinations(range(k), 2):
            a, b = np.exp(truth[i] + shift[i]), np.exp(truth[j] + shift[j])
            tie = nu * np.sqrt(a * b)
            u = rng.random() * (a + b + tie)
            left, right = (i, j) if rng.random() < 0.5 else (j, i)
            winner = names[i] if u < a else names[j] if u < a + b else None
            comparisons.append([f"prompt-{p:03d}", names[left], names[right], winner])
    seed, label, resamples, level = "reference-seed", "ranking", 300, 0.95
    prompt_ids = sorted({str(c[0]) for c in comparisons})
    draws = index_rows(seed, label, resamples, len(prompt_ids))

    def counts_of(weights: np.ndarray) -> dict:  # type: ignore[type-arg]
        table: dict[tuple[int, int], list[int]] = {}
        for pid, left, right, winner in comparisons:
            wgt = int(weights[prompt_ids.index(str(pid))])
            if not wgt:
                continue
            i, j = sorted((names.index(str(left)), names.index(str(right))))
            row = table.setdefault((i, j), [0, 0, 0])
            row[2 if winner is None else 0 if winner == names[i] else 1] += wgt
        return table

    full = counts_of(np.ones(len(prompt_ids), dtype=np.int64))
    with_ties = any(c[2] for c in full.values())
    estimate = scipy_fit(k, full, with_ties)
    assert estimate is not None
    replicate = []
    failed = []
    for row in draws:
        weights = np.bincount(row, minlength=len(prompt_ids))
        counts = counts_of(weights)
        got = scipy_fit(k, counts, with_ties and any(c[2] for c in counts.values()))
        failed.append(got is None)
        replicate.append(got if got is not None else np.full(k, np.nan))
    values = np.array(replicate)
    bad = np.array(failed)
    tail = (1 - level) / 2
    lo = np.quantile(np.where(bad[:, None], -np.inf, values), tail, axis=0)
    hi = np.quantile(np.where(bad[:, None], np.inf, values), 1 - tail, axis=0)
    pairs = list(itertools.combinations(range(k), 2))
    d_hat = np.array([estimate[i] - estimate[j] for i, j in pairs])
    d_star = np.array([[v[i] - v[j] for i, j in pairs] for v in values])
    se = d_star[~bad].std(axis=0, ddof=1)
    stat = np.where(bad, np.inf, (np.abs(d_star - d_hat) / se).max(axis=1))
    critical = float(np.quantile(stat, level))
    # the differences' percentile bounds, one at a time (what rank_candidates reports now)
    d_lo = np.quantile(np.where(bad[:, None], -np.inf, d_star), tail, axis=0)
    d_hi = np.quantile(np.where(bad[:, None], np.inf, d_star), 1 - tail, axis=0)
    return {
        "candidates": names,
        "comparisons": comparisons,
        "seed": seed,
        "label": label,
        "resamples": resamples,
        "confidence_level": level,
        "first_draws": draws[:3].tolist(),
        "estimate": estimate.tolist(),
        "lo": lo.tolist(),
        "hi": hi.tolist(),
        "failed": int(bad.sum()),
        "critical_value": critical,
        "difference_lo": (d_hat - critical * se).tolist(),
        "difference_hi": (d_hat + critical * se).tolist(),
        "difference_percentile_lo": d_lo.tolist(),
        "difference_percentile_hi": d_hi.tolist(),
    }


def main() -> None:
    out = {
        "provenance": {
            "script": "tests/data/ranking_reference.py",
            "python": sys.version.split()[0],
            "mpmath": md.version("mpmath"),
            "choix": md.version("choix"),
            "scipy": md.version("scipy"),
            "numpy": md.version("numpy"),
            "date": "2026-12-06",
        },
        "davidson": {"four": fit(FOUR), "star": fit(STAR), "six": fit(SIX)},
        "no_ties": {**fit(NO_TIES), "choix": choix_fit(NO_TIES)},
        "bootstrap": bootstrap_case(),
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
