"""What a judge's flaw costs the prediction-powered estimate in width (`blindtest.stats.ppi`).

The estimate stays valid whatever the judge does, so a flaw of the judge (a preference for the
left side, for the longer answer, ...) never biases it: it costs width. This module says how
much, per flaw, for one estimand (a pair's people's score): the interval's half-width as
estimated, against the half-width the same estimator would have had with a judge whose
scores did not follow that flaw's variable.

**The counterfactual judge** (``ppi_flaw_cost``). ``x`` is the flaw's variable on every
comparison (position: +1 when the first candidate was shown on the left, -1 on the right;
length: the sign of the first answer's word count minus the second's; ...). From the judge's
own scores ``f`` on *every* comparison, sampled and not, the judge's slope on ``x`` is the
least-squares ``b = sum (x - xbar)(f - fbar) / sum (x - xbar)^2`` (centred within each
stratum: stratum intercepts). The part of ``f`` it explains is taken off::

    f* = f - r (x - xbar),    r = b - t

with ``t`` the slope the counterfactual judge keeps. ``beyond_people=True`` (the default):
``t`` is the people's own slope on ``x`` over the sampled comparisons (``Y`` on ``x``, the same
centring), clipped to lie between 0 and ``b``: a variable people also follow (a longer answer
people also prefer) is real signal, and a judge is charged only for following it *beyond* what
people do; the clip never adds a dependence the judge did not have, nor reverses one. A sample
on which ``x`` does not vary says nothing of people's slope: ``t = 0``. ``beyond_people=False``:
``t = 0`` (the whole dependence is taken off; ``r = b`` uses no people's score at all). This is
the Frisch-Waugh-Lovell partialling of ``x`` out of the prediction (Frisch and Waugh 1933;
Lovell 1963), so ``f*`` keeps every part of ``f`` not linear in ``x``, and the mean of ``f*``
over the comparisons is the mean of ``f``.

**The width.** ``f*`` replaces ``f`` in the same estimator on the same people's sample: the
weight recomputed by the same rule (`blindtest.stats.ppi_core.weights`), the variance
``var(Y - lambda f*)/n + lambda^2 var(f*_u)/N'`` combined over strata as
`blindtest.stats.ppi_core.combine` does. Both half-widths are the prediction-powered normal
interval's at the *same* quantile (the actual interval's Student t on its Satterthwaite degrees
of freedom, or z), so the difference is the variances' alone::

    width_change = 2 q (sqrt(V) - sqrt(V*))          (points of the score, full width)
    width_cost   = max(width_change, 0)

A negative change (the judge with its flaw did better: what it followed helped it track people)
is no cost: ``width_cost`` is 0 and ``width_change`` keeps the sign. In people's judgements:
``n_eff = n V_people / V`` (the people's judgements that give the people-only estimate the
variance ``V``: `blindtest.stats.ppi`'s effective sample size, here at the weight actually
used), and ``people_equivalent = max(n_eff* - n_eff, 0)``.

**What it is, in words.** A rough estimate of the width a judge that did not follow the flaw's
variable (beyond people's own slope) would have saved, *keeping everything else it did*. It
cannot give back what the judge never read: a judge that followed position on every comparison
has nothing left once position is taken off (``explained``, the share of the judge's score
variance ``x`` explains, near 1), and its cost is then near 0 although the judge was worth
nothing. Its noise: ``b`` rests on every comparison; ``t`` and the variances on the people's
sample, so a flawless judge's cost is near 0 but not exactly 0 (tests/benchmarks/
sim_ppi_flaws.py, docs/statistics.md).

``ppi_prediction_cost`` is the same comparison against counterfactual predictions given
outright (an LLM judge's verdicts left out for identity leakage, counted).

Pure; no I/O. The vectorised arithmetic (`adjust_for_variable`, `width_costs`) serves the
simulation too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from blindtest.stats import ppi_core as core
from blindtest.stats.intervals import _check_choice, _check_open, _check_real, result_to_dict
from blindtest.stats.ppi import (
    QUANTILES,
    VERDICT_SCORES,
    Quantile,
    WeightRule,
    _as_scores,
    _check_values,
    _check_weight,
    _checked,
    _rule_name,
    _split,
)

__all__ = [
    "Adjusted",
    "PPIFlawCost",
    "WidthCosts",
    "adjust_for_variable",
    "ppi_flaw_cost",
    "ppi_prediction_cost",
    "width_costs",
]

F64 = npt.NDArray[np.float64]


# ------------------------------------------------------------------ vectorised arithmetic


@dataclass(frozen=True, slots=True)
class Adjusted:
    """The counterfactual judge's scores per stratum (rows x comparisons), and per row the
    judge's slope on the variable, the people's, the slope removed and the share of the
    judge's score variance the variable explains (0 when the judge's scores do not vary);
    ``varies``: the variable varies within some stratum."""

    fs: tuple[F64, ...]
    fus: tuple[F64, ...]
    judge_slope: F64
    people_slope: F64
    removed_slope: F64
    explained: F64
    varies: npt.NDArray[np.bool_]


def _centred(a: F64, mean: F64) -> F64:
    return np.asarray(a - mean[:, None], dtype=float)


def adjust_for_variable(
    ys: Sequence[F64],
    fs: Sequence[F64],
    fus: Sequence[F64],
    xs: Sequence[F64],
    xus: Sequence[F64],
    *,
    beyond_people: bool = True,
) -> Adjusted:
    """The judge's scores with the part linear in ``x`` (beyond people's own slope) taken off,
    for every row (module doc)."""
    rows = ys[0].shape[0]
    sxx, sxf, sxx_s, sxy, sff = (np.zeros(rows) for _ in range(5))
    means = []
    for y, f, fu, x, xu in zip(ys, fs, fus, xs, xus, strict=True):
        x_all, f_all = np.concatenate([x, xu], axis=1), np.concatenate([f, fu], axis=1)
        x_mean = x_all.mean(axis=1)
        means.append(x_mean)
        xd, fd = _centred(x_all, x_mean), _centred(f_all, f_all.mean(axis=1))
        sxx += np.sum(xd**2, axis=1)
        sxf += np.sum(xd * fd, axis=1)
        sff += np.sum(fd**2, axis=1)
        xs_d = _centred(x, x.mean(axis=1))
        sxx_s += np.sum(xs_d**2, axis=1)
        sxy += np.sum(xs_d * _centred(y, y.mean(axis=1)), axis=1)
    varies = sxx > 0
    b = np.zeros(rows)
    np.divide(sxf, sxx, out=b, where=varies)
    c = np.zeros(rows)
    np.divide(sxy, sxx_s, out=c, where=sxx_s > 0)
    kept = np.clip(c, np.minimum(b, 0.0), np.maximum(b, 0.0)) if beyond_people else 0.0 * b
    removed = b - kept
    explained = np.zeros(rows)
    np.divide(b**2 * sxx, sff, out=explained, where=sff > 0)
    adjusted = [
        (f - removed[:, None] * _centred(x, m), fu - removed[:, None] * _centred(xu, m))
        for f, fu, x, xu, m in zip(fs, fus, xs, xus, means, strict=True)
    ]
    return Adjusted(
        fs=tuple(a for a, _ in adjusted),
        fus=tuple(a for _, a in adjusted),
        judge_slope=b,
        people_slope=c,
        removed_slope=removed,
        explained=np.minimum(explained, 1.0),
        varies=varies,
    )


@dataclass(frozen=True, slots=True)
class WidthCosts:
    """Per row: the prediction-powered normal interval's half-width with the judge as it was
    and with the counterfactual judge (the same quantile), and the effective numbers of
    people's judgements ``n V_people / V`` of each (NaN where a variance is 0)."""

    half_width: F64
    adjusted_half_width: F64
    effective_n: F64
    adjusted_effective_n: F64


def width_costs(
    ys: Sequence[F64],
    fs: Sequence[F64],
    fus: Sequence[F64],
    fs_other: Sequence[F64],
    fus_other: Sequence[F64],
    shares: Sequence[float],
    *,
    weight: str | float = "auto",
    quantile: str = "t",
    confidence_level: float = 0.95,
) -> WidthCosts:
    """Both judges' half-widths on the same people's sample, each at the weight ``weight``'s
    rule gives it, at the actual interval's quantile."""
    parts = [core.stratum_parts(y, f, fu, weight) for y, f, fu in zip(ys, fs, fus, strict=True)]
    other = [
        core.stratum_parts(y, f, fu, weight)
        for y, f, fu in zip(ys, fs_other, fus_other, strict=True)
    ]
    comb = core.combine(parts, shares, confidence_level)
    comb_other = core.combine(other, shares, confidence_level)
    q = core.quantiles(confidence_level, quantile, comb.df)
    n = sum(p.n for p in parts)

    def effective(variance: F64) -> F64:
        out = np.full_like(variance, np.nan)
        ok = variance > 0
        out[ok] = n * comb.people_variance[ok] / variance[ok]
        return out

    return WidthCosts(
        half_width=q * np.sqrt(comb.variance),
        adjusted_half_width=q * np.sqrt(comb_other.variance),
        effective_n=effective(comb.variance),
        adjusted_effective_n=effective(comb_other.variance),
    )


# ---------------------------------------------------------------------------- the result


@dataclass(frozen=True, slots=True)
class PPIFlawCost:
    """What a flaw of the judge cost the prediction-powered interval (module doc).

    ``judge_slope``: the judge's score per unit of the flaw's variable over every comparison;
    ``people_slope``: the people's over the sample; ``removed_slope``: the part taken off;
    ``explained``: the share of the judge's score variance the variable explains (all NaN for
    `ppi_prediction_cost`). ``half_width`` and ``adjusted_half_width``: the prediction-powered
    normal interval's, with the judge as it was and as it would have been, at the same
    quantile; ``width_change`` = twice their difference (signed), ``width_cost`` its positive
    part (points of the score, the interval's full width). ``effective_n`` and
    ``adjusted_effective_n``: ``n V_people / V`` of each; ``people_equivalent``: the people's
    judgements the flaw cost (0 when it cost nothing). ``measured``: False, with ``reason``,
    when the cost cannot be measured (the variable never varies; the interval has no width).
    """

    n: int
    n_unsampled: int
    confidence_level: float
    weight_rule: str
    beyond_people: bool
    judge_slope: float
    people_slope: float
    removed_slope: float
    explained: float
    half_width: float
    adjusted_half_width: float
    width_change: float
    width_cost: float
    effective_n: float
    adjusted_effective_n: float
    people_equivalent: float
    measured: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (non-finite numbers as null)."""
        return result_to_dict(self)


def _as_reals(name: str, values: Sequence[float], length: int, count: str) -> F64:
    if len(values) != length:
        raise ValueError(f"{name} needs one value per {count} comparison ({length}), got "
                         f"{len(values)}")  # fmt: skip
    return np.asarray([_check_real(f"{name}[{i}]", v) for i, v in enumerate(values)], dtype=float)


def _one(array: F64) -> float:
    return float(array[0])


def _result(
    shape: tuple[int, int, float, str, bool],
    slopes: tuple[float, float, float, float],
    costs: WidthCosts,
    varies: bool,
) -> PPIFlawCost:
    n, n_u, level, rule, beyond = shape
    hw, hw_adj = _one(costs.half_width), _one(costs.adjusted_half_width)
    eff, eff_adj = _one(costs.effective_n), _one(costs.adjusted_effective_n)
    reason = ""
    if not varies:
        reason = "the flaw's variable is the same on every comparison (of each stratum)"
    elif not (np.isfinite(hw) and hw > 0 and np.isfinite(hw_adj) and hw_adj > 0):
        reason = "the prediction-powered interval has no width to compare"
    measured = not reason
    change = 2.0 * (hw - hw_adj) if measured else float("nan")
    return PPIFlawCost(
        n=n,
        n_unsampled=n_u,
        confidence_level=level,
        weight_rule=rule,
        beyond_people=beyond,
        judge_slope=slopes[0],
        people_slope=slopes[1],
        removed_slope=slopes[2],
        explained=slopes[3],
        half_width=hw,
        adjusted_half_width=hw_adj,
        width_change=change,
        width_cost=max(change, 0.0) if measured else 0.0,
        effective_n=eff,
        adjusted_effective_n=eff_adj,
        people_equivalent=max(eff_adj - eff, 0.0) if measured else 0.0,
        measured=measured,
        reason=reason,
    )


def _options(
    weight: object, quantile: object, confidence_level: object, score_values: Sequence[float]
) -> tuple[str | float, str, float, tuple[float, ...]]:
    rule = _check_weight(weight)
    _check_choice("quantile", quantile, QUANTILES)
    level = _check_open("confidence_level", confidence_level)
    return rule, str(quantile), level, _check_values(score_values)


def ppi_flaw_cost(
    people: Sequence[float],
    judge_sampled: Sequence[float],
    judge_unsampled: Sequence[float],
    flaw_sampled: Sequence[float],
    flaw_unsampled: Sequence[float],
    *,
    strata_sampled: Sequence[str] | None = None,
    strata_unsampled: Sequence[str] | None = None,
    weight: WeightRule | float = "auto",
    quantile: Quantile = "t",
    score_values: Sequence[float] = VERDICT_SCORES,
    beyond_people: bool = True,
    confidence_level: float = 0.95,
) -> PPIFlawCost:
    """The width a flaw cost the prediction-powered estimate of the people's score.

    The first three arguments and the keyword options are `blindtest.stats.ppi.ppi_preference`'s
    (every people's score given: a bounded estimate has no single width); ``flaw_sampled[i]``
    and ``flaw_unsampled[j]`` are the flaw's variable on the same comparisons, any real numbers.
    The counterfactual judge and the cost are in the module doc.
    """
    rule, quantile_name, level, values = _options(weight, quantile, confidence_level,
                                                  score_values)  # fmt: skip
    data = _checked(people, judge_sampled, judge_unsampled,
                    (strata_sampled, strata_unsampled), values)  # fmt: skip
    x = _as_reals("flaw_sampled", flaw_sampled, len(judge_sampled), "sampled")
    xu = _as_reals("flaw_unsampled", flaw_unsampled, len(judge_unsampled), "unsampled")
    labels = list(strata_sampled) if strata_sampled is not None else [""] * x.size
    labels_u = list(strata_unsampled) if strata_unsampled is not None else [""] * xu.size
    split = _split(x, x, xu, [str(s) for s in labels], [str(s) for s in labels_u])
    adjusted = adjust_for_variable(
        data.ys, data.fs, data.fus, split.fs, split.fus, beyond_people=beyond_people
    )
    costs = width_costs(
        data.ys, data.fs, data.fus, adjusted.fs, adjusted.fus, data.shares,
        weight=rule, quantile=quantile_name, confidence_level=level,
    )  # fmt: skip
    slopes = (
        _one(adjusted.judge_slope),
        _one(adjusted.people_slope),
        _one(adjusted.removed_slope),
        _one(adjusted.explained),
    )
    shape = (data.n, sum(fu.shape[1] for fu in data.fus), level, _rule_name(rule, data),
             beyond_people)  # fmt: skip
    return _result(shape, slopes, costs, bool(adjusted.varies[0]))


def ppi_prediction_cost(
    people: Sequence[float],
    judge_sampled: Sequence[float],
    judge_unsampled: Sequence[float],
    other_sampled: Sequence[float],
    other_unsampled: Sequence[float],
    *,
    strata_sampled: Sequence[str] | None = None,
    strata_unsampled: Sequence[str] | None = None,
    weight: WeightRule | float = "auto",
    quantile: Quantile = "t",
    score_values: Sequence[float] = VERDICT_SCORES,
    confidence_level: float = 0.95,
) -> PPIFlawCost:
    """`ppi_flaw_cost` against counterfactual predictions given outright: ``other_sampled``
    and ``other_unsampled`` (scores in [0, 1], the same comparisons) in place of the judge's.
    The slopes and ``explained`` are NaN."""
    rule, quantile_name, level, values = _options(weight, quantile, confidence_level,
                                                  score_values)  # fmt: skip
    data = _checked(people, judge_sampled, judge_unsampled,
                    (strata_sampled, strata_unsampled), values)  # fmt: skip
    g = _as_scores("other_sampled", other_sampled)
    gu = _as_scores("other_unsampled", other_unsampled)
    if g.size != len(judge_sampled) or gu.size != len(judge_unsampled):
        raise ValueError(
            "other_sampled and other_unsampled need one score per comparison of judge_sampled "
            f"and judge_unsampled ({len(judge_sampled)} and {len(judge_unsampled)}), got "
            f"{g.size} and {gu.size}"
        )
    labels = list(strata_sampled) if strata_sampled is not None else [""] * g.size
    labels_u = list(strata_unsampled) if strata_unsampled is not None else [""] * gu.size
    other = _split(g, g, gu, [str(s) for s in labels], [str(s) for s in labels_u])
    costs = width_costs(
        data.ys, data.fs, data.fus, other.fs, other.fus, data.shares,
        weight=rule, quantile=quantile_name, confidence_level=level,
    )  # fmt: skip
    nan = float("nan")
    shape = (data.n, sum(fu.shape[1] for fu in data.fus), level, _rule_name(rule, data), False)
    return _result(shape, (nan, nan, nan, nan), costs, True)
