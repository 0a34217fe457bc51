"""How many comparisons people must judge when an LLM judge judges them all: the expected
width of the prediction-powered interval, and the power of a non-inferiority test at a margin,
from the expected agreement between judge and people, the tie rates and the total number of
comparisons.

**Model of judge and people** (one comparison; scores win 1, tie 1/2, loss 0). People give
a win, tie, loss with probabilities ``p = (score - t/2, t, 1 - score - t/2)`` (score: the
planning value of the people's score; t: their tie rate). The judge's own verdicts have tie
rate ``t_J`` and split the rest as people do: margins ``m``. The joint table mixes the coupling
of ``p`` and ``m`` that agrees most (``min(p_v, m_v)`` on the diagonal, the rest of each margin
paired off the diagonal in proportion) with independence: ``P = kappa C + (1 - kappa) p m^T``.
Its margins are ``p`` and ``m`` for every ``kappa``, and the agreement ``kappa sum_v min(p_v,
m_v) + (1 - kappa) sum_v p_v m_v`` is linear in it, so ``kappa`` follows from the agreement
asked; with equal tie rates ``C`` is ``diag(p)`` and this is Cohen's (1960) chance-corrected
agreement: the judge reports the people's verdict with probability ``kappa`` and otherwise an
independent one, and ``cov(Y, J) = kappa var(Y)``. An agreement the margins cannot reach, or
one below chance that no table gives, is refused with the range that can be reached.

**Precision.** With ``n`` of ``N`` comparisons judged by people and the PPI++ weight
``lambda = cov / ((1 + n / (N - n)) var(J))`` (clipped to [0, 1]), the estimate's variance is
``(var(Y) - 2 lambda cov + lambda^2 var(J)) / n + lambda^2 var(J) / (N - n)`` (Angelopoulos,
Duchi and Zrnic 2024), ``var(Y) / n`` for people alone. The interval's expected width is
``2 q se`` (q: Student's t with n - 1 degrees of freedom, as `blindtest.stats.ppi`); the
non-inferiority test rejects "the people's score is at most 1/2 - margin" when the one-sided
``1 - alpha`` lower bound is above it, with power ``P(T_(n-1) > t_(1-alpha) - (score -
(1/2 - margin)) / se)``. The margin may be 0 (superiority: a boundary at 1/2) or negative (a
boundary above 1/2, as a test that the score is beyond 1/2 + |margin| needs); a test that the
score is *below* a boundary b is the same test on the mirror image (a win for a loss: score
``1 - score``, margin ``b - 1/2``), which the model maps onto itself. The effective sample size
is ``n var(Y) / (n var_ppi)``.

The analysis uses this normal interval only when Satterthwaite's effective degrees of freedom of
its variance reach `blindtest.stats.ppi.MIN_DEGREES_OF_FREEDOM` (and the skewness is small);
otherwise it reports the people's own, wider, interval. The plan gives those degrees of freedom
as the model expects them (``expected_df``, from the fourth moments of ``Y - lambda J`` and
``J``), and recommends the smallest sample that meets the target with those degrees of freedom
reached (a judge that rarely disagrees leaves the variance resting on few disagreements, and
needs more people's judgements than its precision alone asks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from blindtest.stats.intervals import (
    _check_closed,
    _check_int,
    _check_open,
    result_to_dict,
)
from blindtest.stats.ppi_core import MIN_DEGREES_OF_FREEDOM

__all__ = [
    "PeopleSamplePlan",
    "PeopleSampleRow",
    "people_sample_row",
    "plan_people_sample",
]

_SCORES = np.array([1.0, 0.5, 0.0])


@dataclass(frozen=True, slots=True)
class PeopleSampleRow:
    """Expected precision with ``n`` people's judgements among ``total`` comparisons.

    ``kappa``, ``correlation`` (of the judge's and people's scores) and ``weight`` (PPI++'s
    lambda) follow from the inputs; ``standard_error``, ``expected_df`` (Satterthwaite's, as the
    analysis's rule reads them), ``width`` (expected interval width) and ``effective_n`` are the
    prediction-powered estimate's, ``people_only_width`` people alone. ``power`` and
    ``people_only_power`` are the one-sided test's of "the score is above 1/2 - ``margin``"
    (non-inferiority; 0: superiority; negative: a boundary above 1/2), null without a margin.
    """

    n: int
    total: int
    agreement: float
    people_tie_rate: float
    judge_tie_rate: float
    score: float
    kappa: float
    correlation: float
    weight: float
    standard_error: float
    expected_df: float
    width: float
    people_only_width: float
    effective_n: float
    margin: float
    alpha: float
    power: float
    people_only_power: float
    confidence_level: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (non-finite numbers as null)."""
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class PeopleSamplePlan:
    """The smallest people's sample meeting ``target`` (``"power"`` or ``"width"``, at
    ``goal``): ``n``, the smallest that meets it with the expected degrees of freedom the
    analysis's normal interval needs; ``n_normal``, what the precision alone asks;
    ``people_only_n`` what people alone would need (null when no sample within
    ``total`` does), ``row`` the expected precision at ``n`` (null when unreachable), and
    ``note`` in words."""

    target: str
    goal: float
    n: int | None
    n_normal: int | None
    people_only_n: int | None
    row: PeopleSampleRow | None
    note: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (non-finite numbers as null)."""
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class _Joint:
    var_y: float
    var_j: float
    cov: float
    kappa: float
    table: np.ndarray[Any, np.dtype[np.float64]]  # P(people y, judge j), win/tie/loss order
    judge: np.ndarray[Any, np.dtype[np.float64]]  # the judge's margins


def _joint(agreement: float, score: float, tie_p: float, tie_j: float) -> _Joint:
    """The model's joint distribution and moments (module doc); refuses impossible inputs."""
    p = np.array([score - tie_p / 2.0, tie_p, 1.0 - score - tie_p / 2.0])
    if np.any(p < -1e-12):
        raise ValueError(
            f"a people's score of {score} with a tie rate of {tie_p} needs a negative win or "
            f"loss share; the score must lie in [{tie_p / 2:g}, {1 - tie_p / 2:g}]"
        )
    p = np.clip(p, 0.0, 1.0)
    untied = p[0] + p[2]
    if untied <= 0:
        raise ValueError("people's verdicts never vary (a tie rate of 1): nothing to estimate")
    m = (1.0 - tie_j) * np.array([p[0], 0.0, p[2]]) / untied + np.array([0.0, tie_j, 0.0])
    shared = np.minimum(p, m)
    rest_p, rest_m = p - shared, m - shared
    left = float(rest_p.sum())
    closest = np.diag(shared) + (np.outer(rest_p, rest_m) / left if left > 1e-15 else 0.0)
    independent = np.outer(p, m)
    chance, most = float(p @ m), float(shared.sum())
    kappa = (agreement - chance) / (most - chance) if most > chance else 0.0
    table = kappa * closest + (1.0 - kappa) * independent
    if agreement > most + 1e-12 or np.any(table < -1e-12) or (most <= chance and agreement != most):
        raise ValueError(
            f"an agreement of {agreement} is not reachable with these tie rates (people "
            f"{tie_p}, judge {tie_j}): chance gives {chance:.3f}, and the judge's verdicts can "
            f"agree with people's at most {most:.3f} of the time"
        )
    table = np.clip(table, 0.0, 1.0)
    mean_y, mean_j = float(p @ _SCORES), float(m @ _SCORES)
    return _Joint(
        var_y=float(p @ _SCORES**2) - mean_y**2,
        var_j=float(m @ _SCORES**2) - mean_j**2,
        cov=float(_SCORES @ table @ _SCORES) - mean_y * mean_j,
        kappa=float(kappa),
        table=table,
        judge=m,
    )


def _central(values: np.ndarray[Any, np.dtype[np.float64]],
             probs: np.ndarray[Any, np.dtype[np.float64]]) -> tuple[float, float]:  # fmt: skip
    """The second and fourth central moments of a discrete distribution."""
    dev = values - float(probs @ values)
    return float(probs @ dev**2), float(probs @ dev**4)


def _expected_df(joint: _Joint, weight: float, n: int, rest: int) -> float:
    """Satterthwaite's degrees of freedom of the variance estimate under the model."""
    d = (_SCORES[:, None] - weight * _SCORES[None, :]).ravel()
    var_d, m4_d = _central(d, joint.table.ravel())
    var_j, m4_j = _central(_SCORES, joint.judge)
    v = var_d / n + weight**2 * var_j / rest
    vv = (m4_d - var_d**2) / n**3 + weight**4 * (m4_j - var_j**2) / rest**3
    return min(2 * v * v / vv, n - 1.0) if vv > 0 else n - 1.0


def _power(effect: float, se: float, alpha: float, df: int) -> float:
    from scipy import stats  # deferred: scipy.stats costs 0.5 s at start-up

    if not math.isfinite(effect) or se <= 0:
        return math.nan
    return float(stats.t.sf(float(stats.t.isf(alpha, df)) - effect / se, df))


def people_sample_row(
    n: int,
    *,
    total: int,
    agreement: float,
    people_tie_rate: float,
    judge_tie_rate: float | None = None,
    score: float = 0.5,
    margin: float | None = None,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
) -> PeopleSampleRow:
    """Expected precision with ``n`` people's judgements among ``total`` comparisons."""
    from scipy import stats

    total_value = _check_int("total", total, 3)
    n_value = _check_int("n", n, 2)
    if n_value >= total_value:
        raise ValueError(f"n must be below total = {total_value}, got {n_value}")
    a = _check_closed("agreement", agreement)
    tie_p = _check_closed("people_tie_rate", people_tie_rate)
    tie_j = tie_p if judge_tie_rate is None else _check_closed("judge_tie_rate", judge_tie_rate)
    sc = _check_closed("score", score)
    margin_value = math.nan if margin is None else _check_open("margin", margin, -0.5, 0.5)
    alpha_value = _check_open("alpha", alpha)
    level = _check_open("confidence_level", confidence_level)
    joint = _joint(a, sc, tie_p, tie_j)
    rest = total_value - n_value
    weight = joint.cov / ((1.0 + n_value / rest) * joint.var_j) if joint.var_j > 0 else 0.0
    weight = min(max(weight, 0.0), 1.0)
    var = (joint.var_y - 2 * weight * joint.cov + weight**2 * joint.var_j) / n_value
    var += weight**2 * joint.var_j / rest
    se, se_p = math.sqrt(var), math.sqrt(joint.var_y / n_value)
    q = float(stats.t.isf((1.0 - level) / 2.0, n_value - 1))
    effect = sc - (0.5 - margin_value)
    corr = joint.cov / math.sqrt(joint.var_y * joint.var_j) if joint.var_j > 0 else 0.0
    return PeopleSampleRow(
        n=n_value,
        total=total_value,
        agreement=a,
        people_tie_rate=tie_p,
        judge_tie_rate=tie_j,
        score=sc,
        kappa=joint.kappa,
        correlation=corr,
        weight=weight,
        standard_error=se,
        expected_df=_expected_df(joint, weight, n_value, rest),
        width=2 * q * se,
        people_only_width=2 * q * se_p,
        effective_n=joint.var_y / var if var > 0 else math.inf,
        margin=margin_value,
        alpha=alpha_value,
        power=_power(effect, se, alpha_value, n_value - 1),
        people_only_power=_power(effect, se_p, alpha_value, n_value - 1),
        confidence_level=level,
    )


def _smallest(total: int, meets: Any) -> int | None:
    """The smallest n in [2, total - 1] with ``meets(n)`` (monotone in n), or None."""
    lo, hi = 2, total - 1
    if not meets(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if meets(mid) else (mid + 1, hi)
    return lo


def plan_people_sample(
    *,
    total: int,
    agreement: float,
    people_tie_rate: float,
    judge_tie_rate: float | None = None,
    score: float = 0.5,
    margin: float | None = None,
    power: float | None = None,
    width: float | None = None,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
) -> PeopleSamplePlan:
    """The smallest people's sample giving ``power`` at ``margin``, or an expected interval
    no wider than ``width`` (give exactly one target)."""
    if (power is None) == (width is None):
        raise ValueError("give exactly one target: power (with margin) or width")
    if power is not None and margin is None:
        raise ValueError("a power target needs the non-inferiority margin")
    target = "power" if power is not None else "width"
    goal = _check_open("power", power) if power is not None else _check_open("width", width, 0, 2)
    total_value = _check_int("total", total, 3)

    def row(n: int) -> PeopleSampleRow:
        return people_sample_row(
            n,
            total=total,
            agreement=agreement,
            people_tie_rate=people_tie_rate,
            judge_tie_rate=judge_tie_rate,
            score=score,
            margin=margin,
            alpha=alpha,
            confidence_level=confidence_level,
        )

    row(2)  # validates everything once, before the search

    def meets(n: int, people_only: bool = False) -> bool:
        found = row(n)
        if target == "power":
            return (found.people_only_power if people_only else found.power) >= goal
        return (found.people_only_width if people_only else found.width) <= goal

    def usable(n: int) -> bool:
        return meets(n) and row(n).expected_df >= MIN_DEGREES_OF_FREEDOM

    n_normal = _smallest(total_value, meets)
    people_n = _smallest(total_value, lambda n: meets(n, True))
    n = _smallest(total_value, usable)
    if n is None:
        note = (
            f"no people's sample below the {total_value} comparisons reaches the {target} asked"
            if n_normal is None
            else f"the {target} needs {n_normal} people's judgements, but no sample below "
            f"{total_value} gives the normal interval the {MIN_DEGREES_OF_FREEDOM:g} degrees of "
            "freedom it needs"
        )
        return PeopleSamplePlan(target, goal, None, n_normal, people_n, None, note)
    found = row(n)
    words = f"{n} people's judgements"
    if n_normal is not None and n > n_normal:
        words += (
            f" (the {target} alone needs {n_normal}, but the judge's disagreements would be too "
            f"rare there for the normal interval's {MIN_DEGREES_OF_FREEDOM:g} degrees of "
            "freedom; the analysis would report the people's own, wider, interval)"
        )
    return PeopleSamplePlan(target, goal, n, n_normal, people_n, found, words)
