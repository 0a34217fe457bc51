"""Shared click vocabulary and the one place library errors become exit codes.

Every stage command uses ``BlindtestCommand`` (and the umbrella group ``BlindtestGroup``), so
``bt-<stage>`` and ``blindtest <stage>`` behave the same: usage errors and ``BadInput`` print one
line and exit 2, ``CheckFailed`` exits 1, ``EndpointFailed`` exits 3, Ctrl-C exits 130 (click's
own ``Abort`` would exit 1, which reads as "the check failed"). A traceback is shown only when
``BLINDTEST_DEBUG=1``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from blindtest import screen
from blindtest.endpoints import DEFAULT_BASE_URL
from blindtest.errors import BlindtestError, EndpointFailed, Interrupted
from blindtest.protocols import PROTOCOLS  # not blindtest.designing: bt-generate never loads it

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


def console_script(main: Callable[[], Any]) -> NoReturn:
    """Run a console script's ``main`` (which exits through ``exit_mapped``) and end the
    process without tearing the interpreter down.

    Every file a stage writes is closed, and synced where it promises to be, before its
    command returns; what the interpreter would still do at exit is free what it imported
    (aiohttp's SSL contexts, click, jsonschema): ~40 ms of a 3 s ``bt-generate`` run (issue 15
    item 6). The exit handlers still run (logging's flush among them) and the standard streams
    are flushed. Anything unusual ends the ordinary way: another thread still running, an
    exit code that is a message, a stream that cannot be flushed (a closed pipe), a profiler or
    tracer watching (it writes its results at teardown). Only the
    console scripts call this; in-process callers (tests, ``CliRunner``) never do."""
    try:
        main()
        ending = SystemExit(0)
    except SystemExit as raised:
        ending = raised
    code = 0 if ending.code is None else ending.code
    watched = sys.getprofile() is not None or sys.gettrace() is not None  # cProfile, coverage
    if not isinstance(code, int) or threading.active_count() > 1 or watched:
        raise ending
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        raise ending from None
    os._exit(code)


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


# --------------------------------------------------------------------------- chains


def say(text: str) -> None:
    click.echo(text, err=True)


@contextlib.contextmanager
def resumable(resume: str) -> Iterator[None]:
    """Every interrupted or failed ending of a chain names the command that resumes it."""
    from blindtest.session import InputEnded

    try:
        yield
    except (KeyboardInterrupt, click.Abort, Interrupted) as error:
        text = str(error) if isinstance(error, Interrupted) else ""
        what = text.split(";")[0].strip() or "interrupted"
        raise Interrupted(
            f"{what}; everything done so far is kept; continue with: {resume}"
        ) from None
    except InputEnded as error:
        what = str(error).split(";")[0].strip()
        raise InputEnded(
            f"{what}; everything done so far is kept; continue with: {resume}"
        ) from None
    except EndpointFailed as error:
        raise EndpointFailed(
            f"{error}; what was fetched is kept; continue with: {resume}"
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
        return [os.fspath(value)]
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


# --------------------------------------------------------------------------- locks


def stage_label() -> str:
    """How a lock names its holder: ``bt-generate``, ``blindtest run`` (the stage functions
    take the locks, :mod:`blindtest.locking`; a command passes them this name)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return os.path.basename(sys.argv[0]) or "blindtest"
    name = ctx.command.name or "blindtest"
    return "blindtest run" if name == "run" else f"bt-{name}"


# --------------------------------------------------------------------------- shared options


class DirPath(click.Path):
    """A directory path that may not exist yet, and may not be empty: an unset shell variable
    ("") would otherwise mean the current directory."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("is empty (an unset shell variable?); name a directory", param, ctx)
        return super().convert(value, param, ctx)


class FilePath(click.Path):
    """A file option's value. A value that starts with ``--`` is an option the user meant to
    give next (``--html --force`` would otherwise write a file named ``--force``)."""

    def __init__(self, *, exists: bool = False, dir_okay: bool = False) -> None:
        super().__init__(exists=exists, dir_okay=dir_okay, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.startswith("--"):
            self.fail(
                f"needs a file name, but got the option {value!r}; give the file first", param, ctx
            )
        if isinstance(value, str) and not value.strip():
            self.fail("is empty (an unset shell variable?); name a file", param, ctx)
        return super().convert(value, param, ctx)


run_argument = click.argument("run_dir", metavar="RUN", type=DirPath())
force_option = click.option(
    "--force", is_flag=True, help="Overwrite existing output files instead of refusing."
)
json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout."
)
quiet_option = click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
refetch_option = click.option(
    "--refetch-changed",
    is_flag=True,
    help="Ask again for the slots whose answer on disk was made for another request (the "
    "design was edited since); the old rows stay in responses.jsonl, no longer counted.",
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


def _side_transport(side: str) -> list[Callable[[F], F]]:
    upper = side.upper()
    return [
        click.option(
            f"--{side}-concurrency",
            type=click.IntRange(min=1),
            help=f"Requests in flight for side {upper} only.",
        ),
        click.option(
            f"--{side}-rpm",
            type=click.FloatRange(min=0, min_open=True),
            help=f"Requests started per minute for side {upper} only.",
        ),
        click.option(
            f"--{side}-header-env",
            metavar="NAME:ENVVAR",
            multiple=True,
            help=f"Send header NAME on side {upper}'s requests, its value read from ENVVAR "
            "(never written; repeatable).",
        ),
    ]


def grouped(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """Several option decorators as one, the options listed in the order given."""

    def apply(function: F) -> F:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


#: Issue 12: per-side transport, for bt-generate and `blindtest run`.
side_transport_options = grouped(*_side_transport("a"), *_side_transport("b"))

price_options = grouped(
    click.option("--price-a", metavar="IN,OUT", help="Side A price, dollars per million tokens."),
    click.option("--price-b", metavar="IN,OUT", help="Side B price, dollars per million tokens."),
)

# The design options, shared by bt-design and `blindtest run` (which takes the models as
# arguments): where the prompts come from, then everything after the model names.
prompt_source_options = grouped(
    click.option(
        "--prompts",
        "prompts_file",
        type=FilePath(dir_okay=True),
        metavar="FILE",
        help='Prompts: .txt (one per line) or .jsonl ({"prompt": ...}).',
    ),
    click.option("--demo", is_flag=True, help="Use the bundled generic engineering prompts."),
)
design_options = grouped(
    click.option(
        "--a-url", metavar="URL", help=f"Base URL for side A [default: {DEFAULT_BASE_URL}]."
    ),
    click.option(
        "--b-url", metavar="URL", help=f"Base URL for side B [default: {DEFAULT_BASE_URL}]."
    ),
    click.option(
        "--a-key-env",
        metavar="NAME",
        help="NAME of the env variable holding A's key [default: BLINDTEST_A_KEY if set, "
        "else OPENAI_API_KEY].",
    ),
    click.option("--b-key-env", metavar="NAME", help="Same for side B (BLINDTEST_B_KEY)."),
    click.option(
        "--temperature",
        type=float,
        default=1.0,
        show_default=True,
        help="Sampling temperature for both sides.",
    ),
    click.option("--max-tokens", type=click.IntRange(min=1), help="Token limit per response."),
    click.option("--system", metavar="TEXT|@FILE", help="System prompt, the same for both sides."),
    *(
        option
        for side in ("a", "b")
        for option in (
            click.option(
                f"--{side}-system",
                metavar="TEXT|@FILE",
                help=f"System prompt for side {side.upper()} only.",
            ),
            click.option(
                f"--{side}-template",
                metavar="TEXT",
                help=f"Side {side.upper()}'s user message, with {{prompt}} where the prompt goes.",
            ),
            click.option(
                f"--{side}-temperature",
                type=float,
                help=f"Temperature for side {side.upper()} only.",
            ),
            click.option(
                f"--{side}-max-tokens",
                type=click.IntRange(min=1),
                help=f"Token limit for side {side.upper()} only.",
            ),
            click.option(
                f"--{side}-param",
                metavar="KEY=VALUE",
                multiple=True,
                help=f"Extra request field for side {side.upper()} (JSON value; null removes "
                "it; repeatable).",
            ),
            click.option(
                f"--{side}-label",
                metavar="NAME",
                help=f"What the report calls side {side.upper()} [default: the model].",
            ),
        )
    ),
    click.option(
        "--protocol",
        type=click.Choice(tuple(PROTOCOLS)),
        default="triangle",
        show_default=True,
        help="triangle: the judge picks the odd one of three (two from one model); pair: the "
        "judge tells which of two is which model; preference: the judge says which of two is "
        "better.",
    ),
    click.option("--trials", type=int, default=20, show_default=True, help="Number of trials."),
    click.option(
        "--controls",
        type=int,
        default=0,
        metavar="K",
        help="Preference: add K hidden controls (one model on both sides) among the trials.",
    ),
    click.option("--seed", type=str, help="Arrangement seed (default: fresh, recorded)."),
    alpha_option,
    click.option(
        "--sequential",
        is_flag=True,
        help="Pre-register the right to stop early (triangle e-process).",
    ),
    click.option(
        "--similarity",
        "similarity_pd0",
        type=float,
        metavar="PD0",
        help="Pre-register a similarity claim: pd < PD0.",
    ),
    click.option("--strip-formatting", is_flag=True, help="Flatten markdown and typography."),
    click.option("--length-band", metavar="LO..HI", help="Ask both models for LO..HI words."),
    click.option(
        "--truncate-match", is_flag=True, help="Cut responses to the shortest in a trial."
    ),
    click.option(
        "--strip-identity/--no-strip-identity",
        default=True,
        help="Replace model names and self-identification in what the judge sees with one "
        "token [default: on].",
    ),
    click.option(
        "--strip-identity-words",
        type=FilePath(dir_okay=True),
        metavar="FILE",
        help="More terms to strip: one a line, # comments, !TERM keeps TERM.",
    ),
    click.option("--launder", metavar="MODEL", help="Rewrite every response with MODEL."),
    click.option(
        "--launder-url",
        metavar="URL",
        help=f"Base URL of the laundering model (with --launder) [default: {DEFAULT_BASE_URL}].",
    ),
    click.option(
        "--launder-key-env",
        metavar="NAME",
        help="NAME of the laundering key variable (with --launder).",
    ),
    click.option("--question", metavar="TEXT", help="The question put to the judge."),
    click.option(
        "--ask",
        "extra_questions",
        metavar="TEXT",
        multiple=True,
        help="An extra yes/no question per comparison (preference only; repeatable).",
    ),
    click.option(
        "--reason/--no-reason",
        "require_reason",
        default=None,
        help="Require a one-line reason per pick [default: only for preference].",
    ),
    click.option(
        "--from-dirs",
        "from_dirs",
        nargs=2,
        type=FilePath(dir_okay=True),
        metavar="DIR_A DIR_B",
        help="Import outputs from two candidate directories instead of calling models.",
    ),
    click.option(
        "--reference",
        type=FilePath(dir_okay=True),
        metavar="DIR",
        help="With --from-dirs: a directory of reference files shown as the prompts.",
    ),
)
