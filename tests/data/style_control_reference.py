"""Reference values for blindtest.stats.style (tests/stats/test_style_control.py).

Do not edit the numbers in style_control_reference.json; regenerate with
    .venv/bin/pip install statsmodels      # only to make these numbers, never at run or test time
    apt-get install r-cran-brglm2 r-cran-jsonlite
    .venv/bin/python tests/data/style_control_reference.py > tests/data/style_control_reference.json
It does not import blindtest. Maximum likelihood: statsmodels' Logit (estimates, standard errors)
and profile-likelihood 95% bounds from statsmodels' GLM with the profiled coefficient as an
offset, the bound found by scipy's brentq. Firth: R's brglm2 and R code of its own
(style_control_firth_reference.R, run from here), with the versions written in the output.
Made 2026-12-03.

Each case is y (1: A preferred) and x (A-minus-B normalised differences: length, markdown);
the fit's design is z = [1, x without all-zero columns].
"""

from __future__ import annotations

import importlib.metadata as md
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import statsmodels.api as sm  # type: ignore[import-not-found,import-untyped,unused-ignore]
from scipy import optimize, stats

HERE = Path(__file__).resolve().parent
NAMES = ["length", "markdown"]


def normalised(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    total = a + b
    found: np.ndarray = np.divide(
        a - b, total, out=np.zeros_like(total, dtype=float), where=total > 0
    )
    return found


def realistic(n: int, seed: int, a: float, g: tuple[float, float]) -> dict[str, Any]:
    """Lengths and markdown like two chat models' answers; picks from the model itself."""
    rng = np.random.default_rng(seed)
    words_a = np.round(np.exp(rng.normal(np.log(180), 0.5, n)))
    words_b = np.round(np.exp(rng.normal(np.log(140), 0.5, n)))
    marks_a = rng.poisson(2.0, n) / words_a * 100
    marks_b = rng.poisson(1.0, n) / words_b * 100
    x = np.column_stack([normalised(words_a, words_b), normalised(marks_a, marks_b)])
    eta = a + x @ np.asarray(g)
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    return {"y": y.tolist(), "x": x.tolist()}


def cases() -> dict[str, dict[str, Any]]:
    found = {
        "ordinary_n60": realistic(60, 11, 0.4, (2.0, 0.5)),
        "ordinary_n200": realistic(200, 12, -0.3, (3.0, 0.0)),
        "small_n12": realistic(12, 13, 0.2, (1.0, 0.5)),
    }
    # Quasi-separated by length at n = 12: every pick went to the longer answer where the
    # lengths differed; the four comparisons of equal length split 2-2 in a way no direction
    # of the intercept and markdown separates.
    length = [0.2, -0.1, 0.05, -0.3, 0.15, -0.02, 0.08, -0.12, 0.0, 0.0, 0.0, 0.0]
    markdown = [0.5, 0.0, -1.0, 0.3, 0.0, 1.0, -0.4, 0.2, 1.0, -1.0, 0.5, 0.0]
    y = [1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 0]
    found["quasi_length_n12"] = {"y": y, "x": np.column_stack([length, markdown]).tolist()}
    # Quasi-separated by markdown at n = 30: where one answer had more markdown it was picked;
    # the comparisons with none on either side went both ways, with length mattering a little.
    rng = np.random.default_rng(14)
    md_diff = np.where(rng.random(30) < 0.5, 0.0, rng.choice([-1.0, -0.4, 0.3, 1.0], 30))
    len_diff = rng.uniform(-0.4, 0.4, 30)
    picks = np.where(md_diff != 0, (md_diff > 0).astype(int), 0)
    zero = np.flatnonzero(md_diff == 0)
    picks[zero] = (rng.random(len(zero)) < 1 / (1 + np.exp(-2 * len_diff[zero]))).astype(int)
    found["quasi_markdown_n30"] = {
        "y": picks.tolist(),
        "x": np.column_stack([len_diff, md_diff]).tolist(),
    }
    # Completely separated by length: a judge that always takes the longer of two answers
    # differing by one word; no markdown anywhere.
    rng = np.random.default_rng(15)
    base = rng.integers(20, 80, 40)
    a_longer = rng.random(40) < 0.5
    words_a, words_b = base + a_longer, base + ~a_longer
    found["complete_length_n40"] = {
        "y": a_longer.astype(int).tolist(),
        "x": np.column_stack([normalised(words_a, words_b), np.zeros(40)]).tolist(),
    }
    # A had markdown and B never: the markdown difference is +1 everywhere, aliased with the
    # intercept; length is still measured.
    x = np.array(realistic(50, 16, 0.5, (2.0, 0.0))["x"])
    x[:, 1] = 1.0
    found["markdown_always_a_n50"] = {"y": realistic(50, 16, 0.5, (2.0, 0.0))["y"], "x": x.tolist()}
    return found


def design(case: dict[str, Any]) -> np.ndarray:
    x = np.asarray(case["x"], dtype=float)
    kept = [j for j in range(x.shape[1]) if np.any(x[:, j]) and not np.all(x[:, j] == x[0, j])]
    return np.column_stack([np.ones(len(x)), x[:, kept]])


def ml_reference(y: np.ndarray, z: np.ndarray) -> dict[str, Any]:
    fit = sm.Logit(y, z).fit(method="newton", tol=1e-14, maxiter=200, disp=False)
    top = float(fit.llf)
    q = float(stats.chi2.ppf(0.95, 1))

    def profile(j: int, value: float) -> float:
        others = np.delete(z, j, axis=1)
        glm = sm.GLM(y, others, family=sm.families.Binomial(), offset=value * z[:, j])
        return float(glm.fit(tol=1e-14, maxiter=200).llf)

    lo: list[float] = []
    hi: list[float] = []
    for j in range(z.shape[1]):
        est, se = float(fit.params[j]), float(fit.bse[j])
        for side, out in ((-1.0, lo), (1.0, hi)):
            far = se

            def gap(d: float, j: int = j, est: float = est, side: float = side) -> float:
                return 2 * (top - profile(j, est + side * d)) - q

            while gap(far) < 0:
                far *= 2
            out.append(est + side * optimize.brentq(gap, 0.0, far, xtol=1e-13, rtol=1e-14))
    return {
        "estimate": fit.params.tolist(),
        "se": fit.bse.tolist(),
        "loglik": top,
        "lo": lo,
        "hi": hi,
    }


def main() -> None:
    made = cases()
    designs = {name: design(case) for name, case in made.items()}
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = Path(tmp) / "in.json", Path(tmp) / "out.json"
        inp.write_text(json.dumps({n: {"y": made[n]["y"], "z": designs[n].tolist()} for n in made}))
        script = HERE / "style_control_firth_reference.R"
        subprocess.run(["Rscript", str(script), str(inp), str(out)], check=True)
        firth = json.loads(out.read_text())
    result: dict[str, Any] = {
        "_provenance": {
            "note": "do not edit; regenerate with the command in style_control_reference.py",
            "made_by": "tests/data/style_control_reference.py",
            "date": "2026-12-03",
            "python": sys.version.split()[0],
            "statsmodels": md.version("statsmodels"),
            "numpy": md.version("numpy"),
            "scipy": md.version("scipy"),
            **firth["meta"],
        },
        "names": NAMES,
        "cases": {},
    }
    for name, case in made.items():
        z = designs[name]
        y = np.asarray(case["y"], dtype=float)
        infinite = firth["cases"][name]["ml_infinite"]
        entry = {**case, "firth": firth["cases"][name]}
        if not any(infinite if isinstance(infinite, list) else [infinite]):
            entry["ml"] = ml_reference(y, z)
        result["cases"][name] = entry
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
