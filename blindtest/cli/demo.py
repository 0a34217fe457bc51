"""``make demo``: the whole chain on the bundled prompts against the local simulator.

Starts the simulator on a free 127.0.0.1 port, runs design -> generate -> judge -> audit ->
analyze -> verify through the stage functions (each shown as its command shows it), and
stops the simulator. The judge is you when
stdin is a terminal, and the length bot otherwise (it says so). Simulated models and generic
prompts: the result shows how blindtest works and says nothing about real models.

It never deletes anything. Run again on the same directory, it resumes: the design must be the
demo's (the simulator comes back on the port the design records), generation fetches what is
missing, the judge continues where they stopped, and the result is shown only once every
trial is judged. A directory holding anything but a demo run is refused.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from blindtest.analysis.stage import analyze
from blindtest.auditing.stage import audit
from blindtest.cli import analyze as cli_analyze
from blindtest.cli import design as cli_design
from blindtest.cli import generate as cli_generate
from blindtest.cli import judge as cli_judge
from blindtest.cli import verify as cli_verify
from blindtest.cli._chain import resumable, say
from blindtest.cli._exits import exit_mapped
from blindtest.cli._prose import echo_prose
from blindtest.designing.stage import design
from blindtest.errors import BadInput
from blindtest.generation.stage import generate
from blindtest.judging.stage import JudgeResult, default_judge_id, judge
from blindtest.pipeline.chain import check_demo_dir, judging_state, picks_judges
from blindtest.pipeline.verify import verify
from blindtest.present.hints import shown_path
from blindtest.rundir import artifacts, locking
from blindtest.simulator import Simulator, running

DEMO_DIR = Path("demo-run")
LENGTH_BOT = "bot:length"


def _under_make() -> bool:
    return bool(os.environ.get("MAKELEVEL"))


def resume_command(run_dir: Path) -> str:
    """The command that runs this demo again, as it was started (``make demo`` or the module)."""
    if _under_make():
        extra = "" if run_dir == DEMO_DIR else f" DEMO_RUN={shlex.quote(str(run_dir))}"
        return f"make demo{extra}"
    return shlex.join([shown_path(Path(sys.executable)), "-m", "blindtest.cli.demo", str(run_dir)])


@contextlib.contextmanager
def demo_simulator(run_dir: Path, port: int) -> Iterator[Simulator]:
    """The simulator on the port a resumed demo's design records (0: a free one)."""
    with contextlib.ExitStack() as stack:
        try:
            simulator = stack.enter_context(running(port=port))
        except OSError as error:
            raise BadInput(
                f"cannot start the simulator on port {port}, which {run_dir}/design.json "
                f"records: {error.strerror or error}; stop what uses it and run again"
            ) from None
        yield simulator


def run_demo(run_dir: Path) -> int:
    resume = resume_command(run_dir)
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    port = check_demo_dir(run_dir)
    with locking.run_lock(run_dir, "make demo"), resumable(resume):
        if port:
            say(f"resuming the demo in {run_dir}/ (nothing is deleted)")
        with demo_simulator(run_dir, port) as simulator:
            name = _judge_chain(run_dir, simulator.base_url, interactive, resume)
        if name is None:
            return 0
        audit(run_dir, force=True)
        click.echo("", err=True)
        analysis = analyze(run_dir)
        cli_analyze.show(
            analysis.report, run_dir, as_json=False, quiet=False, brief=True, reveal=False
        )
        code = analysis.exit_code
        click.echo("", err=True)
        if not code:
            verified = verify(run_dir)
            cli_verify.show(verified, run_dir, as_json=False, quiet=True)
            code = verified.exit_code
        if code:
            return code
    echo_prose(
        f"\nbt-verify: every file in {run_dir}/ recomputes. Look inside: design.json, "
        "responses.jsonl, trials.jsonl, picks.jsonl, audit.json, report.json.",
        err=True,
    )
    return 0


def _judge_chain(run_dir: Path, url: str, interactive: bool, resume: str) -> str | None:
    """Design, generate and judge; the judge's name when every trial is judged, else None
    (after saying how far the judging got and how to continue)."""
    say(f"simulator serving sim-large and sim-small on {url}\n")
    try:
        designed = design(
            run_dir, demo=True, model_a="sim-large", model_b="sim-small", a_url=url, b_url=url,
            seed="demo", on_dropped=cli_design.show_dropped,
        )  # fmt: skip
    except artifacts.DesignDiffers as error:
        raise BadInput(
            f"{run_dir} holds a different design ({error.difference}); the demo resumes only "
            "its own run: give it another directory"
        ) from None
    cli_design.show(designed)
    generate(
        run_dir,
        prices={"A": "2.5,10", "B": "0.15,0.6"},
        say=lambda text: echo_prose(text, err=True),
        on_progress=cli_generate.ProgressLine() if sys.stderr.isatty() else None,
    )
    earlier = picks_judges(run_dir)
    name = earlier[0] if earlier else (default_judge_id() if interactive else LENGTH_BOT)
    state = judging_state(run_dir, name)
    if interactive and name == LENGTH_BOT:
        say(
            f"{run_dir}/ was judged by the length bot (stdin was not a terminal then); to judge "
            "a demo yourself, give it another directory: make demo DEMO_RUN=my-demo"
        )
    if not state.done and name != LENGTH_BOT and not interactive:
        say(
            f"{state.judged} of {state.total} judged by {name}; stdin is not a terminal: "
            f"continue in a terminal with: {resume}"
        )
        return None
    if not state.done and name == LENGTH_BOT:
        if not interactive:
            say(
                "\nstdin is not a terminal, so the length bot judges this demo "
                "(run `make demo` in a terminal to judge it yourself).\n"
            )
        _sit(judge(run_dir, LENGTH_BOT, force=bool(earlier), resume_options=[]), quiet=True)
    elif not state.done:
        say("\nYou are the judge: pick the odd one out in each trial.\n")
        _sit(judge(run_dir, judge_id=name, echo=click.echo, resume_options=[]), quiet=False)
    state = judging_state(run_dir, name)
    if not state.done:
        echo_prose(f"\n{state.judged} of {state.total} judged; continue with: {resume}", err=True)
        return None
    return name


def _sit(result: JudgeResult, *, quiet: bool) -> None:
    """A sitting's end as bt-judge shows it (nothing with ``quiet``)."""
    if not quiet:
        cli_judge.show_closing(result)
    failure = result.failure()
    if failure is not None:
        raise failure


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        click.echo("usage: python -m blindtest.cli.demo [DIR]   (make demo [DEMO_RUN=DIR])\n")
        click.echo((__doc__ or "").strip())
        return 0
    if len(args) > 1 or (args and args[0].startswith("-")):
        raise BadInput(f"unexpected {args[-1]!r}; usage: python -m blindtest.cli.demo [DIR]")
    if args and not args[0].strip():
        if _under_make():
            raise BadInput("DEMO_RUN is empty; name a directory, e.g. make demo DEMO_RUN=demo-run")
        raise BadInput("the demo directory is empty (an unset variable?); name a directory")
    return run_demo(Path(args[0]) if args else DEMO_DIR)


if __name__ == "__main__":
    exit_mapped("make demo" if _under_make() else "blindtest.cli.demo", lambda: main(sys.argv[1:]))
