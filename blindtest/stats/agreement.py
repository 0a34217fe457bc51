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
from typing import Any, Literal, Protocol

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
    "ALPHA_RESAMPLES",
    "AgreementGateResult",
    "AlphaResult",
    "KappaResult",
    "KappaTestResult",
    "PairAgreement",
    "PercentAgreementResult",
    "PositionBiasResult",
    "agreement_by_pair",
    "agreement_gate",
    "cohen_kappa",
    "fleiss_kappa",
    "kappa_label",
    "kappa_with_se",
    "krippendorff_alpha",
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


# --------------------------------------------------------------------------- Krippendorff's alpha

#: Bootstrap resamples (of trials) behind alpha's interval.
ALPHA_RESAMPLES = 2000


@dataclass(frozen=True, slots=True)
class AlphaResult:
    """Krippendorff's alpha for nominal data, ``1 - observed / expected disagreement``, over
    the units (trials) that at least two judges rated; a unit one judge rated is not
    pairable and drops out, which is how a dealt panel's missing cells are handled
    (Krippendorff 2011, "Computing Krippendorff's alpha-reliability", section C).

    ``statistic`` is NaN when the expected disagreement is 0 (every pairable value in one
    category) or no unit is pairable. ``interval`` is the percentile bootstrap over units:
    units drawn with replacement ``resamples`` times; resamples whose alpha is undefined
    (one category throughout) are left out and counted in ``undefined_resamples``.
    """

    n_units: int
    n_values: int
    observed_disagreement: float
    expected_disagreement: float
    statistic: float
    label: str
    interval: Interval | None
    confidence_level: float
    resamples: int
    undefined_resamples: int
    caveat: str = AGREEMENT_CAVEAT

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def _unit_table(units: Sequence[Sequence[Hashable]]) -> tuple[Any, Any]:
    """Per pairable unit: its count of values ``m_u`` and its within-unit agreeing pairs over
    ``m_u - 1``; and the unit-by-category count matrix."""
    import numpy as np

    kept = [list(u) for u in units if len(u) >= 2]
    categories = sorted({v for u in kept for v in u}, key=repr)
    index = {c: i for i, c in enumerate(categories)}
    counts = np.zeros((len(kept), max(len(categories), 1)), dtype=np.float64)
    for row, unit in enumerate(kept):
        for value in unit:
            counts[row, index[value]] += 1
    return counts, np.array([len(u) for u in kept], dtype=np.float64)


def _alpha_from_weights(weights: Any, counts: Any, sizes: Any) -> Any:
    """Alpha for each row of ``weights`` (how many times each unit is taken); vectorised."""
    import numpy as np

    agreeing = (counts * (counts - 1)).sum(axis=1) / (sizes - 1)  # o_cc summed, per unit
    n = weights @ sizes
    totals = weights @ counts  # n_c
    observed = 1.0 - (weights @ agreeing) / n
    expected = 1.0 - (totals * (totals - 1)).sum(axis=1) / (n * (n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = np.where(expected > 0, 1.0 - observed / expected, np.nan)
    return alpha, observed, expected


class IndexDraws(Protocol):
    """A seeded source of bootstrap indices: ``take(rows, n)`` is a ``rows x n`` integer
    array of indices in ``[0, n)`` (`blindtest.model.rng.IndexStream`; stats/ draws no seed)."""

    def take(self, rows: int, n: int) -> Any: ...


def krippendorff_alpha(
    units: Sequence[Sequence[Hashable]],
    *,
    rng: IndexDraws | None = None,
    confidence_level: float = 0.95,
    resamples: int = ALPHA_RESAMPLES,
) -> AlphaResult:
    """Krippendorff's alpha (nominal); ``units[i]`` holds the values unit i received (any
    number, missing ones simply absent). With ``rng`` (the analysis passes
    ``blindtest.model.rng.IndexStream(design seed, "agreement")``, so anyone holding the design
    recomputes it), a percentile bootstrap interval over units."""
    import numpy as np

    if not 0.0 < confidence_level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level}")
    counts, sizes = _unit_table(units)
    n_units = len(sizes)
    if n_units == 0:
        return AlphaResult(0, 0, math.nan, math.nan, math.nan, "undefined", None,
                           confidence_level, 0, 0)  # fmt: skip
    one = np.ones((1, n_units))
    alpha, observed, expected = (float(x[0]) for x in _alpha_from_weights(one, counts, sizes))
    interval = None
    undefined = 0
    done = 0
    if rng is not None and n_units >= 2 and not math.isnan(alpha):
        stream = rng
        values = []
        chunk = max(1, min(resamples, 4_000_000 // n_units))
        while done < resamples:
            rows = min(chunk, resamples - done)
            picks = stream.take(rows, n_units)
            weights = np.zeros((rows, n_units))
            np.add.at(weights, (np.repeat(np.arange(rows), n_units), picks.ravel()), 1.0)
            values.append(_alpha_from_weights(weights, counts, sizes)[0])
            done += rows
        draws = np.concatenate(values)
        defined = draws[~np.isnan(draws)]
        undefined = int(draws.size - defined.size)
        tail = (1.0 - confidence_level) / 2
        # Percentile bootstrap; numpy's default (linear) interpolation between order statistics.
        lo, hi = np.quantile(defined, [tail, 1.0 - tail])
        interval = Interval(alpha, float(lo), float(hi))
    return AlphaResult(
        n_units=n_units,
        n_values=int(sizes.sum()),
        observed_disagreement=observed,
        expected_disagreement=expected,
        statistic=alpha,
        label=kappa_label(alpha),
        interval=interval,
        confidence_level=float(confidence_level),
        resamples=done,
        undefined_resamples=undefined,
    )


# ------------------------------------------------------- Cohen's kappa with the FCE standard error


@dataclass(frozen=True, slots=True)
class KappaTestResult:
    """Cohen's kappa for two raters on ``n`` shared items, with Fleiss, Cohen and Everitt's
    (1969, Psychological Bulletin 72:323-327) large-sample standard error ``se`` (the one
    statsmodels' ``cohens_kappa`` and R's psych report), the Wald interval kappa +- z se
    clipped to [-1, 1], and the test of kappa = 0 with the null standard error ``se0``
    (two-sided normal p-value).

    ``statement`` names a degenerate case in words and ``interval`` is then None: kappa
    undefined (both raters used one and the same category throughout), one shared item, or a
    standard error of 0 (agreement on every item), where a large-sample interval has no width.
    """

    n: int
    agreed: int
    observed: float
    expected: float
    statistic: float
    se: float
    se0: float
    z: float
    p_value: float
    interval: Interval | None
    confidence_level: float
    label: str
    statement: str | None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def kappa_with_se(
    first: Sequence[Hashable], second: Sequence[Hashable], *, confidence_level: float = 0.95
) -> KappaTestResult:
    """Cohen's kappa with the Fleiss-Cohen-Everitt (1969) standard errors, interval and test."""
    from scipy import stats

    if len(first) != len(second) or not first:
        raise ValueError(f"need two equal, non-empty label lists, got {len(first)}, {len(second)}")
    if not 0.0 < confidence_level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level}")
    n = len(first)
    cells = Counter(zip(first, second, strict=True))
    rows, cols = Counter(first), Counter(second)
    labels = set(rows) | set(cols)
    p = {key: count / n for key, count in cells.items()}
    pr = {c: rows[c] / n for c in labels}
    pc = {c: cols[c] / n for c in labels}
    agreed = sum(cells[(c, c)] for c in labels)
    po = agreed / n
    pe = sum(pr[c] * pc[c] for c in labels)
    nan = math.nan

    def result(kappa: float, se: float, se0: float, z: float, pv: float,
               interval: Interval | None, statement: str | None) -> KappaTestResult:  # fmt: skip
        return KappaTestResult(n, agreed, po, pe, kappa, se, se0, z, pv, interval,
                               float(confidence_level), kappa_label(kappa), statement)  # fmt: skip

    if pe >= 1.0:
        return result(nan, nan, nan, nan, nan, None,
                      "both judges gave one and the same answer on every shared trial, so "
                      "agreement by chance is already total and kappa is undefined")  # fmt: skip
    if n > 1 and (len(rows) == 1 or len(cols) == 1):
        # One judge's margin is a single answer: agreement is then exactly what chance gives
        # (po = pe), and both FCE variances are 0 in exact arithmetic (floating point leaves
        # ~1e-19, which gave a "-0.00 to 0.00" interval). Said, not estimated.
        said = (
            f"each judge gave one answer, a different one, on all {n} shared trials"
            if len(rows) == len(cols) == 1
            else f"one of the two gave the same answer on all {n} shared trials, so kappa is "
            "0 whatever the other answered"
        )
        return result(0.0, 0.0, 0.0, nan, nan, None,
                      f"{said}: kappa cannot show agreement here, and no interval or test is "
                      "given")  # fmt: skip
    kappa = (po - pe) / (1.0 - pe)
    # Fleiss, Cohen and Everitt (1969), eq. 13 (any kappa) and eq. 14 (kappa = 0).
    on = sum(p.get((c, c), 0.0) * (1.0 - (pr[c] + pc[c]) * (1.0 - kappa)) ** 2 for c in labels)
    off = (1.0 - kappa) ** 2 * sum(v * (pc[a] + pr[b]) ** 2 for (a, b), v in p.items() if a != b)
    var = (on + off - (kappa - pe * (1.0 - kappa)) ** 2) / (n * (1.0 - pe) ** 2)
    var0 = (pe + pe**2 - sum(pr[c] * pc[c] * (pr[c] + pc[c]) for c in labels)) / (
        n * (1.0 - pe) ** 2
    )
    # Rounding can leave a true zero a hair below it.
    se, se0 = math.sqrt(max(var, 0.0)), math.sqrt(max(var0, 0.0))
    z = kappa / se0 if se0 > 0 else nan
    pv = float(2.0 * stats.norm.sf(abs(z))) if se0 > 0 else nan
    if n == 1:
        return result(kappa, nan, nan, nan, nan, None,
                      "one shared trial: too few for an interval or a test")  # fmt: skip
    if se <= 1e-12:
        statement = (
            f"the judges agreed on all {n} shared trials; a large-sample interval has no width "
            "here, so none is given"
            if agreed == n
            else "no answer was used by both judges, so kappa has no spread to estimate and "
            "no large-sample interval is given"
            if pe == 0.0
            else "the standard error is 0, so no large-sample interval is given"
        )
        return result(kappa, se, se0, z, pv, None, statement)
    half = float(stats.norm.ppf(0.5 + confidence_level / 2)) * se
    interval = Interval(kappa, max(-1.0, kappa - half), min(1.0, kappa + half))
    return result(kappa, se, se0, z, pv, interval, None)


# ------------------------------------------------------------------ the agreement gate, by position

#: Why the agreement gate failed (or passed without an interval).
GateReason = Literal["chance", "below_min", "unanimous", "too_few"]


@dataclass(frozen=True, slots=True)
class AgreementGateResult:
    """Spec 002's "near chance" rule over Krippendorff's alpha of picks coded by position.

    ``verdict`` is ``"fail"`` when agreement is not distinguishable from chance: the
    bootstrap interval of ``alpha`` reaches 0 (``distinguishable`` False; ``reason``
    ``"chance"``), or fewer than two units were pairable (``"too_few"``); or, with
    ``min_alpha`` given (``--min-kappa``, a stricter rule the user chooses), when alpha's
    estimate is below it (``"below_min"``). A panel that gave one answer throughout (alpha
    undefined) passes with ``reason`` ``"unanimous"``, as before."""

    alpha: AlphaResult
    distinguishable: bool | None
    min_alpha: float | None
    verdict: Literal["pass", "fail"]
    reason: GateReason | None
    coding: str = "position (left, right, tie)"
    unit: str = "comparison"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def agreement_gate(
    units: Sequence[Sequence[Hashable]],
    *,
    rng: IndexDraws,
    confidence_level: float = 0.95,
    resamples: int = ALPHA_RESAMPLES,
    min_alpha: float | None = None,
) -> AgreementGateResult:
    """The agreement gate. ``units[i]`` holds the picks comparison i received, coded by
    position: ``"left"``, ``"right"`` or ``"tie"`` (the output shown on the left, whichever
    side or candidate it was). Coded by side (A, B, tie) instead, chance agreement comes from
    the judges' own side marginals and grows with the effect: two judges who each prefer the
    better side nine times in ten get an alpha near 0 (the kappa paradox; Feinstein and
    Cicchetti 1990). Coded by position, whose marginals the design holds at 1/2, independent
    honest judges with a per-comparison preference p have alpha = (2p - 1)^2, and judges at
    p = 1/2 have none to show: the gate fails them (there is no shared signal).

    The interval is `krippendorff_alpha`'s percentile bootstrap over comparisons; its
    coverage, and the rate at which this gate fails honest panels, are in docs/statistics.md.
    """
    if min_alpha is not None:
        _check_closed("min_alpha", min_alpha, -1.0, 1.0)
    found = krippendorff_alpha(
        units, rng=rng, confidence_level=confidence_level, resamples=resamples
    )
    reason: GateReason | None
    distinguishable: bool | None = None
    if found.n_units > 0 and math.isnan(found.statistic) and found.n_values > 0:
        reason = "unanimous"
    elif found.interval is None:
        reason = "too_few"
    else:
        distinguishable = found.interval.lo > 0.0
        if not distinguishable:
            reason = "chance"
        elif min_alpha is not None and found.statistic < min_alpha:
            reason = "below_min"
        else:
            reason = None
    verdict: Literal["pass", "fail"] = "pass" if reason in (None, "unanimous") else "fail"
    return AgreementGateResult(
        alpha=found,
        distinguishable=distinguishable,
        min_alpha=None if min_alpha is None else float(min_alpha),
        verdict=verdict,
        reason=reason,
    )


@dataclass(frozen=True, slots=True)
class PairAgreement:
    """The agreement gate over the comparisons of one pair of candidates."""

    pair: tuple[str, str]
    comparisons: int
    gate: AgreementGateResult

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def agreement_by_pair(
    units: Sequence[Sequence[Hashable]],
    pairs: Sequence[tuple[str, str]],
    *,
    rng: IndexDraws,
    confidence_level: float = 0.95,
    resamples: int = ALPHA_RESAMPLES,
    min_alpha: float | None = None,
) -> tuple[PairAgreement, ...]:
    """Agreement per pair of candidates, beside the pooled alpha: ``pairs[i]`` names the two
    candidates comparison ``units[i]`` showed (in either order). A panel can agree well pooled
    (alpha 0.63, driven by lopsided pairs) and at chance on the leader against the second,
    which the headline speaks of. Pairs in sorted order, each with its own bootstrap drawn
    from ``rng`` in that order (so the same stream gives the same intervals)."""
    if len(units) != len(pairs):
        raise ValueError(
            f"units and pairs must have one entry per comparison, got {len(units)} and {len(pairs)}"
        )
    grouped: dict[tuple[str, str], list[Sequence[Hashable]]] = {}
    for index, pair in enumerate(pairs):
        if len(pair) != 2 or pair[0] == pair[1]:
            raise ValueError(f"pairs[{index}] must name two different candidates, got {pair!r}")
        first, second = sorted((str(pair[0]), str(pair[1])))
        grouped.setdefault((first, second), []).append(units[index])
    return tuple(
        PairAgreement(
            pair=key,
            comparisons=len(grouped[key]),
            gate=agreement_gate(
                grouped[key],
                rng=rng,
                confidence_level=confidence_level,
                resamples=resamples,
                min_alpha=min_alpha,
            ),
        )
        for key in sorted(grouped)
    )
