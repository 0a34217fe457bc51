"""What the preference export (``bt-analyze --export-preferences``) writes for each answer: the
text the model wrote, the text the judge saw, and the transformations between them.

A judge sees an answer after the design's normalization (``normalization`` in design.json),
in this order: laundering (``launder``: another model's rewrite), ``strip_formatting``,
``identity_strip`` (names and self-identification become ``[redacted]``) and
``truncate_match`` (a trial's answers cut to the shortest one's length, mid-sentence if need
be). Texts like that are fine for a blind judge and corrupt as training data, so the export
holds the original texts by default (``text="original"``) and what the judge saw only on
request (``text="judged"``); either way each row records, per answer, which of the
transformations changed what the judge saw and the SHA-256 of that text (UTF-8), so a row can
be matched to trials.jsonl.

Pure: the design and the responses' rows come in; nothing is opened here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from blindtest.model.normalize import strip_formatting, truncate_match
from blindtest.model.slots import AnsweredRows, answer_slots, original_text

__all__ = ["TEXTS", "TRANSFORMATIONS", "ShownAnswer", "shown_answers"]

#: What an export row's chosen and rejected hold: the models' texts, or the judge's.
TEXTS = ("original", "judged")
#: The normalization steps, in the order they are applied (the design's key names).
TRANSFORMATIONS = ("launder", "strip_formatting", "identity_strip", "truncate_match")


@dataclass(frozen=True, slots=True)
class ShownAnswer:
    """One answer of a trial: what the model wrote (``original``), what the judge saw
    (``judged``) and the transformations that changed it on the way, in the order applied."""

    original: str
    judged: str
    transformations: tuple[str, ...]

    def record(self) -> dict[str, Any]:
        """The export row's account of what the judge saw of this answer."""
        return {
            "sha256": hashlib.sha256(self.judged.encode("utf-8")).hexdigest(),
            "transformations": list(self.transformations),
        }


def _changed(
    design: Mapping[str, Any], generated: Mapping[str, Any], shown: Mapping[str, Any]
) -> list[str]:
    """The steps before truncation that changed this answer: ``shown`` is the row whose text
    the judge saw (the laundered row when the design launders)."""
    norm = design["normalization"]
    steps = []
    source = original_text(shown)
    if norm.get("launder") is not None and source != original_text(generated):
        steps.append("launder")
    if norm.get("strip_formatting") and strip_formatting(source) != source:
        steps.append("strip_formatting")
    if shown.get("identity_stripped"):
        steps.append("identity_strip")
    return steps


def _ok(row: Mapping[str, Any] | None) -> TypeGuard[Mapping[str, Any]]:
    return row is not None and row["status"] == "ok"


def shown_answers(design: Mapping[str, Any], state: AnsweredRows) -> dict[int, list[ShownAnswer]]:
    """Per trial, its answers in display order (as trials.jsonl's options): original text,
    the judge's text and the transformations. Trials with an unanswered slot are left out."""
    launder = design["normalization"].get("launder") is not None
    keys_of = answer_slots(design)  # type: ignore[arg-type]
    found: dict[int, list[ShownAnswer]] = {}
    for entry in design["arrangement"]:
        keys = keys_of(entry)
        generated = [row for key in keys if _ok(row := state.generated.get(key))]
        seen_rows = state.laundered if launder else state.generated
        shown = [row for key in keys if _ok(row := seen_rows.get(key))]
        if len(generated) != len(keys) or len(shown) != len(keys):
            continue  # an unanswered slot: no trial in trials.jsonl either
        before = [str(row["text"]) for row in shown]
        judged: Sequence[str] = before
        if design["normalization"].get("truncate_match"):
            judged = truncate_match(before)
        answers = []
        for made, seen, text, cut in zip(generated, shown, before, judged, strict=True):
            steps = _changed(design, made, seen) + (["truncate_match"] if cut != text else [])
            answers.append(ShownAnswer(original_text(made), cut, tuple(steps)))
        found[int(entry["trial"])] = answers
    return found
