"""Hidden controls against the real trials: does a judge prefer one output more often where the
two sides differ than where nothing differs (two draws of one model)?

The unit is the comparison: one judge's verdict on one trial (an LLM judge's two passes of the
position swap read together as the one verdict the real trials count). Each comparison either
names an output (a non-tie) or does not, independently of the others, so the counts are
binomial and the two groups form a 2x2 table: Fisher's exact test (scipy.stats.fisher_exact)
with the one-sided alternative that the real trials' non-tie odds are the greater. One-sided
because only that direction says the judge's preferences respond to a difference between the
sides: a control rate at or above the real one is as uninformative as an equal one, and the
claim the verdict leans on ("it prefers more where something differs") is one-directional
(Ennis and Ennis, 2012, compare identical-pair "placebo" responses with the test pair's in
the same way). Each rate gets its Clopper-Pearson interval over comparisons.

With fewer than ``MIN_COMPARISONS`` comparisons in either group the test is not run: with 4
controls all tied and 10 real trials all untied it would give p = 1/C(14, 4) = 0.001, but any
one preference on a control or tie on a real trial costs most of that, so a p-value there
reads as a measurement it is not (the caller says so in words instead).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from blindtest.stats.intervals import Interval, _check_count, clopper_pearson, json_float

__all__ = ["MIN_COMPARISONS", "NonTieComparisonResult", "compare_non_tie"]

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
