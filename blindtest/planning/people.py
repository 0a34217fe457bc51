"""bt-plan for a people's sample (``bt-plan --people-sample TOTAL``): how many comparisons
people must judge when an LLM judge judges all TOTAL, from the expected agreement between judge
and people, the tie rates and the people's true preference (`blindtest.stats.ppi_plan`): the
expected interval width and the non-inferiority power, prediction-powered beside people alone,
at the sample sizes asked, and the smallest sample meeting a power or width target.

The planning value of the people's score is ``ties / 2 + (1 - ties) * true`` (``true``: the
first candidate's share of untied verdicts, as ``--true`` reads for a decision); ``margin`` is on
the score's scale (non-inferiority: the score is above ``1/2 - margin``). Pure; no I/O.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from blindtest.errors import BadInput, message_of, option
from blindtest.reportfmt import count
from blindtest.stats.ppi_plan import (
    PeopleSamplePlan,
    PeopleSampleRow,
    people_sample_row,
    plan_people_sample,
)

__all__ = ["PeoplePlan", "plan_people"]

#: Sample sizes tabulated when none are given (those below the total).
DEFAULT_SIZES = (20, 30, 50, 100, 200)


@dataclass(frozen=True, slots=True)
class PeoplePlan:
    """The rows (one per sample size) and, with a target, the smallest sample meeting it."""

    total: int
    rows: tuple[PeopleSampleRow, ...]
    smallest: PeopleSamplePlan | None

    def to_rows(self) -> list[dict[str, Any]]:
        """What ``--json`` prints: one object, its rows and its plan."""
        return [
            {
                "total": self.total,
                "rows": [row.to_dict() for row in self.rows],
                "plan": self.smallest.to_dict() if self.smallest is not None else None,
            }
        ]

    def text(self, width: int = 80) -> str:
        """The table in words, as bt-plan prints it."""
        first = self.rows[0] if self.rows else None
        lines = [
            f"People on a sample, an LLM judge on all {count(self.total, 'comparison')}: the "
            "prediction-powered interval of the people's preference score",
        ]
        if first is not None:
            lines.append(
                f"(judge and people agree on {first.agreement:.0%} of comparisons, people tie "
                f"{first.people_tie_rate:.0%}, the judge {first.judge_tie_rate:.0%}; planned "
                f"score {first.score:.2f}; {first.confidence_level:.0%} intervals)"
            )
        head = f"{'people':>7} {'width':>7} {'people alone':>13} {'judge worth':>12}"
        power = first is not None and first.margin == first.margin  # a margin was given
        if power:
            head += f" {'power':>7} {'people alone':>13}"
        lines += ["", head]
        for row in self.rows:
            line = (
                f"{row.n:>7} {row.width:>7.3f} {row.people_only_width:>13.3f} "
                f"{row.effective_n - row.n:>12.0f}"
            )
            if power:
                line += f" {row.power:>7.2f} {row.people_only_power:>13.2f}"
            lines.append(line)
        if self.smallest is not None:
            lines += ["", f"Smallest people's sample for the {self.smallest.target} asked: "
                      f"{self.smallest.note}."]  # fmt: skip
            if self.smallest.people_only_n is not None:
                lines.append(f"People alone would need {self.smallest.people_only_n}.")
        lines += [
            "",
            "Width: the expected 95% interval's width on the score (a win 1, a tie 1/2, a loss "
            "0); judge worth: the people's judgements the judge adds. Pre-register the sample "
            "with bt-design --people-sample N.",
        ]
        return "\n".join(_wrap(line, width) for line in lines)


def _wrap(line: str, width: int) -> str:
    """A prose line wrapped at ``width`` (continuations indented); table rows kept whole."""
    if line.startswith(" ") or len(line) <= width:
        return line
    return textwrap.fill(line, width, subsequent_indent="  ", break_on_hyphens=False)


def plan_people(
    total: int,
    *,
    agreement: float | None,
    ties: float = 0.0,
    judge_ties: float | None = None,
    true: float | None = None,
    margin: float | None = None,
    power: float | None = None,
    width: float | None = None,
    sizes: Sequence[int] | None = None,
    alpha: float = 0.05,
) -> PeoplePlan:
    """The plan (module doc); ``BadInput`` naming the option for a value it cannot take."""
    if agreement is None:
        raise BadInput(
            f"{option('people_sample')} plans from the agreement expected between the judge "
            f"and people: give {option('agreement')} (e.g. 0.7)"
        )
    if power is not None and margin is None:
        raise BadInput(f"{option('target_power')} with {option('people_sample')} needs "
                       f"{option('margin')} (the non-inferiority margin on the score)")  # fmt: skip
    share = 0.5 if true is None else true
    score = ties / 2 + (1 - ties) * share
    asked = [n for n in (sizes or DEFAULT_SIZES) if 2 <= n < total] if total > 3 else []
    try:
        rows = tuple(
            people_sample_row(
                n, total=total, agreement=agreement, people_tie_rate=ties,
                judge_tie_rate=judge_ties, score=score, margin=margin, alpha=alpha,
            )
            for n in asked
        )  # fmt: skip
        smallest = (
            plan_people_sample(
                total=total, agreement=agreement, people_tie_rate=ties,
                judge_tie_rate=judge_ties, score=score, margin=margin, power=power,
                width=width, alpha=alpha,
            )
            if power is not None or width is not None
            else None
        )  # fmt: skip
    except ValueError as error:
        raise BadInput(f"{option('people_sample', total)}: {message_of(error)}") from None
    return PeoplePlan(total, rows, smallest)
