"""``make demo``: the whole chain on the bundled prompts against the local simulator.

Starts the simulator on a free 127.0.0.1 port, runs design -> generate -> judge -> audit ->
analyze -> verify through the real commands, and stops the simulator. The judge is you when
stdin is a terminal, and the length bot otherwise (it says so). Simulated models and generic
prompts: the result shows how blindtest works and says nothing about real models.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import click

from blindtest.cli import cli
from blindtest.simulator import running

DEMO_DIR = Path("demo-run")


def _stage(*args: str) -> None:
    code = cli.main(list(args), prog_name="blindtest", standalone_mode=False)
    if code:
        raise SystemExit(code)


def main(argv: list[str] | None = None) -> int:
    run_dir = Path(argv[0]) if argv else DEMO_DIR
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    shutil.rmtree(run_dir, ignore_errors=True)
    with running() as simulator:
        url = simulator.base_url
        click.echo(f"simulator serving sim-large and sim-small on {url}\n", err=True)
        _stage(
            "design",
            str(run_dir),
            "--demo",
            "--a",
            "sim-large",
            "--b",
            "sim-small",
            "--a-url",
            url,
            "--b-url",
            url,
            "--seed",
            "demo",
        )
        _stage("generate", str(run_dir), "--price-a", "2.5,10", "--price-b", "0.15,0.6")
        if interactive:
            click.echo("\nYou are the judge: pick the odd one out in each trial.\n", err=True)
            _stage("judge", str(run_dir))
        else:
            click.echo(
                "\nstdin is not a terminal, so the length bot judges this demo "
                "(run `make demo` in a terminal to judge it yourself).\n",
                err=True,
            )
            _stage("judge", str(run_dir), "--judge", "bot:length", "--quiet")
    _stage("audit", str(run_dir), "--quiet")
    click.echo("", err=True)
    _stage("analyze", str(run_dir), "--brief")
    click.echo("", err=True)
    _stage("verify", str(run_dir), "--quiet")
    click.echo(
        f"\nbt-verify: every file in {run_dir}/ recomputes. Look inside: design.json, "
        "responses.jsonl, trials.jsonl, picks.jsonl, audit.json, report.json.",
        err=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
