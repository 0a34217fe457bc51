"""Fisher's exact test of a 2x2 table of counts. Pure; no I/O.

The two-sided p-value is scipy.stats.fisher_exact's, which follows R's fisher.test: conditional
on both margins the first cell is hypergeometric, and p sums the probabilities of every table
no more likely than the observed one (relative tolerance 1 + 1e-7 on "no more likely").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scipy import stats as scipy_stats

from blindtest.stats.intervals import _check_int, result_to_dict

__all__ = ["FisherResult", "fisher_exact"]


@dataclass(frozen=True, slots=True)
class FisherResult:
    """Fisher's exact test of independence in the table ``[[a, b], [c, d]]`` (rows: the first
    variable yes / no; columns: the second, first level / second level).

    ``statistic`` is the sample odds ratio ``a*d / (b*c)`` (inf or nan when a cell of the
    denominator is empty; ``to_dict`` writes those as null). ``degenerate`` is True when a row
    or a column is empty: every table with those margins is the observed one, so the test has
    nothing to go on (scipy then says p = 1, which is no evidence of independence either).
    """

    a: int
    b: int
    c: int
    d: int
    statistic: float
    p_value: float
    degenerate: bool

    def to_dict(self) -> dict[str, Any]:
        return result_to_dict(self)


def fisher_exact(a: int, b: int, c: int, d: int) -> FisherResult:
    """Two-sided Fisher's exact test of the 2x2 table ``[[a, b], [c, d]]`` (Fisher 1935; as R's
    ``fisher.test`` and scipy's ``fisher_exact``)."""
    cells = [_check_int(name, value) for name, value in (("a", a), ("b", b), ("c", c), ("d", d))]
    a, b, c, d = cells
    result = scipy_stats.fisher_exact([[a, b], [c, d]], alternative="two-sided")
    degenerate = 0 in (a + b, c + d, a + c, b + d)
    return FisherResult(
        a, b, c, d, float(result.statistic), float(result.pvalue), degenerate=degenerate
    )
