"""Reference values for what a judge's flaw costs the prediction-powered interval
(blindtest.stats.ppi_flaws).

Do not edit ppi_flaws_reference.json by hand; regenerate it (it does not import blindtest):

    .venv/bin/python tests/data/ppi_flaws_reference.py > tests/data/ppi_flaws_reference.json

Made with mpmath 1.4.1 (40 digits) and numpy (only to draw the data sets once, from a fixed
seed; the data are stored in the file) on Python 3.11, 2026-12-06. Each value is worked out
from the definitions, written out here again and not taken from the library:

* the judge's slope on the flaw's variable ``x``: least squares over every comparison (sampled
  and not), ``x`` and the judge's score centred within each stratum; the people's slope: the
  same over the sampled comparisons with the people's scores; the slope removed: the judge's
  minus the people's clipped to [min(0, b), max(0, b)] ("beyond people"), or all of it;
* the counterfactual judge ``f* = f - removed (x - mean of x over the stratum's comparisons)``;
* per stratum the PPI++ plug-in weight as ppi-python computes it, ``cov(Y, f)`` (ddof 0) over
  ``(1 + n / N') var(f)`` (ddof 1, every judge score), clipped to [0, 1] (or the fixed weight
  1), and the variance ``var(Y - lambda f) / n + lambda^2 var(f_u) / N'`` (ddof 0); strata
  combined with their shares ``W_h = N_h / N``, ``V = sum W_h^2 V_h``; the people's own
  ``V_people = sum W_h^2 var(Y_h) / n_h``;
* the half-widths ``z sqrt(V)`` at the normal quantile (z = sqrt(2) erfinv(0.95)), the width
  change ``2 (hw - hw*)``, and ``n_eff = n V_people / V``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import mpmath
import numpy as np

mpmath.mp.dps = 40
Z = mpmath.sqrt(2) * mpmath.erfinv(mpmath.mpf("0.95"))


def mean(a: list[Any]) -> Any:
    return mpmath.fsum(a) / len(a)


def var0(a: list[Any]) -> Any:
    m = mean(a)
    return mpmath.fsum((v - m) ** 2 for v in a) / len(a)


def cov0(a: list[Any], b: list[Any]) -> Any:
    ma, mb = mean(a), mean(b)
    return mpmath.fsum((u - ma) * (v - mb) for u, v in zip(a, b, strict=True)) / len(a)


def plug_in(y: list[Any], f: list[Any], fu: list[Any]) -> Any:
    every = f + fu
    var1 = var0(every) * len(every) / (len(every) - 1)
    if var1 == 0:
        return mpmath.mpf(0)
    lam = cov0(y, f) / ((1 + mpmath.mpf(len(y)) / len(fu)) * var1)
    return min(max(lam, mpmath.mpf(0)), mpmath.mpf(1))


def stratum_variance(y: list[Any], f: list[Any], fu: list[Any], weight: str) -> Any:
    lam = plug_in(y, f, fu) if weight == "plug-in" else mpmath.mpf(1)
    rect = [a - lam * b for a, b in zip(y, f, strict=True)]
    return var0(rect) / len(y) + lam**2 * var0(fu) / len(fu)


def split(case: dict[str, Any]) -> list[dict[str, list[Any]]]:
    """Per stratum (sorted by name): y, f, fu, x, xu, as mpf."""
    names = sorted(set(case["strata_sampled"]) | set(case["strata_unsampled"]))
    out = []
    for name in names:
        pick = [i for i, s in enumerate(case["strata_sampled"]) if s == name]
        pick_u = [i for i, s in enumerate(case["strata_unsampled"]) if s == name]
        out.append(
            {
                key: [mpmath.mpf(case[src][i]) for i in (pick if src_s else pick_u)]
                for key, src, src_s in (
                    ("y", "people", True),
                    ("f", "judge_sampled", True),
                    ("fu", "judge_unsampled", False),
                    ("x", "flaw_sampled", True),
                    ("xu", "flaw_unsampled", False),
                    ("g", "other_sampled", True),
                    ("gu", "other_unsampled", False),
                )
                if src in case
            }
        )
    return out


def slopes(strata: list[dict[str, list[Any]]], beyond: bool) -> tuple[Any, Any, Any, Any]:
    sxx = sxf = sff = sxx_s = sxy = mpmath.mpf(0)
    for s in strata:
        x_all, f_all = s["x"] + s["xu"], s["f"] + s["fu"]
        mx, mf = mean(x_all), mean(f_all)
        sxx += mpmath.fsum((v - mx) ** 2 for v in x_all)
        sxf += mpmath.fsum((v - mx) * (w - mf) for v, w in zip(x_all, f_all, strict=True))
        sff += mpmath.fsum((w - mf) ** 2 for w in f_all)
        msx, my = mean(s["x"]), mean(s["y"])
        sxx_s += mpmath.fsum((v - msx) ** 2 for v in s["x"])
        sxy += mpmath.fsum((v - msx) * (w - my) for v, w in zip(s["x"], s["y"], strict=True))
    b = sxf / sxx
    c = sxy / sxx_s if sxx_s > 0 else mpmath.mpf(0)
    kept = min(max(c, min(b, 0)), max(b, 0)) if beyond else mpmath.mpf(0)
    return b, c, b - kept, b**2 * sxx / sff


def widths(
    strata: list[dict[str, list[Any]]], fkey: str, fukey: str, weight: str, total: int
) -> tuple[Any, Any]:
    """(V, V_people) of the strata combined."""
    v = vp = mpmath.mpf(0)
    for s in strata:
        share = mpmath.mpf(len(s["y"]) + len(s["fu"])) / total
        v += share**2 * stratum_variance(s["y"], s[fkey], s[fukey], weight)
        vp += share**2 * var0(s["y"]) / len(s["y"])
    return v, vp


def expected(case: dict[str, Any]) -> dict[str, float]:
    strata = split(case)
    total = len(case["people"]) + len(case["judge_unsampled"])
    n = len(case["people"])
    out: dict[str, float] = {}
    if "flaw_sampled" in case:
        b, c, removed, explained = slopes(strata, case["beyond_people"])
        for s in strata:
            m = mean(s["x"] + s["xu"])
            s["g"] = [f - removed * (x - m) for f, x in zip(s["f"], s["x"], strict=True)]
            s["gu"] = [f - removed * (x - m) for f, x in zip(s["fu"], s["xu"], strict=True)]
        out |= {"judge_slope": float(b), "people_slope": float(c),
                "removed_slope": float(removed), "explained": float(explained)}  # fmt: skip
    v, vp = widths(strata, "f", "fu", case["weight"], total)
    v2, _ = widths(strata, "g", "gu", case["weight"], total)
    hw, hw2 = Z * mpmath.sqrt(v), Z * mpmath.sqrt(v2)
    return out | {
        "half_width": float(hw),
        "adjusted_half_width": float(hw2),
        "width_change": float(2 * (hw - hw2)),
        "effective_n": float(n * vp / v),
        "adjusted_effective_n": float(n * vp / v2),
    }


def draw_case(
    seed: int, n: int, total: int, bias: float, strata: int, share_len: float
) -> dict[str, Any]:
    """People's win/tie/loss, a judge that agrees 70% of the time and otherwise, with
    probability ``bias``, follows the variable; the variable is a side (+-1) or a length sign
    that people follow with probability ``share_len``."""
    rng = np.random.default_rng(seed)
    x = rng.choice([-1.0, 1.0], size=total)
    y = rng.choice([1.0, 0.5, 0.0], size=total, p=[0.45, 0.2, 0.35])
    y = np.where(rng.random(total) < share_len, (x + 1) / 2, y)
    other = rng.choice([1.0, 0.5, 0.0], size=total)
    judge = np.where(rng.random(total) < 0.7, y, other)
    judge = np.where(rng.random(total) < bias, (x + 1) / 2, judge)
    labels = [f"t{i % strata}" for i in range(total)]
    return {
        "people": y[:n].tolist(),
        "judge_sampled": judge[:n].tolist(),
        "judge_unsampled": judge[n:].tolist(),
        "flaw_sampled": x[:n].tolist(),
        "flaw_unsampled": x[n:].tolist(),
        "strata_sampled": labels[:n],
        "strata_unsampled": labels[n:],
    }


def main() -> int:
    cases: dict[str, Any] = {}
    specs = {
        "position_plug_in": (11, 40, 160, 0.4, 1, 0.0, "plug-in", True),
        "length_all_of_it": (12, 50, 200, 0.5, 1, 0.3, "plug-in", False),
        "length_people_share_it": (12, 50, 200, 0.5, 1, 0.3, "plug-in", True),
        "flawless_weight_one": (13, 30, 120, 0.0, 1, 0.0, "one", True),
        "stratified": (14, 60, 180, 0.3, 2, 0.0, "plug-in", True),
    }
    for name, (seed, n, total, bias, strata, share, weight, beyond) in specs.items():
        case = draw_case(seed, n, total, bias, strata, share)
        case |= {"weight": weight, "beyond_people": beyond}
        case["expected"] = expected(case)
        cases[name] = case
    leak = draw_case(15, 40, 160, 0.0, 1, 0.0)
    rng = np.random.default_rng(16)
    leaked_s = rng.random(40) < 0.3
    leaked_u = rng.random(120) < 0.3
    leak["other_sampled"] = leak["judge_sampled"]
    leak["other_unsampled"] = leak["judge_unsampled"]
    leak["judge_sampled"] = np.where(leaked_s, 0.5, leak["judge_sampled"]).tolist()
    leak["judge_unsampled"] = np.where(leaked_u, 0.5, leak["judge_unsampled"]).tolist()
    del leak["flaw_sampled"], leak["flaw_unsampled"]
    leak |= {"weight": "plug-in", "beyond_people": False}
    leak["expected"] = expected(leak)
    cases["leaked_verdicts_counted"] = leak
    # One line per case's field: the data sets' lists stay on one line each.
    sys.stdout.write('{"generator": "tests/data/ppi_flaws_reference.py", ')
    sys.stdout.write(f'"mpmath": "{mpmath.__version__}", "cases": {{\n')
    for i, (name, case) in enumerate(cases.items()):
        fields = ",\n  ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in case.items())
        sys.stdout.write(f" {json.dumps(name)}: {{\n  {fields}\n }}")
        sys.stdout.write(",\n" if i < len(cases) - 1 else "\n")
    sys.stdout.write("}}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
