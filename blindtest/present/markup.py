"""Untrusted text (a model's response, a prompt) as HTML: markdown through markdown-it-py with
raw HTML off (a tag or comment is escaped, never executed; ``javascript:`` and other unsafe
link schemes stay text; an image is shown as its alt text and URL, never loaded), or plain
text when the design strips formatting. Shared by the
judging page and the HTML report. Pure."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from markdown_it import MarkdownIt
from markupsafe import Markup, escape

#: Control characters (ESC, a lone CR, bidi overrides) act on nothing in a browser but can
#: hide or reorder text; they are shown as escapes. Newlines and tabs are text.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def neutralise(text: str) -> str:
    """``text`` with every control character but newline and tab shown as an escape."""

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _CONTROL.sub(escape, text.replace("\r\n", "\n"))


def _image_as_text(renderer: Any, tokens: Any, index: int, options: Any, env: Any) -> str:
    """An image in a response is drawn as its words, never fetched: opening a report (or a
    judging page) must not call a URL a model wrote (a tracking pixel, a timing channel)."""
    token = tokens[index]
    alt = "".join(child.content for child in token.children or [])
    return str(escape(f"[image: {alt}]({token.attrGet('src') or ''})"))


def _heading_open(renderer: Any, tokens: Any, index: int, options: Any, env: Any) -> str:
    """A heading inside an answer, drawn as a paragraph of its level's class: the text of
    the report it sits in keeps its own outline (a model's "# Summary" is no heading of the
    report, for a reader's eye or a screen reader's list of headings)."""
    return f'<p class="answer-heading answer-{tokens[index].tag}">'


def _heading_close(renderer: Any, tokens: Any, index: int, options: Any, env: Any) -> str:
    return "</p>\n"


@cache
def _markdown(headings: bool = True) -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(
        ["table", "strikethrough"]
    )
    parser.add_render_rule("image", _image_as_text)
    if not headings:
        parser.add_render_rule("heading_open", _heading_open)
        parser.add_render_rule("heading_close", _heading_close)
    return parser


def markdown_tokens(text: str) -> list[Any]:
    """The token stream :func:`render_text` renders (the same parser and rules, after the same
    :func:`neutralise`), for a screen that draws it itself: the judging terminal."""
    return list(_markdown().parse(neutralise(text)))


def render_text(text: str, *, plain: bool, headings: bool = True) -> Markup:
    """A response as a reader sees it: markdown, or every character as it is (``plain``).
    ``headings`` False: the answer's headings are drawn as paragraphs (``answer-heading``),
    for a page whose own headings are its outline (the report)."""
    text = neutralise(text)
    if plain:
        return Markup('<pre class="plain">') + escape(text) + Markup("</pre>")
    return Markup(_markdown(headings).render(text))  # html=False: raw HTML is escaped
