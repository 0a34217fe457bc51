"""Markdown drawn for the terminal from the token stream the judging page renders
(:func:`blindtest.present.markup.markdown_tokens`: the same parser and rules), so a judge in
the terminal reads what a judge on the page reads: headings, emphasis, lists, quotes and tables
as such, never as ``###`` and ``**``; code kept verbatim between its fences, cut (never
re-wrapped) at the screen edge. Pure and testable without a terminal.

Every piece of text from the answer is made inert before it is drawn
(:func:`blindtest.judging.terminal.layout.sanitize`: an escape sequence or a bidi control shows
as ``\\x1b`` or ``\\u202e``), after parsing too, since markdown decodes ``&#x1b;`` into the
character itself. The only escape sequences in the rows are the styles drawn here (SGR: bold,
italic, strike, and the colour of code), and only when the screen is a terminal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from blindtest.present.markup import markdown_tokens

__all__ = ["Paint", "markdown_rows"]

#: How a screen draws a run of text in a set of styles ("strong", "em", "s", "code",
#: "heading", "dim"): with SGR codes on a terminal, as it is elsewhere.
Paint = Callable[[str, frozenset[str]], str]

Atom = tuple[str, frozenset[str]]


@dataclass
class _Level:
    """One level of nesting: a list item's marker (first row) and hanging indent, or a
    quote's bar."""

    first: str
    rest: str
    used: bool = False


@dataclass
class _Drawing:
    width: int
    code_width: int
    more: str
    paint: Paint
    width_of: Callable[[str], int]
    take: Callable[[str, int], tuple[str, str]]
    sanitize: Callable[[str], str]
    source: Sequence[str]
    quote: str
    bullet: str
    rule: str
    rows: list[str] = field(default_factory=list)
    levels: list[_Level] = field(default_factory=list)
    numbers: list[int | None] = field(default_factory=list)

    # ------------------------------------------------------------------ rows

    def prefix(self) -> str:
        parts = []
        for level in self.levels:
            parts.append(level.rest if level.used else level.first)
            level.used = True
        return "".join(parts)

    def room(self) -> int:
        return sum(self.width_of(level.rest) for level in self.levels)

    def row(self, text: str) -> None:
        self.rows.append((self.prefix() + text).rstrip())

    def blank(self) -> None:
        if self.rows and self.rows[-1].strip():
            quoted = [level.rest.rstrip() for level in self.levels if level.rest.strip()]
            self.rows.append("".join(quoted))

    # ------------------------------------------------------------------ prose

    def prose(self, atoms: Sequence[Atom], width: int | None = None) -> None:
        """Wrap styled text to the room left, breaking only between words (a word wider than
        the room is cut)."""
        room = max(8, (width or self.width) - self.room())
        for line in _lines(atoms):
            for row in _wrap(_words(line), room, self.width_of, self.take):
                self.row(self._painted(row))

    def _painted(self, row: list[list[Atom]]) -> str:
        runs: list[Atom] = []
        for index, word in enumerate(row):
            # The space between two words keeps the style both share ("**The script**" is
            # one bold run), and no other (an underline never runs under a gap).
            between = row[index - 1][-1][1] & word[0][1] if index else frozenset[str]()
            for piece, style in ([(" ", between)] if index else []) + word:
                if runs and runs[-1][1] == style:
                    runs[-1] = (runs[-1][0] + piece, style)
                else:
                    runs.append((piece, style))
        return "".join(self.paint(text, style) if style else text for text, style in runs)

    # ------------------------------------------------------------------ verbatim

    def verbatim(self, lines: Sequence[str], style: frozenset[str]) -> None:
        room = max(8, self.code_width - self.room())
        for line in lines:
            body = self.sanitize(line).expandtabs(4).rstrip()
            head, rest = self.take(body, room)
            head = head.rstrip()  # a cut on a space: the space is not drawn at the edge
            self.row(self.paint(head, style) if head else "")
            while rest:
                piece, rest = self.take(rest, max(1, room - 1))
                self.row(self.more + self.paint(piece, style))


def _lines(atoms: Sequence[Atom]) -> list[list[Atom]]:
    """Split at hard breaks (an atom that is a newline)."""
    lines: list[list[Atom]] = [[]]
    for atom in atoms:
        if atom[0] == "\n":
            lines.append([])
        else:
            lines[-1].append(atom)
    return lines


_SPACE = re.compile(r"(\s+)")


def _words(atoms: Sequence[Atom]) -> list[list[Atom]]:
    """Words as runs of styled pieces: "**bold**text" is one word in two styles."""
    words: list[list[Atom]] = []
    current: list[Atom] = []
    for text, style in atoms:
        for part in _SPACE.split(text):
            if not part:
                continue
            if part.isspace():
                if current:
                    words.append(current)
                current = []
            else:
                current.append((part, style))
    if current:
        words.append(current)
    return words


def _wrap(
    words: list[list[Atom]],
    width: int,
    width_of: Callable[[str], int],
    take: Callable[[str, int], tuple[str, str]],
) -> list[list[list[Atom]]]:
    rows: list[list[list[Atom]]] = []
    current: list[list[Atom]] = []
    used = 0
    for word in words:
        size = sum(width_of(text) for text, _ in word)
        if current and used + 1 + size <= width:
            current.append(word)
            used += 1 + size
            continue
        if current:
            rows.append(current)
            current, used = [], 0
        while size > width:  # a word wider than the line (a long URL): cut it
            head, word = _cut(word, width, width_of, take)
            rows.append([head])
            size = sum(width_of(text) for text, _ in word)
        if word:
            current, used = [word], size
    if current or not rows:
        rows.append(current)
    return rows


def _cut(
    word: list[Atom],
    width: int,
    width_of: Callable[[str], int],
    take: Callable[[str, int], tuple[str, str]],
) -> tuple[list[Atom], list[Atom]]:
    head: list[Atom] = []
    left = width
    for index, (text, style) in enumerate(word):
        size = width_of(text)
        if size <= left:
            head.append((text, style))
            left -= size
            continue
        piece, rest = take(text, max(1, left))
        head.append((piece, style))
        return head, [(rest, style), *word[index + 1 :]] if rest else word[index + 1 :]
    return head, []


# --------------------------------------------------------------------------- inline


def _inline(children: Sequence[Any], sanitize: Callable[[str], str]) -> list[Atom]:
    """An inline token's children as styled text: emphasis kept as styles, a link as its
    words and (when they differ) its address, an image as its words and address (as the page
    shows it), a line break kept."""
    atoms: list[Atom] = []
    styles: list[str] = []
    links: list[tuple[str, int]] = []  # (address, where the link's words start)
    for token in children:
        kind = token.type
        if _restyle(kind, styles):
            continue
        if kind == "link_open":
            links.append((str(token.attrGet("href") or ""), len(atoms)))
        elif kind == "link_close" and links:
            href, start = links.pop()
            words = "".join(text for text, _ in atoms[start:])
            if href and href != words:
                atoms.append((f" <{sanitize(href)}>", frozenset({"dim"})))
        else:
            atoms.extend(_text(token, frozenset(styles), sanitize))
    return [atom for atom in atoms if atom[0]]


def _text(token: Any, styles: frozenset[str], sanitize: Callable[[str], str]) -> list[Atom]:
    """The text one inline token stands for, in ``styles``."""
    kind = token.type
    if kind in ("text", "html_inline"):
        return [(sanitize(token.content), styles)]
    if kind == "code_inline":
        return [(sanitize(token.content), styles | {"code"})]
    if kind == "softbreak":
        return [(" ", styles)]
    if kind == "hardbreak":
        return [("\n", frozenset())]
    if kind == "image":
        alt = "".join(child.content for child in token.children or [])
        src = str(token.attrGet("src") or "")
        return [(sanitize(f"[image: {alt}]({src})"), styles)]
    return []


def _restyle(kind: str, styles: list[str]) -> bool:
    """Open or close an emphasis (``styles`` changed); False for any other token."""
    name, _, edge = kind.rpartition("_")
    if name not in ("strong", "em", "s") or edge not in ("open", "close"):
        return False
    if edge == "open":
        styles.append(name)
    elif name in styles:
        styles.remove(name)
    return True


def _plain(atoms: Sequence[Atom]) -> str:
    return "".join(text for text, _ in atoms).replace("\n", " ")


# --------------------------------------------------------------------------- tables


def _cells(
    tokens: Sequence[Any], start: int, sanitize: Callable[[str], str]
) -> tuple[list[list[list[Atom]]], int, list[bool], int]:
    """A table's rows of cells, how many rows are its head, which columns are aligned right
    (``---:``), and the index of its ``table_close``."""
    rows: list[list[list[Atom]]] = []
    heads = 0
    right: list[bool] = []
    index = start + 1
    in_head = False
    while tokens[index].type != "table_close":
        token = tokens[index]
        if token.type in ("thead_open", "thead_close"):
            in_head = token.type == "thead_open"
        elif token.type == "tr_open":
            rows.append([])
            heads += 1 if in_head else 0
        elif token.type in ("th_open", "td_open") and len(rows) == 1:
            right.append("right" in str(token.attrGet("style") or ""))
        elif token.type == "inline" and rows:
            rows[-1].append(_inline(token.children or [], sanitize))
        index += 1
    return rows, heads, right, index


def _table(tokens: Sequence[Any], start: int, drawing: _Drawing) -> int:
    """Draw the table whose ``table_open`` is at ``start``; returns the index after it.
    Columns are aligned when the table fits the code width; otherwise its source lines are
    kept verbatim (as code is), so no cell is re-flowed out of its column."""
    rows, heads, right, index = _cells(tokens, start, drawing.sanitize)
    columns = max((len(row) for row in rows), default=0)
    widths = [
        max((drawing.width_of(_plain(row[c])) for row in rows if c < len(row)), default=0)
        for c in range(columns)
    ]
    total = sum(widths) + 3 * max(0, columns - 1)
    span = tokens[start].map
    if total > drawing.code_width - drawing.room() and span is not None:
        drawing.verbatim(drawing.source[span[0] : span[1]], frozenset())
        return index + 1
    for number, row in enumerate(rows):
        cells = []
        for c in range(columns):
            atoms = row[c] if c < len(row) else []
            text = _plain(atoms)
            pad = " " * (widths[c] - drawing.width_of(text))
            style = frozenset({"strong"}) if number < heads else frozenset()
            drawn = drawing.paint(text, style) if text and style else text
            aligned_right = c < len(right) and right[c]
            cells.append(pad + drawn if aligned_right else drawn + pad)
        drawing.row(" │ ".join(cells) if drawing.rule == "─" else " | ".join(cells))
        if number == heads - 1:
            joint = "─┼─" if drawing.rule == "─" else "-+-"
            drawing.row(joint.join(drawing.rule * w for w in widths))
    return index + 1


# --------------------------------------------------------------------------- blocks


def markdown_rows(
    text: str,
    width: int,
    code_width: int,
    *,
    more: str,
    paint: Paint,
    width_of: Callable[[str], int],
    take: Callable[[str, int], tuple[str, str]],
    sanitize: Callable[[str], str],
    unicode: bool = True,
) -> list[str]:
    """The rows of ``text`` as markdown: prose wrapped to ``width``, code and tables kept
    verbatim and cut at ``code_width``; ``paint`` draws a styled run."""
    drawing = _Drawing(
        width=width,
        code_width=code_width,
        more=more,
        paint=paint,
        width_of=width_of,
        take=take,
        sanitize=sanitize,
        source=text.replace("\r\n", "\n").split("\n"),
        quote="▌ " if unicode else "> ",
        bullet="• " if unicode else "* ",
        rule="─" if unicode else "-",
    )
    tokens = markdown_tokens(text)
    index = 0
    while index < len(tokens):
        index = _block(tokens, index, drawing)
    rows = drawing.rows
    while rows and not rows[-1].strip():
        rows.pop()
    return rows


def _block(tokens: Sequence[Any], index: int, drawing: _Drawing) -> int:  # noqa: C901
    """Draw the block token at ``index``; returns the index of the next token."""
    token = tokens[index]
    kind = token.type
    if kind == "heading_open":
        atoms = _inline(tokens[index + 1].children or [], drawing.sanitize)
        styled = [(t, frozenset({*s, "strong"})) for t, s in atoms]
        start = len(drawing.rows)
        drawing.prose(styled)
        if token.tag in ("h1", "h2"):
            drawn = max(drawing.width_of(_strip(row)) for row in drawing.rows[start:])
            line = ("═" if token.tag == "h1" else "─") if drawing.rule == "─" else "="
            drawing.row(drawing.paint(line * max(1, drawn - drawing.room()), frozenset({"dim"})))
        drawing.blank()
        return index + 3
    if kind == "paragraph_open":
        drawing.prose(_inline(tokens[index + 1].children or [], drawing.sanitize))
        if not token.hidden:  # a tight list's items stand on consecutive rows
            drawing.blank()
        return index + 3
    if kind in ("fence", "code_block"):
        info = drawing.sanitize(token.info.strip()) if kind == "fence" else ""
        fence = "```" + (f" {info}" if info else "")
        lines = token.content.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        drawing.row(drawing.paint(fence, frozenset({"dim"})))
        drawing.verbatim(lines, frozenset({"code"}))
        drawing.row(drawing.paint("```", frozenset({"dim"})))
        drawing.blank()
        return index + 1
    if kind in ("bullet_list_open", "ordered_list_open"):
        ordered = kind == "ordered_list_open"
        drawing.numbers.append(int(str(token.attrGet("start") or 1)) if ordered else None)
        return index + 1
    if kind in ("bullet_list_close", "ordered_list_close"):
        drawing.numbers.pop()
        if not drawing.levels:
            drawing.blank()
        return index + 1
    if kind == "list_item_open":
        number = drawing.numbers[-1] if drawing.numbers else None
        if number is None:
            marker = drawing.bullet
        else:
            marker = f"{number}{token.markup or '.'} "
            drawing.numbers[-1] = number + 1
        drawing.levels.append(_Level(marker, " " * drawing.width_of(marker)))
        return index + 1
    if kind == "list_item_close":
        drawing.levels.pop()
        return index + 1
    if kind == "blockquote_open":
        drawing.levels.append(_Level(drawing.quote, drawing.quote))
        return index + 1
    if kind == "blockquote_close":
        if drawing.rows and drawing.rows[-1] == drawing.prefix().rstrip():
            drawing.rows.pop()  # the quote's last paragraph left a bare bar under it
        drawing.levels.pop()
        drawing.blank()
        return index + 1
    if kind == "hr":
        line = drawing.rule * max(3, min(drawing.width, 40))
        drawing.row(drawing.paint(line, frozenset({"dim"})))
        drawing.blank()
        return index + 1
    if kind == "table_open":
        index = _table(tokens, index, drawing)
        drawing.blank()
        return index
    if kind == "html_block":  # never with raw HTML off; drawn as its text if it comes
        drawing.verbatim(token.content.rstrip("\n").split("\n"), frozenset())
        return index + 1
    return index + 1


_SGR = re.compile(r"\x1b\[[0-9;]*m")


def _strip(row: str) -> str:
    return _SGR.sub("", row)
