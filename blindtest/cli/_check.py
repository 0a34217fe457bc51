"""``--check`` on bt-generate, bt-judge (an LLM judge) and blindtest run: the lines on stdout
(:func:`blindtest.preflight.check_lines`), exit 3 when an endpoint is not ready; nothing is
written. The checks themselves are the stages' (``check`` in :mod:`blindtest.stages.generate`,
:mod:`blindtest.stages.judge`, :mod:`blindtest.stages.run`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from blindtest.errors import BadInput

if TYPE_CHECKING:
    from blindtest.preflight import CheckResult

#: What bt-judge's ``--check`` holds when given without a file (a name no file is given).
ENDPOINT_CHECK = "<check the LLM judge>"

#: bt-generate's and blindtest run's ``--check`` flag.
option = click.option(
    "--check",
    is_flag=True,
    help="Ask each endpoint one small request and say what is wrong (key, URL, model, "
    "context, parameters, cost); fetch nothing, write nothing.",
)


def show(result: CheckResult) -> None:
    """The lines on stdout; raise the exit-3 error when any endpoint failed."""
    from blindtest.preflight import check_lines
    from blindtest.screen import screen_width

    if not result.endpoints:
        click.echo("check: nothing to ask, the answers are read from files; nothing written")
        return
    for line in check_lines(result, screen_width(sys.stdout)):
        click.echo(line)
    if not result.ok:
        raise result.failure()


def generate(
    run_dir: Path, prices: dict[str, str | None], options: dict[str, Any], timeout: float
) -> None:
    """``bt-generate RUN --check``."""
    from blindtest.stages.generate import check

    show(
        check(
            run_dir,
            prices=prices,
            a_header_env=options.get("a_header_env") or (),
            b_header_env=options.get("b_header_env") or (),
            timeout=timeout,
        )
    )


def judge(run_dir: Path, kind: str, ctx: click.Context, llm: dict[str, Any]) -> None:
    """``bt-judge RUN --judge llm:MODEL --check`` (no file): the LLM judge's endpoint."""
    from blindtest.cli import _llm
    from blindtest.stages.judge import check_judge

    chosen = _llm.settings(ctx, kind, llm)
    if chosen is None:
        raise BadInput(
            f"--check without a file checks an LLM judge's endpoint (--judge llm:MODEL), not "
            f"{kind}; give --check FILE to validate an external judge's picks"
        )
    show(check_judge(run_dir, kind, chosen))


def run(run_dir: Path | None, model_a: str | None, model_b: str | None, **given: Any) -> int:
    """``blindtest run A B ... --check``: the design the options make, built in memory."""
    from blindtest.stages.run import check

    show(check(run_dir, model_a, model_b, **given))
    return 0
