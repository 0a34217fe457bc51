"""Reference values for Krippendorff's alpha and Cohen's kappa (Fleiss-Cohen-Everitt SE).

Do not edit the numbers in agreement_reference.json; regenerate with
    pip install statsmodels krippendorff   # only to make these numbers, never needed at run time
    python tests/data/agreement_reference.py > tests/data/agreement_reference.json
Made with statsmodels 0.15.0 (statsmodels.stats.inter_rater.cohens_kappa) and the krippendorff
PyPI package (krippendorff.alpha, level_of_measurement="nominal"), 2026-12-02.
"""

from __future__ import annotations

import importlib.metadata as md
import json

import numpy as np
from krippendorff import alpha  # type: ignore[import-not-found]
from statsmodels.stats.inter_rater import cohens_kappa  # type: ignore[import-not-found]

nan = np.nan
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 coders x 12
# units, nominal; published alpha = 0.743.
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]
# A dealt panel: 3 judges, 12 trials, each trial seen by two (votes A, B, tie as 0, 1, 2).
DEALT = [
    [0, 1, 0, nan, 0, 1, nan, 2, 0, 1, nan, 0],
    [0, nan, 1, 1, 0, nan, 2, 2, nan, 1, 0, 1],
    [nan, 1, 0, 1, nan, 0, 2, nan, 1, nan, 0, 0],
]


def table(first: list[int], second: list[int], k: int) -> np.ndarray:
    out = np.zeros((k, k))
    for a, b in zip(first, second, strict=True):
        out[a, b] += 1
    return out


def kappa_case(first: list[int], second: list[int], k: int) -> dict[str, float]:
    r = cohens_kappa(table(first, second, k))
    return {
        "kappa": float(r.kappa),
        "se": float(r.std_kappa),
        "se0": float(r.std_kappa0),
        "lo": float(r.kappa_low),
        "hi": float(r.kappa_upp),
        "p_two_sided": float(r.pvalue_two_sided),
    }


# Wikipedia's "Cohen's kappa" example: yes/yes 20, yes/no 5, no/yes 10, no/no 15.
WIKI = ([0] * 25 + [1] * 25, [0] * 20 + [1] * 5 + [0] * 10 + [1] * 15)
# 95% one-sided labels: 40 trials, each judge says "left" on 38, the two "rights" never shared.
ONE_SIDED = ([0] * 36 + [1, 1, 0, 0], [0] * 36 + [0, 0, 1, 1])
# Three categories, 30 trials.
THREE = (
    [0, 0, 0, 1, 1, 2, 2, 0, 1, 2] * 3,
    [0, 0, 1, 1, 1, 2, 0, 0, 2, 2] * 3,
)
print(
    json.dumps(
        {
            "versions": {
                "statsmodels": md.version("statsmodels"),
                "krippendorff": md.version("krippendorff"),
            },
            "alpha": {
                "krippendorff_2011": alpha(reliability_data=K2011, level_of_measurement="nominal"),
                "dealt_panel": alpha(reliability_data=DEALT, level_of_measurement="nominal"),
            },
            "kappa": {
                "wikipedia": kappa_case(*WIKI, 2),
                "one_sided": kappa_case(*ONE_SIDED, 2),
                "three_categories": kappa_case(*THREE, 3),
            },
        },
        indent=2,
    )
)
