"""``--check`` on bt-generate, bt-judge (an LLM judge) and blindtest run: the lines on stdout
(:func:`check_lines`), exit 3 when an endpoint is not ready; nothing is
written. The checks themselves are the stages' (``check`` in :mod:`blindtest.generation.stage`,
:mod:`blindtest.judging.stage`, :mod:`blindtest.pipeline.run`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from blindtest.transport.preflight import CheckResult

#: What bt-judge's ``--check`` holds when given without a file (a name no file is given).
ENDPOINT_CHECK = "<check the LLM judge>"

#: bt-generate's and blindtest run's ``--check`` flag.
option = click.option(
    "--check",
    is_flag=True,
    help="Ask each endpoint one small request and say what is wrong (key, URL, model, "
    "context, parameters, cost); fetch nothing, write nothing.",
)


def check_lines(result: CheckResult, width: int) -> list[str]:
    """The result as a person reads it: per endpoint a heading, then one line per aspect
    (``  ok    key      SIM_KEY is set``), wrapped at ``width`` under its text."""
    from blindtest.present.screen import wrap

    out: list[str] = []
    for check in result.endpoints:
        out.append(check.title)
        for line in check.lines:
            head = f"  {line.status:<5} {line.aspect:<8} "
            body = wrap(line.text, max(width - len(head), 20), hang=0)
            out.append(head + body[0])
            out.extend(" " * len(head) + rest for rest in body[1:])
    failed = sum(bool(check.failed) for check in result.endpoints)
    total = len(result.endpoints)
    if total == 1:
        said = "the endpoint failed" if failed else "the endpoint is ready"
    elif failed:
        said = f"{failed} of {total} endpoints failed"
    else:
        said = f"all {total} endpoints ready"
    out.append(f"check: {said}; nothing written")
    return out


def show(result: CheckResult) -> None:
    """The lines on stdout; raise the exit-3 error when any endpoint failed."""
    from blindtest.present.screen import screen_width

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
    from blindtest.generation.stage import check

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
    from blindtest.judging.stage import check_judge

    show(check_judge(run_dir, kind, _llm.settings(ctx, kind, llm)))


def run(run_dir: Path | None, model_a: str | None, model_b: str | None, **given: Any) -> int:
    """``blindtest run A B ... --check``: the design the options make, built in memory."""
    from blindtest.pipeline.run import check

    show(check(run_dir, model_a, model_b, **given))
    return 0
