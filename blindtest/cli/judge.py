"""bt-judge: RUN/trials.jsonl -> RUN/picks.jsonl (or --out FILE), judged by a person in this
terminal or by a mechanical judge; ``--check FILE`` validates an external judge's picks.

Options and output only: the stage is :func:`blindtest.judging.stage.judge` (one sitting into
the picks file, ``blindtest.judging.sitting``); the hidden stopping rule lives in
``blindtest.judging.recorder``, the kinds of judge in ``blindtest.model.judge_kinds`` (the
registry), the driver in ``blindtest.judging.driver``, the terminal session in
``blindtest.judging.terminal.session``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from blindtest.cli import _batch, _chain, _check, _llm, _prose, _web
from blindtest.cli._command import command
from blindtest.cli._options import FilePath, force_option, quiet_option, run_argument
from blindtest.errors import BadInput
from blindtest.model.judge_kinds import judge_help

if TYPE_CHECKING:
    from blindtest.judging.stage import JudgeResult


@command("judge")
@run_argument
@click.option(
    "--judge",
    "kind",
    metavar="KIND",
    default="human",
    show_default=True,
    help=judge_help(),
)
@click.option(
    "--judge-id",
    default=None,
    help="Name written on every pick (default: your user name; for a bot, its kind).",
)
@click.option(
    "--out",
    type=FilePath(),
    default=None,
    help="Picks file to write (default: RUN/picks.jsonl); give each extra judge its own.",
)
@click.option(
    "--check",
    "check_file",
    type=FilePath(),
    default=None,
    is_flag=False,
    flag_value=_check.ENDPOINT_CHECK,
    metavar="[FILE]",
    help="Only validate FILE, an external judge's picks, against the design and trials; "
    "with --judge llm:MODEL and no FILE: ask the judge one small request and say what is "
    "wrong (key, URL, model, context, parameters, cost), writing nothing.",
)
@_llm.options
@_batch.judge_options
@_web.options
@force_option
@quiet_option
def judge(
    run_dir: Path,
    kind: str,
    judge_id: str | None,
    out: Path | None,
    check_file: Path | None,
    web: bool,
    host: str,
    port: int,
    panel: str | None,
    per_judge: int | None,
    no_browser: bool,
    session_cap: int,
    force: bool,
    quiet: bool,
    **llm: Any,
) -> None:
    """Judge the blinded trials of RUN: in this terminal, on a web page, by a bot, or by a model.

    A person resumes where they stopped: rerun the same command. --force restarts the file.

    \b
    Example:
      bt-judge runs/demo
      bt-judge runs/demo --judge bot:length --out runs/demo/picks-length.jsonl
      bt-judge runs/demo --check their-picks.jsonl
      bt-judge runs/demo --judge llm:gpt-4o --out runs/demo/picks-gpt-4o.jsonl
      bt-judge runs/demo --web
    """
    ctx = click.get_current_context()
    kind = _web.web_kind(ctx, kind, web)
    batch = _batch.judge_batch_args(ctx, llm)
    if check_file == Path(_check.ENDPOINT_CHECK):
        _check.judge(run_dir, kind, ctx, llm)
        return
    if check_file is not None:
        flags = {"kind": "--judge", "judge_id": "--judge-id", "out": "--out", "force": "--force"}
        given = [
            flag
            for name, flag in flags.items()
            if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
        ]
        if given:
            raise BadInput(f"--check only validates a file; drop {', '.join(given)}")
        from blindtest.judging.stage import check_picks

        checked = check_picks(run_dir, check_file)
        if not quiet:
            click.echo(checked.summary)
        return
    if _web.is_panel(panel, per_judge, judge_id, out):
        assert panel is not None
        from blindtest.judging.stage import judge_panel

        ended = judge_panel(
            run_dir, panel, per_judge=per_judge, force=force, host=host, port=port,
            open_browser=not no_browser, session_cap=session_cap, echo=click.echo,
            holder=_chain.stage_label(),
        )  # fmt: skip
        if not quiet:
            click.echo(ended.closing)
        return
    chosen = _llm.settings(ctx, kind, llm)
    if chosen is not None and llm["show_prompt"] is not None:
        _llm.show_prompt(run_dir, kind, chosen, llm["show_prompt"])
        return
    from blindtest.judging.stage import judge as sit

    result = sit(
        run_dir,
        kind,
        judge_id=judge_id,
        out=out,
        force=force,
        llm=chosen,
        **batch,
        host=host,
        port=port,
        open_browser=not no_browser,
        session_cap=session_cap,
        echo=click.echo,
        say=_prose.say_unless(quiet),
        show=None if quiet else click.echo,
        batch_progress=_batch.progress_line(quiet),
        resume_options=[] if chosen is None else _llm.resume_args(kind, llm, ctx),
        holder=_chain.stage_label(),
    )
    if not quiet:
        show_closing(result)
    failure = result.failure()
    if failure is not None:
        raise failure


def show_closing(result: JudgeResult) -> None:
    """A sitting's last line (a batch export or import says its own)."""
    if result.result is not None:
        _prose.echo_prose(result.closing)
