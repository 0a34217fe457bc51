"""Formatting census: per-response counts of the stylistic features that work as tells.

This module owns what each counted feature means and the refusal phrase list; bt-audit writes
the aggregate per model into audit.json and bt-analyze prints it beside the judge's score. It is
pure: texts and finish reasons come in, frozen results go out.

Every count reads prose only, as `blindtest.model.normalize` classifies it: a ``# comment`` or an em
dash inside a code block is code, not style, and inline code spans are masked. The exceptions
are ``words`` and ``code_blocks``, which read the whole text (``words`` is
`blindtest.model.normalize.count_words`, the one definition the length band also uses), and
``refusal``, which reads the whole text too.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Literal

from blindtest.model.normalize import (
    FIRST_GROUP,
    ClassifiedText,
    classify_text,
    count_em_dashes,
    count_words,
    emphasis_in,
    is_atx_heading,
    is_setext_underline,
    is_table_delimiter,
    list_marker,
    mask_code_spans,
)

__all__ = [
    "FEATURES",
    "REFUSAL_CUES",
    "REFUSAL_PHRASES",
    "Feature",
    "ModelCensus",
    "TextCensus",
    "aggregate_census",
    "count_emoji",
    "model_census",
    "take_census",
]

Feature = Literal[
    "bullets",
    "numbered",
    "headings",
    "bold",
    "em_dashes",
    "en_dashes",
    "code_blocks",
    "tables",
    "emoji",
]

# The counted features, in the order reports list them.
FEATURES: tuple[Feature, ...] = (
    "bullets",
    "numbered",
    "headings",
    "bold",
    "em_dashes",
    "en_dashes",
    "code_blocks",
    "tables",
    "emoji",
)

# Matched case-insensitively anywhere in the text, after curly apostrophes are straightened.
# A heuristic with known misses ("I won't do that") and rare false hits (a partial refusal
# inside a helpful answer counts); it is a census column, not a verdict.
REFUSAL_PHRASES: tuple[str, ...] = (
    "i can't help with",
    "i can't help you with",
    "i cannot help with",
    "i cannot help you with",
    "i can't assist",
    "i cannot assist",
    "i'm not able to help",
    "i am not able to help",
    "i'm unable to help",
    "i am unable to help",
    "i won't be able to help",
    "i can't comply",
    "i cannot comply",
    "i must decline",
    "i'm sorry, but i can't",
    "i'm sorry, but i cannot",
    "as an ai language model",
)

# Emoji and pictographic symbols (Unicode blocks, inclusive). Dingbats and Miscellaneous
# Symbols are included on purpose: ✓, ✗, ★ and ⚠ are as much a model's signature as 🚀.
_EMOJI_RANGES: tuple[tuple[int, int], ...] = (
    (0x20E3, 0x20E3),  # combining keycap: "1️⃣" counts once, on its keycap
    (0x231A, 0x231B),
    (0x23E9, 0x23F3),
    (0x23F8, 0x23FA),
    (0x2600, 0x27BF),  # Miscellaneous Symbols, Dingbats
    (0x2B05, 0x2B07),
    (0x2B1B, 0x2B1C),
    (0x2B50, 0x2B50),
    (0x2B55, 0x2B55),
    (0x1F004, 0x1F004),
    (0x1F0CF, 0x1F0CF),
    (0x1F300, 0x1F3FA),  # Miscellaneous Symbols and Pictographs (skin tones excluded below)
    (0x1F400, 0x1F64F),  # ... and Emoticons
    (0x1F680, 0x1F6FF),  # Transport and Map Symbols
    (0x1F7E0, 0x1F7EB),  # coloured circles and squares
    (0x1F900, 0x1F9FF),  # Supplemental Symbols and Pictographs
    (0x1FA70, 0x1FAFF),  # Symbols and Pictographs Extended-A
)
_ZWJ = "\u200d"
_REGIONAL = (0x1F1E6, 0x1F1FF)  # two regional indicators make one flag
#: Any character `count_emoji` looks at: a text without one has no emoji (a C-speed scan that
#: spares the per-character loop on most answers; it was half of bt-audit's time).
_EMOJI_RELEVANT = re.compile(
    "[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in (*_EMOJI_RANGES, _REGIONAL)) + _ZWJ + "]"
)
#: The ZWJ and everything from the keycap up (written as what it is not: a set up to
#: U+10FFFF takes 14 ms to compile): a superset of `_EMOJI_RELEVANT` tested in one step a
#: character instead of twenty, which rules out most answers (dashes, curly quotes and
#: bullets lie below the keycap).
_EMOJI_FLOOR = re.compile("[^\x00-\u200c\u200e-\u20e2]")


def _may_hold_emoji(text: str) -> bool:
    # isascii reads a flag Python keeps on every string: no scan at all.
    return (
        not text.isascii()
        and _EMOJI_FLOOR.search(text) is not None
        and _EMOJI_RELEVANT.search(text) is not None
    )


@dataclass(frozen=True, slots=True)
class TextCensus:
    """The counts for one response."""

    words: int
    bullets: int
    numbered: int
    headings: int
    bold: int
    em_dashes: int
    en_dashes: int
    code_blocks: int
    tables: int
    emoji: int
    refusal: bool

    def count(self, feature: Feature) -> int:
        """The count of one of `FEATURES`."""
        value: int = getattr(self, feature)
        return value

    def to_dict(self) -> dict[str, int | bool]:
        return {
            "words": self.words,
            **{feature: self.count(feature) for feature in FEATURES},
            "refusal": self.refusal,
        }


@dataclass(frozen=True, slots=True)
class ModelCensus:
    """The census of every response of one model, with totals and rates derived from it.

    ``refusals`` counts responses that match a refusal phrase or that the endpoint ended with
    ``finish_reason == "content_filter"``; ``cut_by_length`` counts ``finish_reason ==
    "length"``. Rates and word statistics are None for a model with no responses, because
    0.0 would read as a measurement.
    """

    model: str
    texts: tuple[TextCensus, ...]
    refusals: int
    cut_by_length: int

    @property
    def responses(self) -> int:
        return len(self.texts)

    @property
    def words(self) -> int:
        return sum(text.words for text in self.texts)

    @property
    def mean_words(self) -> float | None:
        return statistics.fmean(t.words for t in self.texts) if self.texts else None

    @property
    def median_words(self) -> float | None:
        return float(statistics.median(t.words for t in self.texts)) if self.texts else None

    def total(self, feature: Feature) -> int:
        """How many times the feature occurs over all responses."""
        return sum(map(attrgetter(feature), self.texts))

    def per_response(self, feature: Feature) -> float | None:
        """Mean occurrences per response."""
        return self.total(feature) / self.responses if self.texts else None

    def share(self, feature: Feature) -> float | None:
        """Fraction of responses with the feature at least once."""
        if not self.texts:
            return None
        return sum(map(bool, map(attrgetter(feature), self.texts))) / self.responses

    def to_dict(self) -> dict[str, Any]:
        """The audit.json form: totals and rates, not the per-response rows."""
        return {
            "model": self.model,
            "responses": self.responses,
            "words": self.words,
            "mean_words": self.mean_words,
            "median_words": self.median_words,
            "refusals": self.refusals,
            "cut_by_length": self.cut_by_length,
            "totals": {feature: self.total(feature) for feature in FEATURES},
            "per_response": {feature: self.per_response(feature) for feature in FEATURES},
            "share": {feature: self.share(feature) for feature in FEATURES},
        }


#: What a line needs for any count but emoji, or for `_unquote` and `mask_code_spans` to do
#: more than strip its start (`_countable`): a marker, delimiter or dash character, a quote, a
#: backtick, a placeholder sentinel; a double hyphen (a dash); or (`_COUNTABLE_FIRST`) a
#: hyphen or a number first (a bullet, rule or underline; a numbered item). A hyphen or a
#: number inside prose ("trade-off") is none of these.
_COUNTABLE = re.compile("[*_+•◦▪‣=#|>`\u2013\u2014\u2015\ufdd0\ufdd1]")
_COUNTABLE_FIRST = re.compile(r"\s*(?:-|[0-9]+[.)])")


def _countable(body: str) -> bool:
    # One character set, "--" and the line's start apart: a pattern of several branches
    # (or one opening with "^") is tried at every position of the line.
    return (
        _COUNTABLE.search(body) is not None
        or "--" in body
        or _COUNTABLE_FIRST.match(body) is not None
    )


def _unquote(body: str) -> str:
    stripped = body.lstrip()
    while stripped.startswith(">"):
        stripped = stripped[1:].lstrip()
    return stripped


def _count_bold(masked: str) -> int:
    count = 0
    for delimiter, pattern in emphasis_in(masked, bold=True):
        if delimiter not in masked:
            continue  # the pattern needs its delimiter (skip the scan)
        # Replace by the content so "***x***" counts once and nested bold is still seen.
        masked, found = pattern.subn(FIRST_GROUP, masked)
        count += found
    return count


def count_emoji(text: str) -> int:
    """Emoji and pictographs; a ZWJ sequence, a flag or a keycap counts as one."""
    if not _may_hold_emoji(text):
        return 0
    count = 0
    joined = regional = False
    for char in text:
        point = ord(char)
        if char == _ZWJ:
            joined = True
            continue
        if _REGIONAL[0] <= point <= _REGIONAL[1]:
            count += 0 if regional else 1
            regional, joined = not regional, False
            continue
        regional = False
        if any(lo <= point <= hi for lo, hi in _EMOJI_RANGES):
            count += 0 if joined else 1
        joined = False
    return count


#: Any of the phrases, as one scan instead of one per phrase.
_REFUSAL = re.compile("|".join(map(re.escape, REFUSAL_PHRASES)))
#: Every phrase holds one of these (tests/model/test_read_once.py checks it): a text
#: without any holds no phrase, and a few plain substring searches say so faster than the
#: pattern, which tries each phrase at every "i" and "a" of the text.
REFUSAL_CUES = (
    "can't",
    "cannot",
    "not able",
    "unable",
    "won't be able",
    "must decline",
    "language model",
)


def _is_refusal(text: str) -> bool:
    folded = text.casefold().replace("\u2019", "'").replace("\u2018", "'")
    return any(cue in folded for cue in REFUSAL_CUES) and _REFUSAL.search(folded) is not None


def take_census(text: str | ClassifiedText) -> TextCensus:
    """Count the formatting features of one response (definitions in the module docstring).
    ``text`` may come classified (`classify_text`) when another reader needs its lines too."""
    read = text if isinstance(text, ClassifiedText) else classify_text(text)
    text = read.text
    words, refusal = count_words(text), _is_refusal(text)
    counts = dict.fromkeys(FEATURES, 0)
    if read.lines is None:
        # A plain text (no markdown at all) has only prose lines, none countable; a line
        # break ends any emoji sequence, so the whole text counts its lines' emoji.
        counts["emoji"] = count_emoji(text)
        return TextCensus(words=words, refusal=refusal, **counts)
    # Emoji are looked for line by line only in a text that holds an emoji character at all.
    emoji = _may_hold_emoji(text)
    previous = ""  # the previous prose line, unquoted and masked; "" after blank or code
    for line in read.lines:
        if line.kind == "code":
            counts["code_blocks"] += int(line.opens_block)
            previous = ""
            continue
        if not _countable(line.body):
            # No feature below can occur in this line, and unquoting and masking only strip
            # its start (a shortcut for plain prose lines).
            body = line.body.lstrip()
            if emoji:
                counts["emoji"] += count_emoji(body)
            previous = body if body.strip() else ""
            continue
        body = mask_code_spans(_unquote(line.body))
        marker = list_marker(body)
        if is_setext_underline(body) and _paragraph_text(previous):
            counts["headings"] += 1
        elif marker is not None:
            counts["bullets" if marker == "bullet" else "numbered"] += 1
        elif is_atx_heading(body):
            counts["headings"] += 1
        if is_table_delimiter(body) and "|" in previous:
            counts["tables"] += 1
        _count_inline(body, counts, emoji)
        previous = body if body.strip() else ""
    return TextCensus(words=words, refusal=refusal, **counts)


def _count_inline(body: str, counts: dict[Feature, int], emoji: bool) -> None:
    counts["bold"] += _count_bold(body)
    counts["em_dashes"] += count_em_dashes(body)
    counts["en_dashes"] += body.count("\u2013")
    if emoji:
        counts["emoji"] += count_emoji(body)


def _paragraph_text(previous: str) -> bool:
    # A setext underline makes a heading only under paragraph text (CommonMark): under a
    # list item, a heading, a table row or nothing, "---" is a rule and "===" is text.
    return bool(
        previous.strip()
        and list_marker(previous) is None
        and not is_atx_heading(previous)
        and not is_setext_underline(previous)
        and "|" not in previous
    )


def aggregate_census(
    model: str, texts: Sequence[str], finish_reasons: Sequence[str | None] | None = None
) -> ModelCensus:
    """The census of one model's responses; ``finish_reasons`` align with ``texts``."""
    return model_census(model, [take_census(text) for text in texts], finish_reasons)


def model_census(
    model: str,
    censuses: Sequence[TextCensus],
    finish_reasons: Sequence[str | None] | None = None,
) -> ModelCensus:
    """`aggregate_census` of responses already counted (`take_census`), for a caller that
    reads each text once for several purposes; ``finish_reasons`` align with ``censuses``."""
    reasons: Sequence[str | None] = (
        [None] * len(censuses) if finish_reasons is None else finish_reasons
    )
    if len(reasons) != len(censuses):
        raise ValueError(
            f"census of {model!r} got {len(censuses)} texts but {len(reasons)} finish reasons"
        )
    refusals = sum(
        1
        for census, reason in zip(censuses, reasons, strict=True)
        if census.refusal or reason == "content_filter"
    )
    return ModelCensus(
        model=model,
        texts=tuple(censuses),
        refusals=refusals,
        cut_by_length=sum(1 for reason in reasons if reason == "length"),
    )
