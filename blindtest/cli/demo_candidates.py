"""``make demo-candidates``: four candidates ranked, end to end, on the bundled prompts.

Starts the simulator on a free 127.0.0.1 port and runs, through the stage functions (each
shown as its command shows it): a design of four candidates, every pair of them on every
prompt (``--pairs all``), each candidate asked once per prompt -> generate (made-up prices, so
cost stands beside the ranking) -> ``bt-judge --judge bot:length`` -> audit -> analyze (the
ranking screen) -> verify. The four candidates are the simulator's two models, each as it is
and each with a system prompt that moves its style ("Be brief.", "Be detailed."); every one is
asked for 60 to 140 words. The judge is the length bot, which prefers the longer answer and
reads nothing else: the ranking ranks how much each candidate writes. Simulated models, generic
prompts and a mechanical judge: it shows how several candidates are designed, judged, ranked and
verified, and says nothing about real models.

Like ``make demo`` it never deletes anything: run again on the same directory, it resumes (the
simulator comes back on the port the design records, generation fetches only what is missing,
the bot judges only what is unjudged) and shows the result again. A directory holding anything
but this demo is refused.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from blindtest.analysis.stage import analyze
from blindtest.auditing.stage import audit
from blindtest.cli import analyze as cli_analyze
from blindtest.cli import design as cli_design
from blindtest.cli import generate as cli_generate
from blindtest.cli import verify as cli_verify
from blindtest.cli._chain import resumable, say
from blindtest.cli._exits import exit_mapped
from blindtest.cli._prose import echo_prose
from blindtest.cli.demo import demo_simulator
from blindtest.designing.stage import design
from blindtest.errors import BadInput
from blindtest.generation.stage import generate
from blindtest.judging.stage import judge
from blindtest.pipeline.chain import check_demo_dir, judging_state, picks_judges
from blindtest.pipeline.verify import verify
from blindtest.present.hints import shown_path
from blindtest.rundir import artifacts, locking

DEMO_DIR = Path("demo-candidates-run")
JUDGE = "bot:length"
#: Every candidate's user message: a length band the simulator honours, loosely (each style
#: mostly near its own end of the band, sometimes not), so the candidates' lengths overlap.
TEMPLATE = "{prompt}\n\nAnswer in 60 to 140 words."
#: (name, model, system prompt) in the order the design lists them.
CANDIDATES: tuple[tuple[str, str, str | None], ...] = (
    ("large", "sim-large", None),
    ("small", "sim-small", None),
    ("large-brief", "sim-large", "Be brief."),
    ("small-detailed", "sim-small", "Be detailed."),
)
#: Dollars per million input and output tokens; made up, in the ratio of a large model to a
#: small one, so that the ranking has a cost beside it.
PRICES = {"sim-large": "2.5,10", "sim-small": "0.15,0.6"}


def sides(url: str) -> dict[str, dict[str, Any]]:
    """The four candidates as a ``--sides`` file holds them (one table per name)."""
    tables: dict[str, dict[str, Any]] = {}
    for name, model, system in CANDIDATES:
        table: dict[str, Any] = {"model": model, "base_url": url, "template": TEMPLATE}
        if system is not None:
            table["system"] = system
        tables[name] = table
    return tables


def _under_make() -> bool:
    return bool(os.environ.get("MAKELEVEL"))


def resume_command(run_dir: Path) -> str:
    """The command that runs this demo again, as it was started (make or the module)."""
    if _under_make():
        extra = "" if run_dir == DEMO_DIR else f" DEMO_CANDIDATES_RUN={shlex.quote(str(run_dir))}"
        return f"make demo-candidates{extra}"
    python = shown_path(Path(sys.executable))
    return shlex.join([python, "-m", "blindtest.cli.demo_candidates", str(run_dir)])


def run_demo(run_dir: Path, *, trials: int | None = None) -> int:
    """The chain on RUN; ``trials`` caps the comparisons (None: all 240). 0 once verified."""
    port = check_demo_dir(run_dir)
    with locking.run_lock(run_dir, "make demo-candidates"), resumable(resume_command(run_dir)):
        if port:
            say(f"resuming the demo in {run_dir}/ (nothing is deleted)")
        with demo_simulator(run_dir, port) as simulator:
            _design_and_judge(run_dir, simulator.base_url, trials)
        audit(run_dir, force=True)
        click.echo("", err=True)
        analysis = analyze(run_dir)
        cli_analyze.show(
            analysis.report, run_dir, as_json=False, quiet=False, brief=True, reveal=False
        )
        if analysis.exit_code:
            return analysis.exit_code
        click.echo("", err=True)
        verified = verify(run_dir)
        cli_verify.show(verified, run_dir, as_json=False, quiet=True)
        if verified.exit_code:
            return verified.exit_code
    _next(run_dir)
    return 0


def _design_and_judge(run_dir: Path, url: str, trials: int | None) -> None:
    say(f"simulator serving sim-large and sim-small on {url}")
    say(f'four candidates, each asked a prompt and "{TEMPLATE.splitlines()[-1]}":')
    for name, model, system in CANDIDATES:
        said = f', system prompt "{system}"' if system else ""
        say(f"  {name:<15} {model}{said}")
    say("")
    try:
        designed = design(
            run_dir, demo=True, sides=sides(url), pairs="all", trials=trials,
            seed="demo-candidates", on_dropped=cli_design.show_dropped,
        )  # fmt: skip
    except artifacts.DesignDiffers as error:
        raise BadInput(
            f"{run_dir} holds a different design ({error.difference}); the demo resumes only "
            "its own run: give it another directory"
        ) from None
    cli_design.show(designed)
    prices = {name: PRICES[model] for name, model, _ in CANDIDATES}
    echo_prose(
        "\nprices, made up (dollars per million tokens, in,out): "
        + "; ".join(f"{model} {price}" for model, price in PRICES.items()),
        err=True,
    )
    generate(
        run_dir,
        prices=prices,
        say=lambda text: echo_prose(text, err=True),
        on_progress=cli_generate.ProgressLine() if sys.stderr.isatty() else None,
    )
    echo_prose(
        f"\nthe judge is {JUDGE}: a bot that prefers the longer of the two answers (it counts "
        "words and reads nothing else), so the ranking below ranks how much each candidate "
        "writes. A person or an LLM judge ranks what the answers say.\n",
        err=True,
    )
    if not judging_state(run_dir, JUDGE).done:
        sat = judge(run_dir, JUDGE, force=bool(picks_judges(run_dir)), resume_options=[])
        failure = sat.failure()
        if failure is not None:
            raise failure


def _next(run_dir: Path) -> None:
    echo_prose(
        f"\nbt-verify: every file in {run_dir}/ recomputes. Look inside: design.json, "
        "responses.jsonl, trials.jsonl, picks.jsonl, audit.json, report.json.",
        err=True,
    )
    say(
        "\nNext: the same on your own endpoints and prompts. One table per candidate in\n"
        "sides.toml (model, base_url, key_env, system...; docs/formats.md), then:\n"
        "  bt-design run --prompts prompts.txt --sides sides.toml --pairs all\n"
        "  bt-generate run --price NAME=IN,OUT ...   # one --price per candidate\n"
        "  bt-judge run          # judge it yourself, in this terminal\n"
        "  bt-judge run --web    # or on a local web page\n"
        "  bt-analyze run --html report.html\n"
        "  bt-verify run"
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        click.echo(
            "usage: python -m blindtest.cli.demo_candidates [DIR]   "
            "(make demo-candidates [DEMO_CANDIDATES_RUN=DIR])\n"
        )
        click.echo((__doc__ or "").strip())
        return 0
    if len(args) > 1 or (args and (args[0].startswith("-") or not args[0].strip())):
        raise BadInput("usage: python -m blindtest.cli.demo_candidates [DIR]")
    return run_demo(Path(args[0]) if args else DEMO_DIR)


if __name__ == "__main__":
    exit_mapped(
        "make demo-candidates" if _under_make() else "blindtest.cli.demo_candidates",
        lambda: main(sys.argv[1:]),
    )
