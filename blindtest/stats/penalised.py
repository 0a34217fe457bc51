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

**Fit.** Firth's modified score by Fisher scoring (the direction ``I^-1 U*``), batched over
rows as `davidson_fit`; along it, the secant root of the directional derivative when the full
step overshoots (scoring alone can circle the maximum: near it the penalty's own curvature
matters), then step halving on the penalised log-likelihood; candidate 0 is held at 0 (the
penalty does not depend on which linear anchor is used). Converged when the largest move is
below 1e-10.

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


def _moments(d: F64, theta: F64) -> tuple[F64, F64, F64, list[F64], list[F64]]:
    """Per (B, m): the three probabilities, the covariance of the outcome statistic
    [C_dd, C_dt, C_tt] and its third cumulants [T_ddd, T_ddt, T_dtt, T_ttt] (d: the pair's
    difference, t: theta)."""
    half = d / 2.0
    lse = np.logaddexp(np.logaddexp(half, -half), theta[:, None])
    p_w = np.exp(half - lse)
    p_l = np.exp(-half - lse)
    p_t = np.exp(theta[:, None] - lse)
    mean_d = (p_w - p_l) / 2.0
    # centred statistic of each outcome: w (1/2 - mean_d, -p_t), l (-1/2 - mean_d, -p_t),
    # t (-mean_d, 1 - p_t); moments as sums over the three outcomes
    xs = (0.5 - mean_d, -0.5 - mean_d, -mean_d)
    ys = (-p_t, -p_t, 1.0 - p_t)
    ps = (p_w, p_l, p_t)
    px = [p * x for p, x in zip(ps, xs, strict=True)]
    py = [p * y for p, y in zip(ps, ys, strict=True)]
    pxx = [a * x for a, x in zip(px, xs, strict=True)]
    pxy = [a * y for a, y in zip(px, ys, strict=True)]
    pyy = [a * y for a, y in zip(py, ys, strict=True)]
    cov = [pxx[0] + pxx[1] + pxx[2], pxy[0] + pxy[1] + pxy[2], pyy[0] + pyy[1] + pyy[2]]
    third = [
        sum(a * x for a, x in zip(pxx, xs, strict=True)),
        sum(a * y for a, y in zip(pxx, ys, strict=True)),
        sum(a * y for a, y in zip(pxy, ys, strict=True)),
        sum(a * y for a, y in zip(pyy, ys, strict=True)),
    ]
    return p_w, p_l, p_t, cov, third


def penalised_loglik(counts: F64, k: int, beta: F64, ties: B8) -> F64:
    """l(b) + 1/2 log det I(b) per row: ``counts`` (B, 3 m) pair cells, ``beta`` (B, k) as
    (theta, s_1..s_{k-1}); rows without ties have theta = -inf and no theta slot."""
    value, _, _ = _evaluate(counts, k, beta, ties, gradient=False)
    return value


def _evaluate(
    counts: F64, k: int, beta: F64, ties: B8, *, gradient: bool = True
) -> tuple[F64, F64, F64]:
    """(penalised log-likelihood (B,), its gradient (B, k), the information (B, k, k))."""
    diff = _maps(k)[:, 0, :]  # (m, P): d_p = diff[p] . beta (slot 0, theta, has 0 here)
    w, losses, t = counts[:, 0::3], counts[:, 1::3], counts[:, 2::3]
    n = w + losses + t
    theta = np.where(ties, beta[:, 0], -np.inf)
    p_w, p_l, p_t, cov, third = _moments(beta @ diff.T, theta)
    terms = xlogy(w, p_w) + xlogy(losses, p_l) + xlogy(t, p_t)
    # I = sum_p n (C_dd a a' + C_dt (a e0' + e0 a') + C_tt e0 e0'), a = diff[p], e0 = slot 0
    info = (diff.T[None] * (n * cov[0])[:, None, :]) @ diff
    cross = (n * cov[1]) @ diff
    info[:, 0, :] += cross
    info[:, :, 0] += cross
    info[:, 0, 0] += (n * cov[2]).sum(axis=1)
    info[~ties, 0, :] = 0.0
    info[~ties, :, 0] = 0.0
    info[~ties, 0, 0] = 1.0
    sign, logdet = np.linalg.slogdet(info)
    value = terms.sum(axis=1) + np.where(sign > 0, 0.5 * logdet, -np.inf)
    if not gradient:
        return value, np.empty(0), info
    score = ((w - losses) / 2.0 - n * (p_w - p_l) / 2.0) @ diff
    score[:, 0] = (t - n * p_t).sum(axis=1)
    try:
        inverse = np.linalg.inv(info)
    except np.linalg.LinAlgError:  # an exactly singular row: the pseudo-inverse
        inverse = np.linalg.pinv(info)
    # Q = A I^-1 A' per pair: (dd, dt, tt)
    q_dd = ((diff[None] @ inverse) * diff[None]).sum(axis=2)
    q_dt = diff[None] @ inverse[:, :, 0:1]
    q_dt = q_dt[..., 0]
    q_tt = inverse[:, 0, 0][:, None]
    v_d = q_dd * third[0] + 2.0 * q_dt * third[1] + q_tt * third[2]
    v_t = q_dd * third[1] + 2.0 * q_dt * third[2] + q_tt * third[3]
    penalty = 0.5 * ((n * v_d) @ diff)
    penalty[:, 0] = 0.5 * (n * v_t).sum(axis=1)
    grad = score + penalty
    grad[~ties, 0] = 0.0
    return value, grad, info


def _solve(matrix: F64, vector: F64) -> F64:
    """Batched ``matrix^-1 vector``; the pseudo-inverse where a row is exactly singular."""
    try:
        solved = np.linalg.solve(matrix, vector[..., None])
    except np.linalg.LinAlgError:
        solved = np.linalg.pinv(matrix) @ vector[..., None]
    result: F64 = np.asarray(solved[..., 0], dtype=np.float64)
    return result


def _advance(c: F64, k: int, b: F64, tie_on: B8, step: F64, old: F64, slope: F64) -> F64:
    """The move along the scoring direction ``step`` from ``b``: the secant root of the
    directional derivative where the full step overshoots (scoring alone can circle Firth's
    maximum: the penalty's curvature is not Fisher's), then halved until the penalised
    log-likelihood does not fall. ``slope`` is the derivative along ``step`` at ``b``."""
    # The full step can go far enough out that the probabilities underflow and the
    # information is singular: its gradient is then not finite, and the step is taken whole
    # and halved below by the value alone (numpy's warning about it is not the user's).
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        _, grad_end, _ = _evaluate(c, k, b + step, tie_on)
        slope_end = (grad_end * step).sum(axis=1)
    size = np.where(slope_end < 0.0, slope / np.maximum(slope - slope_end, 1e-300), 1.0)
    size = np.clip(size, 1e-3, 1.0)
    for _ in range(60):
        new, _, _ = _evaluate(c, k, b + size[:, None] * step, tie_on, gradient=False)
        worse = ~(new >= old - 1e-12 * np.abs(old))
        if not worse.any():
            break
        size = np.where(worse, size / 2.0, size)
    moves: F64 = size[:, None] * step
    return moves


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
        step = _solve(info, grad)
        step[~tie_on, 0] = 0.0
        moves = _advance(c, k, b, tie_on, step, old, (grad * step).sum(axis=1))
        beta[rows] = b + moves
        done = np.abs(moves).max(axis=1) < STEP_TOLERANCE
        converged[rows[done]] = True
        alive[rows[done]] = False
    strengths = np.c_[np.zeros(batch), beta[:, 1:]]
    theta = np.where(with_ties, beta[:, 0], -np.inf)
    return strengths, theta, converged, iterations


def _bases(k: int, ties: bool, contrasts: F64) -> F64:
    """Per contrast row, an orthonormal basis (k, dim) of the free directions that keep it
    fixed (theta's slot is not free without ties)."""
    free = np.ones(k, dtype=bool)
    if not ties:
        free[0] = False
    dim = int(free.sum()) - 1
    basis = np.zeros((contrasts.shape[0], k, dim))
    for r in range(contrasts.shape[0]):
        _, _, vt = np.linalg.svd(contrasts[r, free][None])
        basis[r][np.ix_(free, np.arange(dim))] = vt[1:].T
    return basis


def _constrained(
    counts: F64, k: int, ties: bool, beta: F64, contrast: F64, value: F64, basis: F64
) -> tuple[F64, F64]:
    """Maximise the penalised log-likelihood with ``contrast[r] . b = value[r]`` per row,
    starting at ``beta`` (rows, k) and moving along ``basis`` (`_bases`); returns (the
    maximum (rows,), the maximiser)."""
    rows = beta.shape[0]
    free = np.ones(k, dtype=bool)
    if not ties:
        free[0] = False
    # the start moved onto the constraint along the contrast
    direction = np.where(free, contrast, 0.0)
    norm = (direction**2).sum(axis=1)
    beta = beta + ((value - (contrast * beta).sum(axis=1)) / norm)[:, None] * direction
    c_rows = np.repeat(counts[None], rows, axis=0)
    tie_rows = np.full(rows, ties)
    alive = np.ones(rows, dtype=bool)
    for _ in range(MAX_ITERATIONS if basis.shape[2] else 0):
        idx = np.flatnonzero(alive)
        if not idx.size:
            break
        b, base, c, tie_on = beta[idx], basis[idx], c_rows[idx], tie_rows[idx]
        old, grad, info = _evaluate(c, k, b, tie_on)
        g = (grad[:, None, :] @ base)[:, 0, :]
        h = base.transpose(0, 2, 1) @ info @ base
        step = (base @ _solve(h, g)[..., None])[..., 0]
        moves = _advance(c, k, b, tie_on, step, old, (grad * step).sum(axis=1))
        beta[idx] = b + moves
        alive[idx[np.abs(moves).max(axis=1) < STEP_TOLERANCE]] = False
    value, _, _ = _evaluate(c_rows, k, beta, tie_rows, gradient=False)
    return value, beta


def profile_bounds(
    counts: F64, k: int, beta_hat: F64, contrasts: F64, level: float
) -> tuple[F64, F64]:
    """Profile penalised-likelihood bounds of each contrast (rows of ``contrasts``, over the
    parameters (theta, s_1..)) at ``level``, around the fit ``beta_hat`` (k,). A contrast
    that is identically 0 (the anchor against itself) has bounds 0."""
    contrasts = np.asarray(contrasts, dtype=np.float64)
    live = np.flatnonzero(np.any(contrasts != 0.0, axis=1))
    lo = np.zeros(contrasts.shape[0])
    hi = np.zeros(contrasts.shape[0])
    if live.size:
        lo[live], hi[live] = _profile_bounds(counts, k, beta_hat, contrasts[live], level)
    return lo, hi


def _profile_bounds(
    counts: F64, k: int, beta_hat: F64, contrasts: F64, level: float
) -> tuple[F64, F64]:
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

    basis = _bases(k, ties, c2)

    def excess(rows: npt.NDArray[np.int64], offset: F64, start: F64) -> tuple[F64, F64]:
        value, fitted = _constrained(
            counts, k, ties, start, c2[rows], centre[rows] + direction[rows] * offset, basis[rows]
        )
        return 2.0 * (top[0] - value) - quantile, fitted

    every = np.arange(2 * count)
    # bracket: double the offset until the deviance passes the quantile, or FAR
    low = np.zeros(2 * count)
    f_low = np.full(2 * count, -quantile)
    high = np.full(2 * count, 0.5)
    starts = np.repeat(beta_hat[None], 2 * count, axis=0)
    f_high, starts = excess(every, high, starts)
    for _ in range(10):
        short = np.flatnonzero((f_high < 0) & (high < FAR))
        if not short.size:
            break
        low[short], f_low[short] = high[short], f_high[short]
        high[short] = np.minimum(2.0 * high[short], FAR)
        f_high[short], starts[short] = excess(short, high[short], starts[short])
    unbounded = f_high < 0
    # Illinois (regula falsi, the retained end's value halved) on [low, high], row by row
    a, fa, b, fb = low.copy(), f_low.copy(), high.copy(), f_high.copy()
    kept = np.zeros(2 * count, dtype=bool)
    active = np.flatnonzero(~unbounded)
    for _ in range(100):
        if not active.size:
            break
        r = active
        x = np.where(fb[r] != fa[r], b[r] - fb[r] * (b[r] - a[r]) / (fb[r] - fa[r]), b[r])
        x = np.clip(x, np.minimum(a[r], b[r]), np.maximum(a[r], b[r]))
        fx, starts[r] = excess(r, x, starts[r])
        same = np.sign(fx) == np.sign(fb[r])
        fa[r] = np.where(same, np.where(kept[r], fa[r] / 2.0, fa[r]), fb[r])
        a[r] = np.where(same, a[r], b[r])
        kept[r] = same
        b[r], fb[r] = x, fx
        done = (np.abs(fx) < 1e-10) | (np.abs(b[r] - a[r]) < 1e-12 * np.maximum(1.0, b[r]))
        active = r[~done]
    offset = np.where(unbounded, np.inf, b)
    lo = estimate - offset[:count]
    hi = estimate + offset[count:]
    if not math.isfinite(top[0]):  # pragma: no cover - the fit always has a finite value
        return np.full(count, -np.inf), np.full(count, np.inf)
    return lo, hi
