"""Hidden controls (two independent draws of one model in one comparison, so nothing differs):
what they measure, and a descriptive comparison of non-tie rates.

`describe_controls` is what controls are for. Positions are randomised, so controls add nothing
to the error control of the A-versus-B claim, and two answers of one model cannot reveal a
judge that follows length; what they do measure is the judge where nothing differs: its tie
rate there, and where its untied picks went by position. Both are proportions whose unit is
the comparison (every judge and pass of it together; an LLM judge's two passes of the swap
are one comparison), with Korn and Graubard's clustered interval
(:mod:`blindtest.stats.position`, exactly Clopper-Pearson for one judge and one pass), and the
left share's exact sign-flip test. Controls feed the position estimate: the position gate
(:func:`blindtest.stats.position.position_gate`) is given the control comparisons' left and
right counts beside the real ones (a comparison is a comparison: under no position effect a
control's picks mirror with its placement as a real one's do), and the controls' own left
share is reported beside it, since a judge leans by position most where nothing differs.
Nothing gates on the non-tie rate.

`compare_non_tie` (kept for the LLM judge's calibration record, which reports it) is
descriptive only: it must not withdraw a result. With 5 controls, holding a significant
preference back unless this test shows more non-ties on the real trials reported a real effect
12% of the time instead of 71%, and a judge that never ties lost every directional verdict.

The comparison of non-tie rates: each comparison either names an output (a non-tie) or does
not, so the counts are binomial and the two groups form a 2x2 table: Fisher's exact test
(scipy.stats.fisher_exact) with the one-sided alternative that the real trials' non-tie odds
are the greater (Ennis and Ennis, 2012, compare identical-pair "placebo" responses with the
test pair's in the same way). Each rate gets its Clopper-Pearson interval over comparisons.

With fewer than ``MIN_COMPARISONS`` comparisons in either group the test is not run: with 4
controls all tied and 10 real trials all untied it would give p = 1/C(14, 4) = 0.001, but any
one preference on a control or tie on a real trial costs most of that, so a p-value there
reads as a measurement it is not (the caller says so in words instead).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from blindtest.stats.intervals import (
    Interval,
    _check_count,
    _check_open,
    clopper_pearson,
    json_float,
    result_to_dict,
)
from blindtest.stats.position import ClusteredShareResult, clustered_share, sign_flip_test

__all__ = [
    "MIN_COMPARISONS",
    "ControlsDescription",
    "NonTieComparisonResult",
    "compare_non_tie",
    "describe_controls",
]

#: The fewest comparisons in each group for which the test is run.
MIN_COMPARISONS = 5


@dataclass(frozen=True, slots=True)
class NonTieComparisonResult:
    """``real_non_tie`` of ``real_n`` real comparisons and ``control_non_tie`` of
    ``control_n`` control comparisons named an output. ``statistic`` is the sample odds ratio
    (real over control; inf or nan at a zero cell, as scipy gives it) and ``p_value`` the
    one-sided Fisher exact p that the real trials' non-tie rate is the greater; both None
    when ``testable`` is False (a group below ``MIN_COMPARISONS``)."""

    real_non_tie: int
    real_n: int
    control_non_tie: int
    control_n: int
    statistic: float | None
    p_value: float | None
    alternative: str = "greater"

    @property
    def testable(self) -> bool:
        return self.p_value is not None

    def control_rate(self, confidence_level: float = 0.95) -> Interval | None:
        """The controls' non-tie rate with its Clopper-Pearson interval (None when n is 0)."""
        if not self.control_n:
            return None
        return clopper_pearson(
            self.control_non_tie, self.control_n, confidence_level=confidence_level
        )

    def real_rate(self, confidence_level: float = 0.95) -> Interval | None:
        """The real trials' non-tie rate with its Clopper-Pearson interval (None when n is 0)."""
        if not self.real_n:
            return None
        return clopper_pearson(self.real_non_tie, self.real_n, confidence_level=confidence_level)

    def to_dict(self) -> dict[str, Any]:
        """The fields, JSON-ready (a non-finite odds ratio becomes None)."""
        return {
            "real_non_tie": self.real_non_tie,
            "real_n": self.real_n,
            "control_non_tie": self.control_non_tie,
            "control_n": self.control_n,
            "statistic": json_float(self.statistic) if self.statistic is not None else None,
            "p_value": self.p_value,
            "alternative": self.alternative,
        }

    def summary(self) -> dict[str, Any]:
        """What report.json's controls say: the counts by group, each rate with its interval,
        the test and whether it was run."""
        control, real = self.control_rate(), self.real_rate()
        return {
            "test": "Fisher's exact test, one-sided: real trials' non-tie rate above the controls'",
            "alternative": self.alternative,
            "unit": "comparisons",
            "real": {"comparisons": self.real_n, "non_tie": self.real_non_tie},
            "control": {"comparisons": self.control_n, "non_tie": self.control_non_tie},
            "real_rate": real.to_dict() if real is not None else None,
            "control_rate": control.to_dict() if control is not None else None,
            "odds_ratio": json_float(self.statistic) if self.statistic is not None else None,
            "p_value": self.p_value,
            "testable": self.testable,
            "min_comparisons": MIN_COMPARISONS,
        }


def compare_non_tie(
    real_non_tie: int, real_n: int, control_non_tie: int, control_n: int
) -> NonTieComparisonResult:
    """Fisher's exact test of the table [[real_non_tie, real ties], [control_non_tie, control
    ties]], alternative "greater" (see the module docstring); not run below
    ``MIN_COMPARISONS`` comparisons in either group."""
    _check_count("real_non_tie", real_non_tie, "real_n", real_n, n_min=0)
    _check_count("control_non_tie", control_non_tie, "control_n", control_n, n_min=0)
    if min(real_n, control_n) < MIN_COMPARISONS:
        return NonTieComparisonResult(
            real_non_tie, real_n, control_non_tie, control_n, statistic=None, p_value=None
        )
    from scipy import stats  # deferred: scipy.stats costs 0.5 s at start-up

    table = [[real_non_tie, real_n - real_non_tie], [control_non_tie, control_n - control_non_tie]]
    found = stats.fisher_exact(table, alternative="greater")
    return NonTieComparisonResult(
        real_non_tie,
        real_n,
        control_non_tie,
        control_n,
        statistic=float(found.statistic),
        # Convention: a p-value above 1 by rounding is 1.
        p_value=min(1.0, float(found.pvalue)),
    )


# --------------------------------------------------------------------------- what controls measure


@dataclass(frozen=True, slots=True)
class ControlsDescription:
    """What the hidden controls measured (see the module docstring), over ``comparisons``
    control comparisons holding ``picks`` picks (every judge and pass): ``ties`` of them tied,
    ``left`` and ``right`` named the output shown on the left or right.

    ``tie_rate`` is the mean over comparisons of each one's tie share, with its clustered
    interval; ``left_share`` the mean over comparisons with an untied pick of each one's
    left share, with its clustered interval, and ``p_position`` the exact sign-flip p-value
    of no position effect (``p_method`` "exact" or "normal"). Each is None when nothing was
    there to measure (no pick; no untied pick)."""

    comparisons: int
    picks: int
    ties: int
    left: int
    right: int
    tie_rate: ClusteredShareResult | None
    left_share: ClusteredShareResult | None
    p_position: float | None
    p_method: str | None
    confidence_level: float
    unit: str = "comparison"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def describe_controls(
    left: Sequence[int],
    right: Sequence[int],
    ties: Sequence[int],
    *,
    confidence_level: float = 0.95,
) -> ControlsDescription:
    """The judge (or panel) on the hidden controls: per control comparison, ``left[i]``,
    ``right[i]`` and ``ties[i]`` picks (every judge and pass;
    :func:`blindtest.stats.position.tally_positions` counts them). The tie rate and the left
    share with their intervals, and the sign-flip test of position; no test of the non-tie
    rate and no gate."""
    level = _check_open("confidence_level", confidence_level)
    if not len(left) == len(right) == len(ties):
        raise ValueError(
            "left, right and ties must have one entry per control comparison, got "
            f"{len(left)}, {len(right)} and {len(ties)}"
        )
    untied = [a + b for a, b in zip(left, right, strict=True)]
    totals = [u + t for u, t in zip(untied, ties, strict=True)]
    tie_rate = left_share = None
    p_position: float | None = None
    method: str | None = None
    if any(totals):
        tie_rate = clustered_share(ties, totals, confidence_level=level)
    if any(untied):
        left_share = clustered_share(left, untied, confidence_level=level)
        p_position, method = sign_flip_test(left, right)
    return ControlsDescription(
        comparisons=len(totals),
        picks=int(sum(totals)),
        ties=int(sum(ties)),
        left=int(sum(left)),
        right=int(sum(right)),
        tie_rate=tie_rate,
        left_share=left_share,
        p_position=p_position,
        p_method=method,
        confidence_level=level,
    )
