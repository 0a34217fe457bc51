"""``make demo``: the whole chain on the bundled prompts against the local simulator.

Starts the simulator on a free 127.0.0.1 port, runs design -> generate -> judge -> audit ->
analyze -> verify through the real commands, and stops the simulator. The judge is you when
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

from blindtest import artifacts
from blindtest.chain import check_demo_dir, judging_state, picks_judges
from blindtest.cli import cli
from blindtest.cli._common import echo_prose, exit_mapped, resumable, say
from blindtest.cli.judge import default_judge_id
from blindtest.errors import BadInput
from blindtest.simulator import Simulator, running

DEMO_DIR = Path("demo-run")
LENGTH_BOT = "bot:length"


def _stage(*args: str) -> int:
    """Run one stage in-process; its exit code (a verify that finds a difference says 1)."""
    code = cli.main(list(args), prog_name="blindtest", standalone_mode=False)
    return code if isinstance(code, int) else 0


def _under_make() -> bool:
    return bool(os.environ.get("MAKELEVEL"))


def resume_command(run_dir: Path) -> str:
    """The command that runs this demo again, as it was started (``make demo`` or the module)."""
    if _under_make():
        extra = "" if run_dir == DEMO_DIR else f" DEMO_RUN={shlex.quote(str(run_dir))}"
        return f"make demo{extra}"
    python = Path(sys.executable)
    try:
        shown = str(python.relative_to(Path.cwd()))
    except ValueError:
        shown = str(python)
    return shlex.join([shown, "-m", "blindtest.cli.demo", str(run_dir)])


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
    with artifacts.run_lock(run_dir, "make demo"), resumable(resume):
        if port:
            say(f"resuming the demo in {run_dir}/ (nothing is deleted)")
        with demo_simulator(run_dir, port) as simulator:
            name = _judge_chain(run_dir, simulator.base_url, interactive, resume)
        if name is None:
            return 0
        _stage("audit", str(run_dir), "--quiet", "--force")
        click.echo("", err=True)
        code = _stage("analyze", str(run_dir), "--brief")
        click.echo("", err=True)
        code = code or _stage("verify", str(run_dir), "--quiet")
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
        _stage(
            "design", str(run_dir), "--demo", "--a", "sim-large", "--b", "sim-small",
            "--a-url", url, "--b-url", url, "--seed", "demo",
        )  # fmt: skip
    except artifacts.DesignDiffers as error:
        raise BadInput(
            f"{run_dir} holds a different design ({error.difference}); the demo resumes only "
            "its own run: give it another directory"
        ) from None
    _stage("generate", str(run_dir), "--price-a", "2.5,10", "--price-b", "0.15,0.6")
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
        restart = ["--force"] if earlier else []
        _stage("judge", str(run_dir), "--judge", LENGTH_BOT, "--quiet", *restart)
    elif not state.done:
        say("\nYou are the judge: pick the odd one out in each trial.\n")
        _stage("judge", str(run_dir), "--judge-id", name)
    state = judging_state(run_dir, name)
    if not state.done:
        echo_prose(f"\n{state.judged} of {state.total} judged; continue with: {resume}", err=True)
        return None
    return name


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
