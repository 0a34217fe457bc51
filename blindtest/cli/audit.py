"""bt-audit: the mechanical tell bots and the formatting census -> RUN/audit.json."""

from __future__ import annotations

from pathlib import Path

import click

from blindtest import artifacts
from blindtest.cli._common import command, force_option, quiet_option, run_argument, writes_run


@command("audit")
@run_argument
@click.option(
    "--allow-commands",
    is_flag=True,
    help='Run the prompts\' {"command": ...} checks (a shell command per response).',
)
@click.option(
    "--command-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=30.0,
    show_default=True,
    help="Seconds each check command may run.",
)
@force_option
@quiet_option
@writes_run
def audit(
    run_dir: Path, allow_commands: bool, command_timeout: float, force: bool, quiet: bool
) -> None:
    """Replay every trial with mechanical bots and count formatting tells per model.

    \b
    Example:
      bt-audit run
      bt-audit run --allow-commands --force
    """
    from blindtest.audit import build_audit
    from blindtest.checks import subprocess_runner
    from blindtest.judge import trials_from_records

    loaded = artifacts.load_design(run_dir)
    inputs = [run_dir / name for name in (artifacts.DESIGN, artifacts.TRIALS, artifacts.RESPONSES)]
    artifacts.claim_output(run_dir / artifacts.AUDIT, "audit", force=force, inputs=inputs)
    records = artifacts.read_jsonl(run_dir / artifacts.TRIALS, "trials").records
    trials = trials_from_records(records, loaded.design)
    responses_path = run_dir / artifacts.RESPONSES
    responses = (
        artifacts.read_jsonl(responses_path, "responses").records
        if responses_path.exists()
        else None
    )
    runner = subprocess_runner(command_timeout) if allow_commands else None
    document = build_audit(loaded.design, loaded.sha256, trials, responses, runner)
    artifacts.write_json(run_dir / artifacts.AUDIT, document, "audit", force=force)
    if quiet:
        return
    for kind, bot in document["bots"].items():
        if bot.get("applicable", True):
            p = f", p = {bot['p_value']:.2g}" if bot["p_value"] is not None else ""
            click.echo(f"{kind} bot: {bot['correct']}/{bot['n']}{p}", err=True)
    for side in ("A", "B"):
        c = document["census"][side]
        click.echo(
            f"{side} ({c['model']}): {c['responses']} responses, mean "
            f"{c['mean_words'] or 0:.0f} words, {c['totals']['bullets']} bullets, "
            f"{c['totals']['em_dashes']} em dashes",
            err=True,
        )
    if responses is None:
        click.echo(f"no {artifacts.RESPONSES}: census without refusals or cut responses", err=True)
    click.echo(f"wrote {run_dir / artifacts.AUDIT}", err=True)
