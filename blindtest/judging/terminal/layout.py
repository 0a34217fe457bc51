"""Text layout for the terminal session, pure: sanitizing model output, display widths,
wrapping prose (code blocks and tables never re-flowed), the rows of one trial screen, stacked
or side by side. A response is drawn from the markdown token stream the judging page renders
(:mod:`blindtest.judging.terminal.markdown`), or line by line as typed when the design strips
formatting (the page then shows it as typed too). Testable without a terminal: nothing here
reads or writes one; the only escape sequences in a row are the screen's own styles (SGR).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Protocol

from blindtest.model.normalize import classify_lines, is_table_delimiter
from blindtest.model.picks import JudgeView, Trial
from blindtest.model.prompt_size import BIDI_CONTROLS
from blindtest.model.protocols import PROTOCOLS

#: Prose is wrapped at most this wide even on wide terminals: long lines are hard to read.
MAX_PROSE_WIDTH = 110
MIN_WIDTH = 24
MIN_HEIGHT = 8

_BIDI_CONTROLS = BIDI_CONTROLS  # the direction marks too: shown as escapes, as on the page
_LIST_PREFIX = re.compile(r"^(\s*(?:[-*+]|\d{1,3}[.)]|>+)?\s*)")


@dataclass(frozen=True, slots=True)
class Glyphs:
    rule: str
    bar: str
    more: str
    sep: str


UNICODE_GLYPHS = Glyphs(rule="─", bar="│", more="↪", sep="·")
ASCII_GLYPHS = Glyphs(rule="-", bar="|", more=">", sep="-")


def sanitize(text: str) -> str:
    """Make model output safe to print: control characters (escape sequences that could
    repaint the screen) and bidi overrides (which reorder what is shown) become visible."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out = []
    for ch in text:
        if ch in "\n\t":
            out.append(ch)
        elif unicodedata.category(ch) == "Cc" or ch in _BIDI_CONTROLS:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def char_width(ch: str) -> int:
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


#: The screen's own styles (bold, italic, colour): the only escape sequences a row holds,
#: since response text is sanitized first. They take no columns.
_SGR = re.compile(r"\x1b\[[0-9;]*m")


def display_width(text: str) -> int:
    if "\x1b" in text:
        text = _SGR.sub("", text)
    return sum(char_width(ch) for ch in text)


def _take(text: str, width: int) -> tuple[str, str]:
    """Split ``text`` after at most ``width`` columns (at least one character, to progress);
    a style sequence is never cut, and takes no column."""
    used = 0
    index = 0
    while index < len(text):
        style = _SGR.match(text, index) if text[index] == "\x1b" else None
        if style is not None:
            index = style.end()
            continue
        used += char_width(text[index])
        if used > width and index > 0:
            return text[:index], text[index:]
        index += 1
    return text, ""


def split_code_line(line: str, width: int, more: str) -> list[str]:
    """A code or table line is never re-flowed; one wider than the screen is cut at the edge
    and continued on marked rows, so the pager's row count stays exact."""
    head, rest = _take(line, width)
    rows = [head]
    while rest:
        piece, rest = _take(rest, max(1, width - 1))
        rows.append(more + piece)
    return rows


def wrap_prose_line(line: str, width: int) -> list[str]:
    """Word-wrap one prose line, keeping its indentation and list marker as a hanging indent."""
    if display_width(line) <= width:
        return [line]
    prefix = _LIST_PREFIX.match(line)
    lead = prefix.group(1) if prefix else ""
    if display_width(lead) >= width // 2:
        lead = ""  # a very deep indent on a narrow screen: keep the words, drop the indent
    hang = " " * display_width(lead)
    rows: list[str] = []
    current, filled = lead, False
    for word in line[len(lead) :].split():
        if filled and display_width(current) + 1 + display_width(word) <= width:
            current += " " + word
            continue
        if filled:
            rows.append(current)
            current = hang
        while display_width(current) + display_width(word) > width:
            piece, word = _take(word, max(1, width - display_width(current)))
            rows.append(current + piece)
            current = hang
        current += word
        filled = True
    rows.append(current)
    return rows


def _is_table_row(body: str) -> bool:
    # Tables lose their meaning when re-flowed.
    return body.lstrip().startswith("|") or is_table_delimiter(body)


def render_text(
    text: str,
    width: int,
    code_width: int,
    more: str,
    style: Style | None = None,
) -> list[str]:
    """Rows for a response: with a ``style`` (a screen), its markdown drawn as the page
    renders it (:func:`blindtest.judging.terminal.markdown.markdown_rows`); without, every
    source line kept (never joined), prose wrapped to ``width``, code (as
    ``blindtest.model.normalize`` defines it) and tables kept verbatim, cut only at
    ``code_width`` (a design that strips formatting: the page shows it as typed too)."""
    if style is not None:
        from blindtest.judging.terminal.markdown import markdown_rows

        return markdown_rows(
            text,
            width,
            code_width,
            more=more,
            paint=style.paint,
            width_of=display_width,
            take=_take,
            sanitize=sanitize,
            unicode=style.glyphs is UNICODE_GLYPHS,
        )
    rows: list[str] = []
    for line in classify_lines(sanitize(text)):
        body = line.body.expandtabs(4).rstrip()
        if line.kind == "code" or _is_table_row(body):
            rows.extend(split_code_line(body, code_width, more))
        else:
            rows.extend(wrap_prose_line(body, width))
    while rows and not rows[-1]:
        rows.pop()
    return rows


COLUMN_GAP = 3


def side_by_side(protocol: str, width: int) -> bool:
    """Whether a screen ``width`` columns wide (one less than the terminal) shows the options
    side by side (`Protocol.side_by_side_from`: about 65 columns of text each)."""
    return width + 1 >= PROTOCOLS[protocol].side_by_side_from


def option_labels(protocol: str, beside: bool = False) -> tuple[tuple[str, str], ...]:
    """(header, gutter) for each option in display order.

    "Left" and "Right" are used only when the options really stand left and right; stacked,
    the preference options are "Option 1" (the pick "left") and "Option 2" (the pick "right").
    """
    rules = PROTOCOLS[protocol]
    if rules.pick_kind == "side" and beside:
        return (("Left", "L"), ("Right", "R"))
    numbers = [str(n) for n in range(1, rules.options + 1)]
    if rules.pick_kind != "position":
        return tuple((f"Option {n}", n) for n in numbers)
    return tuple((n, n) for n in numbers)


class Style(Protocol):
    """How a screen marks things: the glyphs the terminal can show, bold, and a run of text in
    a set of styles ("strong", "em", "s", "code", "dim")."""

    glyphs: Glyphs

    def bold(self, text: str) -> str: ...

    def paint(self, text: str, styles: frozenset[str]) -> str: ...


def fit(text: str, width: int) -> str:
    if display_width(text) <= width:
        return text
    head, _ = _take(text, max(1, width - 3))
    return head + ("\x1b[0m" if "\x1b" in head else "") + "..."


def pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


#: Rows an earlier turn of a conversation is folded to (the last turn is shown whole).
FOLDED_TURN_ROWS = 3


def history_rows(
    trial: Trial,
    width: int,
    code_width: int,
    bar: str,
    more: str,
    style: Style | None = None,
) -> list[str]:
    """A conversation's earlier turns, compactly: each under its role, folded to
    ``FOLDED_TURN_ROWS`` rows. Nothing for a single prompt. ``style``: markdown drawn (see
    :func:`render_text`)."""
    if not trial.history:
        return []
    turns = len(trial.history)
    rows = [f"Conversation: {turns} earlier turn{'s' if turns != 1 else ''}, then the prompt"]
    for role, content in trial.history:
        body = render_text(content, width - 12, code_width - 12, more, style)
        if len(body) > FOLDED_TURN_ROWS:
            body = [
                *body[: FOLDED_TURN_ROWS - 1],
                fit(body[FOLDED_TURN_ROWS - 1], width - 14) + f" {more}",
            ]
        for index, line in enumerate(body or [""]):
            label = f"{role}:" if index == 0 else ""
            rows.append(f"  {bar} {label:<11}{line}".rstrip())
    rows.append("")
    return rows


def trial_layout(
    view: JudgeView,
    trial: Trial,
    width: int,
    style: Style,
    plain: bool = False,
    progress: str | None = None,
) -> tuple[list[str], list[int]]:
    """The rows of one trial screen (progress, the prompt, then the options under rules,
    side by side when ``width`` allows) and the row where each option starts. The texts are
    drawn from their markdown, as the page renders them, unless ``plain`` (the design strips
    formatting: shown as typed, as on the page). ``progress`` heads it (default: ``trial N of
    TOTAL``)."""
    drawn = None if plain else style
    glyphs = style.glyphs
    gutter_width = 4
    text_width = max(MIN_WIDTH - gutter_width, width - gutter_width)
    prose_width = min(text_width, MAX_PROSE_WIDTH)
    sep = glyphs.sep
    progress = progress or f"trial {trial.number} of {view.total}"
    header = fit(f"{progress} {sep} {view.question}", width)
    rows = [style.bold(header), ""]
    rows += history_rows(trial, prose_width, text_width, glyphs.bar, glyphs.more, drawn)
    rows.append(style.bold("Prompt"))
    for line in render_text(trial.prompt, prose_width, text_width, glyphs.more, drawn):
        rows.append(f"  {glyphs.bar} {line}".rstrip())
    beside = side_by_side(view.protocol, width)
    labels = option_labels(view.protocol, beside)
    if beside:
        rows.append("")
        count = len(trial.options)
        column = (width - COLUMN_GAP * (count - 1)) // count
        body_width = column - gutter_width
        cells = []
        for (header, gutter), option in zip(labels, trial.options, strict=True):
            title = f"{glyphs.rule * 2} {header} "
            head = title + glyphs.rule * max(0, column - display_width(title))
            body = render_text(
                option, min(body_width, MAX_PROSE_WIDTH), body_width, glyphs.more, drawn
            )
            cells.append([head, *(f"{gutter} {glyphs.bar} {line}" for line in body or [""])])
        anchor = len(rows)
        gap = " " * COLUMN_GAP
        for index in range(max(len(cell) for cell in cells)):
            parts = [pad(cell[index] if index < len(cell) else "", column) for cell in cells]
            if index == 0:
                parts = [style.bold(part) for part in parts]
            rows.append(gap.join(parts).rstrip())
        return rows, [anchor] * count
    anchors = []
    for (header, gutter), option in zip(labels, trial.options, strict=True):
        title = f"{glyphs.rule * 2} {header} "
        rows.append("")
        anchors.append(len(rows))
        rows.append(style.bold(title + glyphs.rule * max(0, width - display_width(title))))
        body = render_text(option, prose_width, text_width, glyphs.more, drawn) or [""]
        rows.extend(f"{gutter:>1} {glyphs.bar} {line}".rstrip() for line in body)
    return rows, anchors
