"""bt-analyze's decision options and lines: a decision given after the fact (labelled not
pre-registered), the per-tag decision, the JUnit file, and the line saying which warnings
--fail-on or --strict (`_options.fail_on_options`, on every run) turned into exit 1;
the stage decides (:mod:`blindtest.analysis.decision`), :mod:`blindtest.present.decision`
words it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import click

from blindtest.cli._options import FilePath, grouped
from blindtest.cli._prose import echo_prose

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
    return {
        "decide": given["decide"],
        "champion": given["champion"],
        "estimand": given["estimand"],
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


def show_failed_on(found: Sequence[Mapping[str, Any]], *, strict: bool) -> None:
    """One line on stderr: the warnings --fail-on or --strict turned into exit 1."""
    if not found:
        return
    from blindtest.present.render import clean

    named = ", ".join(
        f"{w['code']}" + (f" ({w['judge']})" if w.get("judge") else "") for w in found
    )
    why = "--strict" if strict and all(w["severity"] == "serious" for w in found) else "--fail-on"
    echo_prose(clean(f"bt-analyze: exit 1 ({why}): the report warns {named}"), err=True)
