"""Comparisons of several candidates as arrays, and the pair numbering the ranking and the
separations share.

The unit is one comparison: two candidates' answers to one prompt, judged once (with a panel,
the panel's one outcome for it). ``result`` is 1 when the first-listed candidate was preferred,
-1 when the second was, 0 for a tie. Pairs (i < j) are numbered as ``np.triu_indices(k, 1)``.
Pure; no I/O.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["Outcomes", "cells", "outcomes", "pair_index", "pairs_of"]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Outcomes:
    """Comparisons as arrays: ``prompt[c]`` (0..P-1, prompts in sorted order of their ids),
    ``first[c]``/``second[c]`` candidate indices, ``result[c]`` 1 when first was preferred,
    -1 when second was, 0 for a tie."""

    candidates: tuple[str, ...]
    prompt_ids: tuple[str, ...]
    prompt: I64
    first: I64
    second: I64
    result: I64


def outcomes(
    candidates: Sequence[str],
    comparisons: Sequence[tuple[Hashable, str, str, str | None]],
) -> Outcomes:
    """Arrays from ``(prompt id, left, right, winner)`` rows (winner None for a tie)."""
    names = tuple(candidates)
    if len(set(names)) != len(names) or len(names) < 2:
        raise ValueError("a ranking needs two or more distinct candidates")
    index = {name: n for n, name in enumerate(names)}
    ids = sorted({str(row[0]) for row in comparisons})
    where = {pid: n for n, pid in enumerate(ids)}
    size = len(comparisons)
    prompt = np.empty(size, dtype=np.int64)
    first = np.empty(size, dtype=np.int64)
    second = np.empty(size, dtype=np.int64)
    result = np.empty(size, dtype=np.int64)
    for c, (pid, left, right, winner) in enumerate(comparisons):
        if left not in index or right not in index:
            raise ValueError(f"unknown candidate in the comparison {left} / {right}")
        if left == right:
            raise ValueError(f"candidate {left!r} compared with itself")
        if winner is not None and winner not in (left, right):
            raise ValueError(f"winner {winner!r} was not in the comparison {left} / {right}")
        prompt[c] = where[str(pid)]
        first[c] = index[left]
        second[c] = index[right]
        result[c] = 0 if winner is None else 1 if winner == left else -1
    return Outcomes(names, tuple(ids), prompt, first, second, result)


def pairs_of(k: int) -> tuple[I64, I64]:
    """The pairs (i, j), i < j, as two index arrays in ``np.triu_indices(k, 1)`` order."""
    upper = np.triu_indices(k, 1)
    return upper[0].astype(np.int64), upper[1].astype(np.int64)


def cells(data: Outcomes) -> tuple[I64, int]:
    """Each comparison's cell ``3 * pair + {0: i preferred, 1: j preferred, 2: tie}`` with
    the pair (i < j) numbered as in ``np.triu_indices``."""
    k = len(data.candidates)
    i = np.minimum(data.first, data.second)
    pair = pair_index(k, data.first, data.second)
    i_won = ((data.result == 1) & (data.first == i)) | ((data.result == -1) & (data.second == i))
    outcome = np.where(data.result == 0, 2, np.where(i_won, 0, 1))
    return (3 * pair + outcome).astype(np.int64), 3 * (k * (k - 1) // 2)


def pair_index(k: int, i: I64, j: I64) -> I64:
    """The number of pair (min(i, j), max(i, j)) in ``np.triu_indices(k, 1)`` order."""
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    index: I64 = lo * k - lo * (lo + 1) // 2 + (hi - lo - 1)
    return index
