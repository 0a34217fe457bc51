"""The result screen's words with its line breaks undone, for tests that look for a sentence.

The screen wraps prose between words to the terminal, or at 80 columns into a pipe (which is
what a test reads: ``screen.PIPE_WIDTH``), continuation lines indented two more than the first.
``flat`` joins every run of whitespace into one space; ``paragraphs`` gives the screen's lines
as they were before wrapping (each continuation joined back to the line it continues)."""

from __future__ import annotations

from blindtest.present.screen import PIPE_WIDTH, units


def flat(text: str) -> str:
    return " ".join(text.split())


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def paragraphs(text: str, width: int = PIPE_WIDTH) -> list[str]:
    out: list[str] = []
    first_indent = previous = None
    for line in text.splitlines():
        words = line.split()
        continues = (
            previous is not None
            and first_indent is not None
            and words
            and _indent(line) == first_indent + 2
            and len(previous) + 1 + len(units(line)[0]) > width  # the wrap moved it down
        )
        if continues:
            out[-1] += " " + " ".join(words)
        else:
            out.append(line)
            first_indent = _indent(line)
        previous = line
    return out
