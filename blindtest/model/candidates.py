"""Designs with several candidates: the facts every stage reads off such a design.

A two-sided design has the sides "A" and "B" (``design["models"]["A"]``...). A design made
with ``--candidate`` (or ``--sides FILE``, or ``--from-dirs`` with more than two directories)
lists its candidates in ``design["candidates"]`` (k = 2..20, in the order given), keys
``design["models"]`` by candidate name, and records who meets whom in ``design["pairing"]``
(``{"version": "blindtest/pairing@1", "mode": "all" | "reference:NAME" | "sample:M"}``).
Its protocol is preference, and each arrangement entry names both candidates shown:
``{"trial", "prompt_id", "left": NAME, "right": NAME}``.

A candidate answers each prompt once, and that answer serves every comparison of the prompt it
appears in. The answer's slot is owned by the first comparison (in trial order) that shows it,
at the position it is shown there (1 left, 2 right): ``responses.jsonl`` keeps its
``(trial, slot)`` form, each answer is asked for once, and every later comparison of the same
prompt and candidate reads that row.

Pure: no I/O, no click; imports nothing of the stages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "CANDIDATE_NAME",
    "RESERVED_NAMES",
    "TWO_SIDES",
    "answer_owners",
    "candidates_of",
    "check_candidate_name",
    "comparison_sides",
    "has_candidates",
    "sides_of",
]

#: The sides of a two-sided design.
TWO_SIDES = ("A", "B")
#: What a candidate may be called: it names files, columns and report records, so letters,
#: digits and ``_ . + -`` (starting with a letter or digit), at most 64 characters.
CANDIDATE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
#: Words the files already use for something else: a role (``launder``) and the picks.
RESERVED_NAMES = frozenset({"launder", "left", "right", "tie"})


def check_candidate_name(name: str) -> str:
    """``name`` when it may name a candidate, else ValueError (one line, for exit 2)."""
    if not CANDIDATE_NAME.match(name):
        raise ValueError(
            f"candidate name {name!r}: use letters, digits and _ . + - (starting with a "
            "letter or digit), at most 64 characters"
        )
    if name.lower() in RESERVED_NAMES:
        raise ValueError(f"candidate name {name!r} is a word blindtest uses; choose another")
    return name


def candidates_of(design: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The candidates of a several-candidate design, in the order given; None for a two-sided
    design."""
    names = design.get("candidates")
    return None if names is None else tuple(str(name) for name in names)


def has_candidates(design: Mapping[str, Any]) -> bool:
    """Whether the design names its candidates (``--candidate``, ``--sides``, k directories)."""
    return design.get("candidates") is not None


def sides_of(design: Mapping[str, Any]) -> tuple[str, ...]:
    """Every side that answers: ("A", "B"), or the candidates."""
    return candidates_of(design) or TWO_SIDES


def comparison_sides(entry: Mapping[str, Any]) -> tuple[str, str]:
    """(left, right) of one pair or preference arrangement entry."""
    left = str(entry["left"])
    if "right" in entry:
        return left, str(entry["right"])
    return left, ("B" if left == "A" else "A")


def answer_owners(design: Mapping[str, Any]) -> dict[tuple[str, str], tuple[int, int]]:
    """(prompt_id, candidate) -> the (trial, slot) whose row holds that answer: the first
    comparison showing it, at its position there. Empty for a two-sided design (every slot
    there is its own answer)."""
    owners: dict[tuple[str, str], tuple[int, int]] = {}
    if not has_candidates(design):
        return owners
    for entry in design["arrangement"]:
        for slot, side in enumerate(comparison_sides(entry), start=1):
            owners.setdefault((str(entry["prompt_id"]), side), (int(entry["trial"]), slot))
    return owners
