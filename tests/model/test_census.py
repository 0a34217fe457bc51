"""blindtest.model.census: the per-response formatting census and its aggregate per model."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blindtest.model.census import (
    FEATURES,
    REFUSAL_PHRASES,
    Feature,
    ModelCensus,
    TextCensus,
    aggregate_census,
    count_emoji,
    take_census,
)
from blindtest.model.normalize import count_words, strip_formatting

RESPONSE = """# Overview

Here is **the plan** — short and __clear__ -- really. Pages 10–20.

Setup
-----

- one 🚀
- **two**
  * nested ✅
1. first
2. second

| a | b |
|---|---|
| 1 | 2 |

> ## quoted heading

```python
# a comment, not a heading
- not a bullet — not a dash **not bold**
```

    indented — code
"""


def test_take_census_counts_each_feature() -> None:
    census = take_census(RESPONSE)
    assert census == TextCensus(
        words=count_words(RESPONSE),
        bullets=3,
        numbered=2,
        headings=3,
        bold=3,
        em_dashes=2,
        en_dashes=1,
        code_blocks=2,
        tables=1,
        emoji=2,
        refusal=False,
    )


def test_take_census_ignores_code_blocks_and_inline_code() -> None:
    text = "Use `**x** — y` here.\n\n```\n# h\n- b\n**c** — d\n```\n"
    census = take_census(text)
    assert (census.headings, census.bullets, census.bold, census.em_dashes) == (0, 0, 0, 0)
    assert census.code_blocks == 1


@pytest.mark.parametrize(
    ("text", "headings"),
    [
        ("Title\n===", 1),
        ("Title\n---", 1),
        ("Para\n\n---", 0),
        ("- item\n---", 0),
        ("# Title\n---", 1),
        ("#hashtag", 0),
    ],
)
def test_take_census_counts_setext_headings_only_under_paragraph_text(
    text: str, headings: int
) -> None:
    assert take_census(text).headings == headings


@pytest.mark.parametrize(
    ("text", "dashes"),
    [("a—b", 1), ("a — b — c", 2), ("a -- b", 1), ("run --force", 0), ("a——b", 1), ("a―b", 1)],
)
def test_take_census_counts_em_dashes_and_spaced_double_hyphens(text: str, dashes: int) -> None:
    assert take_census(text).em_dashes == dashes


@pytest.mark.parametrize(
    ("text", "emoji"),
    [
        ("plain text", 0),
        ("🚀 launch 🎉", 2),
        ("👍🏽", 1),  # skin tone modifier
        ("👨‍👩‍👧", 1),  # ZWJ family
        ("🇫🇷🇩🇪", 2),  # two flags
        ("1️⃣ first", 1),  # keycap
        ("✓ done ✗ not ★", 3),
        ("→ arrows © marks", 0),
    ],
)
def test_count_emoji_counts_each_pictograph_once(text: str, emoji: int) -> None:
    assert count_emoji(text) == emoji


@pytest.mark.parametrize(
    "text",
    [
        "I can't help with that request.",
        "I’m sorry, but I can’t do that.",
        "Sorry. I cannot assist you with this.",
        "As an AI language model, I don't have opinions.",
        "I'm unable to help here.",
    ],
)
def test_take_census_flags_refusal_phrases(text: str) -> None:
    assert take_census(text).refusal


def test_take_census_does_not_flag_helpful_answers() -> None:
    assert not take_census("I can help with that. Here is how to assist the parser.").refusal


def test_refusal_phrases_are_casefolded_with_straight_apostrophes() -> None:
    assert all(phrase == phrase.casefold() and "’" not in phrase for phrase in REFUSAL_PHRASES)


def test_aggregate_census_totals_rates_and_shares() -> None:
    texts = ["- a\n- b\n\nfirst answer here", "no bullets at all", "- c — d"]
    census = aggregate_census("A", texts, ["stop", "length", "stop"])
    assert census.responses == 3
    assert census.total("bullets") == 3
    assert census.per_response("bullets") == pytest.approx(1.0)
    assert census.share("bullets") == pytest.approx(2 / 3)
    assert census.total("em_dashes") == 1
    assert census.words == 5 + 4 + 2
    assert census.mean_words == pytest.approx(11 / 3)
    assert census.median_words == 4.0
    assert census.cut_by_length == 1
    assert census.refusals == 0


def test_aggregate_census_counts_refusals_by_phrase_and_by_content_filter() -> None:
    census = aggregate_census(
        "B", ["I cannot assist with that.", "", "fine"], ["stop", "content_filter", "stop"]
    )
    assert census.refusals == 2


def test_aggregate_census_of_no_responses_has_no_rates() -> None:
    census = aggregate_census("A", [])
    assert census.responses == 0
    assert census.mean_words is None
    assert census.median_words is None
    assert census.per_response("bold") is None
    assert census.share("bold") is None
    assert census.to_dict()["totals"] == dict.fromkeys(FEATURES, 0)


def test_aggregate_census_refuses_misaligned_finish_reasons() -> None:
    with pytest.raises(ValueError, match="census of 'A' got 2 texts but 1 finish reasons"):
        aggregate_census("A", ["x", "y"], ["stop"])


def test_model_census_to_dict_is_the_audit_shape() -> None:
    census = aggregate_census("A", ["**x** — y", "z"], ["stop", "length"])
    assert census.to_dict() == {
        "model": "A",
        "responses": 2,
        "words": 3,
        "mean_words": 1.5,
        "median_words": 1.5,
        "refusals": 0,
        "cut_by_length": 1,
        "totals": {**dict.fromkeys(FEATURES, 0), "bold": 1, "em_dashes": 1},
        "per_response": {**dict.fromkeys(FEATURES, 0.0), "bold": 0.5, "em_dashes": 0.5},
        "share": {**dict.fromkeys(FEATURES, 0.0), "bold": 0.5, "em_dashes": 0.5},
    }


def test_text_census_to_dict_lists_every_feature() -> None:
    assert list(take_census("x").to_dict()) == ["words", *FEATURES, "refusal"]


def test_census_results_are_frozen() -> None:
    census = aggregate_census("A", ["x"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        census.model = "B"  # type: ignore[misc]
    assert isinstance(census, ModelCensus)


FLATTENED: tuple[Feature, ...] = (
    "bullets",
    "numbered",
    "headings",
    "bold",
    "em_dashes",
    "en_dashes",
    "tables",
)
markdownish = st.lists(
    st.sampled_from(
        ["# h", "- b", "1. n", "**x**", "a — b", "10–20", "| a | b |", "|---|---|", "Title",
         "===", "---", "> q", "```", "    code", "", "text -- more", "__y__", "~~~"]
    ),
    max_size=12,
).map("\n".join)  # fmt: skip


@given(markdownish)
def test_census_finds_nothing_to_count_after_strip_formatting(text: str) -> None:
    census = take_census(strip_formatting(text))
    assert {feature: census.count(feature) for feature in FLATTENED} == dict.fromkeys(FLATTENED, 0)
