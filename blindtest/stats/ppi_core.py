"""The arithmetic of `blindtest.stats.ppi`, vectorised: every array has one row per data set, so
the coverage simulations (tests/stats, tests/benchmarks/sim_ppi.py) run the library's own code
on thousands of data sets at once, and `blindtest.stats.ppi` calls it with one row.

A stratum's data are ``y`` (people's scores, rows x n), ``f`` (the judge's scores on the same
comparisons) and ``fu`` (the judge's scores on the comparisons people did not judge, rows x N').
The formulas, the weights and the rule choosing the interval are documented in
`blindtest.stats.ppi`. Pure; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "CROSS_FIT_BELOW",
    "EFFECTIVE_N_INTERVAL_FROM",
    "HALL_LIMIT",
    "METHODS",
    "MIN_DEGREES_OF_FREEDOM",
    "SKEWNESS_LIMIT",
    "VERDICT_SCORES",
    "Combined",
    "IntervalsVector",
    "Parts",
    "combine",
    "cross_fit_weights",
    "exact_bounds",
    "exact_one_sided_p",
    "hall",
    "hall_inverse",
    "intervals",
    "normal_one_sided_bound",
    "normal_one_sided_p",
    "normal_trusted",
    "one_sided_bound",
    "one_sided_p",
    "parts_with_weights",
    "plugin_weight",
    "quantiles",
    "stratum_parts",
    "weights",
]

F64 = npt.NDArray[np.float64]
B = npt.NDArray[np.bool_]

#: Below this many people's judgements (in a stratum) ``weight="auto"`` cross-fits the weight.
CROSS_FIT_BELOW = 200
#: The normal interval needs Satterthwaite's effective degrees of freedom of its variance
#: estimate at least this (about twice the number of rare outcomes behind it; n >= 21).
MIN_DEGREES_OF_FREEDOM = 20.0
#: ... and the estimate's skewness at most this in size: Cochran's rule (n > 25 G1^2 for a mean).
SKEWNESS_LIMIT = 0.2
#: The effective sample size gets an interval from this many people's judgements (below it
#: the Fisher-z interval undercovered when the judge's disagreements were rare: 0.87 at 50).
EFFECTIVE_N_INTERVAL_FROM = 100
#: A person's score is one of these unless the caller says otherwise (loss, tie, win).
VERDICT_SCORES: tuple[float, ...] = (0.0, 0.5, 1.0)
#: Hall's correction reads the estimate's skewness clipped to this size: the trusted normal
#: interval has at most `SKEWNESS_LIMIT`; a forced one (``interval="normal"``) may have more,
#: where the transformation's expansion no longer holds.
HALL_LIMIT = 1.0
#: The headline interval's methods, in the order of `IntervalsVector.method`.
METHODS: tuple[str, ...] = ("ppi-normal", "people-normal", "people-exact")
_TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class Parts:
    """One stratum's pieces for every row (arrays of one entry per row unless said)."""

    n: int
    n_unsampled: int
    weight: F64  # mean lambda over the stratum's people's judgements
    estimate: F64
    variance: F64  # of the estimate
    third: F64  # third cumulant of the estimate
    variance_var: F64  # variance of the variance estimate (fourth moments)
    rectifier_var: F64  # var(Y - lambda f), ddof 0
    people_mean: F64
    people_var: F64  # var(Y), ddof 0
    people_third: F64  # third central moment of Y
    people_variance_var: F64  # variance of var(Y) / n
    rho: F64  # Pearson correlation of Y and f over the sample (nan when either is constant)
    rho_z_se: F64  # its distribution-free standard error on Fisher's z scale


def _cov0(y: F64, f: F64) -> F64:
    centred = (y - y.mean(axis=1, keepdims=True)) * (f - f.mean(axis=1, keepdims=True))
    return np.asarray(centred.mean(axis=1), dtype=float)


def _ratio(top: F64, bottom: F64) -> F64:
    """``top / bottom`` where ``bottom > 0``, else 0."""
    out = np.zeros_like(top)
    np.divide(top, bottom, out=out, where=bottom > 0)
    return out


def plugin_weight(y: F64, f: F64, fu: F64) -> F64:
    """PPI++'s plug-in weight per row, as ``ppi_py``: ``cov(Y, f)`` (ddof 0) over
    ``(1 + n / N') var(f)`` (ddof 1, every judge score), clipped to [0, 1]."""
    n, n_u = y.shape[1], fu.shape[1]
    if n_u == 0:
        return np.zeros(y.shape[0])
    every = np.concatenate([f, fu], axis=1)
    var = every.var(axis=1, ddof=1)
    return np.clip(_ratio(_cov0(y, f), (1.0 + n / n_u) * var), 0.0, 1.0)


def cross_fit_weights(y: F64, f: F64, fu: F64) -> F64:
    """Per-observation weights (rows x n): observation i is in fold i mod 2 and takes the
    plug-in weight of the other fold (its variance of f over that fold and ``fu``)."""
    rows, n = y.shape
    n_u = fu.shape[1]
    out = np.zeros((rows, n))
    fold = np.arange(n) % 2
    if n_u == 0:
        return out
    for k in (0, 1):
        other = fold != k
        # A fold whose complement holds fewer than two judgements gets no weight (0).
        if other.sum() < 2:
            continue
        yo, fo = y[:, other], f[:, other]
        var = np.concatenate([fo, fu], axis=1).var(axis=1, ddof=1)
        lam = np.clip(_ratio(_cov0(yo, fo), (1.0 + n / n_u) * var), 0.0, 1.0)
        out[:, fold == k] = lam[:, None]
    return out


def weights(y: F64, f: F64, fu: F64, rule: str | float) -> F64:
    """Per-observation weights (rows x n) for a rule: "auto", "plug-in", "cross-fit", "one" or
    a fixed number; 0 when the stratum has no unsampled comparisons."""
    rows, n = y.shape
    if fu.shape[1] == 0:
        return np.zeros((rows, n))
    if not isinstance(rule, str):
        return np.full((rows, n), float(rule))
    if rule == "one":
        return np.ones((rows, n))
    if rule == "cross-fit" or (rule == "auto" and n < CROSS_FIT_BELOW):
        return cross_fit_weights(y, f, fu)
    return np.repeat(plugin_weight(y, f, fu)[:, None], n, axis=1)


def parts_with_weights(y: F64, f: F64, fu: F64, lam: F64) -> Parts:
    """A stratum's estimate and moments with per-observation weights ``lam`` (rows x n)."""
    n, n_u = y.shape[1], fu.shape[1]
    lam_bar = lam.mean(axis=1)
    d = y - lam * f
    d_dev = d - d.mean(axis=1, keepdims=True)
    d_var = np.mean(d_dev**2, axis=1)
    y_mean = y.mean(axis=1)
    y_dev = y - y_mean[:, None]
    y_var = np.mean(y_dev**2, axis=1)
    estimate = d.mean(axis=1)
    variance = d_var / n
    third = np.mean(d_dev**3, axis=1) / n**2
    variance_var = np.maximum(np.mean(d_dev**4, axis=1) - d_var**2, 0.0) / n**3
    if n_u:
        fu_dev = fu - fu.mean(axis=1, keepdims=True)
        fu_infl_var = np.var(fu_dev**2, axis=1)
        estimate = estimate + lam_bar * fu.mean(axis=1)
        variance = variance + lam_bar**2 * np.mean(fu_dev**2, axis=1) / n_u
        third = third + lam_bar**3 * np.mean(fu_dev**3, axis=1) / n_u**2
        variance_var = variance_var + lam_bar**4 * fu_infl_var / n_u**3
    return Parts(
        n=n,
        n_unsampled=n_u,
        weight=lam_bar,
        estimate=estimate,
        variance=variance,
        third=third,
        variance_var=variance_var,
        rectifier_var=d_var,
        people_mean=y_mean,
        people_var=y_var,
        people_third=np.mean(y_dev**3, axis=1),
        people_variance_var=np.maximum(np.mean(y_dev**4, axis=1) - y_var**2, 0.0) / n**3,
        **_correlation(y_dev, f - f.mean(axis=1, keepdims=True)),
    )


def _correlation(yd: F64, fd: F64) -> dict[str, F64]:
    """Pearson's r and its distribution-free (fourth-moment) standard error on Fisher's z
    scale (Steiger and Hakstian 1982, eq. 3.5 at one correlation; Fisher 1921)."""
    m20, m02, m11 = (np.mean(a, axis=1) for a in (yd**2, fd**2, yd * fd))
    m40, m04, m22 = (np.mean(a, axis=1) for a in (yd**4, fd**4, yd**2 * fd**2))
    m31, m13 = np.mean(yd**3 * fd, axis=1), np.mean(yd * fd**3, axis=1)
    n = yd.shape[1]
    rho = np.full(yd.shape[0], np.nan)
    se = np.full(yd.shape[0], np.nan)
    ok = (m20 > 0) & (m02 > 0)
    if ok.any():
        a, b, c = m20[ok], m02[ok], m11[ok]
        r = np.clip(c / np.sqrt(a * b), -1.0, 1.0)
        var = (
            r**2 / 4 * (m40[ok] / a**2 + m04[ok] / b**2 + 2 * m22[ok] / (a * b))
            - r * (m31[ok] / (a**1.5 * b**0.5) + m13[ok] / (a**0.5 * b**1.5))
            + m22[ok] / (a * b)
        ) / n
        rho[ok] = r
        inside = np.abs(r) < 1.0
        z_se = np.full(r.shape, np.inf)
        z_se[inside] = np.sqrt(np.maximum(var[inside], 0.0)) / (1.0 - r[inside] ** 2)
        se[ok] = z_se
    return {"rho": rho, "rho_z_se": se}


def stratum_parts(y: F64, f: F64, fu: F64, rule: str | float) -> Parts:
    """A stratum's pieces with the weight ``rule`` chooses."""
    return parts_with_weights(y, f, fu, weights(y, f, fu, rule))


@dataclass(frozen=True, slots=True)
class Combined:
    """The strata combined, per row: PPI's and the people's estimate, variance, signed
    skewness, Satterthwaite degrees of freedom, whether every stratum's terms vary; and the
    effective number of people's judgements at the PPI++ weight with its bounds."""

    estimate: F64
    variance: F64
    skewness: F64
    df: F64
    varies: B
    people_estimate: F64
    people_variance: F64
    people_skewness: F64
    people_df: F64
    people_varies: B
    effective_n: F64
    effective_lo: F64
    effective_hi: F64


def _skewness(third: F64, variance: F64) -> F64:
    out = np.full_like(variance, np.inf)
    ok = variance > 0
    out[ok] = third[ok] / variance[ok] ** 1.5
    return out


def _satterthwaite(variance: F64, variance_var: F64, cap: int) -> F64:
    """Satterthwaite's (1946) ``2 V^2 / var(V)``, capped at the sample's ``n - strata``."""
    out = np.full_like(variance, float(max(cap, 1)))
    ok = variance_var > 0
    out[ok] = np.minimum(2.0 * variance[ok] ** 2 / variance_var[ok], cap)
    return np.maximum(out, 1.0)


def _effective_n(parts: Sequence[Parts], shares: F64, level: float) -> tuple[F64, F64, F64]:
    """People's judgements the estimate is worth at the PPI++ weight, per row: ``n V_people /
    V_ppi``, each stratum's ``V_ppi`` at its correlation, ``var(Y) (1 - rho^2 N' / (n + N')) /
    n`` (Broska, Howes and van Loon 2024; a negative correlation counts as none). Bounds from
    each stratum's Fisher-z interval for rho (Bonferroni over strata); n_eff only grows with
    each max(rho, 0)."""
    from scipy import special

    z = -float(special.ndtri((1.0 - level) / 2.0 / len(parts)))
    n = sum(p.n for p in parts)

    def at(rhos: list[F64]) -> F64:
        v_p = sum(s**2 * p.people_var / p.n for s, p in zip(shares, parts, strict=True))
        v = sum(
            s**2 * p.people_var * (1.0 - np.maximum(r, 0.0) ** 2 * _gain(p)) / p.n
            for s, p, r in zip(shares, parts, rhos, strict=True)
        )
        return np.asarray(n * _ratio(np.asarray(v_p, dtype=float), np.asarray(v, dtype=float)))

    zs = [np.arctanh(np.clip(p.rho, -1 + 1e-15, 1 - 1e-15)) for p in parts]
    est = at([p.rho for p in parts])
    lo = at([np.tanh(a - z * p.rho_z_se) for a, p in zip(zs, parts, strict=True)])
    hi = at([np.tanh(a + z * p.rho_z_se) for a, p in zip(zs, parts, strict=True)])
    bad = np.logical_or.reduce([~np.isfinite(p.rho) for p in parts])
    return (np.where(bad, np.nan, est), np.where(bad, np.nan, lo), np.where(bad, np.nan, hi))


def _gain(p: Parts) -> float:
    """``N' / (n + N')``: the share of a stratum the judge alone covers."""
    return p.n_unsampled / (p.n + p.n_unsampled)


def combine(parts: Sequence[Parts], shares: Sequence[float], level: float = 0.95) -> Combined:
    """The strata combined with their shares of the comparisons (``level``: the effective
    size's interval's)."""
    w = np.asarray(shares, dtype=float)

    def total(values: list[F64]) -> F64:
        return np.asarray(np.sum(np.stack(values), axis=0), dtype=float)

    est = total([s * p.estimate for s, p in zip(w, parts, strict=True)])
    var = total([s**2 * p.variance for s, p in zip(w, parts, strict=True)])
    third = total([s**3 * p.third for s, p in zip(w, parts, strict=True)])
    var_var = total([s**4 * p.variance_var for s, p in zip(w, parts, strict=True)])
    p_est = total([s * p.people_mean for s, p in zip(w, parts, strict=True)])
    p_var = total([s**2 * p.people_var / p.n for s, p in zip(w, parts, strict=True)])
    p_third = total([s**3 * p.people_third / p.n**2 for s, p in zip(w, parts, strict=True)])
    p_var_var = total([s**4 * p.people_variance_var for s, p in zip(w, parts, strict=True)])
    cap = sum(p.n for p in parts) - len(parts)
    effective = _effective_n(parts, w, level)
    return Combined(
        estimate=est,
        variance=var,
        skewness=_skewness(third, var),
        df=_satterthwaite(var, var_var, cap),
        varies=np.logical_and.reduce([p.rectifier_var > 0 for p in parts]),
        people_estimate=p_est,
        people_variance=p_var,
        people_skewness=_skewness(p_third, p_var),
        people_df=_satterthwaite(p_var, p_var_var, cap),
        people_varies=np.logical_and.reduce([p.people_var > 0 for p in parts]),
        effective_n=effective[0],
        effective_lo=effective[1],
        effective_hi=effective[2],
    )


def normal_trusted(skewness: F64, df: F64, varies: B) -> B:
    """The rule for a normal interval, per row: the terms vary in every stratum, Satterthwaite's
    degrees of freedom reach `MIN_DEGREES_OF_FREEDOM`, |skewness| is within `SKEWNESS_LIMIT`."""
    return varies & (df >= MIN_DEGREES_OF_FREEDOM) & (np.abs(skewness) <= SKEWNESS_LIMIT)


def quantiles(level: float, quantile: str, df: F64) -> F64:
    """Two-sided ``level`` quantiles per row: Student's t with ``df`` (the default), or z."""
    from scipy import special, stats  # deferred: scipy.stats costs 0.5 s at start-up

    tail = (1.0 - level) / 2.0
    if quantile == "z":
        return np.full(df.shape, -float(special.ndtri(tail)))
    return np.asarray(stats.t.isf(tail, df), dtype=float)


def _beta_lower(k: F64, n: float, tail: float | F64) -> F64:
    from scipy import stats

    out = np.zeros_like(k)
    pos = k > 0
    tails = np.broadcast_to(np.asarray(tail, dtype=float), k.shape)
    out[pos] = stats.beta.ppf(tails[pos], k[pos], n - k[pos] + 1)
    return out


def _beta_upper(k: F64, n: float, tail: float | F64) -> F64:
    from scipy import stats

    out = np.ones_like(k)
    below = k < n
    tails = np.broadcast_to(np.asarray(tail, dtype=float), k.shape)
    out[below] = stats.beta.isf(tails[below], k[below] + 1, n - k[below])
    return out


def exact_bounds(
    ys: Sequence[F64], shares: Sequence[float], values: Sequence[float], tail: float | F64
) -> tuple[F64, F64]:
    """The people's exact lower and upper bounds per row, each one-sided at ``tail`` (one number,
    or one per row): the layer sum ``s_0 + sum_j (s_j - s_(j-1)) P(Y >= s_j)`` with a one-sided
    Clopper-Pearson bound for every (stratum, layer), Bonferroni at ``tail / (layers *
    strata)``, summed with the strata's shares."""
    return _exact_bound(ys, shares, values, tail, True), _exact_bound(
        ys, shares, values, tail, False
    )


def _exact_bound(
    ys: Sequence[F64],
    shares: Sequence[float],
    values: Sequence[float],
    tail: float | F64,
    lower: bool,
) -> F64:
    layers = len(values) - 1
    each = np.asarray(tail, dtype=float) / (layers * len(ys))
    out = np.zeros(ys[0].shape[0])
    for share, y in zip(shares, ys, strict=True):
        n = float(y.shape[1])
        bound = np.full(y.shape[0], float(values[0]))
        for j in range(1, layers + 1):
            step = values[j] - values[j - 1]
            k = np.sum(y >= values[j] - _TOLERANCE, axis=1).astype(float)
            bound = bound + step * (_beta_lower(k, n, each) if lower else _beta_upper(k, n, each))
        out = out + share * bound
    return out


def exact_one_sided_p(
    ys: Sequence[F64],
    shares: Sequence[float],
    values: Sequence[float],
    boundary: float,
    *,
    above: bool,
    steps: int = 60,
) -> F64:
    """Per row, the p-value of "the people's score is above ``boundary``" (``above``; else
    below) from the exact bounds: the smallest one-sided level at which the lower (upper)
    bound clears ``boundary``, by bisection on the level. Valid because the bounds are nested:
    each Clopper-Pearson bound, and so their layer sum, moves monotonically toward the
    estimate as the level grows (tests/stats check it), so ``p <= alpha`` exactly when the
    bound at ``alpha`` clears, and the bound's coverage at every level makes ``P(p <= alpha)
    <= alpha`` at the boundary. 1 when no level clears it."""
    rows = ys[0].shape[0]
    lo_a, hi_a = np.zeros(rows), np.ones(rows)
    for _ in range(steps):
        mid = (lo_a + hi_a) / 2.0
        bound = _exact_bound(ys, shares, values, mid, above)
        beyond = bound > boundary if above else bound < boundary
        hi_a = np.where(beyond, mid, hi_a)
        lo_a = np.where(beyond, lo_a, mid)
    return hi_a


def hall(t: F64, skewness: F64) -> F64:
    """Hall's (1992) transformation of a studentised statistic, ``t + g t^2 / 3 + g^2 t^3 / 27
    + g / 6`` with ``g`` the estimate's skewness (``kappa_3 / V^1.5``; the data's skewness
    over sqrt(n) for a mean): it removes the skewness term of the statistic's Edgeworth
    expansion (Johnson's 1978 modified t, with the cubic term that makes it monotone), so a
    one-sided test's error falls from order n^-1/2 to n^-1. Hall, "On the removal of skewness
    by transformation", JRSS B 54 (1992) 221-228."""
    return np.asarray(t + skewness * t**2 / 3 + skewness**2 * t**3 / 27 + skewness / 6)


def hall_inverse(x: F64, skewness: F64) -> F64:
    """The ``t`` with ``hall(t, skewness) = x`` (``hall`` is ``((1 + g t / 3)^3 - 1) / g + g /
    6``, increasing in t)."""
    g = np.asarray(skewness, dtype=float)
    safe = np.where(g == 0, 1.0, g)
    u = np.cbrt(1.0 + safe * (x - safe / 6))
    return np.asarray(np.where(g == 0, x, 3.0 * (u - 1.0) / safe))


def _upper_tail(stat: F64, df: F64, quantile: str) -> F64:
    from scipy import special, stats

    if quantile == "z":
        return np.asarray(special.ndtr(-stat), dtype=float)
    return np.asarray(stats.t.sf(stat, df), dtype=float)


def normal_one_sided_p(
    estimate: F64,
    variance: F64,
    df: F64,
    skewness: F64,
    boundary: float,
    *,
    above: bool,
    quantile: str = "t",
    skew: bool = True,
) -> F64:
    """Per row, the one-sided p-value of "the score is above ``boundary``" (``above``; else
    below) from a normal estimate: Student's t (or z) on ``(estimate - boundary) / se`` with
    ``df``; with ``skew`` the larger of that and the same tail of Hall's skewness-corrected
    statistic (`hall`), so an estimated skewness can make a claim harder, never easier (module
    doc of `blindtest.stats.ppi`). NaN without variance."""
    se = np.sqrt(np.where(variance > 0, variance, np.nan))
    sign = 1.0 if above else -1.0
    stat = sign * (estimate - boundary) / se
    p = _upper_tail(stat, df, quantile)
    if skew:
        g = np.clip(sign * np.where(np.isfinite(skewness), skewness, 0.0), -HALL_LIMIT, HALL_LIMIT)
        p = np.maximum(p, _upper_tail(hall(stat, g), df, quantile))
    return np.asarray(p, dtype=float)


def normal_one_sided_bound(
    estimate: F64,
    variance: F64,
    df: F64,
    skewness: F64,
    tail: float,
    *,
    lower: bool,
    quantile: str = "t",
    skew: bool = True,
) -> F64:
    """Per row, the one-sided ``1 - tail`` bound that `normal_one_sided_p` inverts: the lower
    (``lower``) or upper bound, the farther of Student's and Hall's with ``skew``."""
    q = quantiles(1.0 - 2.0 * tail, quantile, df)
    se = np.sqrt(np.where(variance > 0, variance, np.nan))
    sign = 1.0 if lower else -1.0
    bound = estimate - sign * q * se
    if skew:
        g = np.clip(sign * np.where(np.isfinite(skewness), skewness, 0.0), -HALL_LIMIT, HALL_LIMIT)
        hall_bound = estimate - sign * hall_inverse(q, g) * se
        bound = np.minimum(bound, hall_bound) if lower else np.maximum(bound, hall_bound)
    return np.asarray(bound, dtype=float)


def one_sided_p(
    vec: IntervalsVector,
    ys: Sequence[F64],
    shares: Sequence[float],
    values: Sequence[float],
    boundary: float,
    *,
    above: bool,
    quantile: str = "t",
    skew: bool = True,
) -> F64:
    """Per row, the one-sided p-value of "the people's score is above ``boundary``" (``above``;
    else below) by the interval each row chose (``vec.method``): the prediction-powered or
    the people's normal estimate (`normal_one_sided_p`), or the people's exact bounds
    (`exact_one_sided_p`). The choice does not depend on the level, so each row's p-value
    inverts one nested family of intervals."""
    comb = vec.combined
    p = np.where(
        vec.method == 0,
        normal_one_sided_p(comb.estimate, comb.variance, comb.df, comb.skewness, boundary,
                           above=above, quantile=quantile, skew=skew),
        normal_one_sided_p(comb.people_estimate, comb.people_variance, comb.people_df,
                           comb.people_skewness, boundary, above=above, quantile=quantile,
                           skew=skew),
    )  # fmt: skip
    exact = vec.method == 2
    if exact.any():
        p[exact] = exact_one_sided_p([y[exact] for y in ys], shares, values, boundary, above=above)
    return np.asarray(p, dtype=float)


def one_sided_bound(
    vec: IntervalsVector,
    ys: Sequence[F64],
    shares: Sequence[float],
    values: Sequence[float],
    tail: float,
    *,
    lower: bool,
    quantile: str = "t",
    skew: bool = True,
) -> F64:
    """Per row, the one-sided ``1 - tail`` bound `one_sided_p` inverts, by each row's method,
    clipped to [0, 1]."""
    comb = vec.combined
    bound = np.where(
        vec.method == 0,
        normal_one_sided_bound(comb.estimate, comb.variance, comb.df, comb.skewness, tail,
                               lower=lower, quantile=quantile, skew=skew),
        normal_one_sided_bound(comb.people_estimate, comb.people_variance, comb.people_df,
                               comb.people_skewness, tail, lower=lower, quantile=quantile,
                               skew=skew),
    )  # fmt: skip
    exact = vec.method == 2
    if exact.any():
        bound[exact] = _exact_bound([y[exact] for y in ys], shares, values, tail, lower)
    return np.asarray(np.clip(bound, 0.0, 1.0), dtype=float)


@dataclass(frozen=True, slots=True)
class IntervalsVector:
    """Every interval per row. The headline: ``estimate``, ``lo``, ``hi`` and ``method`` (an
    index into `METHODS`); the people's own (``people_*``, method 1 or 2); PPI's normal interval
    (``normal_lo``, ``normal_hi``, unclipped) and the people's exact bounds; the pieces."""

    estimate: F64
    lo: F64
    hi: F64
    method: npt.NDArray[np.int64]
    people_estimate: F64
    people_lo: F64
    people_hi: F64
    people_method: npt.NDArray[np.int64]
    normal_lo: F64
    normal_hi: F64
    exact_lo: F64
    exact_hi: F64
    combined: Combined
    parts: tuple[Parts, ...]


def intervals(
    ys: Sequence[F64],
    fs: Sequence[F64],
    fus: Sequence[F64],
    shares: Sequence[float],
    *,
    weight: str | float = "auto",
    interval: str = "auto",
    quantile: str = "t",
    score_values: Sequence[float] = VERDICT_SCORES,
    confidence_level: float = 0.95,
) -> IntervalsVector:
    """The estimate and its intervals for many data sets at once, as `blindtest.stats.ppi`
    chooses them: PPI's normal interval when trusted, else the people's normal interval when
    trusted, else the people's exact interval (``interval="normal"`` or ``"exact"`` forces)."""
    parts = tuple(stratum_parts(y, f, fu, weight) for y, f, fu in zip(ys, fs, fus, strict=True))
    comb = combine(parts, shares, confidence_level)
    q = quantiles(confidence_level, quantile, comb.df)
    p_q = quantiles(confidence_level, quantile, comb.people_df)
    se, p_se = np.sqrt(comb.variance), np.sqrt(comb.people_variance)
    exact_lo, exact_hi = exact_bounds(ys, shares, score_values, (1.0 - confidence_level) / 2.0)
    ppi_ok = normal_trusted(comb.skewness, comb.df, comb.varies)
    people_ok = normal_trusted(comb.people_skewness, comb.people_df, comb.people_varies)
    if interval == "normal":
        ppi_ok = se > 0
    elif interval == "exact":
        ppi_ok = people_ok = np.zeros_like(ppi_ok)
    people_lo = np.where(people_ok, comb.people_estimate - p_q * p_se, exact_lo)
    people_hi = np.where(people_ok, comb.people_estimate + p_q * p_se, exact_hi)
    people_method = np.where(people_ok, 1, 2)
    normal_lo, normal_hi = comb.estimate - q * se, comb.estimate + q * se
    return IntervalsVector(
        estimate=np.where(ppi_ok, comb.estimate, comb.people_estimate),
        lo=np.clip(np.where(ppi_ok, normal_lo, people_lo), 0.0, 1.0),
        hi=np.clip(np.where(ppi_ok, normal_hi, people_hi), 0.0, 1.0),
        method=np.where(ppi_ok, 0, people_method),
        people_estimate=comb.people_estimate,
        people_lo=np.clip(people_lo, 0.0, 1.0),
        people_hi=np.clip(people_hi, 0.0, 1.0),
        people_method=people_method,
        normal_lo=np.where(se > 0, normal_lo, np.nan),
        normal_hi=np.where(se > 0, normal_hi, np.nan),
        exact_lo=exact_lo,
        exact_hi=exact_hi,
        combined=comb,
        parts=parts,
    )
