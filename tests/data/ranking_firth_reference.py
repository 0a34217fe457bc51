"""Reference values for Firth's penalised Bradley-Terry / Davidson fit and its profile
penalised-likelihood intervals (blindtest.stats.penalised), and for the separations
(blindtest.stats.separation).

Do not edit ranking_firth_reference.json by hand; regenerate with
    .venv/bin/python tests/data/ranking_firth_reference.py > tests/data/ranking_firth_reference.json
which also runs ``Rscript tests/data/ranking_firth_reference.R`` (R 4.2.2 with brglm2 0.9 and
jsonlite, from Debian: ``apt-get install r-base-core r-cran-brglm2``). Made with mpmath 1.4.1
(mp.dps = 30), scipy 1.17.1 and numpy 2.4.6 on Python 3.11.7, 2026-12-06. It does not import
blindtest.

* mpmath: the penalised log-likelihood l(b) + 1/2 log det I(b) of Davidson's model written
  from the probabilities themselves (pi_i / D, pi_j / D, nu sqrt(pi_i pi_j) / D), with the
  Fisher information as sum n sum_o (dp_o)(dp_o)' / p_o from hand-written derivatives of the
  probabilities (not the cumulants the library uses). The estimate solves the penalised score
  equations (mpmath.diff gradients) by mpmath.findroot at 30 digits, started from scipy's
  minimisation of the same function; profile bounds solve, for each contrast c'b = psi, the
  penalised score equations in the directions that keep c'b fixed (mpmath.findroot), and
  2 (l*(b_hat) - l*(b_psi)) = chi2_1(0.95) in psi by scipy's brentq (xtol 1e-13) on a
  bracket found by doubling.
* R: brglm2's brglmFit (type "AS_mean", Firth's penalty for the logistic link) on the
  Bradley-Terry design matrix of the no-tie case (see the .R file), and the separations from
  pbinom and p.adjust(..., "holm") over the ordered pairs.
"""

from __future__ import annotations

import importlib.metadata as md
import itertools
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import mpmath as mp
import numpy as np
from scipy import optimize

mp.mp.dps = 30
HERE = Path(__file__).parent
LEVEL = 0.95

# pair counts (i, j, i preferred, j preferred, ties)
CASES: dict[str, dict[str, Any]] = {
    # a won every comparison, ties elsewhere
    "winner_ties": {
        "candidates": ["a", "b", "c"],
        "pairs": [[0, 1, 10, 0, 2], [0, 2, 9, 0, 1], [1, 2, 5, 4, 3]],
    },
    # a won every comparison, no tie anywhere (plain Bradley-Terry: brglm2 too)
    "winner_no_ties": {
        "candidates": ["a", "b", "c", "d"],
        "pairs": [
            [0, 1, 8, 0, 0],
            [0, 2, 7, 0, 0],
            [0, 3, 9, 0, 0],
            [1, 2, 5, 3, 0],
            [1, 3, 6, 2, 0],
            [2, 3, 4, 4, 0],
        ],
    },
    # {a, b} never lost to {c, d}; ties only inside the groups
    "groups_ties": {
        "candidates": ["a", "b", "c", "d"],
        "pairs": [[0, 1, 2, 2, 1], [2, 3, 2, 2, 1], [0, 2, 3, 0, 0], [1, 3, 2, 0, 0]],
    },
}

# separations: pair counts, alpha
SEPARATIONS: dict[str, dict[str, Any]] = {
    "four_all": {
        "k": 4,
        "alpha": 0.05,
        "pairs": [
            [0, 1, 14, 4, 2],
            [0, 2, 16, 2, 2],
            [0, 3, 19, 0, 1],
            [1, 2, 11, 7, 2],
            [1, 3, 15, 3, 2],
            [2, 3, 13, 5, 2],
        ],
    },
    "five_reference": {
        "k": 5,
        "alpha": 0.05,
        "pairs": [[0, 2, 18, 1, 1], [1, 2, 9, 9, 2], [2, 3, 17, 2, 1], [2, 4, 12, 6, 2]],
    },
    "eight_few": {
        "k": 8,
        "alpha": 0.1,
        "pairs": [
            [i, j, (13 if (i, j) == (0, 7) else 6 + (i + j) % 5), (i * j) % 4, (i + 2 * j) % 3]
            for i, j in itertools.combinations(range(8), 2)
        ],
    },
}


def _probabilities(si: Any, sj: Any, theta: Any) -> tuple[Any, Any, Any, list[list[Any]]]:
    """(p_w, p_l, p_t, their derivatives by (s_i, s_j, theta)) written from the odds."""
    a, b = mp.exp(si), mp.exp(sj)
    c = mp.exp(theta) * mp.sqrt(a * b) if theta is not None else mp.mpf(0)
    d = a + b + c
    da = [a, 0, 0]
    db = [0, b, 0]
    dc = [c / 2, c / 2, c]
    dd = [da[x] + db[x] + dc[x] for x in range(3)]
    grads = [
        [(da[x] * d - a * dd[x]) / d**2 for x in range(3)],
        [(db[x] * d - b * dd[x]) / d**2 for x in range(3)],
        [(dc[x] * d - c * dd[x]) / d**2 for x in range(3)],
    ]
    return a / d, b / d, c / d, grads


def _unpack(beta: list[Any], k: int, ties: bool) -> tuple[list[Any], Any]:
    if ties:
        return [mp.mpf(0), *beta[1:]], beta[0]
    return [mp.mpf(0), *beta], None


def penalised(beta: list[Any], k: int, pairs: list[list[int]], ties: bool) -> Any:
    s, theta = _unpack(beta, k, ties)
    size = len(beta)
    info = mp.zeros(size, size)
    total = mp.mpf(0)
    for i, j, w, losses, t in pairs:
        pw, pl, pt, grads = _probabilities(s[i], s[j], theta)
        total += w * mp.log(pw) + losses * mp.log(pl) + (t * mp.log(pt) if t else 0)
        n = w + losses + t
        # map (s_i, s_j, theta) to the parameter slots
        slots: list[tuple[int, int]] = []
        offset = 1 if ties else 0
        for x, cand in ((0, i), (1, j)):
            if cand != 0:
                slots.append((x, cand - 1 + offset))
        if ties:
            slots.append((2, 0))
        outcomes = [(pw, grads[0]), (pl, grads[1])] + ([(pt, grads[2])] if ties else [])
        for p, g in outcomes:
            for x, r in slots:
                for y, c in slots:
                    info[r, c] += n * g[x] * g[y] / p
    return total + mp.log(mp.det(info)) / 2


def _scipy_fit(k: int, pairs: list[list[int]], ties: bool) -> list[float]:
    size = k if ties else k - 1

    def neg(x: np.ndarray) -> float:
        return -float(penalised([mp.mpf(v) for v in x], k, pairs, ties))

    found = optimize.minimize(neg, np.zeros(size), method="BFGS", options={"gtol": 1e-8})
    return [float(v) for v in found.x]


def fit(k: int, pairs: list[list[int]], ties: bool) -> list[Any]:
    start = _scipy_fit(k, pairs, ties)

    def grad(*beta: Any) -> list[Any]:
        out = []
        for r in range(len(beta)):

            def along(v: Any, r: int = r) -> Any:
                moved = list(beta)
                moved[r] = v
                return penalised(moved, k, pairs, ties)

            out.append(mp.diff(along, beta[r]))
        return out

    root = mp.findroot(grad, [mp.mpf(v) for v in start], tol=mp.mpf(10) ** -28)
    return [root[r] for r in range(len(start))] if len(start) > 1 else [root]


def _contrast_rows(k: int, ties: bool) -> list[list[float]]:
    """Mean-anchored strengths, then the differences (pairs in order), over the slots."""
    offset = 1 if ties else 0
    size = k - 1 + offset
    rows = []
    for c in range(k):
        row = [0.0] * size
        for j in range(1, k):
            row[j - 1 + offset] = (1.0 if j == c else 0.0) - 1.0 / k
        rows.append(row)
    for i, j in itertools.combinations(range(k), 2):
        row = [0.0] * size
        if i:
            row[i - 1 + offset] += 1.0
        if j:
            row[j - 1 + offset] -= 1.0
        rows.append(row)
    return rows


def profile(k: int, pairs: list[list[int]], ties: bool, beta: list[Any]) -> list[list[float]]:
    top = penalised(beta, k, pairs, ties)
    quantile = 2 * mp.erfinv(mp.mpf(LEVEL)) ** 2
    size = len(beta)
    out = []
    for row in _contrast_rows(k, ties):
        c = [mp.mpf(v) for v in row]
        est = mp.fsum(c[r] * beta[r] for r in range(size))
        # a basis of the directions keeping c'b fixed (numpy, then exact arithmetic)
        _, _, vt = np.linalg.svd(np.array([row]))
        basis = [[mp.mpf(float(x)) for x in vec] for vec in vt[1:]]
        unit = [c[r] / mp.fsum(v * v for v in c) for r in range(size)]
        state = {"lam": [mp.mpf(0)] * len(basis)}

        def profiled(
            psi: Any, unit: Any = unit, basis: Any = basis, est: Any = est, state: Any = state
        ) -> Any:
            def point(lam: list[Any]) -> list[Any]:
                return [
                    beta[r]
                    + (psi - est) * unit[r]
                    + mp.fsum(lam[q] * basis[q][r] for q in range(len(basis)))
                    for r in range(size)
                ]

            def reduced(*lam: Any) -> list[Any]:
                out_g = []
                for q in range(len(basis)):

                    def along(value: Any, q: int = q) -> Any:
                        moved = list(lam)
                        moved[q] = value
                        return penalised(point(moved), k, pairs, ties)

                    out_g.append(mp.diff(along, lam[q]))
                return out_g

            if basis:
                try:
                    root = mp.findroot(reduced, state["lam"], tol=mp.mpf(10) ** -22)
                except (ValueError, ZeroDivisionError, mp.libmp.libmpf.ComplexResult):
                    root = mp.findroot(reduced, [mp.mpf(0)] * len(basis), tol=mp.mpf(10) ** -22)
                lam = [root[q] for q in range(len(basis))] if len(basis) > 1 else [root]
                state["lam"] = lam
            else:
                lam = []
            return 2 * (top - penalised(point(lam), k, pairs, ties)) - quantile

        bounds = []
        for sign in (-1, 1):
            state["lam"] = [mp.mpf(0)] * len(basis)
            step = 0.5
            while float(profiled(est + sign * step)) < 0 and step < 60:
                step *= 2
            inner = step / 2 if step > 0.5 else 0.0
            if float(profiled(est + sign * step)) < 0:
                bounds.append(float(sign * mp.inf))
                continue
            exact = optimize.brentq(
                lambda x, sign=sign, est=est: float(profiled(est + sign * x)),
                inner,
                step,
                xtol=1e-13,
                rtol=1e-14,
            )
            bounds.append(float(est + sign * exact))
        out.append(bounds)
    return out


def firth_case(case: dict[str, Any]) -> dict[str, Any]:
    k = len(case["candidates"])
    pairs = case["pairs"]
    ties = any(p[4] for p in pairs)
    beta = fit(k, pairs, ties)
    s, theta = _unpack(beta, k, ties)
    mean = mp.fsum(s) / k
    return {
        **case,
        "strengths": [float(v - mean) for v in s],
        "theta": None if theta is None else float(theta),
        "penalised_loglik": float(penalised(beta, k, pairs, ties)),
        "bounds": profile(k, pairs, ties, beta),
        "level": LEVEL,
    }


def run_r(payload: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.json", Path(tmp) / "out.json"
        src.write_text(json.dumps(payload))
        subprocess.run(
            ["Rscript", str(HERE / "ranking_firth_reference.R"), str(src), str(dst)], check=True
        )
        result: dict[str, Any] = json.loads(dst.read_text())
        return result


def main() -> None:
    firth = {name: firth_case(case) for name, case in CASES.items()}
    r_out = run_r(
        {"firth": {"winner_no_ties": CASES["winner_no_ties"]}, "separations": SEPARATIONS}
    )
    version = subprocess.run(
        ["Rscript", "-e", 'cat(R.version.string, "brglm2", format(packageVersion("brglm2")))'],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    out = {
        "provenance": {
            "script": "tests/data/ranking_firth_reference.py",
            "python": sys.version.split()[0],
            "mpmath": md.version("mpmath"),
            "scipy": md.version("scipy"),
            "numpy": md.version("numpy"),
            "r": version,
            "date": "2026-12-06",
        },
        "firth_mpmath": firth,
        "firth_brglm2": r_out["firth"],
        "separations_input": SEPARATIONS,
        "separations_r": r_out["separations"],
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
