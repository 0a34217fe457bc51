"""How prose meets a screen: the width to wrap at, and word wrapping that never breaks a path,
a URL or a command the reader is told to copy.

One rule for every place that prints sentences to a person (the result screen, the end of a
session, error lines): a line is cut only between words; a word is never cut (a path or URL
longer than the line gets a line of its own, whole); a command (``bt-judge run --judge-id
alice``, ``make demo``, anything in backticks) is kept whole, on a line of its own when it does
not fit where it stands, so it can be copied and run as printed. Lines laid out in columns
(tables, aligned figures) are left as they are: wrapping them would break their alignment.

Pure: no click, nothing of blindtest's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import TextIO

__all__ = ["PIPE_WIDTH", "PROSE_CAP", "Verbatim", "screen_width", "units", "wrap", "wrap_lines"]

#: Where prose wraps when the output is not a terminal (a pipe into ``less``, a file): the
#: width click's help and most tools assume.
PIPE_WIDTH = 80
#: Prose is never wider than this on a wide terminal: a 200-column sentence is hard to read.
PROSE_CAP = 100


class Verbatim(str):
    """A line laid out already (a table row, a command on its own line): never wrapped."""

    __slots__ = ()


def screen_width(stream: TextIO | None, *, cap: int | None = PROSE_CAP) -> int:
    """The width to wrap prose written to ``stream`` at: ``COLUMNS`` when set (as the user
    asked, uncapped); one less than the terminal's width when ``stream`` is one (a character in
    the last column makes some terminals wrap at once), at most ``cap``; else ``PIPE_WIDTH``
    (a pipe or a file should read well in ``less`` and an editor too)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if stream is not None and stream.isatty():
            width = max(os.get_terminal_size(stream.fileno()).columns - 1, 20)
            return min(width, cap) if cap else width
    except (AttributeError, OSError, ValueError):  # a stream without a descriptor (a test's)
        pass
    return PIPE_WIDTH


#: Where a command starts: a blindtest script (bare or as a path), ``blindtest <stage>``,
#: ``make demo``, ``python -m ...``.
_SCRIPT = re.compile(r"(?:.*/)?bt-[a-z]+")
_STAGES = frozenset(
    ("design", "generate", "judge", "audit", "analyze", "verify", "plan", "run", "demo")
) | {"demo-llm", "test"}  # the make targets a sentence names
#: Words that end a command inside a sentence ("Run bt-analyze run to see the result").
_AFTER_COMMAND = frozenset(
    ["to", "and", "then", "or", "if", "in", "fetches", "puts", "which", "when"]
)


#: A relation and its two sides are never parted ("p = 0.70", "p < 0.000001").
_RELATIONS = frozenset(["=", "<", ">", "<=", ">=", "!="])


def _words(text: str) -> list[str]:
    """The words of ``text``, a shell-quoted word holding spaces (``'/my files/python'``, as
    ``shlex.join`` writes a path with spaces) kept as one."""
    words: list[str] = []
    quoted = False  # inside a word that opened a quote (an apostrophe in prose opens none)
    for word in text.split():
        if quoted:
            words[-1] += " " + word
        else:
            words.append(word)
        opens = not quoted and word.startswith("'")
        if (opens or quoted) and word.count("'") % 2 == 1:
            quoted = not quoted
    return words


def _command_start(words: list[str], i: int) -> bool:
    word = words[i].strip("'")  # a path quoted for the shell (it holds a space)
    following = words[i + 1] if i + 1 < len(words) else ""
    if _SCRIPT.fullmatch(word.rstrip(",;.")):
        return True
    if word in ("blindtest", "make") or re.fullmatch(r"(?:.*/)?blindtest", word):
        return following.rstrip(",;.)") in _STAGES
    return bool(re.fullmatch(r"(?:.*/)?python3?", word)) and following == "-m"


def units(text: str) -> list[str]:
    """The words of ``text``, with each command (and each backticked span, and each relation
    such as ``p = 0.70``) joined into one unit that is never split."""
    words = _words(text)
    found: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("`") and "`" not in word[1:]:  # a `quoted command` up to its close
            end = next((j for j in range(i + 1, len(words)) if "`" in words[j]), i)
        elif _command_start(words, i):
            end = i
            while (
                end + 1 < len(words)
                and not words[end].endswith((",", ";"))
                and words[end + 1] not in _AFTER_COMMAND
            ):
                end += 1
        else:
            end = i
        while end + 2 < len(words) and words[end + 1] in _RELATIONS:  # "p < 0.000001" whole
            end += 2
        found.append(" ".join(words[i : end + 1]))
        i = end + 1
    return found


def _aligned(line: str) -> bool:
    """A row laid out in columns: two spaces inside its text (after the indent)."""
    return "  " in line.strip()


def wrap(line: str, width: int, *, hang: int = 2) -> list[str]:
    """``line`` as lines of at most ``width`` columns where it can be: cut between words
    only, continuation lines indented ``hang`` more than the first; an unbreakable unit wider
    than that gets a line of its own, whole. A ``Verbatim`` line, a line laid out in columns
    and a line that fits come back as they are."""
    if len(line) <= width or isinstance(line, Verbatim) or _aligned(line):
        return [line]
    indent = line[: len(line) - len(line.lstrip(" "))]
    lines: list[str] = []
    current = ""
    for unit in units(line):
        prefix = indent if not lines and not current else indent + " " * hang
        if not current:
            current = prefix + unit
        elif len(current) + 1 + len(unit) <= width:
            current += " " + unit
        else:
            lines.append(current)
            current = indent + " " * hang + unit
    lines.append(current)
    return lines


def wrap_lines(lines: Iterable[str], width: int | None) -> str:
    """Every line of ``lines`` wrapped to ``width`` (None: as they are), joined by newlines.
    A string holding newlines is taken line by line."""
    out: list[str] = []
    for line in lines:
        parts = [line] if "\n" not in line else line.split("\n")
        if isinstance(line, Verbatim):
            parts = [Verbatim(part) for part in parts]
        for part in parts:
            out += [part] if width is None else wrap(part, width)
    return "\n".join(out)
