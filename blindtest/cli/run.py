"""blindtest run A B --prompts F: every stage in order, through the same commands.

Its design options are the ``bt-design`` options themselves (copied from that command, so
they can never drift apart); the stages run in order and leave their files in one directory.
The same command again resumes that directory: the design must be the one the options make
(the recorded seed is reused when ``--seed`` is not given), generation fetches only what is
missing, the judge continues where they stopped. An unfinished fixed design stops the chain
before anything that reveals a result.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from blindtest import artifacts
from blindtest.cli._common import (
    DirPath,
    command,
    concurrency_option,
    timeout_option,
)
from blindtest.cli.analyze import analyze
from blindtest.cli.audit import audit
from blindtest.cli.design import design
from blindtest.cli.generate import generate
from blindtest.cli.judge import default_judge_id, judge
from blindtest.errors import BadInput, EndpointFailed, Interrupted
from blindtest.hints import blindtest_command
from blindtest.judges import JUDGE_KINDS
from blindtest.session import InputEnded

_NOT_FROM_DESIGN = {"run_dir", "model_a", "model_b", "force", "quiet"}


# --------------------------------------------------------------------------- chain helpers


@dataclass(frozen=True, slots=True)
class Judging:
    """How far one judge is in a run: ``done`` once every trial is judged, or once a
    sequential design's stopping rule ended the session (that run is finished too)."""

    judge: str
    judged: int
    total: int
    done: bool


def judging_state(run_dir: Path, judge_name: str, picks_path: Path | None = None) -> Judging:
    """Read the picks file (default RUN/picks.jsonl) and say where ``judge_name`` stands."""
    from blindtest.judge import Recorder, load_judge_run, read_picks

    run = load_judge_run(run_dir)
    path = picks_path if picks_path is not None else run_dir / artifacts.PICKS
    picks = read_picks(path, run.view, missing_ok=True).picks
    last = {}  # a judge's last word on each trial (an undo appends a correction)
    for pick in picks:
        if pick.judge == judge_name:
            last[pick.trial] = pick
    recorder = Recorder(run, judge_name, lambda _: None, earlier=list(last.values()))
    return Judging(judge_name, recorder.judged, run.view.total, recorder.done)


def picks_judges(run_dir: Path) -> list[str]:
    """The judges already in RUN/picks.jsonl, in order of first appearance."""
    path = run_dir / artifacts.PICKS
    if not path.exists():
        return []
    records = artifacts.read_jsonl(path, "picks").records
    return list(dict.fromkeys(str(r.get("judge", "")) for r in records))


@contextlib.contextmanager
def resumable(resume: str) -> Iterator[None]:
    """Every interrupted or failed ending of a chain names the command that resumes it."""
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


def say(text: str) -> None:
    click.echo(text, err=True)


def _words(param: click.Parameter, value: Any) -> list[str]:
    """How a parameter given on the command line is written again."""
    if isinstance(param, click.Argument):
        return [os.fspath(value)]
    assert isinstance(param, click.Option)
    if param.is_flag:
        if param.secondary_opts and not value:
            return [param.secondary_opts[0]]
        return [_longest(param.opts)] if value else []
    values = list(value) if param.multiple else [value]
    words: list[str] = []
    for item in values:
        parts = list(item) if isinstance(item, tuple) else [item]
        words += [
            _longest(param.opts),
            *(os.fspath(p) if isinstance(p, Path) else str(p) for p in parts),
        ]
    return words


def _longest(opts: list[str]) -> str:
    return max(opts, key=len)


def resume_command(ctx: click.Context, run_dir: Path) -> str:
    """The exact command that resumes this run: the options as given, plus ``--run-dir``."""
    words: list[str] = ["run"]
    for param in ctx.command.params:
        name = param.name or ""
        if name == "run_dir":
            continue
        if ctx.get_parameter_source(name) is not click.core.ParameterSource.COMMANDLINE:
            continue
        words += _words(param, ctx.params[name])
    return blindtest_command(*words, "--run-dir", run_dir)


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
    """Design, generate, judge, audit and analyze in one go; the same command resumes.

    \b
    Example:
      export OPENAI_API_KEY=...
      blindtest run gpt-5.4 gpt-5.4-mini --prompts prompts.txt
      blindtest run gpt-5.4 qwen3:32b --b-url http://localhost:11434/v1 --prompts prompts.txt
    """
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
        )
        bot = judge_kind.startswith("bot:")
        name = (judge_id or "").strip() or (judge_kind if bot else default_judge_id())
        if not judging_state(run_dir, name).done:
            restart = bot and name in picks_judges(run_dir)  # a bot cut short starts over
            ctx.invoke(judge, run_dir=run_dir, kind=judge_kind, judge_id=judge_id, force=restart)
        state = judging_state(run_dir, name)
        if not state.done:
            say(f"{state.judged} of {state.total} judged; continue with: {resume}")
            return
        ctx.invoke(audit, run_dir=run_dir, quiet=True, force=True)
        ctx.invoke(analyze, run_dir=run_dir)


def _design(
    ctx: click.Context, run_dir: Path, model_a: str, model_b: str, options: dict[str, Any]
) -> None:
    """Write the design, or find the same one already there (a resumed run)."""
    if (run_dir / artifacts.DESIGN).exists() and options.get("seed") is None:
        options = {**options, "seed": artifacts.load_design(run_dir).design["seed"]}
    try:
        ctx.invoke(design, run_dir=run_dir, model_a=model_a, model_b=model_b, **options)
    except artifacts.DesignDiffers as error:
        raise BadInput(
            f"{error.path} differs: {error.difference}; resume it with the options that made "
            "it, or give another --run-dir"
        ) from None


run.params.extend(p for p in design.params if p.name not in _NOT_FROM_DESIGN)
