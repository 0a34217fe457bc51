"""Firth's penalised Bradley-Terry / Davidson fit, for data whose maximum-likelihood estimate
does not exist (a candidate that won every comparison it was in, or a group that never lost
to another), with profile penalised-likelihood intervals.

**Penalty.** The log-likelihood plus half the log-determinant of the Fisher information,
``l(b) + 1/2 log det I(b)``: the Jeffreys-prior penalty of Firth (1993, Biometrika
80:27-38), whose maximum is finite whenever the comparisons connect every candidate
(Kosmidis and Firth, 2021, Biometrika 108:71-82, for the binomial case; checked here for
Davidson's ties by the reference values). Without ties the model is a logistic regression
on the Bradley-Terry design (a +1 and a -1 per pair) and this is R's
``brglm2::brglmFit(type = "AS_mean")``. Davidson's model (`blindtest.stats.ranking`) is an
exponential family with parameters linear in (s, theta), so observed and expected
information agree and ``I = sum over pairs of n A' Cov(f) A``, with f the outcome's
statistic ((+-1/2, 0) for a preference, (0, 1) for a tie) and A the map from the parameters
to the pair's (d, theta); the penalty's gradient needs the third cumulants of f.

**Fit.** Firth's modified score by Fisher scoring (the step ``I^-1 U*``) with step halving
on the penalised log-likelihood, batched over rows as `davidson_fit`; candidate 0 is held at
0 (the penalty does not depend on which linear anchor is used). Converged when the largest
step is below 1e-10.

**Intervals.** Profile penalised likelihood (Heinze and Schemper, 2002, Statistics in
Medicine 21:2409-2419; R's logistf): the bounds of a contrast c'b are where twice the drop of
the penalised log-likelihood, maximised with c'b held fixed (the full model's penalty at the
constrained parameters), reaches the chi-square(1) quantile. They treat comparisons as
independent units (the prompt bootstrap cannot stand on a fit that exists only because of
the penalty: in a resample the same candidate still wins everything). Found by the Illinois
method on a bracket; a bound farther than 60 on the log-odds scale is unbounded (inf).

Pure; arrays in, arrays out.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy import stats as sps
from scipy.special import xlogy

from blindtest.stats.comparisons import pairs_of

__all__ = ["firth_fit", "penalised_loglik", "profile_bounds"]

F64 = npt.NDArray[np.float64]
B8 = npt.NDArray[np.bool_]

STEP_TOLERANCE = 1e-10
MAX_ITERATIONS = 500
#: Profile bounds farther than this from the estimate (log-odds) are unbounded.
FAR = 60.0


def _maps(k: int) -> F64:
    """A (m, 2, P): pair p's (d, theta) from the parameters (theta, s_1..s_{k-1})."""
    pi, pj = pairs_of(k)
    m = pi.size
    a = np.zeros((m, 2, k))
    rows = np.arange(m)
    a[rows, 0, pi] = 1.0
    a[rows, 0, pj] = -1.0
    a[:, 0, 0] = 0.0  # s_0 = 0: slot 0 carries theta instead
    a[:, 1, 0] = 1.0
    return a


def _moments(d: F64, theta: F64) -> tuple[F64, F64, F64, F64]:
    """Per (B, m): the probabilities (B, m, 3), the mean (B, m, 2), Cov (B, m, 2, 2) and the
    third cumulant (B, m, 2, 2, 2) of the outcome statistic."""
    half = d / 2.0
    lse = np.logaddexp(np.logaddexp(half, -half), theta[:, None])
    probs = np.stack(
        [np.exp(half - lse), np.exp(-half - lse), np.exp(theta[:, None] - lse)], axis=-1
    )
    feats = np.array([[0.5, 0.0], [-0.5, 0.0], [0.0, 1.0]])
    mean = probs @ feats
    centred = feats[None, None, :, :] - mean[:, :, None, :]  # (B, m, 3, 2)
    weighted = probs[..., None] * centred
    cov = np.einsum("bmox,bmoy->bmxy", weighted, centred)
    third = np.einsum("bmox,bmoy,bmoz->bmxyz", weighted, centred, centred)
    return probs, mean, cov, third


def penalised_loglik(counts: F64, k: int, beta: F64, ties: B8) -> F64:
    """l(b) + 1/2 log det I(b) per row: ``counts`` (B, 3 m) pair cells, ``beta`` (B, k) as
    (theta, s_1..s_{k-1}); rows without ties have theta = -inf and no theta slot."""
    value, _, _ = _evaluate(counts, k, beta, ties, gradient=False)
    return value


def _evaluate(
    counts: F64, k: int, beta: F64, ties: B8, *, gradient: bool = True
) -> tuple[F64, F64, F64]:
    """(penalised log-likelihood (B,), its gradient (B, k), the information (B, k, k))."""
    maps = _maps(k)
    w, losses, t = counts[:, 0::3], counts[:, 1::3], counts[:, 2::3]
    n = w + losses + t
    theta = np.where(ties, beta[:, 0], -np.inf)
    d = beta @ maps[:, 0, :].T
    probs, mean, cov, third = _moments(d, theta)
    terms = xlogy(w, probs[..., 0]) + xlogy(losses, probs[..., 1]) + xlogy(t, probs[..., 2])
    info = np.einsum("bm,bmxy,mxa,myc->bac", n, cov, maps, maps)
    info[~ties, 0, :] = 0.0
    info[~ties, :, 0] = 0.0
    info[~ties, 0, 0] = 1.0
    sign, logdet = np.linalg.slogdet(info)
    value = terms.sum(axis=1) + np.where(sign > 0, 0.5 * logdet, -np.inf)
    if not gradient:
        return value, np.empty(0), info
    observed = np.stack([(w - losses) / 2.0, t], axis=-1)  # (B, m, 2)
    score_pair = observed - n[..., None] * mean
    score = np.einsum("bmx,mxa->ba", score_pair, maps)
    inverse = np.linalg.inv(info)
    q = np.einsum("mxa,bac,myc->bmxy", maps, inverse, maps)
    v = np.einsum("bmxy,bmxyz->bmz", q, third)
    penalty = 0.5 * np.einsum("bm,bmz,mza->ba", n, v, maps)
    grad = score + penalty
    grad[~ties, 0] = 0.0
    return value, grad, info


def firth_fit(
    counts: F64, k: int, ties: B8 | None = None, start: F64 | None = None
) -> tuple[F64, F64, npt.NDArray[np.bool_], int]:
    """Firth's penalised fit for a batch of pair-cell rows (B, 3 m): strengths (B, k) with
    candidate 0 at 0, theta (B,) (-inf without ties), whether each row converged, and the
    iterations used (module doc)."""
    counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    batch = counts.shape[0]
    with_ties = counts[:, 2::3].sum(axis=1) > 0 if ties is None else np.asarray(ties, bool)
    beta = np.zeros((batch, k)) if start is None else np.array(start, dtype=np.float64)
    beta[~with_ties, 0] = 0.0
    converged = np.zeros(batch, dtype=bool)
    alive = np.ones(batch, dtype=bool)
    iterations = 0
    while alive.any() and iterations < MAX_ITERATIONS:
        iterations += 1
        rows = np.flatnonzero(alive)
        c, b, tie_on = counts[rows], beta[rows], with_ties[rows]
        old, grad, info = _evaluate(c, k, b, tie_on)
        step = np.linalg.solve(info, grad[..., None])[..., 0]
        step[~tie_on, 0] = 0.0
        size = np.ones(rows.size)
        trial = b + step
        for _ in range(60):
            new, _, _ = _evaluate(c, k, trial, tie_on, gradient=False)
            worse = ~(new >= old - 1e-12 * np.abs(old))
            if not worse.any():
                break
            size = np.where(worse, size / 2.0, size)
            trial = b + size[:, None] * step
        moved = np.abs(size[:, None] * step).max(axis=1)
        beta[rows] = trial
        done = moved < STEP_TOLERANCE
        converged[rows[done]] = True
        alive[rows[done]] = False
    strengths = np.c_[np.zeros(batch), beta[:, 1:]]
    theta = np.where(with_ties, beta[:, 0], -np.inf)
    return strengths, theta, converged, iterations


def _constrained(
    counts: F64, k: int, ties: bool, beta: F64, contrast: F64, value: F64
) -> tuple[F64, F64]:
    """Maximise the penalised log-likelihood with ``contrast[r] . b = value[r]`` per row,
    starting at ``beta`` (rows, k); returns (the maximum (rows,), the maximiser)."""
    rows = beta.shape[0]
    free = np.ones(k, dtype=bool)
    if not ties:
        free[0] = False
    # the start moved onto the constraint along the contrast
    norm = (contrast[:, free] ** 2).sum(axis=1)
    beta = beta + ((value - (contrast * beta).sum(axis=1)) / norm)[:, None] * np.where(
        free, contrast, 0.0
    )
    # a basis of the directions that keep the constraint (free slots only)
    dim = int(free.sum()) - 1
    basis = np.zeros((rows, k, dim))
    for r in range(rows):
        c = contrast[r] * free
        _, _, vt = np.linalg.svd(c[None, free])
        null = vt[1:].T  # (free, free - 1)
        basis[r][np.ix_(free, np.arange(null.shape[1]))] = null
    c_rows = np.repeat(counts[None], rows, axis=0) if counts.ndim == 1 else counts
    tie_rows = np.full(rows, ties)
    for _ in range(MAX_ITERATIONS if dim else 0):
        old, grad, info = _evaluate(c_rows, k, beta, tie_rows)
        g = np.einsum("bka,bk->ba", basis, grad)
        h = np.einsum("bka,bkl,blc->bac", basis, info, basis)
        step_small = np.linalg.solve(h, g[..., None])[..., 0]
        step = np.einsum("bka,ba->bk", basis, step_small)
        size = np.ones(rows)
        trial = beta + step
        for _ in range(60):
            new, _, _ = _evaluate(c_rows, k, trial, tie_rows, gradient=False)
            worse = ~(new >= old - 1e-12 * np.abs(old))
            if not worse.any():
                break
            size = np.where(worse, size / 2.0, size)
            trial = beta + size[:, None] * step
        beta = trial
        if np.abs(size[:, None] * step).max() < STEP_TOLERANCE:
            break
    value, _, _ = _evaluate(c_rows, k, beta, tie_rows, gradient=False)
    return value, beta


def profile_bounds(
    counts: F64, k: int, beta_hat: F64, contrasts: F64, level: float
) -> tuple[F64, F64]:
    """Profile penalised-likelihood bounds of each contrast (rows of ``contrasts``, over the
    parameters (theta, s_1..)) at ``level``, around the fit ``beta_hat`` (k,)."""
    counts = np.asarray(counts, dtype=np.float64)
    ties = bool(counts[2::3].sum() > 0)
    top, _, _ = _evaluate(counts[None], k, beta_hat[None], np.array([ties]), gradient=False)
    quantile = float(sps.chi2.ppf(level, 1))
    count = contrasts.shape[0]
    estimate = contrasts @ beta_hat
    # rows: every contrast's lower side, then its upper side
    direction = np.r_[-np.ones(count), np.ones(count)]
    c2 = np.r_[contrasts, contrasts]
    centre = np.r_[estimate, estimate]

    def excess(offset: F64, start: F64) -> tuple[F64, F64]:
        value, fitted = _constrained(counts, k, ties, start, c2, centre + direction * offset)
        return 2.0 * (top[0] - value) - quantile, fitted

    # bracket: double the offset until the deviance passes the quantile, or FAR
    low = np.zeros(2 * count)
    f_low = np.full(2 * count, -quantile)
    high = np.full(2 * count, 0.5)
    starts = np.repeat(beta_hat[None], 2 * count, axis=0)
    f_high, fitted = excess(high, starts)
    for _ in range(10):
        short = f_high < 0
        if not short.any() or (high[short] >= FAR).all():
            break
        low = np.where(short, high, low)
        f_low = np.where(short, f_high, f_low)
        starts = np.where(short[:, None], fitted, starts)
        high = np.where(short, np.minimum(2.0 * high, FAR), high)
        f_high, fitted = excess(high, starts)
    unbounded = f_high < 0
    # Illinois on [low, high] for the bracketed rows
    a, fa, b, fb = low.copy(), f_low.copy(), high.copy(), f_high.copy()
    side = np.zeros(2 * count)
    for _ in range(100):
        x = np.where(fb != fa, b - fb * (b - a) / (fb - fa), (a + b) / 2.0)
        x = np.clip(x, np.minimum(a, b), np.maximum(a, b))
        fx, fitted = excess(x, starts)
        same = np.sign(fx) == np.sign(fb)
        a_new = np.where(same, a, b)
        fa_new = np.where(same, fa * np.where(side == 1, 0.5, 1.0), fb)
        side = np.where(same, 1, -1)
        a, fa = a_new, fa_new
        b, fb = x, fx
        starts = fitted
        if (np.abs(fx) < 1e-9).all() or (np.abs(b - a) < 1e-11).all():
            break
    offset = np.where(unbounded, np.inf, b)
    lo = estimate - offset[:count]
    hi = estimate + offset[count:]
    if not math.isfinite(top[0]):  # pragma: no cover - the fit always has a finite value
        return np.full(count, -np.inf), np.full(count, np.inf)
    return lo, hi
