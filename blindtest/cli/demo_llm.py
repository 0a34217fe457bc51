"""``make demo-llm``: the whole chain judged by a simulated LLM judge.

Starts the simulator on a free 127.0.0.1 port, then runs design (preference, bundled prompts,
4 hidden control trials that measure the judge where there is nothing to find) -> generate ->
``bt-judge --judge llm:sim-judge-fair`` (spec 003's prompt, position swap) -> audit -> analyze
through the stage functions, each shown as its command shows it. The report ends with the
judge's diagnostics: position, length and markdown preferences, swap consistency, its
control results, leakage, retries and tokens.
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

from blindtest.analysis.stage import analyze
from blindtest.auditing.stage import audit
from blindtest.cli import analyze as cli_analyze
from blindtest.cli import design as cli_design
from blindtest.cli import judge as cli_judge
from blindtest.cli._chain import say
from blindtest.cli._exits import exit_mapped
from blindtest.cli.demo import demo_simulator
from blindtest.designing.stage import design
from blindtest.errors import BadInput
from blindtest.generation.stage import generate
from blindtest.judging.stage import LlmSettings, judge
from blindtest.pipeline.chain import check_demo_dir
from blindtest.present.hints import stage_command
from blindtest.rundir import artifacts, locking

DEMO_DIR = Path("demo-llm-run")
JUDGE = "llm:sim-judge-fair"


def run_demo(run_dir: Path) -> int:
    port = check_demo_dir(run_dir)
    with locking.run_lock(run_dir, "make demo-llm"):
        if port:
            say(f"resuming the demo in {run_dir}/ (nothing is deleted)")
        with demo_simulator(run_dir, port) as simulator:
            url = simulator.base_url
            say(f"simulator serving sim-large, sim-small and the judge sim-judge-fair on {url}\n")
            try:
                designed = design(
                    run_dir, demo=True, protocol="preference", model_a="sim-large",
                    model_b="sim-small", a_url=url, b_url=url, seed="demo-llm", controls=4,
                    on_dropped=cli_design.show_dropped,
                )  # fmt: skip
            except artifacts.DesignDiffers as error:
                raise BadInput(
                    f"{run_dir} holds a different design ({error.difference}); the demo "
                    "resumes only its own run: give it another directory"
                ) from None
            cli_design.show(designed)
            generate(run_dir)
            show = stage_command("judge", run_dir, "--judge", JUDGE, "--show-prompt", "1")
            say(f"\nthe judge is {JUDGE}; the prompt it gets for trial 1:\n  {show}\n")
            sat = judge(
                run_dir,
                JUDGE,
                llm=LlmSettings(url=url),
                echo=click.echo,
                resume_options=["--judge", JUDGE, "--judge-url", url],
            )
            cli_judge.show_closing(sat)
            failure = sat.failure()
            if failure is not None:
                raise failure
        audit(run_dir, force=True)
        click.echo("", err=True)
        analysis = analyze(run_dir)
        cli_analyze.show(
            analysis.report, run_dir, as_json=False, quiet=False, brief=False, reveal=False
        )
        return analysis.exit_code


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
