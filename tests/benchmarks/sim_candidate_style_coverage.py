"""Coverage of the several-candidate style control's Wald intervals, and how often a strength
is left without a number because equal style lies outside a candidate's comparisons.

The data are the suite's (tests/stats/test_candidate_style_control.py::_length_only_judge):
four candidates of equal quality whose answers differ in length (typical words 100, 150, 220,
320, each varying by a lognormal factor of sd 0.3 per prompt), every pair on every prompt,
sides at random, a judge that prefers the longer answer only (logit P(left) = 2.5 x_length).
Per data set: each candidate with a strength, whether its 95% interval holds 0 (the truth,
the candidates being equal, anchored at the mean of those with a strength); whether every
Bonferroni difference holds 0 jointly; how many strengths were "extrapolated".

    .venv/bin/python tests/benchmarks/sim_candidate_style_coverage.py [DATA_SETS]

One logistic fit per data set (about 10 ms at 30 prompts): the default 1,000 data sets per
cell take under a minute on one core. Seeds 20261206 + cell index.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stats"))

from test_candidate_style_control import COVARIATES, _length_only_judge

from blindtest.stats.candidate_style import candidate_style_control


def cell(prompts: int, sets: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    covered = given = joint = with_differences = extrapolated = touched = 0
    for _ in range(sets):
        names, first, second, y, x, prompt = _length_only_judge(rng, prompts)
        found = candidate_style_control(names, first, second, y, x, COVARIATES, prompt)
        assert found.problem is None
        kept = [s for s in found.strengths if s.status == "estimated"]
        covered += sum(s.strength.lo < 0.0 < s.strength.hi for s in kept)
        given += len(kept)
        extrapolated += len(found.extrapolated)
        touched += bool(found.extrapolated)
        if found.differences:
            with_differences += 1
            joint += all(d.difference.lo < 0.0 < d.difference.hi for d in found.differences)
    share = covered / given
    return {
        "prompts": prompts,
        "sets": sets,
        "seed": seed,
        "strengths": given,
        "coverage": share,
        "mc_se": math.sqrt(share * (1 - share) / given),
        "joint": joint / with_differences,
        "extrapolated": extrapolated,
        "sets_with_one": touched,
    }


def main() -> None:
    sets = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    print(
        "| prompts | data sets | seed | strengths given | each holds 0 (MC se) | "
        "differences jointly | strengths extrapolated | data sets with one |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for index, prompts in enumerate((10, 30)):
        r = cell(prompts, sets, 20261206 + index)
        print(
            f"| {prompts} | {sets} | {r['seed']} | {r['strengths']} | {r['coverage']:.3f} "
            f"({r['mc_se']:.3f}) | {r['joint']:.3f} | {r['extrapolated']} | "
            f"{r['sets_with_one']} |"
        )


if __name__ == "__main__":
    main()
