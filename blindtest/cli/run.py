"""blindtest run A B --prompts F: every stage in order (:func:`blindtest.pipeline.run.run`),
each shown as its own command shows it.

Its design options are the ``bt-design`` options themselves (one group in ``_options``, so
they can never drift apart); the stages run in order and leave their files in one directory.
The same command again resumes that directory: the design must be the one the options make
(the recorded seed is reused when ``--seed`` is not given), generation fetches only what is
missing, the judge continues where they stopped. An unfinished fixed design stops the chain
before anything that reveals a result.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from blindtest.cli import _chain, _check, _decide, _design_options, _options
from blindtest.cli._chain import resumable
from blindtest.cli._command import command
from blindtest.cli._options import DirPath, concurrency_option, quiet_option
from blindtest.cli._prose import echo_prose
from blindtest.model.judge_kinds import judge_help
from blindtest.present.hints import blindtest_command


def resume_command(ctx: click.Context, run_dir: Path) -> str:
    """The exact command that resumes this run: the options as given, plus ``--run-dir``."""
    words = _chain.given_words(ctx, skip=("run_dir",))
    return blindtest_command("run", *words, "--run-dir", run_dir)


# --------------------------------------------------------------------------- the command


@command("run")
@click.argument("models", nargs=-1, metavar="[A B]")
@click.option(
    "--run-dir",
    type=DirPath(),
    help="Where the stages write (default: blindtest-run-DATE-TIME); the same command with "
    "the same --run-dir resumes.",
)
@click.option(
    "--judge",
    "judge_kind",
    default="human",
    show_default=True,
    metavar="KIND",
    help=judge_help(),
)
@click.option("--judge-id", help="Name written on every pick (default: your user name).")
@click.option("--judge-url", metavar="URL", help="llm:MODEL: the judge model's base URL.")
@click.option("--judge-key-env", metavar="NAME", help="llm:MODEL: variable holding its key.")
@_options.html_option
@_options.fail_on_options
@concurrency_option
@_options.side_transport_options
@_options.timeout_option
@_options.price_options
@_design_options.prompt_source_options
@_design_options.candidate_options
@_design_options.design_options
@_check.option
@quiet_option
@click.pass_context
def run(
    ctx: click.Context,
    /,
    models: tuple[str, ...],
    run_dir: Path | None,
    judge_kind: str,
    judge_id: str | None,
    judge_url: str | None,
    judge_key_env: str | None,
    html_path: Path | None,
    fail_on: tuple[str, ...],
    strict: bool,
    concurrency: int,
    timeout: float,
    check: bool,
    quiet: bool,
    **design_options: Any,
) -> int:
    """Design, generate, judge, audit and analyze in one go; the same command resumes.

    \b
    Example:
      export OPENAI_API_KEY=...
      blindtest run gpt-5.4 gpt-5.4-mini --prompts prompts.txt
      blindtest run gpt-5.4 qwen3:32b --b-url http://localhost:11434/v1 --prompts prompts.txt
      blindtest run --prompts prompts.txt --sides candidates.toml --judge web

    A B are the two sides' models; a design of several candidates (--candidate, --sides,
    or three or more --from-dirs) takes none.
    """
    from blindtest.cli import analyze, design, generate, judge
    from blindtest.pipeline.run import RunHooks, two_models
    from blindtest.pipeline.run import run as chain

    model_a, model_b = two_models(models, design_options)
    prices = _options.given_prices(design_options)  # taken out: the rest are the design's
    transport = {name: design_options.pop(name) for name in _options.SIDE_TRANSPORT}
    if check:
        return _check.run(
            run_dir, model_a, model_b, judge_kind=judge_kind, judge_url=judge_url,
            judge_key_env=judge_key_env, timeout=timeout, prices=prices,
            transport=transport, **design_options,
        )  # fmt: skip
    run_dir = run_dir or Path(time.strftime("blindtest-run-%Y%m%d-%H%M%S"))
    resume = resume_command(ctx, run_dir)
    hooks = (
        RunHooks(echo=click.echo)  # a person judging still sees the trials
        if quiet
        else RunHooks(
            dropped=design.show_dropped,
            designed=design.show,
            say=lambda text: echo_prose(text, err=True),
            on_progress=generate.ProgressLine() if sys.stderr.isatty() else None,
            judged=judge.show_closing,
            echo=click.echo,
        )
    )
    with resumable(resume):
        result = chain(
            run_dir, model_a, model_b, judge_kind=judge_kind, judge_id=judge_id,
            judge_url=judge_url, judge_key_env=judge_key_env, concurrency=concurrency,
            timeout=timeout, prices=prices, transport=transport,
            hooks=hooks, html=html_path, fail_on=fail_on, strict=strict, **design_options,
        )  # fmt: skip
    if result.analysis is None:
        if quiet:
            return 0
        echo_prose(f"{result.judged} of {result.total} judged; continue with: {resume}", err=True)
        return 0
    analyze.show(
        result.analysis.report, run_dir, as_json=False, quiet=quiet, brief=False, reveal=False
    )
    _decide.show_failed_on(result.analysis.failed_on, strict=strict)
    return result.exit_code
