"""bt-audit: the mechanical tell bots and the formatting census -> RUN/audit.json."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from blindtest import reportfmt
from blindtest.cli._chain import stage_label
from blindtest.cli._command import command
from blindtest.cli._options import force_option, quiet_option, run_argument
from blindtest.present.hints import stage_command
from blindtest.rundir import artifacts


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
@click.option(
    "--show",
    is_flag=True,
    help="Print the bots' scores and the census per model (they reveal which side is which: "
    "not for a judge who has not finished).",
)
@force_option
@quiet_option
def audit(
    run_dir: Path,
    allow_commands: bool,
    command_timeout: float,
    show: bool,
    force: bool,
    quiet: bool,
) -> None:
    """Replay every trial with mechanical bots and count formatting tells per model.

    Prints no score unless --show: a judge still judging must not learn what a bot found.

    \b
    Example:
      bt-audit run
      bt-audit run --allow-commands --force
    """
    from blindtest.auditing.stage import audit as replay

    done = replay(
        run_dir,
        allow_commands=allow_commands,
        command_timeout=command_timeout,
        force=force,
        holder=stage_label(),
    )
    document = done.document
    if quiet:
        return
    if document["responses_missing"]:
        expected = document["responses_missing"] + (document["responses_seen"] or 0)
        click.echo(
            f"{artifacts.RESPONSES} answers {expected - document['responses_missing']} of "
            f"{expected} slots: the census and checks leave {document['responses_missing']} "
            f"out; {stage_command('generate', run_dir)} fetches them",
            err=True,
        )
    if not done.has_responses:
        click.echo(f"no {artifacts.RESPONSES}: census without refusals or cut responses", err=True)
    if show:
        _show(document)
    elif stripping := document.get("identity_stripping"):
        # Side-free: the total says stripping fired, never on which side.
        mentions = sum(stripping["mentions"].values())
        if mentions:
            touched = sum(stripping["responses"].values())
            click.echo(
                f"identity stripping replaced {mentions} mention(s) in {touched} response(s) "
                "(per side with --show)",
                err=True,
            )
    click.echo(
        f"wrote {run_dir / artifacts.AUDIT}; {stage_command('analyze', run_dir)} puts the "
        "bots and the census beside the judge's result",
        err=True,
    )


def _show(document: Mapping[str, Any]) -> None:
    from blindtest.auditing.build import candidate_tell_lines

    sides = document.get("candidates") or ("A", "B")
    for kind, bot in document["bots"].items():
        if "per_candidate" in bot:
            for line in candidate_tell_lines(document, kind):
                click.echo(line, err=True)
        elif bot.get("applicable", True):
            p = f", p = {bot['p_value']:.2g}" if bot["p_value"] is not None else ""
            click.echo(f"{kind} bot: {bot['correct']}/{bot['n']}{p}", err=True)
    for side in sides:
        c = document["census"][side]
        click.echo(
            f"{side} ({c['model']}): {reportfmt.count(c['responses'], 'response')}, mean "
            f"{c['mean_words'] or 0:.0f} words, "
            f"{reportfmt.count(c['totals']['bullets'], 'bullet')}, "
            f"{reportfmt.count(c['totals']['em_dashes'], 'em dash', 'em dashes')}",
            err=True,
        )
    stripping = document.get("identity_stripping")
    if stripping and stripping["enabled"]:
        for side in sides:
            terms = ", ".join(
                f"{term} {entry['mentions'][side]}"
                for term, entry in stripping["terms"].items()
                if entry["mentions"][side]
            )
            click.echo(
                f"{side} identity stripping: {stripping['mentions'][side]} mention(s) in "
                f"{stripping['responses'][side]} of {stripping['shown'][side]} responses"
                + (f" ({terms})" if terms else ""),
                err=True,
            )
