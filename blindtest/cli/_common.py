"""Shared click vocabulary and the one place library errors become exit codes.

Every stage command uses ``BlindtestCommand`` (and the umbrella group ``BlindtestGroup``), so
``bt-<stage>`` and ``blindtest <stage>`` behave the same: usage errors and ``BadInput`` print one
line and exit 2, ``CheckFailed`` exits 1, ``EndpointFailed`` exits 3, Ctrl-C exits 130 (click's
own ``Abort`` would exit 1, which reads as "the check failed"). A traceback is shown only when
``BLINDTEST_DEBUG=1``.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from blindtest.errors import BlindtestError

F = TypeVar("F", bound=Callable[..., Any])

CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
INTERRUPTED_MESSAGE = "interrupted; everything done so far is kept, rerun to resume"


def _debug() -> bool:
    return os.environ.get("BLINDTEST_DEBUG", "") not in ("", "0")


def fail(prog: str, message: str, code: int) -> NoReturn:
    first_line = message.strip().splitlines()[0] if message.strip() else "failed"
    click.echo(f"{prog}: error: {first_line}", err=True)
    sys.exit(code)


def run_main(
    invoke: Callable[..., Any], args: Sequence[str] | None, prog_name: str | None, **extra: Any
) -> NoReturn:
    """Run a command's click ``main`` and map every way it can end to the exit codes."""
    prog = prog_name or os.path.basename(sys.argv[0]) or "blindtest"
    try:
        code = invoke(args=args, prog_name=prog, standalone_mode=False, **extra)
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
        click.echo(f"{prog}: {error}", err=True)
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


# --------------------------------------------------------------------------- shared options

run_argument = click.argument(
    "run_dir", metavar="RUN", type=click.Path(file_okay=False, path_type=Path)
)
force_option = click.option(
    "--force", is_flag=True, help="Overwrite existing output files instead of refusing."
)
json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout."
)
quiet_option = click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
seed_option = click.option(
    "--seed",
    type=str,
    default=None,
    help="Seed for every random choice (default: a fresh random seed, recorded).",
)
alpha_option = click.option(
    "--alpha",
    type=float,
    default=0.05,
    show_default=True,
    help="Significance level, in (0, 0.5].",
)
concurrency_option = click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Requests in flight per endpoint.",
)
timeout_option = click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=120.0,
    show_default=True,
    help="Seconds to wait for a connection and for each read.",
)


def not_built(stage: str, issue: str) -> Callable[..., NoReturn]:
    """Body of a stage that does not exist yet: say so and exit 2."""

    def body(**_: Any) -> NoReturn:
        raise click.UsageError(f"{stage} is not built yet ({issue})")

    return body
