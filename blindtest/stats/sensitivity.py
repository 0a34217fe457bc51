"""The sensitivity check (assay sensitivity, ICH E10): can this judge see a regression here?

A judge that answers at random, by position, or below its confidence threshold pulls every
share toward 1/2, so with enough comparisons "non-inferior" would be shown about anything.
The design plants N comparisons of the champion's own answer against a degraded copy of it;
each planted comparison's score is the judge's (or the panel's mean) score for the champion's
own answer: 1 preferred, 1/2 tie, 0 the degraded copy preferred. The check passes when the
judge prefers the own answer significantly: the one-sided test of ``H0: theta <= 1/2`` at
``alpha`` on the chosen estimand, by the same tests as a decision (`blindtest.stats.decision`:
exact binomial conditional on the untied count for one judge, the exact unconditional test for
the mean score, the betting test for a panel). Planted comparisons never enter the decision's
estimate. Power for planning N: `blindtest.stats.sizing.sensitivity_power`. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy.typing as npt

from blindtest.stats.decision import Estimand, decide
from blindtest.stats.intervals import Interval, result_to_dict

__all__ = ["SensitivityResult", "sensitivity_check"]


@dataclass(frozen=True, slots=True)
class SensitivityResult:
    """The planted comparisons' test: ``estimate`` (the share of untied planted comparisons,
    or the mean score, won by the champion's own answer) with its two-sided ``1 - 2 alpha``
    interval (its lower end is the one-sided bound the test reads), the one-sided
    ``p_value`` against 1/2, and ``passed`` when the test shows it (``p_value <= alpha``; for
    the mean score its interval must agree, as for a decision). ``n`` planted
    comparisons, ``untied`` and ``tied`` among them."""

    n: int
    untied: int
    tied: int
    estimand: str
    unit: str
    method: str
    estimate: float
    interval: Interval
    interval_level: float
    null: float
    alpha: float
    p_value: float
    passed: bool

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def sensitivity_check(
    scores: npt.ArrayLike,
    *,
    alpha: float = 0.05,
    estimand: Estimand = "untied-share",
    judges: int | Sequence[int] = 1,
) -> SensitivityResult:
    """Test that the judge prefers the champion's own answer to its degraded copy.

    ``scores``: one per planted comparison (see the module docstring), in the design's order.
    """
    result = decide(scores, "superior", alpha=alpha, estimand=estimand, judges=judges)
    return SensitivityResult(
        n=result.n,
        untied=result.untied,
        tied=result.tied,
        estimand=result.estimand,
        unit=result.unit,
        method=result.method,
        estimate=result.estimate,
        interval=result.interval,
        interval_level=result.interval_level,
        null=0.5,
        alpha=result.alpha,
        p_value=result.p_value,
        passed=result.outcome == "shown",
    )
