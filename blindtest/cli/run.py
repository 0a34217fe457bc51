"""blindtest run A B --prompts F: every stage in order, through the same commands.

Its design options are the ``bt-design`` options themselves (copied from that command, so
they can never drift apart); the stages run in order and leave their files in one directory.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from blindtest.cli._common import command, concurrency_option, timeout_option
from blindtest.cli.analyze import analyze
from blindtest.cli.audit import audit
from blindtest.cli.design import design
from blindtest.cli.generate import generate
from blindtest.cli.judge import judge
from blindtest.judge import JUDGE_KINDS

_NOT_FROM_DESIGN = {"run_dir", "model_a", "model_b", "force", "quiet"}


@command("run")
@click.argument("model_a", metavar="A")
@click.argument("model_b", metavar="B")
@click.option(
    "--run-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the stages write (default: blindtest-run-DATE-TIME).",
)
@click.option(
    "--judge",
    "judge_kind",
    default="human",
    show_default=True,
    type=click.Choice(JUDGE_KINDS),
    help="Who judges: you, in this terminal, or a mechanical judge.",
)
@click.option("--judge-id", help="Name written on every pick (default: your user name).")
@concurrency_option
@timeout_option
@click.option("--price-a", metavar="IN,OUT", help="Side A price, dollars per million tokens.")
@click.option("--price-b", metavar="IN,OUT", help="Side B price, dollars per million tokens.")
@click.pass_context
def run(
    ctx: click.Context,
    /,
    model_a: str,
    model_b: str,
    run_dir: Path | None,
    judge_kind: str,
    judge_id: str | None,
    concurrency: int,
    timeout: float,
    price_a: str | None,
    price_b: str | None,
    **design_options: Any,
) -> None:
    """Design, generate, judge, audit and analyze in one go.

    \b
    Example:
      export OPENAI_API_KEY=...
      blindtest run gpt-5.4 gpt-5.4-mini --prompts prompts.txt
      blindtest run gpt-5.4 qwen3:32b --b-url http://localhost:11434/v1 --prompts prompts.txt
    """
    run_dir = run_dir or Path(time.strftime("blindtest-run-%Y%m%d-%H%M%S"))
    ctx.invoke(design, run_dir=run_dir, model_a=model_a, model_b=model_b, **design_options)
    ctx.invoke(
        generate,
        run_dir=run_dir,
        concurrency=concurrency,
        timeout=timeout,
        price_a=price_a,
        price_b=price_b,
    )
    ctx.invoke(judge, run_dir=run_dir, kind=judge_kind, judge_id=judge_id)
    ctx.invoke(audit, run_dir=run_dir, quiet=True)
    ctx.invoke(analyze, run_dir=run_dir)


run.params.extend(p for p in design.params if p.name not in _NOT_FROM_DESIGN)
