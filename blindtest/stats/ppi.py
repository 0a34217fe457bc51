"""Prediction-powered inference for the people's preference score: people on a random sample of
prompts, an LLM judge on every prompt, an interval for what people prefer that the judge cannot
bias.

**Estimand and unit.** The people's mean preference score over the workload, a person's
verdict scored win 1, tie 1/2, loss 0 (a panel's comparison: the mean of its people's scores),
the prompts taken as a sample from the workload. The unit is the prompt: people judge every
comparison of a sampled prompt, and each estimand here (two sides; or one pair of candidates,
with Holm across pairs on ``p_value``) has one comparison per prompt, so a unit is one
comparison. The judge's prediction is its score for the same comparison (win 1, tie 1/2, loss
0, its swap passes combined), or a mapping of its confidence fixed in advance: any number in
[0, 1].

**Estimator** (Angelopoulos, Bates, Fannjiang, Jordan and Zrnic 2023, "Prediction-powered
inference", Science 382:669; PPI++: Angelopoulos, Duchi and Zrnic 2024, "PPI++: Efficient
prediction-powered inference", arXiv:2311.01453). With ``n`` people's scores ``Y`` and the
judge's ``f`` on the same comparisons, and the judge's ``f_u`` on the ``N'`` comparisons people
did not judge::

    estimate = lambda * mean(f_u) + mean(Y - lambda * f)
    variance = var(Y - lambda * f) / n + lambda^2 var(f_u) / N'      (variances with ddof 0)

exactly ``ppi_py.ppi_mean_pointestimate`` / ``ppi_mean_ci`` with ``Yhat_unlabeled`` the
unsampled comparisons (``quantile="z"``; a test holds us to that package to 1e-12). For a fixed
``lambda`` the estimate is unbiased whatever the judge does: its bias is measured on the sample
and taken off. ``lambda`` is the power-tuned weight:

* ``"plug-in"``: PPI++'s ``cov(Y, f) / ((1 + n / N') var(f))`` (cov over the sample with ddof
  0, var over every judge score with ddof 1, clipped to [0, 1]), as ``ppi_py``;
* ``"cross-fit"``: two folds (the people's judgements alternately, in the order given: the
  design's random draw order), each fold weighted by the plug-in weight of the other fold (its
  variance of ``f`` over the other fold and the unsampled comparisons). A fold's own scores
  never choose its weight, so the estimate stays unbiased and the variance is not made
  optimistic by the tuning, as the plug-in weight's is with few people's judgements;
* ``"one"``: classical PPI (``lambda = 1``); a number in [0, 1]: that weight, fixed in advance;
* ``"auto"`` (the default): cross-fit below `CROSS_FIT_BELOW` people's judgements in a stratum,
  plug-in from there (docs/statistics.md has the simulation that chose it).

A stratum without unsampled comparisons (people judged all of it) has weight 0.

**Stratified sampling** (by tag): each stratum its own estimate and weight (Fisch et al. 2024,
"Stratified prediction-powered inference for hybrid language model evaluation", NeurIPS),
combined with the stratum's share of the comparisons, ``W_h = N_h / N`` (the workload's tag
shares taken as the prompt file's).

**Which interval** (``interval="auto"``). The normal interval is ``estimate +- q se`` with ``q``
Student's t quantile on Satterthwaite's (1946) effective degrees of freedom of the variance
estimate, ``2 V^2 / var(V)`` from the fourth moments (capped at ``n - strata``; about twice the
number of rare outcomes the variance rests on). It is trusted when those degrees of freedom
reach `MIN_DEGREES_OF_FREEDOM` (so at least 21 people's judgements), every stratum's ``Y -
lambda f`` varies, and the estimate's skewness from the third moments is at most
`SKEWNESS_LIMIT` in size: Cochran's rule (Sampling Techniques, 3rd ed., 1977, sec. 2.15, ``n >
25 G1^2`` for a mean, i.e. a skewness of the mean below 0.2) applied to the whole estimate. A
judge that rarely disagrees with people, or nearly always gives one verdict, makes ``Y - lambda
f`` rare-and-large, and this is what then fails: a sample that happens to miss the rare
disagreements has a small variance and an estimate off to one side. Otherwise the people's own
normal interval under the same rule on ``Y``; otherwise the people's **exact** interval: the
score is the layer sum ``s_0 + sum_j (s_j - s_(j-1)) P(Y >= s_j)`` over the possible scores ``s``
(win/tie/loss: two layers), each layer's probability with a one-sided Clopper-Pearson bound,
Bonferroni over layers and strata (strata summed with their shares). It holds at any size,
whatever the tie rate. When the headline is the people's interval, its estimate is the
people's too (``normal`` keeps the prediction-powered one). Two conservative intervals that use
the judge were tried (strata of the judge's verdict with exact intervals per stratum,
Bonferroni; a betting interval for ``Y - lambda f``, Waudby-Smith and Ramdas 2024): both were
wider than the people's exact interval wherever the normal interval is not trusted
(tests/benchmarks/sim_ppi.py ``--alternatives``), so the fallback does not use the judge.

**A one-sided claim** (a release decision, `ppi_decision`): the p-value that the score is
above (or below) a boundary, by whichever interval the rule chose. The choice reads the
degrees of freedom, the skewness and whether the terms vary, never the level, so one choice
serves every level and each method's p-value inverts one nested family of bounds: ``p <=
alpha`` exactly when the ``1 - alpha`` one-sided bound clears the boundary, at every alpha,
which is what lets Holm's step-down levels read it. The normal ones: Student's t on the
estimate, its standard error and Satterthwaite degrees of freedom, or, if larger, the same
tail of Hall's (1992) skewness-corrected statistic (``t + g t^2/3 + g^2 t^3/27 + g/6``, ``g``
the estimate's estimated skewness; Johnson's 1978 modified t made monotone): a skewed estimate
moves one tail's error by order n^-1/2 (a two-sided interval's errors cancel to order 1/n),
and taking the larger p lets the correction make a claim harder, never easier. For the
studentised PPI estimate the expansion's skewness term is the estimate's own, since the
covariance of the estimate and its variance estimate equals its third cumulant for a weighted
sum of independent means. The exact one: the smallest level at which the exact bound clears
the boundary, by bisection (the Clopper-Pearson bounds, and so their layer sum, are nested in
the level). The decision's interval is the pair of those one-sided bounds at ``1 -
confidence_level`` over two each (for ``people-exact`` the headline exact interval).

**Effective sample size.** ``n_eff = n * V_people / V_ppi``: the number of people's judgements
that would give the people-only estimate the variance the PPI estimate has at the PPI++ weight
("the judge was worth about n_eff - n people's judgements"). At that weight it depends on the
judge only through the correlation ``rho`` of its scores with people's on the sample: ``n (n +
N') / (n + (1 - rho^2) N')`` (Broska, Howes and van Loon 2024, "The mixed subjects design"; a
negative correlation counts as none; with strata, each stratum's ``V_ppi`` at its own rho). It
describes the judge, whatever weight the estimate used. Its interval maps Fisher's z interval
for rho (the z scale's distribution-free standard error from the fourth moments, Steiger and
Hakstian 1982; Bonferroni over strata) and is given from `EFFECTIVE_N_INTERVAL_FROM` people's
judgements: below that, a judge whose disagreements are rare leaves the correlation resting on
a handful of them, and the interval covered 0.87 at 50 (a variance-ratio F interval on the
Satterthwaite degrees of freedom did no better). The gate is the sample size, not the data, so
it selects nothing.

**Untied share** (when every score is a verdict): the people's share of wins among their
untied verdicts, ``p_win / (p_win + p_loss)``, from the prediction-powered estimates of both
shares (the judge's win and loss indicators as predictions), weighted by the rule's weight for
the estimating function ``(1 - u) win - u loss`` at a first (weight 1) estimate of ``u``; the
delta-method normal interval under the same rule, otherwise Clopper-Pearson on the people's
untied verdicts (exact given their number; with strata, the ratio of the win and loss shares'
simultaneous exact bounds).

Pure functions, no I/O. `blindtest.stats.ppi_core` holds the arithmetic, vectorised.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from blindtest.stats import ppi_core as core
from blindtest.stats.decision import DecisionRule, parse_rule
from blindtest.stats.intervals import (
    Interval,
    _check_choice,
    _check_open,
    _check_real,
    clopper_pearson,
    result_to_dict,
)
from blindtest.stats.ppi_core import (
    CROSS_FIT_BELOW,
    EFFECTIVE_N_INTERVAL_FROM,
    METHODS,
    MIN_DEGREES_OF_FREEDOM,
    SKEWNESS_LIMIT,
    VERDICT_SCORES,
)

__all__ = [
    "CROSS_FIT_BELOW",
    "EFFECTIVE_N_INTERVAL_FROM",
    "METHODS",
    "MIN_DEGREES_OF_FREEDOM",
    "SKEWNESS_LIMIT",
    "VERDICT_SCORES",
    "PPIDecision",
    "PPIMissingResult",
    "PPIResult",
    "PPIStratum",
    "UntiedShare",
    "ppi_decision",
    "ppi_preference",
    "ppi_preference_missing",
]

F64 = npt.NDArray[np.float64]
WeightRule = Literal["auto", "plug-in", "cross-fit", "one"]
IntervalRule = Literal["auto", "normal", "exact"]
Quantile = Literal["t", "z"]
MissingRule = Literal["void", "bound"]
WEIGHT_RULES: tuple[str, ...] = ("auto", "plug-in", "cross-fit", "one")
INTERVAL_RULES: tuple[str, ...] = ("auto", "normal", "exact")
QUANTILES: tuple[str, ...] = ("t", "z")
MISSING_RULES: tuple[str, ...] = ("void", "bound")
_NAN_INTERVAL = Interval(math.nan, math.nan, math.nan)


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class PPIStratum:
    """One stratum (tag; "" for a uniform sample): its people's judgements ``n``, judge-only
    comparisons ``n_unsampled``, its ``share`` of all comparisons, its ``weight`` (lambda; the
    folds' mean when cross-fitted) and its prediction-powered ``estimate``."""

    name: str
    n: int
    n_unsampled: int
    share: float
    weight: float
    estimate: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class UntiedShare:
    """The people's share of wins among their untied verdicts, prediction-powered (module doc).

    ``interval`` by ``method``: ``"ppi-normal"`` or ``"people-exact"`` (Clopper-Pearson on the
    ``untied`` people's verdicts, ``wins`` of them wins); ``normal`` is the prediction-powered
    normal interval whichever was chosen (null bounds without variance), ``weight`` its lambda.
    """

    untied: int
    wins: int
    weight: float
    interval: Interval
    method: str
    normal: Interval

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class PPIResult:
    """The prediction-powered estimate of the people's score, and what stands beside it.

    * ``estimate`` and ``interval`` (at ``confidence_level``) are the headline. ``method`` says
      which interval: ``"ppi-normal"``, ``"people-normal"`` or ``"people-exact"`` (module doc),
      ``reason`` why, in words. ``p_value``: that method's two-sided test of the score ``null``
      (1/2: no preference); Holm across pairs takes these (`blindtest.stats.holm`).
    * ``normal``: the prediction-powered normal interval whatever was chosen (null bounds when
      it has no variance), with ``standard_error``, ``degrees_of_freedom`` (Satterthwaite) and
      ``skewness`` (signed), which the rule reads. ``exact``: the people's exact interval.
    * ``people_only``: the people's own estimate and interval (``people_only_method``
      ``"people-normal"`` or ``"people-exact"``). ``judge_only``: the judge's own score over
      every comparison, a normal interval (what the judge prefers, not what people prefer).
    * ``effective_n``: the people's judgements the judge makes the estimate worth at the PPI++
      weight, ``judge_worth`` = ``effective_n - n``, each with its interval (null bounds below
      `EFFECTIVE_N_INTERVAL_FROM` people's judgements; all null when undefined).
    * ``weight`` (one stratum; null with several) and ``weight_rule``; ``strata``: one record
      each. ``untied_share``: null when a score is not a verdict or no verdict was untied.
    """

    n: int
    n_unsampled: int
    confidence_level: float
    null: float
    weight_rule: str
    weight: float
    estimate: float
    interval: Interval
    method: str
    reason: str
    p_value: float
    normal: Interval
    standard_error: float
    degrees_of_freedom: float
    skewness: float
    exact: Interval
    people_only: Interval
    people_only_method: str
    judge_only: Interval
    effective_n: Interval
    judge_worth: Interval
    strata: tuple[PPIStratum, ...]
    untied_share: UntiedShare | None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (non-finite numbers as null)."""
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class PPIMissingResult:
    """The estimate when some sampled comparisons have no people's judgement (module doc).

    ``status``: ``"complete"`` (nothing missing: ``result``), ``"void"`` (missing, and the rule
    was void: no estimate), or ``"bounded"``: computed with every missing judgement a loss
    (``as_losses``) and a win (``as_wins``); ``interval`` then runs from the lower of the two
    lower bounds to the higher of the two upper bounds (its ``estimate`` null), between
    ``estimate_low`` and ``estimate_high``. ``reason`` says it in words.
    """

    status: str
    n_sampled: int
    n_missing: int
    interval: Interval | None
    estimate_low: float
    estimate_high: float
    result: PPIResult | None
    as_losses: PPIResult | None
    as_wins: PPIResult | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (non-finite numbers as null)."""
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class PPIDecision:
    """A margin rule's one-sided evidence on the people's score (module doc, "A one-sided
    claim"), for one challenger; Holm across challengers is the caller's.

    * ``rule``, ``margin``; ``lower`` and ``upper`` the rule's boundaries on the score scale
      (``upper`` null unless equivalence).
    * ``status``, ``reason``, ``n_sampled``, ``n_missing``: as `PPIMissingResult`'s. ``void``:
      no evidence (null interval, every p null).
    * ``method``: the interval the rule chose (``ppi-normal``, ``people-normal`` or
      ``people-exact``); ``bounded`` under the bound rule, each worst case deciding its own.
    * ``interval`` at ``confidence_level``: the one-sided ``(1 + level) / 2`` bounds the
      p-values invert (bounded: the lower of the two worst cases' lower bounds, the higher of
      their upper bounds, no estimate).
    * ``p_value``: the claim's one-sided p (equivalence: the larger of ``p_lower``, the score
      above ``lower``, and ``p_upper``, below ``upper``); ``p_refute``: the opposite claim's,
      ``direction`` its side (``"below"`` or ``"above"``). Bounded: each the larger over the two
      worst cases, so a p at most alpha means both worst cases clear.
    """

    rule: str
    margin: float
    lower: float
    upper: float | None
    status: str
    reason: str
    n_sampled: int
    n_missing: int
    method: str
    confidence_level: float
    interval: Interval | None
    p_value: float
    p_lower: float
    p_upper: float | None
    p_refute: float
    direction: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (non-finite numbers as null)."""
        return result_to_dict(self)


# -------------------------------------------------------------------- argument checking


def _as_scores(name: str, values: Sequence[float | None], *, allow_missing: bool = False) -> F64:
    out = np.empty(len(values))
    for i, value in enumerate(values):
        if value is None and allow_missing:
            out[i] = np.nan
            continue
        number = _check_real(f"{name}[{i}]", value)
        if not 0.0 <= number <= 1.0:
            raise ValueError(f"{name}[{i}] must be in [0, 1], got {value!r}")
        out[i] = number
    return out


def _check_values(score_values: Sequence[float]) -> tuple[float, ...]:
    values = tuple(_check_real(f"score_values[{i}]", v) for i, v in enumerate(score_values))
    if len(values) < 2 or any(b <= a for a, b in itertools.pairwise(values)):
        raise ValueError(
            f"score_values must be at least two increasing scores, got {tuple(score_values)!r}"
        )
    if values[0] < 0.0 or values[-1] > 1.0:
        raise ValueError(f"score_values must lie in [0, 1], got {tuple(score_values)!r}")
    return values


def _check_on_grid(people: F64, values: tuple[float, ...]) -> None:
    grid = np.asarray(values)
    for i, y in enumerate(people):
        if not np.isnan(y) and np.min(np.abs(grid - y)) > 1e-9:
            raise ValueError(
                f"people[{i}] = {float(y)!r} is not one of score_values {values!r} (a panel's mean "
                "needs its own score_values, e.g. (0, 0.25, 0.5, 0.75, 1) for two people)"
            )


def _check_weight(weight: object) -> str | float:
    if isinstance(weight, str):
        return _check_choice("weight", weight, WEIGHT_RULES)
    number = _check_real("weight", weight)
    if not 0.0 <= number <= 1.0:
        raise ValueError(
            f"weight must be one of {', '.join(map(repr, WEIGHT_RULES))} or a number in "
            f"[0, 1]; got {weight!r}"
        )
    return number


def _labels(
    name: str, labels: Sequence[str] | None, length: int, other: Sequence[str] | None
) -> list[str]:
    if (labels is None) != (other is None):
        raise ValueError("give strata_sampled and strata_unsampled together, or neither")
    if labels is None:
        return [""] * length
    if len(labels) != length:
        raise ValueError(f"{name} needs one label per comparison ({length}), got {len(labels)}")
    return [str(label) for label in labels]


# ------------------------------------------------------------------------------- pieces


@dataclass(frozen=True, slots=True)
class _Data:
    names: tuple[str, ...]
    ys: tuple[F64, ...]
    fs: tuple[F64, ...]
    fus: tuple[F64, ...]
    shares: tuple[float, ...]

    @property
    def n(self) -> int:
        return sum(y.shape[1] for y in self.ys)


def _split(
    people: F64, judge: F64, unsampled: F64, labels: list[str], labels_u: list[str]
) -> _Data:
    names = tuple(sorted(set(labels) | set(labels_u)))
    total = len(labels) + len(labels_u)
    lab, lab_u = np.asarray(labels, dtype=object), np.asarray(labels_u, dtype=object)
    ys, fs, fus, shares = [], [], [], []
    for name in names:
        sel, sel_u = lab == name, lab_u == name
        if not sel.any():
            raise ValueError(
                f"stratum {name!r} has {int(sel_u.sum())} comparisons but no people's "
                "judgement: the estimate needs at least one in every stratum"
            )
        ys.append(people[sel][None, :])
        fs.append(judge[sel][None, :])
        fus.append(unsampled[sel_u][None, :])
        shares.append(float(sel.sum() + sel_u.sum()) / total)
    return _Data(names, tuple(ys), tuple(fs), tuple(fus), tuple(shares))


def _one(array: F64) -> float:
    return float(array[0])


def _normal_interval(estimate: float, se: float, q: float) -> Interval:
    if not (math.isfinite(se) and se > 0):
        return Interval(estimate, math.nan, math.nan)
    return Interval(estimate, estimate - q * se, estimate + q * se)


def _normal_p(estimate: float, se: float, df: float, quantile: str, null: float) -> float:
    from scipy import special, stats  # deferred: scipy.stats costs 0.5 s at start-up

    if not (math.isfinite(se) and se > 0):
        return math.nan
    stat = abs(estimate - null) / se
    tail = special.ndtr(-stat) if quantile == "z" else stats.t.sf(stat, df)
    return float(min(1.0, 2.0 * tail))


def _exact_p(data: _Data, values: tuple[float, ...], null: float) -> float:
    """Two-sided p of the score ``null`` from the exact bounds: twice the smaller one-sided
    p-value (`blindtest.stats.ppi_core.exact_one_sided_p`)."""
    sides = [
        _one(core.exact_one_sided_p(data.ys, data.shares, values, null, above=above))
        for above in (True, False)
    ]
    return float(min(1.0, 2.0 * min(sides)))


def _reason_not_trusted(comb_df: float, skewness: float, varies: bool, who: str) -> str:
    if not varies:
        return f"{who} does not vary in every stratum, so a normal interval has no width"
    if comb_df < MIN_DEGREES_OF_FREEDOM:
        return (
            f"{who}'s variance rests on too few outcomes for a normal interval ({comb_df:.1f} "
            f"effective degrees of freedom, fewer than {MIN_DEGREES_OF_FREEDOM:g})"
        )
    return (
        f"{who} is too skewed for a normal interval (skewness {skewness:.2f}, beyond "
        f"{SKEWNESS_LIMIT} by Cochran's rule)"
    )


def _reason(vec: core.IntervalsVector, interval: str) -> str:
    comb = vec.combined
    if interval != "auto":
        return f"the {interval} interval was asked for"
    method = int(vec.method[0])
    if method == 0:
        return (
            f"the prediction-powered normal interval ({_one(comb.df):.0f} effective degrees of "
            f"freedom, skewness {_one(comb.skewness):.2f}: within the rule)"
        )
    why = _reason_not_trusted(
        _one(comb.df), _one(comb.skewness), bool(comb.varies[0]), "the judge-corrected score"
    )
    if method == 1:
        return f"{why}; the people's own normal interval is used"
    why_people = _reason_not_trusted(
        _one(comb.people_df), _one(comb.people_skewness), bool(comb.people_varies[0]),
        "the people's score",
    )  # fmt: skip
    return f"{why}, and {why_people}; the people's exact interval is used (it holds at any size)"


def _p_value(
    vec: core.IntervalsVector, data: _Data, options: tuple[str, tuple[float, ...], float]
) -> float:
    quantile, values, null = options
    comb = vec.combined
    method = int(vec.method[0])
    if method == 0:
        se = math.sqrt(_one(comb.variance))
        return _normal_p(_one(comb.estimate), se, _one(comb.df), quantile, null)
    if method == 1:
        se = math.sqrt(_one(comb.people_variance))
        return _normal_p(_one(comb.people_estimate), se, _one(comb.people_df), quantile, null)
    return _exact_p(data, values, null)


def _effective(n: int, vec: core.IntervalsVector) -> tuple[Interval, Interval]:
    comb = vec.combined
    est = _one(comb.effective_n)
    if not math.isfinite(est):
        return _NAN_INTERVAL, _NAN_INTERVAL
    given = n >= EFFECTIVE_N_INTERVAL_FROM
    lo, hi = (_one(comb.effective_lo), _one(comb.effective_hi)) if given else (math.nan,) * 2
    return Interval(est, lo, hi), Interval(est - n, lo - n, hi - n)


def _judge_only(data: _Data, level: float, quantile: str) -> Interval:
    est = var = 0.0
    count = 0
    for share, f, fu in zip(data.shares, data.fs, data.fus, strict=True):
        every = np.concatenate([f[0], fu[0]])
        est += share * float(every.mean())
        var += share**2 * float(every.var()) / every.size
        count += every.size
    df = np.array([float(max(count - len(data.shares), 1))])
    q = float(core.quantiles(level, quantile, df)[0])
    interval = _normal_interval(est, math.sqrt(var), q)
    if not math.isfinite(interval.lo):
        return interval
    return Interval(est, max(0.0, interval.lo), min(1.0, interval.hi))


# --------------------------------------------------------------------------- untied share


def _is_verdicts(array: F64) -> bool:
    grid = np.asarray(VERDICT_SCORES)
    return bool(np.all(np.min(np.abs(array[0][:, None] - grid[None, :]), axis=1) < 1e-12))


def _indicator(array: F64, value: float) -> F64:
    return np.asarray(array == value, dtype=float)


def _estimating(array: F64, u: float) -> F64:
    return (1 - u) * _indicator(array, 1.0) - u * _indicator(array, 0.0)


@dataclass(frozen=True, slots=True)
class _UntiedFit:
    win: float
    loss: float
    parts: tuple[core.Parts, ...]
    weight: float


def _untied_fit(data: _Data, rule: str | float, at: float, var_at: float) -> _UntiedFit:
    """The PPI estimates of the win and loss shares with the weights ``rule`` gives the
    estimating function at ``u = at``; that function's PPI parts at ``u = var_at``."""
    win = loss = weight = 0.0
    parts = []
    for share, y, f, fu in zip(data.shares, data.ys, data.fs, data.fus, strict=True):
        lam = core.weights(_estimating(y, at), _estimating(f, at), _estimating(fu, at), rule)
        shares = [
            _one(core.parts_with_weights(
                _indicator(y, v), _indicator(f, v), _indicator(fu, v), lam
            ).estimate)
            for v in (1.0, 0.0)
        ]  # fmt: skip
        win += share * shares[0]
        loss += share * shares[1]
        parts.append(core.parts_with_weights(
            _estimating(y, var_at), _estimating(f, var_at), _estimating(fu, var_at), lam
        ))  # fmt: skip
        weight += share * float(lam.mean())
    return _UntiedFit(win, loss, tuple(parts), weight)


def _untied_exact(data: _Data, level: float) -> Interval:
    if len(data.ys) == 1:
        y = data.ys[0][0]
        wins = int(np.sum(y == 1.0))
        return clopper_pearson(wins, wins + int(np.sum(y == 0.0)), confidence_level=level)
    tail = (1.0 - level) / 2.0 / (2 * len(data.ys))
    bounds = []
    for value in (1.0, 0.0):
        ys = [_indicator(y, value) for y in data.ys]
        lo, hi = core.exact_bounds(ys, data.shares, (0.0, 1.0), tail * len(data.ys))
        bounds.append((_one(lo), _one(hi)))
    (w_lo, w_hi), (l_lo, l_hi) = bounds
    win = sum(s * float(np.mean(y == 1.0)) for s, y in zip(data.shares, data.ys, strict=True))
    loss = sum(s * float(np.mean(y == 0.0)) for s, y in zip(data.shares, data.ys, strict=True))
    return Interval(
        win / (win + loss),
        w_lo / (w_lo + l_hi) if w_lo + l_hi > 0 else 0.0,
        w_hi / (w_hi + l_lo) if w_hi + l_lo > 0 else 1.0,
    )


def _untied_share(
    data: _Data, rule: str | float, level: float, quantile: str, interval: str
) -> UntiedShare | None:
    every = (*data.ys, *data.fs, *(u for u in data.fus if u.size))
    if not all(_is_verdicts(a) for a in every):
        return None
    wins = sum(int(np.sum(y == 1.0)) for y in data.ys)
    untied = wins + sum(int(np.sum(y == 0.0)) for y in data.ys)
    if untied == 0:
        return None
    first = _untied_fit(data, 1.0, 0.5, 0.5)
    u = first.win / (first.win + first.loss) if first.win + first.loss > 0 else 0.5
    tuned = _untied_fit(data, rule, u, u)
    total = tuned.win + tuned.loss
    estimate = tuned.win / total if total > 0 else math.nan
    fit = _untied_fit(data, rule, u, estimate) if math.isfinite(estimate) else tuned
    comb = core.combine(fit.parts, data.shares)
    se = math.sqrt(_one(comb.variance)) / total if total > 0 else math.nan
    q = float(core.quantiles(level, quantile, comb.df)[0])
    normal = _normal_interval(estimate, se, q)
    trusted = bool(core.normal_trusted(comb.skewness, comb.df, comb.varies)[0])
    if math.isfinite(normal.lo) and (interval == "normal" or (interval == "auto" and trusted)):
        clipped = Interval(estimate, max(0.0, normal.lo), min(1.0, normal.hi))
        return UntiedShare(untied, wins, fit.weight, clipped, "ppi-normal", normal)
    return UntiedShare(untied, wins, fit.weight, _untied_exact(data, level), "people-exact", normal)


# ---------------------------------------------------------------------------- public API


def _rule_name(rule: str | float, data: _Data) -> str:
    if not isinstance(rule, str):
        return "fixed"
    if rule != "auto":
        return rule
    kinds = {"cross-fit" if y.shape[1] < CROSS_FIT_BELOW else "plug-in" for y in data.ys}
    return kinds.pop() if len(kinds) == 1 else "cross-fit and plug-in by stratum"


def _checked(
    people: Sequence[float],
    judge_sampled: Sequence[float],
    judge_unsampled: Sequence[float],
    strata: tuple[Sequence[str] | None, Sequence[str] | None],
    values: tuple[float, ...],
) -> _Data:
    y = _as_scores("people", people)
    f = _as_scores("judge_sampled", judge_sampled)
    fu = _as_scores("judge_unsampled", judge_unsampled)
    if y.size == 0 or y.size != f.size:
        raise ValueError(
            "people and judge_sampled need one score each per sampled comparison (at least "
            f"one), got {y.size} and {f.size}"
        )
    _check_on_grid(y, values)
    labels = _labels("strata_sampled", strata[0], y.size, strata[1])
    labels_u = _labels("strata_unsampled", strata[1], fu.size, strata[0])
    return _split(y, f, fu, labels, labels_u)


def ppi_preference(
    people: Sequence[float],
    judge_sampled: Sequence[float],
    judge_unsampled: Sequence[float],
    *,
    strata_sampled: Sequence[str] | None = None,
    strata_unsampled: Sequence[str] | None = None,
    weight: WeightRule | float = "auto",
    interval: IntervalRule = "auto",
    quantile: Quantile = "t",
    score_values: Sequence[float] = VERDICT_SCORES,
    null: float = 0.5,
    confidence_level: float = 0.95,
) -> PPIResult:
    """The people's preference score from people on a sample and a judge on every comparison.

    ``people[i]`` and ``judge_sampled[i]`` are the people's and the judge's scores (in [0, 1])
    on the i-th sampled comparison, in the design's draw order; ``judge_unsampled`` the judge's
    scores on every comparison people did not judge. A stratified sample names each
    comparison's stratum in ``strata_sampled`` and ``strata_unsampled``. ``score_values``: the
    scores a people's judgement can take (a panel's mean: its own grid). ``null``: the score
    ``p_value`` tests. The rest is in the module doc.
    """
    level = _check_open("confidence_level", confidence_level)
    rule = _check_weight(weight)
    _check_choice("interval", interval, INTERVAL_RULES)
    _check_choice("quantile", quantile, QUANTILES)
    values = _check_values(score_values)
    null_value = _check_open("null", null)
    data = _checked(people, judge_sampled, judge_unsampled,
                    (strata_sampled, strata_unsampled), values)  # fmt: skip
    vec = core.intervals(
        data.ys,
        data.fs,
        data.fus,
        data.shares,
        weight=rule,
        interval=interval,
        quantile=quantile,
        score_values=values,
        confidence_level=level,
    )
    comb, n = vec.combined, data.n
    se = math.sqrt(_one(comb.variance))
    effective, worth = _effective(n, vec)
    return PPIResult(
        n=n,
        n_unsampled=sum(fu.shape[1] for fu in data.fus),
        confidence_level=level,
        null=null_value,
        weight_rule=_rule_name(rule, data),
        weight=_one(vec.parts[0].weight) if len(vec.parts) == 1 else math.nan,
        estimate=_one(vec.estimate),
        interval=Interval(_one(vec.estimate), _one(vec.lo), _one(vec.hi)),
        method=METHODS[int(vec.method[0])],
        reason=_reason(vec, interval),
        p_value=_p_value(vec, data, (quantile, values, null_value)),
        normal=Interval(_one(comb.estimate), _one(vec.normal_lo), _one(vec.normal_hi)),
        standard_error=se,
        degrees_of_freedom=_one(comb.df),
        skewness=_one(comb.skewness),
        exact=Interval(_one(comb.people_estimate), _one(vec.exact_lo), _one(vec.exact_hi)),
        people_only=Interval(_one(comb.people_estimate), _one(vec.people_lo), _one(vec.people_hi)),
        people_only_method=METHODS[int(vec.people_method[0])],
        judge_only=_judge_only(data, level, quantile),
        effective_n=effective,
        judge_worth=worth,
        strata=tuple(
            PPIStratum(name, p.n, p.n_unsampled, share, _one(p.weight), _one(p.estimate))
            for name, p, share in zip(data.names, vec.parts, data.shares, strict=True)
        ),
        untied_share=_untied_share(data, rule, level, quantile, interval),
    )


def ppi_preference_missing(
    people: Sequence[float | None],
    judge_sampled: Sequence[float],
    judge_unsampled: Sequence[float],
    *,
    missing: MissingRule = "void",
    **options: Any,
) -> PPIMissingResult:
    """`ppi_preference` when some sampled comparisons have no people's judgement (None).

    A missing judgement is never dropped: ``missing="void"`` gives no estimate; ``"bound"``
    computes the estimate with every missing judgement a loss (0) and a win (1), and the interval
    runs from the lower to the higher of their bounds. That is the worst case exactly for the
    exact interval (its bounds only grow with the scores); for the normal interval it is the
    worst case of the two fills, where the estimate is lowest and highest. Other keyword
    arguments go to `ppi_preference`.
    """
    _check_choice("missing", missing, MISSING_RULES)
    y = _as_scores("people", people, allow_missing=True)
    gone = int(np.isnan(y).sum())
    nan = math.nan
    if gone == 0:
        result = ppi_preference(y.tolist(), judge_sampled, judge_unsampled, **options)
        return PPIMissingResult("complete", int(y.size), 0, result.interval, result.estimate,
                                result.estimate, result, None, None,
                                "every sampled comparison was judged")  # fmt: skip
    said = f"{gone} of the {y.size} sampled comparisons have no people's judgement"
    if missing == "void":
        return PPIMissingResult("void", int(y.size), gone, None, nan, nan, None, None, None,
                                f"{said}; the estimate is void (a missing judgement is never "
                                "dropped)")  # fmt: skip
    low = ppi_preference(np.nan_to_num(y, nan=0.0).tolist(), judge_sampled, judge_unsampled,
                         **options)  # fmt: skip
    high = ppi_preference(np.nan_to_num(y, nan=1.0).tolist(), judge_sampled, judge_unsampled,
                          **options)  # fmt: skip
    bound = Interval(nan, min(low.interval.lo, high.interval.lo),
                     max(low.interval.hi, high.interval.hi))  # fmt: skip
    return PPIMissingResult("bounded", int(y.size), gone, bound, low.estimate, high.estimate,
                            None, low, high,
                            f"{said}; bounded by the worst case: every missing judgement a "
                            "loss, then a win")  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Sided:
    """One data set's one-sided p-values against a boundary, and its decision bounds."""

    method: str
    lo: float
    hi: float
    above: dict[float, float]
    below: dict[float, float]


def _sided(
    people: list[float],
    judge: tuple[Sequence[float], Sequence[float]],
    boundaries: Sequence[float],
    level: float,
    options: dict[str, Any],
) -> _Sided:
    values = _check_values(options.get("score_values", VERDICT_SCORES))
    strata = (options.get("strata_sampled"), options.get("strata_unsampled"))
    data = _checked(people, judge[0], judge[1], strata, values)
    quantile = str(options.get("quantile", "t"))
    vec = core.intervals(
        data.ys,
        data.fs,
        data.fus,
        data.shares,
        weight=_check_weight(options.get("weight", "auto")),
        interval=str(options.get("interval", "auto")),
        quantile=quantile,
        score_values=values,
        confidence_level=level,
    )

    def p(boundary: float, above: bool) -> float:
        return _one(core.one_sided_p(vec, data.ys, data.shares, values, boundary,
                                     above=above, quantile=quantile))  # fmt: skip

    def bound(lower: bool) -> float:
        return _one(core.one_sided_bound(vec, data.ys, data.shares, values, (1.0 - level) / 2,
                                         lower=lower, quantile=quantile))  # fmt: skip

    return _Sided(
        METHODS[int(vec.method[0])],
        bound(True),
        bound(False),
        {b: p(b, True) for b in boundaries},
        {b: p(b, False) for b in boundaries},
    )


def ppi_decision(
    people: Sequence[float | None],
    judge_sampled: Sequence[float],
    judge_unsampled: Sequence[float],
    rule: str | DecisionRule,
    *,
    missing: MissingRule = "void",
    confidence_level: float = 0.9,
    **options: Any,
) -> PPIDecision:
    """A margin rule (``noninferior:M``, ``superior``, ``equivalent:M``) on the people's
    score: each one-sided p-value by the interval `ppi_preference` chooses (module doc, "A one-
    sided claim"), and the decision's interval at ``confidence_level`` (1 - 2 alpha: its
    bounds the one-sided 1 - alpha ones the p-values invert). Missing people's judgements as
    `ppi_preference_missing` takes them (``bound``: the worse of the two fills); other keyword
    arguments go to `ppi_preference` (``null`` aside)."""
    parsed = parse_rule(rule)
    if parsed.rule == "similar":
        raise ValueError("similar:PD0 is decided by similarity_decision (triangle and pair)")
    level = _check_open("confidence_level", confidence_level)
    options.pop("null", None)
    found = ppi_preference_missing(people, judge_sampled, judge_unsampled, missing=missing,
                                   confidence_level=level, **options)  # fmt: skip
    lower = parsed.lower if parsed.lower is not None else 0.5
    upper = parsed.upper
    boundaries = (lower,) if upper is None else (lower, upper)
    nan = math.nan
    method, interval = "void", None
    p_lower = refute_below = p_upper = refute_above = nan
    if found.status != "void":
        y = _as_scores("people", people, allow_missing=True)
        fills = [y] if found.status == "complete" else [np.nan_to_num(y, nan=v) for v in (0, 1)]
        judge = (judge_sampled, judge_unsampled)
        sides = [_sided(fill.tolist(), judge, boundaries, level, options) for fill in fills]

        def worst(above: bool, boundary: float) -> float:
            return max((s.above if above else s.below)[boundary] for s in sides)

        p_lower, refute_below = worst(True, lower), worst(False, lower)
        if upper is not None:
            p_upper, refute_above = worst(False, upper), worst(True, upper)
        estimate = found.result.estimate if found.result is not None else nan
        method = sides[0].method if found.status == "complete" else "bounded"
        interval = Interval(estimate, min(s.lo for s in sides), max(s.hi for s in sides))
    return PPIDecision(
        rule=parsed.rule,
        margin=parsed.margin,
        lower=lower,
        upper=upper,
        status=found.status,
        reason=found.reason,
        n_sampled=found.n_sampled,
        n_missing=found.n_missing,
        method=method,
        confidence_level=level,
        interval=interval,
        p_value=p_lower if upper is None else max(p_lower, p_upper),
        p_lower=p_lower,
        p_upper=None if upper is None else p_upper,
        p_refute=refute_below if upper is None else min(refute_below, refute_above),
        direction="below" if upper is None or refute_below <= refute_above else "above",
    )
