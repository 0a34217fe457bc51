"""Exact binomial tests and tail probabilities; the other stats modules build on these.

One-sided tails come from the regularized incomplete beta (scipy.special.betainc/betaincc),
never a normal approximation: ``P(X >= k) = I_p(k, n-k+1)`` and ``P(X <= k) = 1 - I_p(k+1, n-k)``.
The two-sided p-value is scipy.stats.binomtest's, which follows R's binom.test: the sum of the
probabilities of all outcomes no more likely than the observed one, with a relative tolerance of
1 + 1e-7 on "no more likely". Pure functions; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import special

from blindtest.stats.intervals import (
    INTERVAL_METHODS,
    Interval,
    IntervalMethod,
    _check_choice,
    _check_count,
    _check_int,
    _check_open,
    proportion_interval,
    result_to_dict,
)

__all__ = [
    "Alternative",
    "BinomialResult",
    "McNemarResult",
    "binomial_p_value",
    "binomial_test",
    "lower_tail",
    "mcnemar_exact",
    "upper_tail",
]

Alternative = Literal["greater", "less", "two-sided"]
ALTERNATIVES: tuple[str, ...] = ("greater", "less", "two-sided")


def upper_tail(k: npt.ArrayLike, n: npt.ArrayLike, p: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``P(X >= k)`` for ``X ~ Bin(n, p)``, elementwise, via ``I_p(k, n-k+1)``.

    Arguments are not validated (callers have); ``k <= 0`` gives 1 and ``k > n`` gives 0.
    """
    k_arr, n_arr, p_arr = np.broadcast_arrays(
        np.asarray(k, dtype=np.float64),
        np.asarray(n, dtype=np.float64),
        np.asarray(p, dtype=np.float64),
    )
    inside = (k_arr >= 1) & (k_arr <= n_arr)
    safe_k = np.where(inside, k_arr, 1.0)
    safe_b = np.where(inside, n_arr - k_arr + 1.0, 1.0)
    tail = special.betainc(safe_k, safe_b, p_arr)
    return np.asarray(np.where(inside, tail, np.where(k_arr <= 0, 1.0, 0.0)), dtype=np.float64)


def lower_tail(k: npt.ArrayLike, n: npt.ArrayLike, p: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``P(X <= k)`` for ``X ~ Bin(n, p)``, elementwise, via ``1 - I_p(k+1, n-k)`` (betaincc).

    Arguments are not validated (callers have); ``k >= n`` gives 1 and ``k < 0`` gives 0.
    """
    k_arr, n_arr, p_arr = np.broadcast_arrays(
        np.asarray(k, dtype=np.float64),
        np.asarray(n, dtype=np.float64),
        np.asarray(p, dtype=np.float64),
    )
    inside = (k_arr >= 0) & (k_arr < n_arr)
    safe_a = np.where(inside, k_arr + 1.0, 1.0)
    safe_b = np.where(inside, n_arr - k_arr, 1.0)
    tail = special.betaincc(safe_a, safe_b, p_arr)
    return np.asarray(np.where(inside, tail, np.where(k_arr < 0, 0.0, 1.0)), dtype=np.float64)


def binomial_p_value(k: int, n: int, p0: float, alternative: Alternative = "two-sided") -> float:
    """Exact p-value for ``k`` successes in ``n`` trials against ``H0: p = p0``.

    ``"greater"``: ``P(X >= k)``; ``"less"``: ``P(X <= k)``; ``"two-sided"``: R's binom.test
    convention (scipy.stats.binomtest).
    """
    from scipy import stats  # deferred: scipy.stats costs 0.5 s at start-up

    _check_count("k", k, "n", n)
    _check_open("p0", p0)
    _check_choice("alternative", alternative, ALTERNATIVES)
    if alternative == "greater":
        return float(upper_tail(k, n, p0))
    if alternative == "less":
        return float(lower_tail(k, n, p0))
    return float(stats.binomtest(int(k), int(n), float(p0)).pvalue)


@dataclass(frozen=True, slots=True)
class BinomialResult:
    """Exact binomial test of ``H0: p = p0``; ``statistic`` is the observed proportion k/n."""

    k: int
    n: int
    p0: float
    alternative: str
    statistic: float
    p_value: float
    proportion: Interval
    confidence_level: float
    interval_method: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (see `blindtest.stats.intervals` for the null convention)."""
        return result_to_dict(self)


def binomial_test(
    k: int,
    n: int,
    p0: float = 0.5,
    *,
    alternative: Alternative = "two-sided",
    confidence_level: float = 0.95,
    method: IntervalMethod = "clopper-pearson",
) -> BinomialResult:
    """Exact binomial test with a two-sided interval for the proportion.

    The interval is always two-sided at ``confidence_level`` whatever ``alternative`` is, because
    that is the interval the report prints.
    """
    p_value = binomial_p_value(k, n, p0, alternative)
    _check_choice("method", method, INTERVAL_METHODS)
    interval = proportion_interval(k, n, confidence_level=confidence_level, method=method)
    return BinomialResult(
        k=int(k),
        n=int(n),
        p0=float(p0),
        alternative=alternative,
        statistic=k / n,
        p_value=p_value,
        proportion=interval,
        confidence_level=float(confidence_level),
        interval_method=method,
    )


@dataclass(frozen=True, slots=True)
class McNemarResult:
    """Exact McNemar test of paired yes/no answers: under ``H0`` (no difference between the
    two members of a pair) a discordant pair is yes/no or no/yes with probability 1/2, so the
    test is the two-sided exact binomial test of ``yes_no`` out of ``yes_no + no_yes``.
    ``statistic`` is ``yes_no``; ``p_value`` is 1 when there is no discordant pair."""

    yes_no: int
    no_yes: int
    discordant: int
    statistic: int
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        return result_to_dict(self)


def mcnemar_exact(yes_no: int, no_yes: int) -> McNemarResult:
    """Exact (binomial) McNemar test, two-sided (McNemar 1947; the exact form as in R's
    ``binom.test(b, b + c)``, scipy ``binomtest(b, b + c, 0.5)``)."""
    _check_int("yes_no", yes_no)
    _check_int("no_yes", no_yes)
    discordant = yes_no + no_yes
    # Convention: with no discordant pair the data carry no evidence either way, p = 1.
    p_value = 1.0 if discordant == 0 else binomial_p_value(yes_no, discordant, 0.5)
    return McNemarResult(int(yes_no), int(no_yes), discordant, int(yes_no), p_value)
