"""The LLM judge against people on the comparisons people judged: agreement, the confusion of
verdicts, and the reliability of the judge's stated confidence.

**Unit.** One comparison: the people's verdict on it (with a panel, the verdict the analysis
counts for the trial, e.g. the majority) against the judge's verdict on it (its swap passes
combined as the analysis combines them). Only the sampled comparisons enter.

**Agreement** is the share of comparisons where the two verdicts are the same label, with a
Wilson (Newcombe 1998, method 3) or Clopper-Pearson interval, and Cohen's kappa with the
Fleiss-Cohen-Everitt interval (`blindtest.stats.agreement.kappa_with_se`). The share is the
same whether verdicts are coded by side (A wins, tie, B wins) or by position (left, right,
tie), since one comparison's codes map one to one; kappa is not: its chance agreement reads
the labels' margins. The agreement gate codes by position, so pass position labels for the
gate's kappa (``coding`` says which labels were used).

**Confusion**: counts of (people's verdict, judge's verdict) in the order of ``labels``.

**Confidence** (where the judge states one, in [0, 1]: its probability that its verdict is
right): the Brier score ``mean((confidence - agreed)^2)`` (Brier 1950; 0 is perfect, a judge
that always says 0.5 scores 0.25) with a t interval (a mean of bounded terms), and a
reliability table: the comparisons in confidence bins, each with its mean confidence and the
share where people agreed (Wilson), so that "said 90%, right 70%" can be read off (DeGroot and
Fienberg 1983). Comparisons without a confidence are left out of these and counted.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from blindtest.stats.agreement import KappaTestResult, kappa_with_se
from blindtest.stats.intervals import (
    INTERVAL_METHODS,
    Interval,
    IntervalMethod,
    _check_choice,
    _check_open,
    _check_real,
    proportion_interval,
    result_to_dict,
)

__all__ = [
    "CALIBRATION_BINS",
    "VERDICT_LABELS",
    "CalibrationBin",
    "JudgeCalibrationResult",
    "judge_calibration",
]

#: Verdicts from side A's view, in the confusion table's order.
VERDICT_LABELS: tuple[str, ...] = ("win", "tie", "loss")
#: Bin edges for the judge's confidence (LLM judges mostly say 0.7 to 0.95).
CALIBRATION_BINS: tuple[float, ...] = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True, slots=True)
class CalibrationBin:
    """Comparisons whose confidence is in ``[lo, hi)`` (the last bin includes 1): ``n`` of
    them, their ``mean_confidence`` and the share people agreed on (null when empty)."""

    lo: float
    hi: float
    n: int
    mean_confidence: float
    agreement: Interval

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class JudgeCalibrationResult:
    """Judge against people on ``n`` comparisons (see the module doc).

    ``agreement`` (``agreed`` of ``n``, interval by ``interval_method``), ``kappa``,
    ``confusion[i][j]`` = comparisons people called ``labels[i]`` and the judge
    ``labels[j]``; ``coding`` in words. ``with_confidence`` comparisons carried a confidence:
    ``mean_confidence``, ``brier`` (null without any) and ``bins``.
    """

    n: int
    agreed: int
    agreement: Interval
    interval_method: str
    kappa: KappaTestResult | None
    labels: tuple[str, ...]
    confusion: tuple[tuple[int, ...], ...]
    coding: str
    with_confidence: int
    mean_confidence: float
    brier: Interval | None
    bins: tuple[CalibrationBin, ...]
    confidence_level: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (non-finite numbers as null)."""
        return result_to_dict(self)


def _check_labels(name: str, verdicts: Sequence[Hashable], labels: tuple[str, ...]) -> None:
    for i, verdict in enumerate(verdicts):
        if verdict not in labels:
            raise ValueError(f"{name}[{i}] must be one of {labels!r}, got {verdict!r}")


def _check_edges(bins: Sequence[float]) -> tuple[float, ...]:
    edges = tuple(_check_real(f"bins[{i}]", edge) for i, edge in enumerate(bins))
    if len(edges) < 2 or any(b <= a for a, b in itertools.pairwise(edges)):
        raise ValueError(f"bins must be at least two increasing edges, got {tuple(bins)!r}")
    if edges[0] > 0.0 or edges[-1] < 1.0:
        raise ValueError(f"bins must cover [0, 1], got {tuple(bins)!r}")
    return edges


def _brier(scores: list[float], level: float) -> Interval | None:
    from scipy import stats  # deferred: scipy.stats costs 0.5 s at start-up

    if not scores:
        return None
    n = len(scores)
    mean = math.fsum(scores) / n
    if n < 2:
        return Interval(mean, math.nan, math.nan)
    sd = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / (n - 1))
    half = float(stats.t.isf((1.0 - level) / 2.0, n - 1)) * sd / math.sqrt(n)
    return Interval(mean, max(0.0, mean - half), min(1.0, mean + half))


def _bins(
    pairs: list[tuple[float, bool]], edges: tuple[float, ...], level: float, method: str
) -> tuple[CalibrationBin, ...]:
    out = []
    for i, (lo, hi) in enumerate(itertools.pairwise(edges)):
        last = i == len(edges) - 2
        inside = [(c, ok) for c, ok in pairs if lo <= c < hi or (last and c == hi)]
        if not inside:
            nan = Interval(math.nan, math.nan, math.nan)
            out.append(CalibrationBin(lo, hi, 0, math.nan, nan))
            continue
        agreed = sum(ok for _, ok in inside)
        mean = math.fsum(c for c, _ in inside) / len(inside)
        share = proportion_interval(
            agreed,
            len(inside),
            confidence_level=level,
            method=method,  # type: ignore[arg-type]
        )
        out.append(CalibrationBin(lo, hi, len(inside), mean, share))
    return tuple(out)


def _confidences(
    confidence: Sequence[float | None] | None, agreed: list[bool]
) -> list[tuple[float, bool]]:
    if confidence is None:
        return []
    if len(confidence) != len(agreed):
        raise ValueError(
            f"confidence needs one value per comparison ({len(agreed)}), got {len(confidence)}"
        )
    pairs = []
    for i, value in enumerate(confidence):
        if value is None:
            continue
        number = _check_real(f"confidence[{i}]", value)
        if not 0.0 <= number <= 1.0:
            raise ValueError(f"confidence[{i}] must be in [0, 1], got {value!r}")
        pairs.append((number, agreed[i]))
    return pairs


def judge_calibration(
    people: Sequence[Hashable],
    judge: Sequence[Hashable],
    *,
    confidence: Sequence[float | None] | None = None,
    labels: Sequence[str] = VERDICT_LABELS,
    bins: Sequence[float] = CALIBRATION_BINS,
    interval_method: IntervalMethod = "wilson",
    confidence_level: float = 0.95,
) -> JudgeCalibrationResult:
    """The judge's verdicts against people's on the same comparisons (module doc).

    ``people[i]`` and ``judge[i]`` are the two verdicts on comparison i, each one of
    ``labels``; ``confidence[i]`` the judge's stated confidence in its verdict (None where
    it gave none).
    """
    level = _check_open("confidence_level", confidence_level)
    _check_choice("interval_method", interval_method, INTERVAL_METHODS)
    names = tuple(str(label) for label in labels)
    if len(set(names)) != len(names) or len(names) < 2:
        raise ValueError(f"labels must be at least two distinct verdicts, got {tuple(labels)!r}")
    if len(people) != len(judge) or not people:
        raise ValueError(
            f"people and judge need one verdict each per comparison, got {len(people)} and "
            f"{len(judge)}"
        )
    _check_labels("people", people, names)
    _check_labels("judge", judge, names)
    edges = _check_edges(bins)
    agreed = [p == j for p, j in zip(people, judge, strict=True)]
    n, k = len(agreed), sum(agreed)
    confusion = tuple(
        tuple(sum(1 for p, j in zip(people, judge, strict=True) if p == row and j == col)
              for col in names)
        for row in names
    )  # fmt: skip
    kappa = kappa_with_se(list(people), list(judge), confidence_level=level) if n > 1 else None
    pairs = _confidences(confidence, agreed)
    scores = [(c - ok) ** 2 for c, ok in pairs]
    return JudgeCalibrationResult(
        n=n,
        agreed=k,
        agreement=proportion_interval(k, n, confidence_level=level, method=interval_method),
        interval_method=interval_method,
        kappa=kappa,
        labels=names,
        confusion=confusion,
        coding=(
            f"verdicts coded as {', '.join(names)}; agreement means the same verdict (the "
            "same share under side or position coding; kappa depends on the coding)"
        ),
        with_confidence=len(pairs),
        mean_confidence=math.fsum(c for c, _ in pairs) / len(pairs) if pairs else math.nan,
        brier=_brier(scores, level),
        bins=_bins(pairs, edges, level, interval_method),
        confidence_level=level,
    )
