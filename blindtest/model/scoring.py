"""Correctness per protocol, in one place: whether a pick found the odd response (triangle),
gave nicknames consistent with the true mapping (pair), or which side it preferred (preference).

Takes the design (its arrangement is the answer key) and a pick's trial and value, so the judge,
the audit's bots and the analysis score a pick the same way. Pure; imports no stage module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from blindtest.model.candidates import comparison_sides
from blindtest.model.protocols import refuse_abstention
from blindtest.rundir.types import DesignRecord

__all__ = [
    "arrangement_entry",
    "option1_side",
    "pair_consistent",
    "pair_consistent_count",
    "preferred_side",
    "triangle_correct",
]


def arrangement_entry(design: DesignRecord, trial: int) -> Mapping[str, Any]:
    """The arrangement entry of ``trial`` (the design builder writes them in trial order)."""
    arrangement = design["arrangement"]
    if 0 < trial <= len(arrangement) and arrangement[trial - 1]["trial"] == trial:
        return arrangement[trial - 1]
    # The schema does not force the order (the design builder does), and the analysis of a
    # design with hidden controls sees the real trials only.
    return next(e for e in arrangement if e["trial"] == trial)


def triangle_correct(design: DesignRecord, trial: int, pick: int | str) -> bool:
    """Whether a triangle pick found the odd response."""
    return bool(pick == arrangement_entry(design, trial)["odd_position"])


def option1_side(design: DesignRecord, trial: int) -> str:
    """Pair and preference: the side ("A"/"B") shown as option 1 (on the left)."""
    return str(arrangement_entry(design, trial)["left"])


def preferred_side(design: DesignRecord, trial: int, pick: int | str) -> str | None:
    """Preference: the side ("A"/"B") the judge preferred, or None for a tie. A "both bad"
    pick (an abstention) is refused: the picks reader keeps it out of what is scored."""
    refuse_abstention(pick)
    entry = arrangement_entry(design, trial)
    # A hidden control shows one side twice; a planted comparison one answer and its copy.
    if pick == "tie" or "control" in entry or "planted" in entry:
        return None
    left, right = comparison_sides(entry)
    return left if pick == "left" else right


def pair_consistent(design: DesignRecord, trial: int, pick: int | str, first: str) -> bool:
    """Pair: whether the nickname given to option 1 follows the mapping ``first`` = A.

    A judge's nicknames are their own; ``first`` is the one taken to mean A (the judge's first
    nickname), so a judge who inverts them is consistent on no trial, which the two-sided test
    counts as discrimination too.
    """
    return (pick == first) == (option1_side(design, trial) == "A")


def pair_consistent_count(
    design: DesignRecord, picks: Iterable[tuple[int, int | str]], first: str
) -> int:
    """How many (trial, pick) pairs are consistent with ``first`` = A."""
    return sum(pair_consistent(design, trial, pick, first) for trial, pick in picks)
