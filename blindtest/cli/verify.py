"""bt-verify: recompute a run directory from raw materials; exit 0, or 1 with the differences."""

from __future__ import annotations

from pathlib import Path

import click

from blindtest import artifacts
from blindtest.cli._common import command, json_option, quiet_option, run_argument


@command("verify")
@run_argument
@click.option(
    "--allow-commands", is_flag=True, help="Re-run the prompts' shell-command checks too."
)
@json_option
@quiet_option
def verify(run_dir: Path, allow_commands: bool, as_json: bool, quiet: bool) -> None:
    """Recompute hashes, arrangement, blinded view, audit and report; list any difference.

    \b
    Example:
      bt-verify run
      bt-verify run --json
    """
    from blindtest.checks import subprocess_runner
    from blindtest.verify import verify_run

    result = verify_run(run_dir, runner=subprocess_runner() if allow_commands else None)
    if as_json:
        click.echo(artifacts.dump_json(result.to_dict()).decode(), nl=False)
    elif not quiet:
        for name in result.checked:
            click.echo(f"checked  {name}")
        for difference in result.differences:
            click.echo(f"DIFFERS  {difference}")
        click.echo(
            "verified: everything recomputes"
            if result.ok
            else f"{len(result.differences)} difference(s): this run directory does not recompute"
        )
    if not result.ok:
        raise SystemExit(1)
