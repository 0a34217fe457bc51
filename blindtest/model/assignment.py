"""Which trials each reviewer of a panel judges (``bt-judge --web --panel --per-judge N``),
re-derivable by anyone holding the design: the trials shuffled once with
``DesignRng(seed, "panel")`` and dealt round a ring; and the order each reviewer is asked its
share in (:func:`reviewer_order`: shuffled with ``DesignRng(seed, "order:" + name)``, so
fatigue falls on different comparisons for each reviewer). Pure; shared by the judging page,
which deals the trials, the analysis, which needs to know a reviewer's share is complete, and
the verifier, which re-derives both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from blindtest.errors import BadInput, option
from blindtest.model.rng import DesignRng


def _pool(trials: int | Sequence[int]) -> list[int]:
    """The trials a panel is dealt: 1..``trials``, or those given (a people's sample,
    :func:`blindtest.model.people_sample.people_pool`), in design order."""
    if isinstance(trials, int):
        return list(range(1, trials + 1))
    return sorted(int(t) for t in trials)


def assign(
    seed: str, trials: int | Sequence[int], names: Sequence[str], per_judge: int | None
) -> dict[str, tuple[int, ...]]:
    """The trials each reviewer judges, in design order. ``trials``: how many the design
    has, or the trials people judge when the design samples them (the ring is then those).

    The trials are shuffled once with ``DesignRng(seed, "panel")`` and read as a ring; the
    reviewers, in the order given, take ``per_judge`` consecutive places each. N consecutive
    places of a ring of ``trials`` never repeat a trial (N <= trials), and the panel goes
    round the ring ``len(names) * N / trials`` times, so every trial gets that many
    reviewers, rounded down or up: two or more once N x reviewers >= 2 x trials.
    """
    pool = _pool(trials)
    if per_judge is None:
        return {name: tuple(pool) for name in names}
    size = len(pool)
    if not 1 <= per_judge <= size:
        whose = "the design's trials" if isinstance(trials, int) else "the trials people judge"
        raise BadInput(f"{option('per_judge', per_judge)}: give 1 to {size} ({whose})")
    ring = list(pool)
    DesignRng(seed, "panel").shuffle(ring)
    return {
        name: tuple(sorted(ring[(i * per_judge + k) % size] for k in range(per_judge)))
        for i, name in enumerate(names)
    }


#: How a panel's pick records the order its reviewer was asked in (``panel.order``).
REVIEWER_ORDER = "reviewer"


def reviewer_order(seed: str, judge: str, share: Sequence[int]) -> tuple[int, ...]:
    """The order ``judge`` is asked its ``share`` of the trials in: the share in design order,
    shuffled by ``DesignRng(seed, "order:" + judge)`` (Fisher-Yates, ``blindtest/rng@1``)."""
    ordered = sorted(share)
    DesignRng(seed, f"order:{judge}").shuffle(ordered)
    return tuple(ordered)


def order_of(
    seed: str, trials: int | Sequence[int], judge: str, panel: Mapping[str, object]
) -> tuple[int, ...]:
    """The order ``judge`` was asked its trials in, from the ``panel`` field its picks carry:
    its own (``"order": "reviewer"``), else design order (a panel made before)."""
    share = share_of(seed, trials, judge, panel)
    if panel.get("order") == REVIEWER_ORDER:
        return reviewer_order(seed, judge, share)
    return share


def order_problems(
    rows: Sequence[tuple[int, Mapping[str, Any]]], seed: str, trials: int | Sequence[int]
) -> list[tuple[int, str]]:
    """Where a panel reviewer's picks file breaks the order the reviewer was asked in.

    ``rows`` are (line, record) of one picks file. A reviewer whose picks say ``"order":
    "reviewer"`` is asked its share in :func:`reviewer_order`; a trial it put off (a skip)
    comes back after the others and a change comes later still, but the first record of each
    trial (a pick or a skip) follows that order, sitting after sitting. Returns (line, why)
    for each first record out of order or outside the reviewer's share; a panel made before
    (no ``order``) and any other judge are not checked."""
    panels, touches = _first_touches(rows)
    problems = []
    for judge, first in touches.items():
        panel = panels.get(judge)
        if panel is None or panel.get("order") != REVIEWER_ORDER:
            continue
        place = {n: i for i, n in enumerate(order_of(seed, trials, judge, panel))}
        reached = -1
        for line, trial in first:
            if trial not in place:
                problems.append((line, f"trial {trial} is not in {judge}'s share"))
            elif place[trial] < reached:
                problems.append(
                    (line, f"trial {trial} comes before its turn in {judge}'s own order")
                )
            else:
                reached = place[trial]
    return sorted(problems)


def _first_touches(
    rows: Sequence[tuple[int, Mapping[str, Any]]],
) -> tuple[dict[str, Mapping[str, Any]], dict[str, list[tuple[int, int]]]]:
    """Per judge: the panel its picks name, and (line, trial) of its first record of each
    trial (a pick or a skip; never a failure row), in file order."""
    panels: dict[str, Mapping[str, Any]] = {}
    touches: dict[str, list[tuple[int, int]]] = {}
    seen: set[tuple[str, int]] = set()
    for line, record in rows:
        judge, trial = str(record.get("judge")), record.get("trial")
        if record.get("failed") is True or not isinstance(trial, int):
            continue
        panel = record.get("panel")
        if isinstance(panel, Mapping):
            panels.setdefault(judge, panel)
        if (judge, trial) not in seen:
            seen.add((judge, trial))
            touches.setdefault(judge, []).append((line, trial))
    return panels, touches


def coverage(
    assignment: Mapping[str, Sequence[int]], trials: int | Sequence[int]
) -> dict[int, int]:
    """How many reviewers each trial (of 1..``trials``, or of those given) gets."""
    counts = dict.fromkeys(_pool(trials), 0)
    for numbers in assignment.values():
        for number in numbers:
            counts[number] += 1
    return counts


def share_of(
    seed: str, trials: int | Sequence[int], judge: str, panel: Mapping[str, object]
) -> tuple[int, ...]:
    """The trials ``judge`` was dealt, from the ``panel`` field its picks carry
    (``{"reviewers": [...], "per_judge": N or null}``)."""
    reviewers = [str(name) for name in panel.get("reviewers", []) or []]  # type: ignore[attr-defined]
    per_judge = panel.get("per_judge")
    if judge not in reviewers:
        return tuple(_pool(trials))
    return assign(seed, trials, reviewers, per_judge if isinstance(per_judge, int) else None)[judge]
