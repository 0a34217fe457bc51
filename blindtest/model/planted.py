"""The sensitivity check's planted comparisons: which trials they are, and the degraded copy
each shows. Pure: no file, no socket; imports no stage module.

A design with ``--decide`` and ``--sensitivity N`` plants N comparisons of the champion's own
answer against a degraded copy of it (assay sensitivity, ICH E10: a judge that cannot see
this regression cannot back a claim that nothing regressed). Each is an arrangement entry of
its own, on a prompt of its own, marked like a hidden control:
``"planted": {"side": CHAMPION, "original": 1 | 2, "degradation": "cut" | "drop" |
"shuffle"}`` (with ``left`` the champion, and with candidates ``right`` too). The judge sees
it as any other comparison; ``trials.jsonl`` never says which it is.

The champion answers the planted prompt once (the slot at the ``original`` position; with
candidates, the one answer slot its comparison owns); the other position shows
:func:`degrade` of the text the judge would have seen for that answer (after every
normalization, so truncate-match and laundering do not undo it). No model is called for the
copy, and bt-verify re-derives it from the answer and the design seed.

Degradations (``blindtest/degrade@1``; the units are sentences: a run of text ending in
``.``, ``!``, ``?`` or a line break, with the spaces after it; a list number such as ``2.``
belongs to the sentence after it):

* ``cut``: the answer cut short at a word boundary, keeping the first 40% to 60% of its words
  (the share drawn per trial), without an ellipsis;
* ``drop``: about a third of the sentences left out (at least one, never the first), the
  others in order;
* ``shuffle``: the sentences in a drawn order that differs from the original.

An answer of fewer than three sentences cannot lose one to ``drop`` or be reordered by
``shuffle`` and still read as the same answer, so those become ``cut``; an answer of fewer
than four words is shown as it is (a degenerate check the judge cannot pass).
Every draw comes from ``DesignRng(seed, "degrade:<trial>")``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from blindtest.model.rng import DesignRng

__all__ = [
    "DEGRADATIONS",
    "DEGRADE_VERSION",
    "applied_degradation",
    "degrade",
    "degraded_position",
    "planted_of",
    "planted_trials",
]

DEGRADE_VERSION = "blindtest/degrade@1"
#: The degradations, in the order the design's draw indexes them.
DEGRADATIONS = ("cut", "drop", "shuffle")
#: Fewer sentences than this: drop and shuffle become cut.
_MIN_SENTENCES = 3
_MIN_WORDS = 4
_LIST_NUMBER = re.compile(r"\s*\d+[.)]\s*")
_SENTENCE = re.compile(r".*?(?:[.!?]+[\"')\]]*(?=\s|$)|\n|$)\s*", re.DOTALL)


def planted_of(entry: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``planted`` record of an arrangement entry, or None for any other comparison."""
    found = entry.get("planted")
    return found if isinstance(found, Mapping) else None


def planted_trials(design: Mapping[str, Any]) -> dict[int, Mapping[str, Any]]:
    """Planted trial -> its ``planted`` record (empty for a design without)."""
    return {
        int(entry["trial"]): found
        for entry in design["arrangement"]
        if (found := planted_of(entry)) is not None
    }


def degraded_position(planted: Mapping[str, Any]) -> int:
    """The display position (1 left, 2 right) of the degraded copy."""
    return 2 if int(planted["original"]) == 1 else 1


def _sentences(text: str) -> list[str]:
    parts: list[str] = []
    for part in _SENTENCE.findall(text):
        if not part.strip():
            continue
        if parts and _LIST_NUMBER.fullmatch(parts[-1]):
            parts[-1] += part  # "1. " numbers the sentence after it
        else:
            parts.append(part)
    return parts


def applied_degradation(text: str, how: str) -> str:
    """What :func:`degrade` does to ``text`` when the design drew ``how``: ``how`` itself, or
    ``cut`` for an answer too short to lose or reorder a sentence, or ``none`` for one of
    fewer than four words."""
    if how not in DEGRADATIONS:
        raise ValueError(f"degradation must be one of {', '.join(DEGRADATIONS)}, got {how!r}")
    if len(text.split()) < _MIN_WORDS:
        return "none"
    if how != "cut" and len(_sentences(text)) < _MIN_SENTENCES:
        return "cut"
    return how


def _cut(text: str, rng: DesignRng) -> str:
    words = list(re.finditer(r"\S+", text))
    share = 40 + rng.randbelow(21)  # percent of the words kept, 40..60
    keep = max(1, min(len(words) - 1, round(len(words) * share / 100)))
    return text[: words[keep - 1].end()]


def _split(sentences: list[str]) -> tuple[list[str], list[str]]:
    """Each sentence's words and the separator after it (spaces, line breaks)."""
    bodies = [s.rstrip() for s in sentences]
    return bodies, [s[len(b) :] for s, b in zip(sentences, bodies, strict=True)]


def _drop(sentences: list[str], rng: DesignRng) -> str:
    # Never the first sentence: an answer without its opening reads as another answer.
    later = list(range(1, len(sentences)))
    rng.shuffle(later)
    gone = set(later[: max(1, len(sentences) // 3)])
    bodies, seps = _split(sentences)
    kept: list[list[str]] = []
    for index, (body, sep) in enumerate(zip(bodies, seps, strict=True)):
        if index not in gone:
            kept.append([body, sep])
        elif "\n" in sep and "\n" not in kept[-1][1]:
            kept[-1][1] = sep  # a paragraph's break survives its last sentence
    return "".join(body + sep for body, sep in kept).rstrip()


def _shuffle(sentences: list[str], rng: DesignRng) -> str:
    order = list(range(len(sentences)))
    rng.shuffle(order)
    if order == sorted(order):  # the draw kept the order: move the first sentence last
        order = order[1:] + order[:1]
    # The layout (each separator in its place) stays; the sentences move through it.
    bodies, seps = _split(sentences)
    return "".join(bodies[i] + sep for i, sep in zip(order, seps, strict=True)).rstrip()


def degrade(text: str, how: str, seed: str, trial: int) -> str:
    """The degraded copy of ``text`` shown on planted trial ``trial`` (see the module
    docstring; the draws come from the design ``seed`` and the trial number)."""
    applied = applied_degradation(text, how)
    if applied == "none":
        return text
    rng = DesignRng(seed, f"degrade:{trial}")
    if applied == "cut":
        return _cut(text, rng)
    sentences = _sentences(text)
    return _drop(sentences, rng) if applied == "drop" else _shuffle(sentences, rng)
