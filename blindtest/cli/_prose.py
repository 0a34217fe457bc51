"""Words for a person: prose wrapped between words to the terminal's width (paths and
commands kept whole), and a stage's notes on stderr (nothing with ``--quiet``)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

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


def echo_void(report: Mapping[str, Any], run_dir: Path, reveal: bool) -> None:
    """A void analysis's line on stderr: the sentence wrapped as prose, and the command that
    finishes the run whole on a line of its own, to be pasted as printed."""
    from blindtest.analysis.api import void_line
    from blindtest.present.hints import stage_command
    from blindtest.present.render import clean

    line, finish, command = void_line(report, run_dir, stage_command).partition("; finish with: ")
    command, hint, rest = command.partition(" (with the --judge-url")
    if reveal:
        line += (
            " -- REVEALED with --reveal-void: whoever has seen this analysis can no longer "
            "judge this run blind"
        )
    said = f"{line}; finish with{hint and ' (with the --judge-url' + rest}:" if finish else line
    echo_prose(clean(said), err=True)
    if finish:
        click.echo(clean(command), err=True)
