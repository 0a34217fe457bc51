"""Coverage of the ranking's intervals as a several-candidate analysis uses them: the
comparisons a design's schedule deals (``pairing.schedule``: a sample of pairs per prompt, or
every candidate against a reference), the prompt as the unit of the bootstrap, and the anchor
the analysis takes (the mean, or the reference at 0).

Seeded vectorised simulation: data sets drawn from Davidson's model over the schedule's
comparisons, each candidate's answer to a prompt carrying its own normal shift in quality
(one answer serves every comparison of that prompt it is in, so comparisons of a prompt are
not independent), every data set resampled over prompts with the same `fit_resamples` and
`bootstrap_bounds` that `rank_candidates` calls, all resamples fitted in one batch.
"""

from __future__ import annotations

import numpy as np
from test_ranking_coverage import population_truth

from blindtest.model import pairing
from blindtest.model.rng import IndexStream
from blindtest.stats.ranking import bootstrap_bounds, davidson_fit, fit_resamples

NAMES = ("a", "b", "c", "d")
TRUTH = np.array([0.6, 0.2, -0.2, -0.6])
NU = 0.5


def _cells(
    gen: np.random.Generator, mode: str, sets: int, prompts: int, answer_sd: float
) -> np.ndarray:
    """(sets, prompts, 3 m) pair cells of the schedule's comparisons."""
    k = len(NAMES)
    comparisons = pairing.schedule(NAMES, prompts, mode, "coverage-schedule")
    prompt = np.array([c.prompt for c in comparisons])
    left = np.array([NAMES.index(c.left) for c in comparisons])
    right = np.array([NAMES.index(c.right) for c in comparisons])
    quality = TRUTH[None, None, :] + answer_sd * gen.standard_normal((sets, prompts, k))
    s_left = quality[:, prompt, left]
    s_right = quality[:, prompt, right]
    a, b = np.exp(s_left), np.exp(s_right)
    u = gen.random(a.shape) * (a + b + NU * np.sqrt(a * b))
    left_won, right_won = u < a, (u >= a) & (u < a + b)
    i, j = np.minimum(left, right), np.maximum(left, right)
    pair = i * k - i * (i + 1) // 2 + (j - i - 1)
    first_won = np.where(left == i, left_won, right_won)
    second_won = np.where(left == i, right_won, left_won)
    outcome = np.where(first_won, 0, np.where(second_won, 1, 2))
    cells = np.zeros((sets, prompts, 3 * (k * (k - 1) // 2)))
    index = 3 * pair[None, :] + outcome
    for s in range(sets):
        np.add.at(cells[s], (prompt, index[s]), 1.0)
    return cells


def coverage(
    mode: str,
    *,
    anchor: int | None,
    sets: int,
    prompts: int,
    answer_sd: float,
    resamples: int = 300,
    seed: int = 11,
) -> tuple[float, float, int]:
    """(marginal coverage of the strengths' intervals, family-wise coverage of the
    simultaneous difference intervals, data sets with an estimate)."""
    k = len(NAMES)
    gen = np.random.default_rng(seed)
    cells = _cells(gen, mode, sets, prompts, answer_sd)
    target = population_truth(TRUTH, NU, answer_sd)  # centred: the mean at 0
    if anchor is not None:
        target = target - target[anchor]
    free = [m for m in range(k) if m != anchor]  # the anchor's interval is 0 by definition
    est, _, ok, _ = davidson_fit(cells.sum(axis=1), k)
    base = est.mean(axis=1, keepdims=True) if anchor is None else est[:, [anchor]]
    est = est - base
    pi, pj = np.triu_indices(k, 1)
    stream = IndexStream(f"candidate-coverage-{seed}", "ranking")
    covered = family = used = 0
    chunk = 50
    for start in range(0, sets, chunk):
        part = range(start, min(sets, start + chunk))
        rows = len(part) * resamples
        picks = stream.take(rows, prompts)
        weights = np.zeros((rows, prompts))
        np.add.at(weights, (np.repeat(np.arange(rows), prompts), picks.ravel()), 1.0)
        boot = np.einsum(
            "rbp,rpc->rbc",
            weights.reshape(len(part), resamples, prompts),
            cells[part.start : part.stop],
        )
        values, failed = fit_resamples(boot.reshape(rows, -1), k, True, anchor)
        values = values.reshape(len(part), resamples, k)
        failed = failed.reshape(len(part), resamples)
        for n, r in enumerate(part):
            if not ok[r]:
                continue
            used += 1
            lo, hi, dlo, dhi, _ = bootstrap_bounds(values[n], failed[n], est[r], 0.95)
            inside = (lo <= target) & (target <= hi)
            covered += int(inside[free].sum())
            truth_diff = target[pi] - target[pj]
            family += int(((dlo <= truth_diff) & (truth_diff <= dhi)).all())
    return covered / (used * len(free)), family / used, used


def test_a_sample_of_pairs_per_prompt_with_answers_of_varying_quality_is_covered() -> None:
    # 3 of the 6 pairs on each of 40 prompts; every answer's quality varies (sd 0.5) and
    # serves the prompt's comparisons it is in. Resampling whole prompts keeps the
    # intervals near 95% (a band of about three Monte Carlo standard errors).
    marginal, family, used = coverage("sample:3", anchor=None, sets=150, prompts=40, answer_sd=0.5)
    assert used >= 145
    assert 0.90 <= marginal <= 0.99
    assert 0.88 <= family <= 0.995


def test_against_a_reference_the_other_strengths_are_covered_with_the_reference_at_zero() -> None:
    marginal, family, used = coverage("reference:d", anchor=3, sets=150, prompts=40, answer_sd=0.0)
    assert used >= 140
    assert 0.90 <= marginal <= 0.99
    assert 0.88 <= family <= 0.995
