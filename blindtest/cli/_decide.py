"""bt-analyze's decision options and lines: a decision given after the fact (labelled not
pre-registered), the warning codes that fail the run, the per-tag decision, the JUnit file;
the stage decides (:mod:`blindtest.analysis.decision`), :mod:`blindtest.present.decision`
words it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from blindtest.cli._options import FilePath, grouped
from blindtest.errors import BadInput

_OPTIONS = [
    click.option(
        "--decide",
        metavar="RULE",
        help="Decide a rule the design does not pre-register (noninferior:MARGIN, superior, "
        "equivalent:MARGIN; similar:PD0): labelled not pre-registered, exit 5 at best.",
    ),
    click.option(
        "--champion",
        metavar="NAME",
        help="With --decide: the side every other is decided against [default: A, or the "
        "first candidate].",
    ),
    click.option(
        "--estimand",
        type=click.Choice(("untied-share", "mean-score")),
        help="With --decide: the challenger's untied share, or its mean score (a tie as half).",
    ),
    click.option(
        "--fail-on",
        "fail_on_text",
        metavar="CODE[,CODE...]",
        help="Exit 1 when a warning with one of these codes is raised, whatever the decision "
        "(docs/formats.md lists the codes: sensitivity.failed, position.margin, llm.length ...).",
    ),
    click.option("--strict", is_flag=True, help="Exit 1 on any warning, whatever the decision."),
    click.option(
        "--by-tag",
        is_flag=True,
        help="Also decide per prompt tag, Holm across the tags (listed; the exit code stays "
        "the whole decision's).",
    ),
    click.option(
        "--junit",
        "junit_path",
        type=FilePath(),
        metavar="FILE",
        help="Write a JUnit XML file: one test case per decision, failed unless exit 0, its "
        "message the decision's headline.",
    ),
]
#: bt-analyze's decision options, as one group.
options = grouped(*_OPTIONS)


def stage_arguments(given: Mapping[str, Any]) -> dict[str, Any]:
    """The stage's keyword arguments from the command's values."""
    text = given["fail_on_text"]
    codes: tuple[str, ...] = ()
    if text is not None:
        codes = tuple(code.strip() for code in text.split(",") if code.strip())
        if not codes:
            raise BadInput("--fail-on: give codes separated by commas, e.g. sensitivity.failed")
    return {
        "decide": given["decide"],
        "champion": given["champion"],
        "estimand": given["estimand"],
        "fail_on": codes,
        "strict": given["strict"],
        "by_tag": given["by_tag"],
        "junit": given["junit_path"],
    }


def show(report: Mapping[str, Any], width: int) -> None:
    """The decision's lines, after the result; without a decision, what an inconclusive
    preference result allows and the decision that would settle it."""
    from blindtest.present.decision import decision_lines, undecided_lines
    from blindtest.present.screen import wrap_lines

    lines = decision_lines(report) or undecided_lines(report)
    if lines:
        click.echo(wrap_lines(["", *lines], width))
