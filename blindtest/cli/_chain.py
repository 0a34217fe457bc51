"""What a chain of stages (``blindtest run``, the demos) shares: a line for the user, the
resume command every interrupted or failed ending names, the options as given, and the name
a lock gives its holder."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from blindtest.cli._prose import echo_prose
from blindtest.errors import EndpointFailed, Interrupted


def say(text: str) -> None:
    """A line for the user on stderr, wrapped between words on a terminal."""
    echo_prose(text, err=True)


@contextlib.contextmanager
def resumable(resume: str) -> Iterator[None]:
    """Every interrupted or failed ending of a chain names the command that resumes it."""
    from blindtest.judging.terminal.session import InputEnded

    try:
        yield
    except (KeyboardInterrupt, click.Abort, Interrupted) as error:
        text = error.template if isinstance(error, Interrupted) else ""
        what = text.split(";")[0].strip() or "interrupted"
        raise Interrupted(
            f"{what}; everything done so far is kept; continue with: {resume}"
        ) from None
    except InputEnded as error:
        what = error.template.split(";")[0].strip()
        raise InputEnded(
            f"{what}; everything done so far is kept; continue with: {resume}"
        ) from None
    except EndpointFailed as error:
        raise EndpointFailed(
            f"{error.template}; what was fetched is kept; continue with: {resume}"
        ) from None


def given_words(ctx: click.Context, *, skip: Sequence[str] = ()) -> list[str]:
    """The parameters given on the command line, written again as they were given."""
    words: list[str] = []
    for param in ctx.command.params:
        name = param.name or ""
        if name in skip:
            continue
        if ctx.get_parameter_source(name) is not click.core.ParameterSource.COMMANDLINE:
            continue
        words += _words(param, ctx.params[name])
    return words


def _words(param: click.Parameter, value: Any) -> list[str]:
    if isinstance(param, click.Argument):
        values = value if param.nargs != 1 else (value,)  # ``[A B]`` of blindtest run
        return [os.fspath(item) for item in values]
    assert isinstance(param, click.Option)
    longest = max(param.opts, key=len)
    if param.is_flag:
        if param.secondary_opts and not value:
            return [param.secondary_opts[0]]
        return [longest] if value else []
    words: list[str] = []
    for item in list(value) if param.multiple else [value]:
        parts = list(item) if isinstance(item, tuple) else [item]
        words += [longest, *(os.fspath(p) if isinstance(p, Path) else str(p) for p in parts)]
    return words


def stage_label() -> str:
    """How a lock names its holder: ``bt-generate``, ``blindtest run`` (the stage functions
    take the locks, :mod:`blindtest.rundir.locking`; a command passes them this name)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return os.path.basename(sys.argv[0]) or "blindtest"
    name = ctx.command.name or "blindtest"
    return "blindtest run" if name == "run" else f"bt-{name}"
