"""The one place library errors become exit codes: usage errors and ``BadInput`` print one
line and exit 2, ``CheckFailed`` exits 1, ``EndpointFailed`` exits 3, Ctrl-C exits 130 (click's
own ``Abort`` would exit 1, which reads as "the check failed"). A command's own return value
is its exit code: bt-analyze returns a pre-registered decision's 0, 4 (refuted) or 5 (not
settled), ``blindtest.errors.EXIT_REFUTED`` and ``EXIT_NOT_SETTLED``. A traceback is shown only when
``BLINDTEST_DEBUG=1``.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import click

from blindtest.cli._flags import message
from blindtest.cli._prose import _wrapped
from blindtest.errors import BlindtestError

INTERRUPTED_MESSAGE = "interrupted; everything done so far is kept, rerun to resume"


def _debug() -> bool:
    return os.environ.get("BLINDTEST_DEBUG", "") not in ("", "0")


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
        click.echo(_wrapped(f"{prog}: {message(error)}"), err=True)
        sys.exit(130)
    fail(prog, message(error), error.exit_code)
