"""bt-plan's option parsing (comma-separated lists) and its options for a people's sample
beside an LLM judge (``--people-sample TOTAL``): kept apart so bt-plan's own module stays one
command."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from blindtest.errors import BadInput

F = TypeVar("F", bound=Callable[..., Any])

_RATE = click.FloatRange(0, 1)


def split_list(text: str | None, option: str) -> list[str] | None:
    if text is None:
        return None
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise BadInput(f"{option}: give a comma-separated list, e.g. 0.6,0.7")
    return parts


def trial_counts(text: str | None) -> list[int] | None:
    if text is None:
        return None
    parts = split_list(text, "--trials") or []
    for part in parts:
        if not part.isascii() or not part.isdigit() or int(part) < 1:
            raise BadInput(f"--trials: {part!r} is not a whole number of trials >= 1")
    return [int(part) for part in parts]


def people_sample_options(command: F) -> F:
    """``--people-sample``, ``--agreement``, ``--judge-ties``, ``--margin``, ``--width``."""
    for decorator in reversed(
        [
            click.option(
                "--people-sample", "people_sample", type=click.IntRange(3), metavar="TOTAL",
                help="Plan the people's sample when an LLM judge judges all TOTAL comparisons "
                "(bt-design --people-sample): interval width and power by sample size "
                "(--trials), people alone beside it.",
            ),
            click.option(
                "--agreement", type=_RATE, metavar="SHARE",
                help="With --people-sample: the share of comparisons where judge and people "
                "are expected to give the same verdict.",
            ),
            click.option(
                "--judge-ties", "judge_ties", type=_RATE, metavar="RATE",
                help="With --people-sample: the judge's tie rate (default: the people's, "
                "--ties).",
            ),
            click.option(
                "--margin", type=click.FloatRange(0, 0.5, min_open=True, max_open=True),
                metavar="M",
                help="With --people-sample: non-inferiority margin on the people's score "
                "(the score is above 1/2 - M); with --power, the smallest sample reaching it.",
            ),
            click.option(
                "--width", type=click.FloatRange(0, 2, min_open=True), metavar="W",
                help="With --people-sample: the smallest sample whose expected 95% interval "
                "is at most W wide.",
            ),
        ]
    ):  # fmt: skip
        command = decorator(command)
    return command
