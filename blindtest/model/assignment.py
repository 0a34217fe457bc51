"""Which trials each reviewer of a panel judges (``bt-judge --web --panel --per-judge N``),
re-derivable by anyone holding the design: the trials shuffled once with
``DesignRng(seed, "panel")`` and dealt round a ring. Pure; shared by the judging page, which
deals the trials, and the analysis, which needs to know a reviewer's share is complete.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from blindtest.errors import BadInput, option
from blindtest.model.rng import DesignRng


def assign(
    seed: str, trials: int, names: Sequence[str], per_judge: int | None
) -> dict[str, tuple[int, ...]]:
    """The trials each reviewer judges, in design order.

    The trials are shuffled once with ``DesignRng(seed, "panel")`` and read as a ring; the
    reviewers, in the order given, take ``per_judge`` consecutive places each. N consecutive
    places of a ring of ``trials`` never repeat a trial (N <= trials), and the panel goes
    round the ring ``len(names) * N / trials`` times, so every trial gets that many
    reviewers, rounded down or up: two or more once N x reviewers >= 2 x trials.
    """
    if per_judge is None:
        return {name: tuple(range(1, trials + 1)) for name in names}
    if not 1 <= per_judge <= trials:
        raise BadInput(
            f"{option('per_judge', per_judge)}: give 1 to {trials} (the design's trials)"
        )
    ring = list(range(1, trials + 1))
    DesignRng(seed, "panel").shuffle(ring)
    return {
        name: tuple(sorted(ring[(i * per_judge + k) % trials] for k in range(per_judge)))
        for i, name in enumerate(names)
    }


def coverage(assignment: Mapping[str, Sequence[int]], trials: int) -> dict[int, int]:
    """How many reviewers each trial gets."""
    counts = dict.fromkeys(range(1, trials + 1), 0)
    for numbers in assignment.values():
        for number in numbers:
            counts[number] += 1
    return counts


def share_of(seed: str, trials: int, judge: str, panel: Mapping[str, object]) -> tuple[int, ...]:
    """The trials ``judge`` was dealt, from the ``panel`` field its picks carry
    (``{"reviewers": [...], "per_judge": N or null}``)."""
    reviewers = [str(name) for name in panel.get("reviewers", []) or []]  # type: ignore[attr-defined]
    per_judge = panel.get("per_judge")
    if judge not in reviewers:
        return tuple(range(1, trials + 1))
    return assign(seed, trials, reviewers, per_judge if isinstance(per_judge, int) else None)[judge]
