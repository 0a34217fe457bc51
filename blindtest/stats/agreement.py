"""Position bias and inter-rater agreement: the two gates of spec 002 on a preference verdict.

Position bias is the share of "left" choices with an exact two-sided binomial test against 1/2.
Agreement is percent agreement, Cohen's kappa (two raters; Cohen, 1960) or Fleiss' kappa (three
or more; Fleiss, 1971), each with a plain label and spec 002's caveat that high agreement can be
a bias the judges share. Kappa labels are Landis and Koch's (1977) bands; percent agreement is
labelled with spec 001's anchors (80% agreement is a signal, 55% is noise). Pure; no I/O.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from blindtest.stats.binomial import binomial_p_value
from blindtest.stats.intervals import (
    Interval,
    _check_alpha,
    _check_closed,
    _check_count,
    clopper_pearson,
    result_to_dict,
)

__all__ = [
    "AGREEMENT_CAVEAT",
    "KappaResult",
    "PercentAgreementResult",
    "PositionBiasResult",
    "cohen_kappa",
    "fleiss_kappa",
    "kappa_label",
    "percent_agreement",
    "position_bias",
]

AGREEMENT_CAVEAT = (
    "High agreement means either a real difference or a bias the judges share; "
    "this statistic cannot separate those."
)

# Landis and Koch (1977), Biometrics 33:159-174, upper edges of each band.
_KAPPA_BANDS: tuple[tuple[float, str], ...] = (
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
    (1.00, "almost perfect"),
)


def kappa_label(kappa: float) -> str:
    """Landis and Koch (1977) words: poor (< 0), slight, fair, moderate, substantial,
    almost perfect (upper edges 0.20, 0.40, 0.60, 0.80, 1); "undefined" for NaN."""
    if math.isnan(kappa):
        return "undefined"
    if kappa < 0.0:
        return "poor"
    return next((label for edge, label in _KAPPA_BANDS if kappa <= edge), "almost perfect")


def _percent_label(agreement: float) -> str:
    # Spec 001: "agree on eighty percent of pairs are producing a signal; ... fifty-five percent
    # are producing noise". Between the two anchors the signal is weak.
    if agreement >= 0.80:
        return "signal"
    if agreement <= 0.55:
        return "noise"
    return "weak"


@dataclass(frozen=True, slots=True)
class PositionBiasResult:
    """Share of left choices, exact two-sided test against 1/2, and the flag.

    ``flagged`` when ``significant`` (``p_value <= alpha``) or ``exceeds_margin``
    (``|share - 1/2| > margin``). ``share`` carries a two-sided Clopper-Pearson interval.
    """

    left: int
    n: int
    statistic: float
    p_value: float
    share: Interval
    deviation: float
    alpha: float
    margin: float
    confidence_level: float
    significant: bool
    exceeds_margin: bool
    flagged: bool

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def position_bias(
    left: int,
    n: int,
    *,
    alpha: float = 0.05,
    margin: float = 0.05,
    confidence_level: float = 0.95,
) -> PositionBiasResult:
    """Position-bias check over ``n`` non-tied choices of which ``left`` were "left"."""
    _check_count("left", left, "n", n)
    alpha_value = _check_alpha(alpha)
    margin_value = _check_closed("margin", margin, 0.0, 0.5)
    share = clopper_pearson(left, n, confidence_level=confidence_level)
    p_value = binomial_p_value(left, n, 0.5, "two-sided")
    deviation = share.estimate - 0.5
    significant = p_value <= alpha_value
    exceeds = abs(deviation) > margin_value
    return PositionBiasResult(
        left=int(left),
        n=int(n),
        statistic=share.estimate,
        p_value=p_value,
        share=share,
        deviation=deviation,
        alpha=alpha_value,
        margin=margin_value,
        confidence_level=float(confidence_level),
        significant=significant,
        exceeds_margin=exceeds,
        flagged=significant or exceeds,
    )


@dataclass(frozen=True, slots=True)
class PercentAgreementResult:
    """Mean over items of the share of rater pairs that gave the same label."""

    n_items: int
    n_ratings: int
    statistic: float
    label: str
    caveat: str = AGREEMENT_CAVEAT

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class KappaResult:
    """Chance-corrected agreement ``(observed - expected) / (1 - expected)``.

    ``statistic`` is kappa; NaN (null in JSON, label "undefined") when the expected agreement
    is 1, that is when every rating used one and the same label.
    """

    method: str
    n_items: int
    n_raters: int
    observed: float
    expected: float
    statistic: float
    label: str
    caveat: str = AGREEMENT_CAVEAT

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def _check_items(ratings: Sequence[Sequence[Hashable]], *, same_size: bool) -> None:
    if len(ratings) == 0:
        raise ValueError("ratings must hold at least one item, got 0")
    sizes = {len(item) for item in ratings}
    for index, item in enumerate(ratings):
        if len(item) < 2:
            raise ValueError(f"ratings[{index}] must hold at least 2 ratings, got {len(item)}")
    if same_size and len(sizes) > 1:
        raise ValueError(
            f"every item must have the same number of ratings, got sizes {sorted(sizes)}"
        )


def _pairwise_agreement(item: Sequence[Hashable]) -> float:
    m = len(item)
    counts = Counter(item).values()
    return sum(c * (c - 1) for c in counts) / (m * (m - 1))


def percent_agreement(ratings: Sequence[Sequence[Hashable]]) -> PercentAgreementResult:
    """Percent agreement over items; ``ratings[i]`` holds the labels item i received.

    With two raters this is the share of items on which they agree.
    """
    _check_items(ratings, same_size=False)
    agreement = sum(_pairwise_agreement(item) for item in ratings) / len(ratings)
    return PercentAgreementResult(
        n_items=len(ratings),
        n_ratings=sum(len(item) for item in ratings),
        statistic=agreement,
        label=_percent_label(agreement),
    )


def _kappa(observed: float, expected: float) -> float:
    # Convention: kappa is undefined (NaN) when chance agreement is already perfect.
    if expected >= 1.0:
        return math.nan
    return (observed - expected) / (1.0 - expected)


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> KappaResult:
    """Cohen's (1960) kappa for two raters who labelled the same items in the same order."""
    if len(first) != len(second):
        raise ValueError(
            f"both raters must label the same items, got {len(first)} and {len(second)} labels"
        )
    if len(first) == 0:
        raise ValueError("ratings must hold at least one item, got 0")
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    first_counts, second_counts = Counter(first), Counter(second)
    expected = sum(first_counts[c] * second_counts[c] for c in first_counts) / (n * n)
    kappa = _kappa(observed, expected)
    return KappaResult(
        method="cohen",
        n_items=n,
        n_raters=2,
        observed=observed,
        expected=expected,
        statistic=kappa,
        label=kappa_label(kappa),
    )


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> KappaResult:
    """Fleiss' (1971) kappa; ``ratings[i]`` holds the m labels of item i (same m throughout).

    Meant for three or more raters; with two, prefer `cohen_kappa`, which does not pool the
    raters' label frequencies.
    """
    _check_items(ratings, same_size=True)
    n_items, m = len(ratings), len(ratings[0])
    observed = sum(_pairwise_agreement(item) for item in ratings) / n_items
    totals: Counter[Hashable] = Counter()
    for item in ratings:
        totals.update(item)
    expected = sum((count / (n_items * m)) ** 2 for count in totals.values())
    kappa = _kappa(observed, expected)
    return KappaResult(
        method="fleiss",
        n_items=n_items,
        n_raters=m,
        observed=observed,
        expected=expected,
        statistic=kappa,
        label=kappa_label(kappa),
    )
