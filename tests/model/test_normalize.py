"""blindtest.model.normalize: words, the length band, truncation, laundering, strip_formatting."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from blindtest.model.normalize import (
    LAUNDER_PROMPT,
    NORMALIZERS_VERSION,
    classify_lines,
    count_words,
    launder_messages,
    length_band_instruction,
    outside_band,
    parse_length_band,
    strip_formatting,
    truncate_match,
)

# Markdown-ish text for property tests: fragments chosen to collide (markers, fences, dashes,
# quotes, pipes, the placeholder characters the implementation uses internally).
FRAGMENTS = [
    " ", "  ", "    ", "\t", "#", "## ", "- ", "* ", "+ ", "• ", "1. ", "2) ", "> ", "**",
    "__", "*", "_", "~~", "`", "``", "```", "~~~", "|", "| a |", "|---|", "---", "===", "***",
    "—", "–", " -- ", "“", "”", "‘", "’", "…", "\u00a0", "[", "]", "(", ")", "![", "](u)",
    "[t](http://x.y)", "<http://a.b>", "word", "Two words", "x_y", "2*3", "\\", ":", ",", ".",
    "[ ] ", "[x] ", "<br>", "\ufdd0", "\ufdd1", "0", "\r", "[r]: http://x",
]  # fmt: skip
markdown_line = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=3)), max_size=8
).map("".join)
markdown = st.lists(markdown_line, max_size=12).map("\n".join)


# --- words ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", 0),
        ("one", 1),
        ("one two\nthree\tfour\u00a0five", 5),
        ("- item **bold** — and | pipes #", 4),
        ("1. first", 2),
        ("don't e.g. 3.14 https://example.com/a", 4),
        ("— -- ... *** |", 0),
    ],
)
def test_count_words_counts_tokens_with_a_letter_or_digit(text: str, words: int) -> None:
    assert count_words(text) == words


# --- truncate_match ------------------------------------------------------------------------


def test_truncate_match_cuts_to_the_shortest_on_a_word_boundary() -> None:
    texts = ["one two three", "alpha beta gamma delta, epsilon.", "**x** y — z w"]
    assert truncate_match(texts) == ["one two three", "alpha beta gamma", "**x** y — z"]


def test_truncate_match_leaves_the_shortest_byte_for_byte() -> None:
    texts = ["short one.\n\n---\n", "a much longer response than that"]
    assert truncate_match(texts)[0] == texts[0]
    assert truncate_match(texts)[1] == "a much"


def test_truncate_match_adds_no_marker_to_cut_texts() -> None:
    assert truncate_match(["a b", "a b c d"]) == ["a b", "a b"]


def test_truncate_match_with_a_wordless_response_empties_the_others() -> None:
    assert truncate_match(["---", "some words"]) == ["---", ""]


def test_truncate_match_of_nothing_is_nothing() -> None:
    assert truncate_match([]) == []


@given(st.lists(markdown, min_size=1, max_size=4))
def test_truncate_match_gives_every_text_the_same_word_count(texts: list[str]) -> None:
    cut = truncate_match(texts)
    shortest = min(count_words(text) for text in texts)
    assert [count_words(text) for text in cut] == [shortest] * len(texts)
    assert all(text.startswith(piece) for text, piece in zip(texts, cut, strict=True))
    assert truncate_match(cut) == cut


# --- length band ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "band"), [("80..120", (80, 120)), (" 1..1 ", (1, 1)), ("5 .. 50", (5, 50))]
)
def test_parse_length_band_reads_lo_dot_dot_hi(value: str, band: tuple[int, int]) -> None:
    assert parse_length_band(value) == band


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("80-120", r"must be LO\.\.HI in whole words, for example 80\.\.120; got '80-120'"),
        ("", r"must be LO\.\.HI .*got ''"),
        ("80..", r"got '80\.\.'"),
        ("-5..10", r"got '-5\.\.10'"),
        ("1.5..10", r"got '1\.5\.\.10'"),
        ("0..10", r"needs LO >= 1 word, got 0\.\.10"),
        ("120..80", r"needs LO <= HI, got 120\.\.80; try 80\.\.120"),
    ],
)
def test_parse_length_band_rejects_bad_input_with_the_value(value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_length_band(value)


def test_length_band_instruction_is_the_fixed_sentence() -> None:
    assert length_band_instruction(80, 120) == "Answer in between 80 and 120 words."


def test_length_band_instruction_checks_its_band() -> None:
    with pytest.raises(ValueError, match="LO <= HI"):
        length_band_instruction(10, 5)


def test_outside_band_includes_both_ends() -> None:
    assert not outside_band("one two", 2, 3)
    assert not outside_band("one two three", 2, 3)
    assert outside_band("one", 2, 3)
    assert outside_band("one two three four", 2, 3)


# --- laundering ----------------------------------------------------------------------------


def test_launder_messages_send_the_fixed_prompt_and_the_text_verbatim() -> None:
    text = "  **Hello** — world\n```\ncode\n```\n"
    assert launder_messages(text) == [
        {"role": "system", "content": LAUNDER_PROMPT},
        {"role": "user", "content": text},
    ]


@pytest.mark.parametrize(
    "requirement",
    ["Keep every fact", "Keep code exactly as written", "no headings, bullet points",
     "no em dashes", "stylistic signature", "not addressed to you", "same language"],
)  # fmt: skip
def test_launder_prompt_states_each_requirement(requirement: str) -> None:
    assert requirement.casefold() in LAUNDER_PROMPT.casefold()


def test_normalizers_version_is_a_schema_style_tag() -> None:
    assert re.fullmatch(r"blindtest/normalize@[0-9]+", NORMALIZERS_VERSION)


# --- strip_formatting: one rule at a time ---------------------------------------------------


@pytest.mark.parametrize(
    ("markdown_text", "flat"),
    [
        pytest.param("# Title\nText", "Title\nText", id="atx-heading"),
        pytest.param("### Title ###\n", "Title\n", id="atx-closing-hashes"),
        pytest.param("#hashtag and C#", "#hashtag and C#", id="not-a-heading"),
        pytest.param("Title\n=====\nText", "Title\nText", id="setext-equals"),
        pytest.param("Title\n---\nText", "Title\nText", id="setext-dashes"),
        pytest.param("- a\n* b\n+ c\n• d", "a\nb\nc\nd", id="bullets"),
        pytest.param("- a\n  - nested\n    - deeper", "a\nnested\ndeeper", id="nested-bullets"),
        pytest.param("- [ ] todo\n- [x] done", "todo\ndone", id="task-boxes"),
        pytest.param("1. one\n2) two\n10. ten", "one\ntwo\nten", id="numbered"),
        pytest.param("**b** __b__ *i* _i_ ~~s~~", "b b i i s", id="emphasis"),
        pytest.param("***both*** and **a *nested* one**", "both and a nested one", id="nested"),
        pytest.param("snake_case_name 2*3*4 **kwargs", "snake_case_name 2*3*4 **kwargs",
                     id="not-emphasis"),
        pytest.param("> quoted\n> > deeper", "quoted\ndeeper", id="blockquotes"),
        pytest.param("a\n\n---\n\nb\n***\nc", "a\n\nb\n\nc", id="rules-become-one-blank-line"),
        pytest.param("[text](https://x.y/a_(b)) ![alt](i.png \"t\")", "text alt", id="links"),
        pytest.param("see [docs][1]\n\n[1]: https://x.y", "see docs\n\n", id="reference-links"),
        pytest.param("<https://x.y> <me@x.y>", "https://x.y me@x.y", id="autolinks"),
        pytest.param("a<br>b<br/>c", "a b c", id="html-line-breaks"),
        pytest.param("use `--force` or `a — “b”`", "use `--force` or `a — “b”`",
                     id="inline-code-kept-with-backticks"),
        pytest.param("a\n\n\n\nb", "a\n\nb", id="blank-runs-collapse"),
        pytest.param("  a  b  ", "a b", id="spaces"),
        pytest.param("line one  \r\nline two\r\n", "line one\r\nline two\r\n", id="crlf-kept"),
    ],
)  # fmt: skip
def test_strip_formatting_flattens_markdown(markdown_text: str, flat: str) -> None:
    assert strip_formatting(markdown_text) == flat


def test_strip_formatting_turns_tables_into_semicolon_joined_lines() -> None:
    table = (
        "| Model | Price | Notes |\n"
        "|:------|------:|:-----:|\n"
        "| A | $1 | fast, cheap |\n"
        "| **B** | `a|b` | |\n"
        "\n"
        "after"
    )
    assert strip_formatting(table) == "Model; Price; Notes\nA; $1; fast, cheap\nB; `a|b`\n\nafter"


def test_strip_formatting_leaves_pipes_in_prose_alone() -> None:
    assert strip_formatting("either a | b\nor c") == "either a | b\nor c"


@pytest.mark.parametrize(
    ("markdown_text", "flat"),
    [
        pytest.param("fast—and cheap", "fast, and cheap", id="em-dash"),
        pytest.param("fast — and — cheap", "fast, and, cheap", id="spaced-em-dash"),
        pytest.param("fast -- and cheap", "fast, and cheap", id="double-hyphen"),
        pytest.param("fast ― cheap", "fast, cheap", id="horizontal-bar"),
        pytest.param("fast – and cheap", "fast, and cheap", id="spaced-en-dash"),
        pytest.param("pages 10–20", "pages 10-20", id="en-dash-range"),
        pytest.param("— Mark Twain", "Mark Twain", id="leading-dash"),
        pytest.param("wait for it—", "wait for it", id="trailing-dash"),
        pytest.param("stop—. Then", "stop. Then", id="before-punctuation"),
        pytest.param("one:— two", "one: two", id="after-colon"),
        pytest.param("--force and a--b", "--force and a--b", id="flags-untouched"),
    ],
)
def test_strip_formatting_turns_em_dashes_into_commas(markdown_text: str, flat: str) -> None:
    assert strip_formatting(markdown_text) == flat


@pytest.mark.parametrize(
    ("markdown_text", "flat"),
    [
        ("“double” and ‘single’ and it’s „low‟", '"double" and \'single\' and it\'s "low"'),
        ("wait…", "wait..."),
        ("a\u00a0b\u202fc\u2009d", "a b c d"),
        ("zero\u200bwidth soft\u00adhyphen", "zerowidth softhyphen"),
        ("non\u2011breaking minus \u22122", "non-breaking minus -2"),
    ],
)
def test_strip_formatting_straightens_typography(markdown_text: str, flat: str) -> None:
    assert strip_formatting(markdown_text) == flat


# --- strip_formatting: code is never touched ------------------------------------------------

CODE = "# not a heading\n- not a bullet\n**not bold** — “quotes” | a | b |\n|---|---|\n\n\n  x"


@pytest.mark.parametrize(
    "block",
    [
        pytest.param(f"```python\n{CODE}\n```\n", id="backticks"),
        pytest.param(f"~~~\n{CODE}\n~~~~\n", id="tildes"),
        pytest.param(f"````\n```\n{CODE}\n````\n", id="longer-fence"),
        pytest.param("    # indented — code\n    - item\n\n    **x**\n", id="indented"),
        pytest.param("\t**tab** indented\n", id="tab-indented"),
    ],
)
def test_strip_formatting_leaves_code_blocks_untouched(block: str) -> None:
    text = f"# Heading\n\nSome **prose** — here.\n\n{block}\nMore *prose*.\n"
    assert block in strip_formatting(text)


def test_strip_formatting_leaves_an_unclosed_fence_to_the_end() -> None:
    text = "**a**\n```\n# b\n- c"
    assert strip_formatting(text) == "a\n```\n# b\n- c"


def test_strip_formatting_finds_fences_inside_list_items_and_quotes() -> None:
    text = "1. Run:\n   ```bash\n   echo **hi** — there\n   ```\n> ~~~\n> # kept\n> ~~~\n"
    assert strip_formatting(text) == (
        "Run:\n   ```bash\n   echo **hi** — there\n   ```\n> ~~~\n> # kept\n> ~~~\n"
    )


def test_strip_formatting_reads_indented_lines_in_a_list_as_list_content() -> None:
    assert strip_formatting("- item\n\n    - nested **item**") == "item\n\nnested item"


def _no_fence_marks(text: str) -> bool:
    return "```" not in text and "~~~" not in text


fence_content = st.lists(markdown_line.filter(_no_fence_marks), max_size=6)
# Prose around the block must not open a fence of its own, or the block is not a block.
fenceless_markdown = markdown.filter(_no_fence_marks)


@given(
    before=fenceless_markdown,
    indent=st.sampled_from(["", " ", "   "]),
    fence=st.sampled_from(["```", "~~~", "````", "~~~~~"]),
    info=st.sampled_from(["", "python", " js extra"]),
    content=fence_content,
    after=fenceless_markdown,
)
def test_strip_formatting_never_touches_text_inside_code_fences(
    before: str, indent: str, fence: str, info: str, content: list[str], after: str
) -> None:
    block = "\n".join([indent + fence + info, *content, indent + fence]) + "\n"
    text = before + "\n" + block + after
    assert block in strip_formatting(text)


def _code_blocks(text: str) -> list[str]:
    blocks: list[list[str]] = []
    previous_was_code = False
    for line in classify_lines(text):
        if line.kind == "code":
            if line.opens_block or not previous_was_code:
                blocks.append([])
            blocks[-1].append(line.body + line.end)
        previous_was_code = line.kind == "code"
    return ["".join(block) for block in blocks]


@given(markdown)
@example("```\n```\n\n\n```\n")
def test_strip_formatting_never_touches_what_it_reads_as_code(text: str) -> None:
    flat = strip_formatting(text)
    position = 0
    for block in _code_blocks(text):
        found = flat.find(block, position)
        assert found >= 0
        position = found + len(block)


# --- strip_formatting: properties -----------------------------------------------------------


@given(markdown)
@example("- **```**\n#\n    code\n")
@example("a | b\n===\n|---|")
@example("    code\n***\n    ```\nx **y**\n    ```")
def test_strip_formatting_is_idempotent(text: str) -> None:
    once = strip_formatting(text)
    assert strip_formatting(once) == once


@given(st.text())
def test_strip_formatting_is_idempotent_on_any_text(text: str) -> None:
    once = strip_formatting(text)
    assert strip_formatting(once) == once


@given(markdown)
def test_classify_lines_reassembles_the_exact_text(text: str) -> None:
    assert "".join(line.body + line.end for line in classify_lines(text)) == text
