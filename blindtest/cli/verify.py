"""bt-verify: recompute a run directory from raw materials; exit 0, or 1 with the differences."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from blindtest.cli import _options
from blindtest.cli._command import command
from blindtest.cli._options import json_option, quiet_option, run_argument
from blindtest.present.hints import stage_command
from blindtest.rundir import artifacts

if TYPE_CHECKING:
    from blindtest.pipeline.verify import Verification


@command("verify")
@run_argument
@click.option(
    "--allow-commands", is_flag=True, help="Re-run the prompts' shell-command checks too."
)
@click.option(
    "--report",
    "reports",
    multiple=True,
    type=_options.FilePath(exists=True),
    help="A report written outside RUN (bt-analyze --out) to recompute too; repeatable.",
)
@json_option
@quiet_option
def verify(
    run_dir: Path, allow_commands: bool, reports: tuple[Path, ...], as_json: bool, quiet: bool
) -> int:
    """Recompute hashes, arrangement, answer texts, blinded view, audit and report; list any
    difference.

    Every answer's text in responses.jsonl is re-derived from the raw answer recorded beside it
    (raw_text) under the design's normalization (--strip-formatting, identity stripping), with
    its identity_stripped counts. A row without raw_text is the answer as received: an edit to
    it is found only where the normalization would have changed the edited text.

    Exit 0 only for a whole run that recomputes; 1 for a difference, or for a run that is
    incomplete (responses missing, trials.jsonl missing).

    \b
    Example:
      bt-verify run
      bt-verify run --report ~/reports/run-bob.json
      bt-verify run --json
    """
    from blindtest.pipeline.verify import verify as recompute

    result = recompute(run_dir, allow_commands=allow_commands, reports=reports)
    show(result, run_dir, as_json=as_json, quiet=quiet)
    return result.exit_code  # run_main, the one error mapper, exits with it


def show(result: Verification, run_dir: Path, *, as_json: bool, quiet: bool) -> None:
    """Every file checked and every difference; with ``quiet`` only what is missing."""
    if as_json:
        click.echo(artifacts.dump_json(result.to_dict()).decode(), nl=False)
    elif not quiet:
        _print(result, run_dir)
    elif result.missing:
        click.echo(f"bt-verify: incomplete: {', '.join(result.missing)}", err=True)


def _print(result: Verification, run_dir: Path) -> None:
    for name in result.checked:
        click.echo(f"checked  {name}")
    for note in result.skipped:
        click.echo(f"SKIPPED  {note}")
    for difference in result.differences:
        click.echo(f"DIFFERS  {difference}")
    if result.differences:
        count = len(result.differences)
        click.echo(f"{count} difference(s): this run directory does not recompute")
    if result.missing:
        click.echo(
            f"incomplete: {', '.join(result.missing)}; a run with missing parts cannot be "
            f"verified; finish with: {stage_command('generate', run_dir)}"
        )
    if result.ok:
        click.echo("verified: everything recomputes")
