"""Words for a person: prose wrapped between words to the terminal's width (paths and
commands kept whole), and a stage's notes on stderr (nothing with ``--quiet``)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable

import click

from blindtest.present import screen


def _wrapped(line: str) -> str:
    """An error line as a person reads it: wrapped at word boundaries to the terminal's width
    when stderr is one (a pipe or a log file gets the one line whole); paths and commands are
    never cut (``screen.wrap``)."""
    if not sys.stderr.isatty():
        return line
    width = min(shutil.get_terminal_size().columns - 1, screen.PROSE_CAP)
    return "\n".join(screen.wrap(line, max(width, 20)))


def echo_prose(text: str, *, err: bool = False) -> None:
    """Print sentences for a person: each line wrapped between words (``screen.wrap``:
    commands, paths and tables kept whole). On stdout to the terminal's width, or 80 into a
    pipe or a file (``screen.screen_width``); on stderr like an error line, wrapped only on a
    terminal, so a log keeps each message on one line."""
    if err:
        click.echo("\n".join(_wrapped(line) for line in text.split("\n")), err=True)
    else:
        click.echo(screen.wrap_lines([text], screen.screen_width(sys.stdout)))


def say_unless(quiet: bool) -> Callable[[str], None]:
    """A stage's notes for the user, on stderr as prose (nothing with --quiet)."""
    return (lambda _: None) if quiet else (lambda text: echo_prose(text, err=True))
