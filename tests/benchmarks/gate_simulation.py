"""Seeded, vectorised simulations of the gates' data, shared by the suite's small checks and
the full grid in sim_gates.py beside it.

The model (one run): ``n`` comparisons, each showing the better side A on the left or the right
(a balanced random placement, as the design makes it, or independent fair coins); a per-
comparison preference ``p_i`` for A shared by every judge (a Beta with mean ``p`` and
concentration ``kappa``: a per-comparison difficulty; ``kappa = 0`` for a fixed ``p``); each
judge ties with probability ``tau`` and otherwise prefers A with probability ``p_i``. A judge
with position bias ``beta`` names the left output on a share ``beta`` of its untied picks,
whatever it preferred, so its left share is exactly ``1/2 + beta/2``. With the swap (``passes
= 2``) the judge keeps its preference and its tie across the two passes and the second pass
shows the outputs the other way round (``redraw``: a share of second passes draws its
preference afresh).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


def placements(rng: np.random.Generator, reps: int, n: int, balanced: bool) -> Any:
    """Per run and comparison, whether A is on the left."""
    if not balanced:
        return rng.random((reps, n)) < 0.5
    half = np.zeros((reps, n), dtype=bool)
    half[:, : n // 2] = True
    if n % 2:
        half[:, -1] = rng.random(reps) < 0.5
    return rng.permuted(half, axis=1)


def preferences(rng: np.random.Generator, reps: int, n: int, p: float, kappa: float) -> Any:
    if kappa <= 0:
        return np.full((reps, n), p)
    return rng.beta(p * kappa, (1 - p) * kappa, size=(reps, n))


def position_counts(
    rng: np.random.Generator,
    reps: int,
    n: int,
    judges: int,
    *,
    passes: int = 1,
    bias: float = 0.0,
    p: float = 0.7,
    kappa: float = 2.0,
    tau: float = 0.0,
    balanced: bool = True,
    redraw: float = 0.0,
) -> tuple[IntArray, IntArray]:
    """Per run and comparison, the untied picks naming the left and the right output.
    ``redraw``: the chance that a later pass of the swap draws its preference afresh (an LLM
    judge sampled at a temperature is not always consistent with itself)."""
    a_left = placements(rng, reps, n, balanced)
    p_i = preferences(rng, reps, n, p, kappa)[..., None]
    prefers_a = rng.random((reps, n, judges)) < p_i
    tied = rng.random((reps, n, judges)) < tau
    left = np.zeros((reps, n), dtype=np.int64)
    right = np.zeros((reps, n), dtype=np.int64)
    for number in range(passes):
        shown = a_left if number == 0 else ~a_left
        if number and redraw > 0:
            fresh = rng.random((reps, n, judges)) < p_i
            prefers_a = np.where(rng.random((reps, n, judges)) < redraw, fresh, prefers_a)
        content_left = prefers_a == shown[..., None]
        by_position = rng.random((reps, n, judges)) < bias
        picks_left = (by_position | content_left) & ~tied
        left += picks_left.sum(axis=-1)
        right += (~picks_left & ~tied).sum(axis=-1)
    return left, right


def true_alpha(p: float, tau: float, kappa: float = 0.0) -> float:
    """Krippendorff's alpha in the population for picks coded by position (left, right, tie):
    1 - D_o / D_e with D_e = 1 - sum of squared marginals (1/2 each for left and right of the
    untied share, by the balanced placement) and D_o the chance that two judges differ."""
    shrink = kappa / (kappa + 1.0) if kappa > 0 else 1.0
    same_untied = 1.0 - 2.0 * p * (1.0 - p) * shrink  # E[p_i^2 + (1 - p_i)^2]
    observed = 1.0 - tau**2 - (1.0 - tau) ** 2 * same_untied
    expected = 1.0 - tau**2 - (1.0 - tau) ** 2 / 2.0
    return 1.0 - observed / expected


def agreement_counts(
    rng: np.random.Generator,
    reps: int,
    n: int,
    judges: int,
    *,
    p: float,
    tau: float = 0.0,
    kappa: float = 0.0,
    balanced: bool = True,
) -> tuple[IntArray, IntArray, IntArray]:
    """Per run and comparison, how many judges picked left, right, tie (honest judges, no
    position bias)."""
    left, right = position_counts(
        rng, reps, n, judges, p=p, kappa=kappa, tau=tau, balanced=balanced
    )
    return left, right, judges - left - right


def pattern_table(judges: int) -> tuple[Any, dict[tuple[int, int, int], int]]:
    """Every (left, right, tie) count a comparison of ``judges`` complete judges can show."""
    patterns = [(a, b, judges - a - b) for a in range(judges + 1) for b in range(judges + 1 - a)]
    return np.array(patterns, dtype=np.float64), {p: i for i, p in enumerate(patterns)}


def pattern_frequencies(left: Any, right: Any, ties: Any, judges: int) -> Any:
    """Per run, how many comparisons showed each pattern of `pattern_table`."""
    _, index = pattern_table(judges)
    code = np.zeros(left.shape, dtype=np.int64)
    for (a, b, c), i in index.items():
        code[(left == a) & (right == b) & (ties == c)] = i
    size = len(index)
    offsets = np.arange(left.shape[0])[:, None] * size
    return np.bincount((code + offsets).ravel(), minlength=left.shape[0] * size).reshape(
        left.shape[0], size
    )


def units_of(left: Any, right: Any, ties: Any) -> list[list[str]]:
    """One run's comparisons as the label lists `krippendorff_alpha` takes."""
    return [
        ["left"] * int(a) + ["right"] * int(b) + ["tie"] * int(c)
        for a, b, c in zip(left, right, ties, strict=True)
    ]


def twin_pairs(rng: np.random.Generator, reps: int, pairs: int, words: int, per_word: float) -> Any:
    """Per run and twin pair, whether a sampling side's two draws of a ``words``-word answer
    came back identical, each word agreeing with probability ``per_word``."""
    return rng.random((reps, pairs)) < per_word**words
