"""The candidates of a design, the facts every stage reads off any design.

Every design compares k >= 2 candidates. A two-sided design (``--a`` and ``--b``) has the two
candidates "A" and "B" (``design["models"]["A"]``...; its arrangement entries name the one on
the left, ``left: "A"``). A design made with ``--candidate`` (or ``--sides FILE``, or
``--from-dirs`` with more than two directories) lists its candidates in
``design["candidates"]`` (k = 2..20, in the order given), keys ``design["models"]`` by
candidate name, and records who meets whom in ``design["pairing"]``
(``{"version": "blindtest/pairing@1", "mode": "all" | "reference:NAME" | "sample:M"}``);
its protocol is preference, and each arrangement entry names both candidates shown:
``{"trial", "prompt_id", "left": NAME, "right": NAME}``. :func:`candidates_of` gives the
candidates of either, :func:`comparison_sides` the two shown in one comparison: a stage that
needs no more than these has one path for every k.

What really differs between the two forms is where the answers live. A design that names its
candidates asks each candidate once per prompt, and that answer serves every comparison of
the prompt it appears in (:func:`shares_answers`): the answer's slot is owned by the first
comparison (in trial order) that shows it, at the position it is shown there (1 left, 2
right), ``responses.jsonl`` keeps its ``(trial, slot)`` form, and every later comparison of
the same prompt and candidate reads that row. In a two-sided design every slot is its own
answer (a prompt is used once; a triangle and a hidden control show one side twice, each an
independent draw).

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
    "has_side_options",
    "role_words",
    "shares_answers",
    "shown_name",
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


def candidates_of(design: Mapping[str, Any]) -> tuple[str, ...]:
    """The candidates of any design, in its order: ("A", "B") for a two-sided design, else
    the names ``design["candidates"]`` lists."""
    names = design.get("candidates")
    return TWO_SIDES if names is None else tuple(str(name) for name in names)


def shares_answers(design: Mapping[str, Any]) -> bool:
    """Whether a candidate answers each prompt once, that answer serving every comparison of
    the prompt (a design that names its candidates), rather than every slot being its own
    answer (a two-sided design). The one fact about where answers live that the stages
    (slots, generation, verify) need; never a reason to analyse or show a design otherwise."""
    return design.get("candidates") is not None


def has_side_options(design: Mapping[str, Any]) -> bool:
    """Whether the design is the two-sided form, whose candidates are the sides A and B with
    options of their own (``--a``, ``--a-url``, ``--price-a``, ``--a-concurrency``): what an
    option is called and what a line calls a candidate follow from it, nothing else."""
    return not shares_answers(design)


def shown_name(design: Mapping[str, Any], name: str) -> str:
    """What a report calls a candidate: ``A (label)`` for a side of a two-sided design (its
    label, else its model); a named candidate by its name, with the ``label`` its side
    configuration gives (``bt-design --sides``) when that says something else:
    ``alpha (prompt v2)``."""
    spec = design["models"][name]
    if not has_side_options(design):
        label = str(spec.get("label") or "").strip()
        return f"{name} ({label})" if label and label != name else name
    return f"{name} ({spec.get('label') or spec['model']})"


def role_words(design: Mapping[str, Any], name: str) -> str:
    """How a line names one candidate: ``side A`` of a two-sided design (whose sides have their
    own options, ``--a``, ``--price-a``), ``candidate alpha`` otherwise."""
    return f"side {name}" if has_side_options(design) else f"candidate {name}"


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
    if not shares_answers(design):
        return owners
    for entry in design["arrangement"]:
        for slot, side in enumerate(comparison_sides(entry), start=1):
            owners.setdefault((str(entry["prompt_id"]), side), (int(entry["trial"]), slot))
    return owners
