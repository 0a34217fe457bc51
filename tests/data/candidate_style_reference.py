"""Reference values for style control over several candidates (blindtest.stats.candidate_style).

Do not edit candidate_style_reference.json by hand; regenerate with
    .venv/bin/pip install statsmodels   # only to make these numbers, never needed at run time
    cd tests/data && ../../.venv/bin/python candidate_style_reference.py \
        > candidate_style_reference.json
Made with statsmodels 0.15.0, scipy and numpy (versions written into the JSON) on Python 3.11,
2026-12-03. It does not import blindtest.

A Bradley-Terry model without ties is a logistic regression without intercept on a design whose
candidate columns are +1 (the left answer's candidate), -1 (the right one's), 0 otherwise, plus
the style covariates (left minus right). One candidate's column is dropped to fix the scale
(candidate 0, or the reference); strengths are then re-anchored (mean 0, or the reference at 0)
and their standard errors, and those of every difference of two strengths (pairs in the order
(0, 1), (0, 2), ..., (k-2, k-1)), carried through the linear map with statsmodels' own
covariance.
Fitted by statsmodels Logit (Newton, tolerance 1e-12); standard errors: ``nonrobust`` (inverse
Fisher information) and ``cluster`` with every comparison of a prompt in one cluster
(statsmodels' default small-sample correction G/(G-1) (N-1)/(N-K)). The log-likelihood is
statsmodels' llf.

The data are simulated here with a fixed numpy seed (the data only; the values are what
statsmodels finds on them), and written into the JSON with the values.
"""

from __future__ import annotations

import importlib.metadata as md
import itertools
import json
import sys
from typing import Any

import numpy as np
import statsmodels.api as sm  # type: ignore[import-not-found,import-untyped,unused-ignore]


def simulate(
    seed: int, k: int, prompts: int, strengths: list[float], gamma: list[float]
) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    first, second, prompt, rows = [], [], [], []
    for q in range(prompts):
        for i, j in itertools.combinations(range(k), 2):
            if rng.random() < 0.5:
                i, j = j, i
            first.append(i)
            second.append(j)
            prompt.append(q)
            rows.append(
                [float(np.tanh(rng.normal(0.0, 0.5))), float(np.tanh(rng.normal(0.0, 0.4)))]
            )
    x = np.array(rows)
    s = np.array(strengths)
    eta = s[first] - s[second] + x @ np.array(gamma)
    y = (rng.random(len(eta)) < 1.0 / (1.0 + np.exp(-eta))).astype(int)
    return {
        "k": k,
        "first": first,
        "second": second,
        "prompt": prompt,
        "y": y.tolist(),
        "x": x.tolist(),
    }


def fit(case: dict[str, Any], anchor: int | None) -> dict[str, Any]:
    k = case["k"]
    first, second = np.array(case["first"]), np.array(case["second"])
    n = len(first)
    full = np.zeros((n, k))
    full[np.arange(n), first] = 1.0
    full[np.arange(n), second] = -1.0
    dropped = 0 if anchor is None else anchor
    free = [m for m in range(k) if m != dropped]
    z = np.column_stack([full[:, free], np.array(case["x"])])
    y = np.array(case["y"])
    model = sm.Logit(y, z)
    plain = model.fit(method="newton", tol=1e-12, maxiter=100, disp=False)
    clustered = model.fit(
        method="newton",
        tol=1e-12,
        maxiter=100,
        disp=False,
        cov_type="cluster",
        cov_kwds={"groups": np.array(case["prompt"])},
    )
    to_s = np.zeros((k, z.shape[1]))
    to_s[free, np.arange(k - 1)] = 1.0
    if anchor is None:
        to_s -= to_s.mean(axis=0, keepdims=True)
    out: dict[str, Any] = {"anchor": anchor, "log_likelihood": float(plain.llf)}
    for label, result in (("se", plain), ("se_prompt", clustered)):
        cov = np.asarray(result.cov_params())
        out[f"strength_{label}"] = np.sqrt(np.diag(to_s @ cov @ to_s.T)).tolist()
        out[f"gamma_{label}"] = np.sqrt(np.diag(cov)[k - 1 :]).tolist()
        pairs = list(itertools.combinations(range(k), 2))
        contrasts = np.array([to_s[a] - to_s[b] for a, b in pairs])
        out[f"difference_{label}"] = np.sqrt(np.diag(contrasts @ cov @ contrasts.T)).tolist()
    out["strength"] = (to_s @ plain.params).tolist()
    out["gamma"] = np.asarray(plain.params[k - 1 :]).tolist()
    return out


def main() -> None:
    case = simulate(20261203, 4, 25, [0.6, 0.2, -0.1, -0.7], [1.2, -0.5])
    small = simulate(7, 3, 12, [0.3, 0.0, -0.3], [0.8, 0.3])
    json.dump(
        {
            "made_by": "tests/data/candidate_style_reference.py",
            "versions": {
                "statsmodels": md.version("statsmodels"),
                "numpy": md.version("numpy"),
                "scipy": md.version("scipy"),
                "python": sys.version.split()[0],
            },
            "covariates": ["length", "markdown"],
            "cases": {
                "four": {"data": case, "mean": fit(case, None), "reference": fit(case, 3)},
                "three": {"data": small, "mean": fit(small, None), "reference": fit(small, 1)},
            },
        },
        sys.stdout,
        indent=1,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
