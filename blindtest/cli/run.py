"""blindtest run A B --prompts F: every stage in order, through the same commands.

Its design options are the ``bt-design`` options themselves (one group in ``_common``, so
they can never drift apart); the stages run in order and leave their files in one directory.
The same command again resumes that directory: the design must be the one the options make
(the recorded seed is reused when ``--seed`` is not given), generation fetches only what is
missing, the judge continues where they stopped. An unfinished fixed design stops the chain
before anything that reveals a result.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from blindtest import artifacts
from blindtest.chain import judging_state, picks_judges, recorded_seed
from blindtest.cli import _common
from blindtest.cli._common import DirPath, command, concurrency_option, echo_prose, resumable
from blindtest.cli.analyze import analyze
from blindtest.cli.audit import audit
from blindtest.cli.design import design
from blindtest.cli.generate import generate
from blindtest.cli.judge import default_judge_id, judge
from blindtest.errors import BadInput
from blindtest.hints import blindtest_command
from blindtest.judges import JUDGE_KINDS
from blindtest.llm_judge import check_judge_key


def resume_command(ctx: click.Context, run_dir: Path) -> str:
    """The exact command that resumes this run: the options as given, plus ``--run-dir``."""
    words = _common.given_words(ctx, skip=("run_dir",))
    return blindtest_command("run", *words, "--run-dir", run_dir)


# --------------------------------------------------------------------------- the command


@command("run")
@click.argument("model_a", metavar="A")
@click.argument("model_b", metavar="B")
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
    help=f"Who judges: {', '.join(JUDGE_KINDS)}, or llm:MODEL (a model judges).",
)
@click.option("--judge-id", help="Name written on every pick (default: your user name).")
@click.option("--judge-url", metavar="URL", help="llm:MODEL: the judge model's base URL.")
@click.option("--judge-key-env", metavar="NAME", help="llm:MODEL: variable holding its key.")
@concurrency_option
@_common.side_transport_options
@_common.timeout_option
@_common.price_options
@_common.prompt_source_options
@_common.design_options
@click.pass_context
def run(
    ctx: click.Context,
    /,
    model_a: str,
    model_b: str,
    run_dir: Path | None,
    judge_kind: str,
    judge_id: str | None,
    judge_url: str | None,
    judge_key_env: str | None,
    concurrency: int,
    timeout: float,
    price_a: str | None,
    price_b: str | None,
    a_concurrency: int | None,
    b_concurrency: int | None,
    a_rpm: float | None,
    b_rpm: float | None,
    a_header_env: tuple[str, ...],
    b_header_env: tuple[str, ...],
    **design_options: Any,
) -> int:
    """Design, generate, judge, audit and analyze in one go; the same command resumes.

    \b
    Example:
      export OPENAI_API_KEY=...
      blindtest run gpt-5.4 gpt-5.4-mini --prompts prompts.txt
      blindtest run gpt-5.4 qwen3:32b --b-url http://localhost:11434/v1 --prompts prompts.txt
    """
    if judge_kind.startswith("llm:"):
        check_judge_key(judge_kind, judge_url, judge_key_env)
    run_dir = run_dir or Path(time.strftime("blindtest-run-%Y%m%d-%H%M%S"))
    resume = resume_command(ctx, run_dir)
    with artifacts.run_lock(run_dir, "blindtest run"), resumable(resume):
        _design(ctx, run_dir, model_a, model_b, design_options)
        ctx.invoke(
            generate,
            run_dir=run_dir,
            concurrency=concurrency,
            timeout=timeout,
            price_a=price_a,
            price_b=price_b,
            a_concurrency=a_concurrency,
            b_concurrency=b_concurrency,
            a_rpm=a_rpm,
            b_rpm=b_rpm,
            a_header_env=a_header_env,
            b_header_env=b_header_env,
        )
        bot = judge_kind.startswith("bot:")
        model = judge_kind.removeprefix("llm:") if judge_kind.startswith("llm:") else None
        name = (judge_id or "").strip() or (judge_kind if bot else model or default_judge_id())
        if not judging_state(run_dir, name).done:
            restart = bot and name in picks_judges(run_dir)  # a bot cut short starts over
            llm = {"judge_url": judge_url, "judge_key_env": judge_key_env} if model else {}
            ctx.invoke(
                judge, run_dir=run_dir, kind=judge_kind, judge_id=judge_id, force=restart, **llm
            )
        state = judging_state(run_dir, name)
        if not state.done:
            echo_prose(f"{state.judged} of {state.total} judged; continue with: {resume}", err=True)
            return 0
        ctx.invoke(audit, run_dir=run_dir, quiet=True, force=True)
        return int(ctx.invoke(analyze, run_dir=run_dir))


def _design(
    ctx: click.Context, run_dir: Path, model_a: str, model_b: str, options: dict[str, Any]
) -> None:
    """Write the design, or find the same one already there (a resumed run)."""
    if options.get("seed") is None:
        options = {**options, "seed": recorded_seed(run_dir)}
    try:
        ctx.invoke(design, run_dir=run_dir, model_a=model_a, model_b=model_b, **options)
    except artifacts.DesignDiffers as error:
        raise BadInput(
            f"{error.path} differs: {error.difference}; resume it with the options that made "
            "it, or give another --run-dir"
        ) from None
