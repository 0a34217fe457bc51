"""Reference values for the prediction-powered estimate (blindtest.stats.ppi).

Do not edit ppi_reference.json by hand; regenerate it in a throwaway virtualenv (ppi-python is
never a dependency of blindtest, nor needed by its tests):

    python3 -m venv /tmp/ppivenv && /tmp/ppivenv/bin/pip install ppi-python mpmath
    /tmp/ppivenv/bin/python tests/data/ppi_reference.py > tests/data/ppi_reference.json

Made with ppi-python 0.2.3, numpy 2.4.6, mpmath 1.4.1 on Python 3.11.7, 2026-12-06. It does not
import blindtest. For each data set (stored in the file, drawn here once from a fixed seed):

* ``ppi_py.ppi_mean_pointestimate`` and ``ppi_mean_ci`` (alpha 0.05, two-sided) with the
  unsampled comparisons as ``Yhat_unlabeled``, for ``lam=None`` (PPI++'s plug-in weight, whose
  value ``ppi_py.ppi._calc_lam_glm`` gives) and ``lam=1``;
* stratified data: ``ppi_py`` on each stratum alone (plug-in weight), combined with the strata's
  shares of the comparisons: estimate ``sum W_h est_h``, standard error ``sqrt(sum W_h^2 se_h^2)``
  (``se_h``: the stratum interval's half-width over the normal quantile);
* the untied share at a fixed weight 0.7: ``a / (a + b)`` from ``ppi_mean_pointestimate`` of the
  win and loss indicators, its standard error from ``ppi_mean_ci`` of ``(1 - u) win - u loss``
  at that ``u``, over ``a + b``;
* the effective sample size at the PPI++ weight, ``n (n + N) / (n + (1 - rho^2) N)``, with rho
  from ``ppi_py.ppi_power_analysis._get_ppi_corr`` (Broska, Howes and van Loon 2024);
* the people's exact bounds: each layer's one-sided Clopper-Pearson bound solved with mpmath
  (``betainc`` at 40 digits, ``findroot``), summed over the layers.
"""

from __future__ import annotations

import datetime
import importlib.metadata as md
import json
import sys
from typing import Any

import mpmath
import numpy as np

# Only in the throwaway venv of the module doc, so untyped and unknown to the project's mypy.
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate  # type: ignore[import-not-found]
from ppi_py.ppi import _calc_lam_glm  # type: ignore[import-not-found]
from ppi_py.ppi_power_analysis import _get_ppi_corr  # type: ignore[import-not-found]

mpmath.mp.dps = 40
Z = 1.959963984540054  # scipy.stats.norm.ppf(0.975), as ppi_py's _zconfint_generic uses


def draw(
    rng: np.random.Generator, total: int, probs: tuple[float, float, float], agree: float
) -> tuple[np.ndarray, np.ndarray]:
    """People's verdict scores (win, tie, loss) and a judge that agrees with them or says
    something else at random."""
    y = rng.choice([1.0, 0.5, 0.0], size=total, p=probs)
    other = rng.choice([1.0, 0.5, 0.0], size=total)
    return y, np.where(rng.random(total) < agree, y, other)


def plugin_lambda(y: np.ndarray, f: np.ndarray, fu: np.ndarray) -> float:
    est = ppi_mean_pointestimate(y, f, fu, lam=1)
    lam = _calc_lam_glm(
        (y - est).reshape(-1, 1),
        (f - est).reshape(-1, 1),
        (fu - est).reshape(-1, 1),
        np.eye(1),
        clip=True,
    )
    return float(lam)


def ppi(y: np.ndarray, f: np.ndarray, fu: np.ndarray, lam: float | None) -> dict[str, float]:
    est = float(np.ravel(ppi_mean_pointestimate(y, f, fu, lam=lam))[0])
    lo, hi = ppi_mean_ci(y, f, fu, alpha=0.05, lam=lam)
    return {"estimate": est, "lo": float(np.ravel(lo)[0]), "hi": float(np.ravel(hi)[0])}


def cp_lower(k: int, n: int, tail: float) -> float:
    if k == 0:
        return 0.0

    # P(X >= k | p) = I_p(k, n - k + 1); the lower bound solves P(X >= k | p) = tail.
    def tail_gap(p: Any) -> Any:
        return mpmath.betainc(k, n - k + 1, 0, p, regularized=True) - tail

    bracket = (mpmath.mpf("1e-30"), 1 - mpmath.mpf("1e-30"))
    return float(mpmath.findroot(tail_gap, bracket, solver="illinois", tol=mpmath.mpf("1e-35")))


def exact_bounds(y: np.ndarray, values: list[float], tail: float) -> dict[str, float]:
    layers = len(values) - 1
    lo = hi = values[0]
    n = len(y)
    for j in range(1, layers + 1):
        step = values[j] - values[j - 1]
        k = int(np.sum(y >= values[j] - 1e-9))
        lo += step * cp_lower(k, n, tail / layers)
        hi += step * (1.0 - cp_lower(n - k, n, tail / layers))
    return {"lo": lo, "hi": hi}


def untied(y: np.ndarray, f: np.ndarray, fu: np.ndarray, lam: float) -> dict[str, float]:
    a = float(
        np.ravel(ppi_mean_pointestimate(1.0 * (y == 1), 1.0 * (f == 1), 1.0 * (fu == 1), lam=lam))[
            0
        ]
    )
    b = float(
        np.ravel(ppi_mean_pointestimate(1.0 * (y == 0), 1.0 * (f == 0), 1.0 * (fu == 0), lam=lam))[
            0
        ]
    )
    u = a / (a + b)

    def g(x: np.ndarray) -> np.ndarray:
        return np.asarray((1 - u) * (x == 1) - u * (x == 0), dtype=float)

    lo, hi = ppi_mean_ci(g(y), g(f), g(fu), alpha=0.05, lam=lam)
    se = (float(np.ravel(hi)[0]) - float(np.ravel(lo)[0])) / (2 * Z) / (a + b)
    return {"estimate": u, "lo": u - Z * se, "hi": u + Z * se}


def case(
    rng: np.random.Generator, total: int, n: int, probs: tuple[float, float, float], agree: float
) -> dict[str, Any]:
    y_all, j_all = draw(rng, total, probs, agree)
    y, f, fu = y_all[:n], j_all[:n], j_all[n:]
    rho = _get_ppi_corr((y - y.mean()).reshape(-1, 1), (f - f.mean()).reshape(-1, 1), np.eye(1))
    n_u = total - n
    return {
        "people": y.tolist(),
        "judge_sampled": f.tolist(),
        "judge_unsampled": fu.tolist(),
        "plug_in_weight": plugin_lambda(y, f, fu),
        "plug_in": ppi(y, f, fu, None),
        "weight_one": ppi(y, f, fu, 1),
        "untied_weight_0.7": untied(y, f, fu, 0.7),
        "rho": float(rho),
        "effective_n": n * (n + n_u) / (n + (1 - rho**2) * n_u),
        "exact": exact_bounds(y, [0.0, 0.5, 1.0], 0.025),
    }


def stratified(rng: np.random.Generator) -> dict[str, Any]:
    out: dict[str, Any] = {"strata": {}}
    est = var = 0.0
    sizes = {"code": (400, 40, (0.6, 0.1, 0.3), 0.85), "chat": (600, 60, (0.35, 0.25, 0.4), 0.7)}
    for name, (total, n, probs, agree) in sizes.items():
        y_all, j_all = draw(rng, total, probs, agree)
        y, f, fu = y_all[:n], j_all[:n], j_all[n:]
        one = ppi(y, f, fu, None)
        share = total / 1000
        se = (one["hi"] - one["lo"]) / (2 * Z)
        est += share * one["estimate"]
        var += share**2 * se**2
        out["strata"][name] = {
            "people": y.tolist(),
            "judge_sampled": f.tolist(),
            "judge_unsampled": fu.tolist(),
            "weight": plugin_lambda(y, f, fu),
            "estimate": one["estimate"],
        }
    out["combined"] = {"estimate": est, "lo": est - Z * var**0.5, "hi": est + Z * var**0.5}
    return out


def main() -> int:
    rng = np.random.default_rng(20261206)
    cases = {
        "even": case(rng, 300, 60, (0.45, 0.20, 0.35), 0.8),
        "small": case(rng, 200, 25, (0.45, 0.20, 0.35), 0.7),
        "one_sided": case(rng, 1000, 100, (0.80, 0.10, 0.10), 0.9),
        "weak_judge": case(rng, 500, 80, (0.40, 0.30, 0.30), 0.45),
    }
    # A judge's confidence mapped to a score (any number in [0, 1]) against people without ties.
    y_all = rng.choice([1.0, 0.0], size=400, p=[0.55, 0.45])
    conf = np.clip(np.where(y_all == 1, 0.7, 0.3) + rng.normal(0, 0.15, size=400), 0, 1)
    y, f, fu = y_all[:50], conf[:50], conf[50:]
    cases["confidence"] = {
        "people": y.tolist(),
        "judge_sampled": f.tolist(),
        "judge_unsampled": fu.tolist(),
        "plug_in_weight": plugin_lambda(y, f, fu),
        "plug_in": ppi(y, f, fu, None),
        "weight_one": ppi(y, f, fu, 1),
        "exact": exact_bounds(y, [0.0, 1.0], 0.025),
    }
    out = {
        "provenance": {
            "script": "tests/data/ppi_reference.py",
            "python": sys.version.split()[0],
            "ppi-python": md.version("ppi-python"),
            "numpy": np.__version__,
            "mpmath": mpmath.__version__,
            "date": datetime.date.today().isoformat(),
        },
        "cases": cases,
        "stratified": stratified(rng),
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
