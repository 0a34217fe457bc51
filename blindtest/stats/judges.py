"""Several judges on the same triangle trials: per-judge results and two pooled analyses.

Never a naive pooled binomial over judges. When judges see the same trials their correct calls
are correlated through the trial even under the null (two judges who both pick the longest
response are right or wrong together), so the total correct is not Bin(J n, 1/3). Two pooled
analyses are reported:

* `randomization_test` (the pooled p-value): exact and assumption-free. Under the null, picks
  are independent of the odd positions, which the design draws independently and uniformly
  per trial. Conditional on every judge's picks, the total correct is then a sum over trials
  of a uniform draw from the three per-position pick counts; its distribution is computed
  exactly by convolution. It re-randomizes what the design randomized (whole trials), never
  individual comparisons.
* `beta_binomial` (the pooled effect size): the chance-corrected beta-binomial (Brockhoff,
  2003, Food Quality and Preference 14:425-437): judge j's pd_j ~ Beta(mean mu, overdispersion
  gamma) and Pc_j = pg + (1 - pg) pd_j, fitted by maximum likelihood. ``mu`` is the mean
  proportion of discriminators across judges, with a profile-likelihood interval, and the
  likelihood-ratio statistic tests ``mu = 0`` against the plain binomial at 1/3. That model
  treats judges as independent, which shared trials violate, so its p-value is secondary;
  the formulas below are derived here, not taken from any package.

Likelihood (derived): with ``a = mu (1-g)/g``, ``b = (1-mu)(1-g)/g`` and f = n - k,
``P(k) = C(n,k) (1-pg)^f sum_i C(k,i) pg^(k-i) (1-pg)^i E[pd^i (1-pd)^f]``, and the Beta
moment ``E[pd^i (1-pd)^f] = prod_{t<i}(mu(1-g)+t g) prod_{t<f}((1-mu)(1-g)+t g) /
prod_{t<i+f}((1-g)+t g)`` has no 1/g, so it is exact from g = 0 (binomial) toward g = 1.
Pure functions; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import optimize, special, stats

from blindtest.stats.intervals import (
    Interval,
    _check_confidence,
    _check_count,
    _check_int,
    result_to_dict,
)
from blindtest.stats.triangle import TRIANGLE_GUESS, TriangleResult, triangle_test

__all__ = [
    "BetaBinomialResult",
    "JudgePanelResult",
    "RandomizationResult",
    "beta_binomial",
    "judge_panel",
    "randomization_test",
]

_MU_EDGE = 1e-12
_GAMMA_MAX = 1.0 - 1e-9
_GAMMA_GRID = (1e-9, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.97, 0.999)


@dataclass(frozen=True, slots=True)
class RandomizationResult:
    """Exact randomization test of "no judge discriminates" over shared trials.

    ``statistic`` is the total correct over all judges and trials, ``expected`` its null mean,
    ``p_value`` the exact ``P(S >= statistic)`` given the picks.
    """

    n_trials: int
    n_judgements: int
    statistic: int
    expected: float
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def _pick_counts(picks: Mapping[str, Sequence[int | None]], n_trials: int) -> npt.NDArray[np.int64]:
    counts = np.zeros((n_trials, 3), dtype=np.int64)
    for judge, row in picks.items():
        if len(row) != n_trials:
            raise ValueError(
                f"judge {judge!r} has {len(row)} picks, expected one per trial ({n_trials});"
                " use None for a trial the judge did not see"
            )
        for t, pick in enumerate(row):
            if pick is None:
                continue
            if isinstance(pick, bool) or pick not in (1, 2, 3):
                raise ValueError(
                    f"judge {judge!r} trial {t + 1}: pick must be 1, 2 or 3, got {pick!r}"
                )
            counts[t, pick - 1] += 1
    return counts


def _check_odd_positions(odd_positions: Sequence[int]) -> list[int]:
    if len(odd_positions) == 0:
        raise ValueError("odd_positions must hold at least one trial, got 0")
    for t, odd in enumerate(odd_positions):
        if isinstance(odd, bool) or odd not in (1, 2, 3):
            raise ValueError(f"odd_positions[{t}] must be 1, 2 or 3, got {odd!r}")
    return [int(odd) for odd in odd_positions]


def randomization_test(
    picks: Mapping[str, Sequence[int | None]], odd_positions: Sequence[int]
) -> RandomizationResult:
    """Exact randomization p-value for the total correct of several judges on shared trials.

    ``picks[judge][t]`` is the position (1..3) the judge picked on trial t + 1, or None;
    ``odd_positions[t]`` is the design's odd position on that trial.
    """
    odd = _check_odd_positions(odd_positions)
    if not picks:
        raise ValueError("picks must hold at least one judge, got 0")
    counts = _pick_counts(picks, len(odd))
    observed = int(sum(counts[t, o - 1] for t, o in enumerate(odd)))
    # Convolution of per-trial uniform distributions on {c_t(1), c_t(2), c_t(3)}.
    dist = np.zeros(int(counts.max(axis=1).sum()) + 1)
    dist[0] = 1.0
    top = 0
    for row in counts:
        step = np.zeros_like(dist)
        for c in row:
            step[c : top + c + 1] += dist[: top + 1] / 3.0
        dist, top = step, top + int(row.max())
    return RandomizationResult(
        n_trials=len(odd),
        n_judgements=int(counts.sum()),
        statistic=observed,
        expected=float(counts.sum()) / 3.0,
        p_value=min(1.0, float(dist[observed:].sum())),
    )


# --- chance-corrected beta-binomial ---


def _log_moments(
    mu: float, gamma: float, size: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    t = np.arange(size, dtype=np.float64)
    with np.errstate(divide="ignore"):
        a = np.log(mu * (1.0 - gamma) + t * gamma)
        b = np.log((1.0 - mu) * (1.0 - gamma) + t * gamma)
        c = np.log((1.0 - gamma) + t * gamma)
    zero = np.zeros(1)
    return (
        np.concatenate([zero, np.cumsum(a)]),
        np.concatenate([zero, np.cumsum(b)]),
        np.concatenate([zero, np.cumsum(c)]),
    )


class _LogLik:
    """Log-likelihood of the chance-corrected beta-binomial for fixed data, vectorized over
    judges: the parts that do not depend on (mu, gamma) are computed once."""

    def __init__(self, correct: Sequence[int], n: Sequence[int], guess: float) -> None:
        k = np.asarray(correct, dtype=np.int64)[:, None]
        trials = np.asarray(n, dtype=np.int64)[:, None]
        miss = trials - k
        i = np.arange(int(k.max()) + 1)[None, :]
        self._valid = i <= k
        safe_i = np.where(self._valid, i, 0)
        log_g, log_h = math.log(guess), math.log1p(-guess)
        self._fixed = np.where(
            self._valid,
            special.gammaln(k + 1.0)
            - special.gammaln(safe_i + 1.0)
            - special.gammaln(k - safe_i + 1.0)
            + (k - safe_i) * log_g
            + safe_i * log_h,
            -np.inf,
        )
        self._i = safe_i
        self._miss = np.broadcast_to(miss, safe_i.shape)
        self._constant = float(
            np.sum(
                special.gammaln(trials + 1.0)
                - special.gammaln(k + 1.0)
                - special.gammaln(miss + 1.0)
                + miss * log_h
            )
        )
        self._size = int(trials.max()) + 1

    def __call__(self, mu: float, gamma: float) -> float:
        log_a, log_b, log_c = _log_moments(mu, gamma, self._size)
        terms = self._fixed + log_a[self._i] + log_b[self._miss] - log_c[self._i + self._miss]
        terms = np.where(self._valid, terms, -np.inf)
        return self._constant + float(np.sum(special.logsumexp(terms, axis=1)))


def _profile(mu: float, loglik: _LogLik) -> tuple[float, float]:
    """``max over gamma`` of the log-likelihood at fixed mu: (loglik, gamma)."""
    values = [loglik(mu, g) for g in _GAMMA_GRID]
    best = int(np.argmax(values))
    lo = _GAMMA_GRID[max(0, best - 1)]
    hi = _GAMMA_GRID[min(len(_GAMMA_GRID) - 1, best + 1)]
    found = optimize.minimize_scalar(
        lambda g: -loglik(mu, g),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-10},
    )
    if -found.fun > values[best]:
        return float(-found.fun), float(found.x)
    return float(values[best]), _GAMMA_GRID[best]


@dataclass(frozen=True, slots=True)
class BetaBinomialResult:
    """Chance-corrected beta-binomial fit over judges.

    ``pd`` is the mean proportion of discriminators across judges (mu) with its
    profile-likelihood interval; ``pc = pg + (1 - pg) pd`` mapped likewise; ``gamma`` is the
    fitted overdispersion (0: all judges alike). ``statistic`` is the likelihood-ratio
    ``2 (loglik - loglik_null)`` against Bin(n_j, pg) for every judge; ``p_value`` refers it to
    chi-square with ``df = 2`` (approximate; see module doc and NOTES.md).
    """

    correct: tuple[int, ...]
    n: tuple[int, ...]
    guess: float
    pd: Interval
    pc: Interval
    gamma: float
    loglik: float
    loglik_null: float
    statistic: float
    df: int
    p_value: float
    confidence_level: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def _fit(
    correct: Sequence[int], n: Sequence[int], guess: float, loglik: _LogLik
) -> tuple[float, float, float]:
    """Maximum likelihood (loglik, mu, gamma), including the null mu = 0 as a candidate."""
    best = (loglik(0.0, 0.5), 0.0, 0.0)
    share = sum(correct) / sum(n)
    mu_start = min(0.95, max(0.05, (share - guess) / (1.0 - guess)))
    # A few starts across the overdispersion range guard against a local optimum.
    for mu0, gamma0 in ((mu_start, 0.05), (mu_start, 0.5), (0.5, 0.9)):
        found = optimize.minimize(
            lambda x: -loglik(x[0], x[1]),
            x0=np.array([mu0, gamma0]),
            method="L-BFGS-B",
            bounds=[(_MU_EDGE, 1.0 - _MU_EDGE), (1e-9, _GAMMA_MAX)],
        )
        if -found.fun > best[0]:
            best = (float(-found.fun), float(found.x[0]), float(found.x[1]))
    return best


def _profile_bound(target: float, inside: float, outside: float, loglik: _LogLik) -> float:
    """The mu between ``inside`` and ``outside`` where the profile log-likelihood hits target."""

    def gap(mu: float) -> float:
        return _profile(mu, loglik)[0] - target

    if gap(outside) >= 0.0:
        return outside
    return float(optimize.brentq(gap, min(inside, outside), max(inside, outside), xtol=1e-10))


def beta_binomial(
    correct: Sequence[int],
    n: Sequence[int],
    *,
    confidence_level: float = 0.95,
) -> BetaBinomialResult:
    """Fit the chance-corrected beta-binomial to per-judge triangle counts.

    ``correct[j]`` of ``n[j]`` trials right for judge j (at least one judge).
    """
    if len(correct) != len(n) or len(correct) == 0:
        raise ValueError(
            "correct and n must list the same judges (at least one), "
            f"got {len(correct)} and {len(n)}"
        )
    for j, (k, trials) in enumerate(zip(correct, n, strict=True)):
        _check_count(f"correct[{j}]", k, f"n[{j}]", trials)
    level = _check_confidence(confidence_level)
    counts, sizes = tuple(int(k) for k in correct), tuple(int(t) for t in n)
    guess = TRIANGLE_GUESS
    model = _LogLik(counts, sizes, guess)
    loglik, mu, gamma = _fit(counts, sizes, guess, model)
    null = model(0.0, 0.5)
    statistic = max(0.0, 2.0 * (loglik - null))
    if level == 1.0:
        # Convention: 100% confidence is the whole parameter space.
        lo, hi = 0.0, 1.0
    elif level == 0.0:
        # Convention: confidence 0 is the maximum-likelihood point.
        lo, hi = mu, mu
    else:
        target = loglik - 0.5 * float(stats.chi2.ppf(level, 1))
        lo = 0.0 if mu == 0.0 else _profile_bound(target, mu, 0.0, model)
        hi = _profile_bound(target, mu, 1.0 - _MU_EDGE, model)
        hi = 1.0 if hi >= 1.0 - _MU_EDGE else hi
    pd = Interval(mu, lo, hi)
    return BetaBinomialResult(
        correct=counts,
        n=sizes,
        guess=guess,
        pd=pd,
        pc=Interval(*(guess + (1.0 - guess) * x for x in (pd.estimate, pd.lo, pd.hi))),
        gamma=gamma,
        loglik=loglik,
        loglik_null=null,
        statistic=statistic,
        df=2,
        p_value=float(stats.chi2.sf(statistic, 2)),
        confidence_level=level,
    )


@dataclass(frozen=True, slots=True)
class JudgePanelResult:
    """Per-judge triangle results and the pooled analyses (see module doc).

    ``p_value`` is the exact randomization p-value (the pooled test to report);
    ``beta_binomial`` carries the pooled effect size over judges.
    """

    judges: tuple[str, ...]
    per_judge: dict[str, TriangleResult]
    n_trials: int
    statistic: int
    p_value: float
    randomization: RandomizationResult
    beta_binomial: BetaBinomialResult

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def judge_panel(
    picks: Mapping[str, Sequence[int | None]],
    odd_positions: Sequence[int],
    *,
    confidence_level: float = 0.95,
) -> JudgePanelResult:
    """Analyse several judges on the same triangle trials.

    ``picks[judge][t]`` is the position (1..3) picked on trial t + 1, or None if the judge did
    not see it; ``odd_positions[t]`` is the design's odd position. Each judge needs at least
    one pick.
    """
    randomization = randomization_test(picks, odd_positions)
    per_judge: dict[str, TriangleResult] = {}
    for judge, row in picks.items():
        seen = [(p, o) for p, o in zip(row, odd_positions, strict=True) if p is not None]
        _check_int(f"number of picks by judge {judge!r}", len(seen), 1)
        hits = sum(p == o for p, o in seen)
        per_judge[judge] = triangle_test(hits, len(seen), confidence_level=confidence_level)
    pooled = beta_binomial(
        [r.correct for r in per_judge.values()],
        [r.n for r in per_judge.values()],
        confidence_level=confidence_level,
    )
    return JudgePanelResult(
        judges=tuple(per_judge),
        per_judge=per_judge,
        n_trials=randomization.n_trials,
        statistic=randomization.statistic,
        p_value=randomization.p_value,
        randomization=randomization,
        beta_binomial=pooled,
    )
