"""Each answer read once for all its readers, and read fast: the shortcuts give exactly what the
long way gives.

`classify_text` classifies a text once for `strip_formatting` and the census (or finds it plain,
with no markdown at all); a line without markup is not flattened; em dashes are found from
their dash, not from every space; emphasis patterns open with their delimiter; words are
counted token by token. Each is checked here against the definition it stands in for, on
every short string over the characters that matter or on generated text.
"""

from __future__ import annotations

import itertools
import re
import sys

from hypothesis import example, given
from hypothesis import strategies as st

from blindtest.model import census, normalize
from blindtest.model.census import REFUSAL_CUES, REFUSAL_PHRASES, take_census
from blindtest.model.normalize import (
    EM_DASH,
    ClassifiedText,
    classify_lines,
    classify_text,
    count_em_dashes,
    count_words,
    strip_formatting,
)

# Text rich in what the shortcuts decide on: hyphens and numbers inside and at the start of
# lines, dashes of every kind, runs of spaces and tabs, line breaks, markup characters.
PIECES = [
    "word", "trade-off", "-", "--", "---", "2024.", "3.5", "1)", "10.", " ", "  ", "\t", "\n",
    "\r\n", "\u2014", "\u2014\u2014", "\u2015", " \u2014 ", "\u2013", "*", "**", "_", "~~", "#",
    "> ", "`", "|", "[a](b)", "<br>", "\u00a0", "\u201c", "\U0001f600", "\u200d", "=", "x",
]  # fmt: skip
text = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)


def _read_line_by_line(value: str) -> ClassifiedText:
    return ClassifiedText(value, classify_lines(value))


@given(text)
@example("plain words\n\n\n  and more  \r\nx")
@example("\tindented")
@example("- item")
def test_a_plain_text_gives_what_its_lines_give(value: str) -> None:
    read = classify_text(value)
    assert read.lines is None or read.lines == classify_lines(value)
    assert strip_formatting(read) == strip_formatting(_read_line_by_line(value))
    assert take_census(read) == take_census(_read_line_by_line(value))


@given(text)
def test_one_reading_serves_both_readers(value: str) -> None:
    read = classify_text(value)
    assert strip_formatting(read) == strip_formatting(value)
    assert take_census(read) == take_census(value)


@given(text)
@example("```\n    code\n```")
@example("- a\n    b")
def test_classify_lines_without_fence_or_indent_equals_the_full_classifier(value: str) -> None:
    assert classify_lines(value) == normalize._classify_with_code(value)


@given(st.lists(st.sampled_from([p for p in PIECES if "\n" not in p]), max_size=16).map("".join))
def test_a_line_without_markup_flattens_to_itself_stripped(line: str) -> None:
    if not normalize._has_markup(line):
        assert normalize._flatten_once(line) == line.strip()
        assert not normalize._is_structural(line.strip())


def test_em_dashes_found_from_their_dash_equal_the_pattern_on_every_short_string() -> None:
    alphabet = " \t\u2014\u2015-x)"
    for size in range(7):
        for chars in itertools.product(alphabet, repeat=size):
            value = "".join(chars)
            spans = [match.span() for match in EM_DASH.finditer(value)]
            assert list(normalize._em_dash_spans(value)) == spans, value
            assert count_em_dashes(value) == len(spans), value
            expected = EM_DASH.sub(normalize._dash_to_comma, value)
            assert normalize._em_dashes_to_commas(value) == expected, value


def test_deep_indent_check_equals_the_indent_columns_on_every_short_string() -> None:
    for size in range(8):
        for chars in itertools.product(" \t\nx\r", repeat=size):
            value = "".join(chars)
            deep = any(normalize._indent(body) >= 4 for body, _ in normalize._split_lines(value))
            assert normalize._has_deep_indent(value) == deep, value


def _lookbehind_first(delimiter: str) -> re.Pattern[str]:
    """The emphasis pattern as it was written before it opened with its delimiter."""
    d, c = re.escape(delimiter), re.escape(delimiter[0])
    return re.compile(rf"(?<![\w{c}\\]){d}(?![\s{c}])(.+?)(?<![\s{c}\\]){d}(?![\w{c}])")


@given(text)
@example("***x*** **y** *z* __a__ _b_ ~~c~~ 2*3*4 snake_case **kwargs \\**no**")
def test_emphasis_patterns_match_as_their_lookbehind_form(value: str) -> None:
    for delimiter, pattern in normalize.EMPHASIS_BY_DELIMITER:
        assert pattern.subn(r"\1", value) == _lookbehind_first(delimiter).subn(r"\1", value)


@given(text)
def test_emphasis_in_leaves_out_only_delimiters_the_text_cannot_hold(value: str) -> None:
    full = normalize.EMPHASIS_BY_DELIMITER
    for bold, every in ((False, full), (True, full[:4])):
        kept = normalize.emphasis_in(value, bold=bold)
        assert list(kept) == [pair for pair in every if pair in kept]  # order kept
        assert all(pair[0] not in value for pair in every if pair not in kept)


@given(st.text())
@example("a_b _ __ 1. - \u2014 caf\u00e9 \u65e5 \x1c\x1dx")
def test_count_words_equals_the_word_pattern(value: str) -> None:
    assert count_words(value) == len(re.findall(r"[^\W_]\S*", value))


def test_split_and_the_whitespace_class_agree_on_every_code_point() -> None:
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    assert re.findall(r"\s", every) == [char for char in every if char.isspace()]


def test_the_emoji_floor_holds_every_character_count_emoji_reads() -> None:
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    relevant = census._EMOJI_RELEVANT.findall(every)
    assert relevant
    assert all(census._EMOJI_FLOOR.match(char) for char in relevant)
    assert not any(char.isascii() for char in relevant)


def test_every_refusal_phrase_holds_a_cue() -> None:
    assert all(any(cue in phrase for cue in REFUSAL_CUES) for phrase in REFUSAL_PHRASES)
