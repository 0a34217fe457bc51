"""``make demo-llm``: the whole chain judged by a simulated LLM judge.

Starts the simulator on a free 127.0.0.1 port, then runs design (preference, bundled prompts,
4 hidden control trials that measure the judge where there is nothing to find) -> generate ->
``bt-judge --judge llm:sim-judge-fair`` (spec 003's prompt, position swap) -> audit -> analyze
through the real commands. The report ends with the judge's diagnostics: position, length and
markdown preferences, swap consistency, its control results, leakage, retries and tokens.
Simulated models and a simulated judge: it shows how an LLM judge is run and checked, and says
nothing about real models.

Like ``make demo`` it never deletes anything: run again on the same directory, it resumes (the
simulator comes back on the port the design records, generation and the judge ask only what is
missing) and shows the report again. A directory holding anything but this demo is refused.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from blindtest import artifacts
from blindtest.chain import check_demo_dir
from blindtest.cli import cli
from blindtest.cli._common import exit_mapped, say
from blindtest.cli.demo import demo_simulator
from blindtest.errors import BadInput
from blindtest.hints import stage_command

DEMO_DIR = Path("demo-llm-run")
JUDGE = "llm:sim-judge-fair"


def _stage(*args: str) -> int:
    code = cli.main(list(args), prog_name="blindtest", standalone_mode=False)
    return code if isinstance(code, int) else 0


def run_demo(run_dir: Path) -> int:
    port = check_demo_dir(run_dir)
    with artifacts.run_lock(run_dir, "make demo-llm"):
        if port:
            say(f"resuming the demo in {run_dir}/ (nothing is deleted)")
        with demo_simulator(run_dir, port) as simulator:
            url = simulator.base_url
            say(f"simulator serving sim-large, sim-small and the judge sim-judge-fair on {url}\n")
            try:
                _stage(
                    "design", str(run_dir), "--demo", "--protocol", "preference", "--a",
                    "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed",
                    "demo-llm", "--controls", "4",
                )  # fmt: skip
            except artifacts.DesignDiffers as error:
                raise BadInput(
                    f"{run_dir} holds a different design ({error.difference}); the demo "
                    "resumes only its own run: give it another directory"
                ) from None
            _stage("generate", str(run_dir), "--quiet")
            show = stage_command("judge", run_dir, "--judge", JUDGE, "--show-prompt", "1")
            say(f"\nthe judge is {JUDGE}; the prompt it gets for trial 1:\n  {show}\n")
            _stage("judge", str(run_dir), "--judge", JUDGE, "--judge-url", url)
        _stage("audit", str(run_dir), "--quiet", "--force")
        click.echo("", err=True)
        return _stage("analyze", str(run_dir))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        click.echo("usage: python -m blindtest.cli.demo_llm [DIR]   (make demo-llm)\n")
        click.echo((__doc__ or "").strip())
        return 0
    if len(args) > 1 or (args and (args[0].startswith("-") or not args[0].strip())):
        raise BadInput("usage: python -m blindtest.cli.demo_llm [DIR]")
    return run_demo(Path(args[0]) if args else DEMO_DIR)


if __name__ == "__main__":
    exit_mapped("make demo-llm", lambda: main(sys.argv[1:]))
