"""Shared click vocabulary and the one place library errors become exit codes.

Every stage command uses ``BlindtestCommand`` (and the umbrella group ``BlindtestGroup``), so
``bt-<stage>`` and ``blindtest <stage>`` behave the same: usage errors and ``BadInput`` print one
line and exit 2, ``CheckFailed`` exits 1, ``EndpointFailed`` exits 3, Ctrl-C exits 130 (click's
own ``Abort`` would exit 1, which reads as "the check failed"). A traceback is shown only when
``BLINDTEST_DEBUG=1``.
"""

from __future__ import annotations

import os
import shutil
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

import click

from blindtest import screen
from blindtest.errors import BlindtestError

F = TypeVar("F", bound=Callable[..., Any])

CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
INTERRUPTED_MESSAGE = "interrupted; everything done so far is kept, rerun to resume"


def _debug() -> bool:
    return os.environ.get("BLINDTEST_DEBUG", "") not in ("", "0")


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


def fail(prog: str, message: str, code: int) -> NoReturn:
    first_line = message.strip().splitlines()[0] if message.strip() else "failed"
    click.echo(_wrapped(f"{prog}: error: {first_line}"), err=True)
    sys.exit(code)


def run_main(
    invoke: Callable[..., Any], args: Sequence[str] | None, prog_name: str | None, **extra: Any
) -> NoReturn:
    """Run a command's click ``main`` and map every way it can end to the exit codes."""
    prog = prog_name or os.path.basename(sys.argv[0]) or "blindtest"
    exit_mapped(prog, lambda: invoke(args=args, prog_name=prog, standalone_mode=False, **extra))


def exit_mapped(prog: str, body: Callable[[], Any]) -> NoReturn:
    """Run ``body`` and exit the way the contract says for every ending: the one error mapper
    for the stage commands, ``blindtest run`` and the demo (which runs stages in-process)."""
    try:
        code = body()
    except click.exceptions.NoArgsIsHelpError as error:
        click.echo(error.ctx.get_help() if error.ctx else str(error))
        sys.exit(2)
    except click.UsageError as error:
        hint = f" (see {error.ctx.command_path} -h)" if error.ctx else ""
        fail(prog, f"{error.format_message()}{hint}", 2)
    except click.ClickException as error:
        fail(prog, error.format_message(), 2)
    except BlindtestError as error:
        _report_blindtest_error(prog, error)
    except (KeyboardInterrupt, click.Abort):
        click.echo(f"\n{prog}: {INTERRUPTED_MESSAGE}", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as error:  # an unexpected bug: one line unless debugging
        if _debug():
            traceback.print_exc()
        fail(
            prog,
            f"internal error: {type(error).__name__}: {error} "
            "(set BLINDTEST_DEBUG=1 for a traceback)",
            1,
        )
    sys.exit(code if isinstance(code, int) else 0)


def _report_blindtest_error(prog: str, error: BlindtestError) -> NoReturn:
    if _debug():
        traceback.print_exc()
    if error.exit_code == 130:
        click.echo(_wrapped(f"{prog}: {error}"), err=True)
        sys.exit(130)
    fail(prog, str(error), error.exit_code)


class _ExitCodes:
    """Mixin for click commands and groups: shared context settings, and a standalone
    ``main`` that maps every ending to the contract's exit codes (see ``run_main``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", CONTEXT_SETTINGS)
        super().__init__(*args, **kwargs)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        click_main = super().main  # type: ignore[misc]
        if not standalone_mode:
            return click_main(args=args, prog_name=prog_name, standalone_mode=False, **extra)
        run_main(click_main, args, prog_name, **extra)


class BlindtestCommand(_ExitCodes, click.Command):  # type: ignore[misc]
    pass


class BlindtestGroup(_ExitCodes, click.Group):  # type: ignore[misc]
    command_class = BlindtestCommand


def command(name: str) -> Callable[[F], click.Command]:
    """Decorator for a stage command: ``BlindtestCommand`` with the shared context settings."""
    return click.command(name, cls=BlindtestCommand)
