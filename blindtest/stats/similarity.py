"""Similarity (equivalence) tests: "indistinguishable within pd0" as a tested claim.

Triangle (ISO 4120's similarity use): one-sided exact test of ``H0: pd >= pd0`` against
``H1: pd < pd0``. With ``Pc0 = 1/3 + 2 pd0 / 3`` the p-value is ``P(X <= k)``, ``X ~ Bin(n, Pc0)``:
the largest null probability of a result at least this far below Pc0, attained at the
boundary pd = pd0 because the lower tail falls as Pc rises.

Pair (two-sided discrimination, chance 1/2, ``pd = |2 Pc - 1|``): two one-sided tests (Schuirmann,
1987) of ``H0: |Pc - 1/2| >= pd0 / 2``; the p-value is the larger of ``P(X <= k | 1/2 + pd0/2)``
and ``P(X >= k | 1/2 - pd0/2)``.

Either way "similar" means ``p <= alpha``, which is equivalent to the one-sided ``1 - alpha``
upper confidence bound of pd (``pd_upper``, from the Clopper-Pearson bound of Pc) being at most
pd0. Derived from the definitions above, not from any other package's code. Pure; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from blindtest.stats.binomial import lower_tail, upper_tail
from blindtest.stats.intervals import (
    _check_alpha,
    _check_choice,
    _check_closed,
    _check_count,
    _check_open,
    result_to_dict,
)

__all__ = [
    "SimilarityProtocol",
    "SimilarityResult",
    "pc_at_pd",
    "similarity_test",
]

SimilarityProtocol = Literal["triangle", "pair"]
SIMILARITY_PROTOCOLS: tuple[str, ...] = ("triangle", "pair")
GUESS: dict[str, float] = {"triangle": 1.0 / 3.0, "pair": 0.5}


def pc_at_pd(pd: float, protocol: SimilarityProtocol = "triangle") -> float:
    """Proportion correct at a proportion of discriminators: ``pg + (1 - pg) pd``.

    ``pg`` is 1/3 for the triangle and 1/2 for pair mode (consistent direction).
    """
    value = _check_closed("pd", pd)
    _check_choice("protocol", protocol, SIMILARITY_PROTOCOLS)
    guess = GUESS[protocol]
    return guess + (1.0 - guess) * value


def _upper_bound(k: int, n: int, alpha: float) -> float:
    """One-sided ``1 - alpha`` Clopper-Pearson upper bound (1 at k = n)."""
    from scipy import stats  # deferred: scipy.stats costs 0.5 s at start-up

    return 1.0 if k == n else float(stats.beta.isf(alpha, k + 1, n - k))


def _lower_bound(k: int, n: int, alpha: float) -> float:
    """One-sided ``1 - alpha`` Clopper-Pearson lower bound (0 at k = 0)."""
    from scipy import stats  # deferred: scipy.stats costs 0.5 s at start-up

    return 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))


@dataclass(frozen=True, slots=True)
class SimilarityResult:
    """Exact similarity test of ``H0: pd >= pd0``; ``similar`` when ``p_value <= alpha``.

    ``statistic`` is correct / n. ``pc0`` is the null boundary (for pair mode, the upper one,
    1/2 + pd0/2; the lower is 1 - pc0). ``pd_upper`` is the one-sided ``1 - alpha`` upper
    confidence bound of pd, clipped to [0, 1].
    """

    correct: int
    n: int
    pd0: float
    protocol: str
    alpha: float
    pc0: float
    statistic: float
    p_value: float
    similar: bool
    pd_upper: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def similarity_test(
    correct: int,
    n: int,
    pd0: float,
    *,
    protocol: SimilarityProtocol = "triangle",
    alpha: float = 0.05,
) -> SimilarityResult:
    """Exact one-sided (triangle) or two one-sided (pair) test that pd is below ``pd0``."""
    _check_count("correct", correct, "n", n)
    pd0_value = _check_open("pd0", pd0)
    _check_choice("protocol", protocol, SIMILARITY_PROTOCOLS)
    alpha_value = _check_alpha(alpha)
    pc0 = pc_at_pd(pd0_value, protocol)
    upper = _upper_bound(correct, n, alpha_value)
    if protocol == "triangle":
        p_value = float(lower_tail(correct, n, pc0))
        pd_upper = (3.0 * upper - 1.0) / 2.0
    else:
        p_value = max(float(lower_tail(correct, n, pc0)), float(upper_tail(correct, n, 1.0 - pc0)))
        lower = _lower_bound(correct, n, alpha_value)
        pd_upper = max(2.0 * upper - 1.0, 1.0 - 2.0 * lower)
    return SimilarityResult(
        correct=int(correct),
        n=int(n),
        pd0=pd0_value,
        protocol=protocol,
        alpha=alpha_value,
        pc0=pc0,
        statistic=correct / n,
        p_value=p_value,
        similar=p_value <= alpha_value,
        pd_upper=min(1.0, max(0.0, pd_upper)),
    )
