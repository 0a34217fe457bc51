"""Untrusted text (a model's response, a prompt) as HTML: markdown through markdown-it-py with
raw HTML off (a tag or comment is escaped, never executed; ``javascript:`` and other unsafe
link schemes stay text), or plain text when the design strips formatting. Shared by the
judging page and the HTML report. Pure."""

from __future__ import annotations

import re
from functools import cache

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


@cache
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(
        ["table", "strikethrough"]
    )


def render_text(text: str, *, plain: bool) -> Markup:
    """A response as a reader sees it: markdown, or every character as it is (``plain``)."""
    text = neutralise(text)
    if plain:
        return Markup('<pre class="plain">') + escape(text) + Markup("</pre>")
    return Markup(_markdown().render(text))  # html=False: raw HTML is escaped
