"""Style control: a Bradley-Terry (logistic) model of a preference run's untied comparisons
with A's strength and style-difference covariates (Chatbot Arena's style control: Li,
Angelopoulos and Chiang, 2024, "Does style matter?").

Model. Comparison i has y_i = 1 when A was preferred, 0 when B was, and
``logit P(y_i = 1) = a + sum_k g_k x_ik`` where x_ik is A's style minus B's on covariate k,
already normalised by the caller (``blindtest.analysis.style`` uses Arena's
``(f_A - f_B) / (f_A + f_B)``, without Arena's centring, so that x = 0 means equal style). The
intercept ``a`` is A's strength in log-odds with style held equal: whichever side was shown
left, the covariates are A-minus-B, so ``a`` never mixes in position (which has its own gate).

Fit. Maximum likelihood by Newton-Raphson with step halving. A fit has converged when the
largest score component is below 1e-9 per comparison or a full Newton step moves no
coefficient by more than 1e-10 (an optimiser's "precision loss" at the maximum is not a
failure). Under Firth the curvature is the penalised likelihood's own (central differences of
its gradient), not Fisher's information, with which the iteration can circle the maximum.

Separation (Albert and Anderson, 1984). When some direction b != 0 of the coefficients puts
every comparison on its observed side (``(2 y_i - 1) z_i . b >= 0`` for all i), the likelihood
grows without bound along b and the ML estimate is infinite. It is detected exactly by one
linear programme (Konis, 2007): maximise ``sum s_i`` subject to ``(2y - 1) z b >= s``,
``0 <= s <= 1``; the comparisons with s_i = 1 are the ones a separating direction decides
(``determined``). Every separating direction lies in the null space of the undecided rows, so
a term is *separated* (its ML estimate infinite) exactly when that null space has a component
along it. ``complete`` separation decides every comparison: nothing in the data then measures
any coefficient (the likelihood is 1 at the limit whatever the others are), and no estimate
is given. ``quasi`` separation decides some. That programme has a row per comparison; it is
solved only when Stiemke's alternative (Stiemke, 1915; a programme with a row per term) finds
that some comparison can be decided at all: no direction decides any comparison exactly when
some w > 0 has ``sum_i w_i (2 y_i - 1) z_i = 0``.

When the data are separated the fit is Firth's (1993) penalised likelihood
``l(b) + 1/2 log det I(b)`` (the Jeffreys prior; Heinze and Schemper, 2002), whose estimates
are finite. Intervals are then profile *penalised* likelihood intervals, with the penalty of
the full model at the constrained coefficients (Heinze and Schemper, 2002; R's logistf), and
the test of the style terms is the penalised likelihood ratio. Without separation: ordinary
profile-likelihood intervals. Standard errors are Wald's, from the inverse Fisher information
at the (penalised) fit.

The test of the style terms (jointly against none) is always Firth's penalised likelihood
ratio (Heinze and Schemper, 2002), with the penalty of the full design in both fits: under no
style effect the plain likelihood-ratio test rejects too often at a blind test's sizes (5%
level, two style terms, lengths and markdown like two chat models': 7.7% at n = 20, 6.1% at
n = 50, 4.6% at n = 200), the penalised one does not (3.6%, 4.7%, 4.3%); the seeded
simulation is tests/stats/test_style_control.py's.

Extrapolation. A's strength is the log-odds at equal style (x = 0). When no comparison had
equal style and the comparisons do not lie on both sides of it (x = 0 is outside the convex
hull of the rows of x: A longer in every comparison, say), that value lies outside the data
and the model's straight line would carry it there: A's strength is "extrapolated", no number
is given, and ``side_confounded`` names each covariate whose difference had one sign in every
comparison (+1: A had more of it). Found by one linear programme (is there a convex
combination of the rows equal to 0?).

The test of the style terms is withheld (``lr_test`` None, ``lr_test_withheld`` saying why)
when the picks are completely separated (the words say what decided every pick; a p-value
there reads as "style does not matter" when style decided every one) and when A's strength
is extrapolated (with A longer in every comparison the test can see only whether a larger
lead moves the picks, never whether length does).

A covariate that is zero in every comparison (no difference anywhere) has no coefficient
("no variation"); one that is a linear combination of the intercept and earlier covariates is
"aliased". When the intercept itself is a combination of the covariates (every comparison had
the same style difference), A's strength cannot be told from style and is not given.

Pure: arrays in, frozen results out; no file, no seed (a simulation passes its own data in).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from blindtest.stats.intervals import Interval, _check_confidence, json_float

__all__ = [
    "LikelihoodRatioTest",
    "Separation",
    "StyleCoefficient",
    "StyleControlResult",
    "detect_separation",
    "equal_style_outside",
    "likelihood_ratio_statistics",
    "style_control",
]

Array = npt.NDArray[np.float64]

#: The intercept's name in ``Separation.terms`` and ``by``.
STRENGTH = "a_strength"
#: Newton's stopping rules: the score per comparison, and a full step's largest move.
_SCORE_TOL = 1e-9
_STEP_TOL = 1e-10
_MAX_ITER = 200
_MAX_HALVINGS = 60
#: A profile bound further than this from the estimate (log-odds) is reported as unbounded.
_PROFILE_LIMIT = 1e3
#: The linear programme's box on the coefficients (after columns are scaled to max |x| = 1
#: and rows to unit length), and the share of s_i that marks a comparison decided.
_LP_BOX = 1e6
_LP_DECIDED = 0.5


@dataclass(frozen=True, slots=True)
class StyleCoefficient:
    """One style covariate's coefficient: log-odds per unit of the normalised difference.
    ``status``: "estimated", "separated" (its ML estimate is infinite: the estimate is Firth's,
    set largely by the penalty, and the bound on the side the likelihood runs off to is
    infinite; all NaN under complete separation), "no variation" or "aliased" (no
    coefficient), or "confounded" with an aliased one."""

    name: str
    estimate: float
    se: float
    lo: float
    hi: float
    status: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": json_float(self.estimate),
            "se": json_float(self.se),
            "lo": json_float(self.lo),
            "hi": json_float(self.hi),
            "status": self.status,
        }


@dataclass(frozen=True, slots=True)
class LikelihoodRatioTest:
    """The style terms jointly against none: ``statistic`` = 2 (l_full - l_no_style), chi-square
    with ``df`` degrees of freedom. ``penalised``: Firth's penalised likelihood ratio."""

    statistic: float
    df: int
    p_value: float
    penalised: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": json_float(self.statistic),
            "df": self.df,
            "p_value": json_float(self.p_value),
            "penalised": self.penalised,
        }


@dataclass(frozen=True, slots=True)
class Separation:
    """Whether the picks are separated. ``status``: "none", "quasi" or "complete";
    ``determined``: the comparisons a separating direction decides; ``terms``: the terms whose
    ML estimate is infinite (``a_strength`` for the intercept), each with the sign of that
    infinity: +1 or -1, or 0 when the likelihood rises without bound both ways (its profile is
    flat, so no bound either side); ``by``: each single term that separates the picks on its
    own, with +1 when the picks went to the side with more of it (A, for ``a_strength``) and
    -1 when they went to the side with less."""

    status: str
    determined: int
    terms: tuple[str, ...]
    by: tuple[tuple[str, int], ...]
    infinite: tuple[int, ...] = ()

    @property
    def separated(self) -> bool:
        return self.status != "none"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "determined": self.determined,
            "terms": list(self.terms),
            "by": {name: sign for name, sign in self.by},
            "infinite": dict(zip(self.terms, self.infinite, strict=True)),
        }


@dataclass(frozen=True, slots=True)
class StyleControlResult:
    """The style-control fit of ``n`` untied comparisons (``a_wins`` of them A's).

    ``a_strength``: A's strength with style held equal (log-odds; the interval is the profile
    likelihood's, or the profile penalised likelihood's under Firth); ``a_win_rate_adjusted``:
    its logistic transform, A's chance of being preferred over B at equal style. Both NaN when
    not estimable (``a_strength_status``: "estimated", "separated", "confounded" when a style
    difference was the same in every comparison, "extrapolated" when equal style lies outside
    the comparisons' style differences)."""

    n: int
    a_wins: int
    #: Per covariate, the comparisons in which A's and B's value differed (x != 0).
    differing: tuple[int, ...]
    a_strength: Interval
    a_strength_se: float
    a_strength_status: str
    a_win_rate_adjusted: Interval
    coefficients: tuple[StyleCoefficient, ...]
    lr_test: LikelihoodRatioTest | None
    separation: Separation
    method: str
    interval_method: str
    confidence_level: float
    converged: bool
    #: Why ``lr_test`` is None though a style term varies: "separated" or "extrapolated".
    lr_test_withheld: str | None = None
    #: Each kept covariate whose A-minus-B difference had one sign in every comparison.
    side_confounded: tuple[tuple[str, int], ...] = ()

    @property
    def firth(self) -> bool:
        return self.separation.separated

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "a_wins": self.a_wins,
            "differing": {
                c.name: k for c, k in zip(self.coefficients, self.differing, strict=True)
            },
            "a_strength": self.a_strength.to_dict(),
            "a_strength_se": json_float(self.a_strength_se),
            "a_strength_status": self.a_strength_status,
            "a_win_rate_adjusted": self.a_win_rate_adjusted.to_dict(),
            "coefficients": {c.name: c.to_dict() for c in self.coefficients},
            "lr_test": self.lr_test.to_dict() if self.lr_test is not None else None,
            "separation": self.separation.to_dict(),
            "method": self.method,
            "interval_method": self.interval_method,
            "confidence_level": self.confidence_level,
            "converged": self.converged,
            "lr_test_withheld": self.lr_test_withheld,
            "side_confounded": dict(self.side_confounded),
        }


# --------------------------------------------------------------------------- the fit


def _expit(eta: Array) -> Array:
    from scipy import special

    return np.asarray(special.expit(eta), dtype=np.float64)


def _objective(z: Array, y: Array, beta: Array, firth: bool) -> Array:
    """Per row of a stack: the log-likelihood, plus 1/2 log det I under Firth (-inf where the
    information is singular)."""
    eta = np.einsum("rnp,rp->rn", z, beta)
    value = np.sum(y * eta - np.logaddexp(0.0, eta), axis=1)
    if firth:
        w = _expit(eta) * _expit(-eta)
        value = value + 0.5 * _log_det(np.einsum("rni,rn,rnj->rij", z, w, z))
    return np.asarray(value, dtype=np.float64)


def _log_det(information: Array) -> Array:
    """log det of each symmetric positive semi-definite matrix of a stack; -inf where one is
    singular. Far out on a profile every comparison's weight p (1 - p) underflows to 0 and the
    information is singular: slogdet then takes the log of a zero pivot (numpy's "divide by
    zero encountered in slogdet"), so the eigenvalues are checked first and only a positive
    definite matrix's are logged."""
    eigenvalues = np.linalg.eigvalsh(information)
    definite = eigenvalues[:, 0] > 0.0
    logged = np.log(np.where(definite[:, None], eigenvalues, 1.0)).sum(axis=1)
    return np.asarray(np.where(definite, logged, -np.inf), dtype=np.float64)


def _score_and_information(z: Array, y: Array, beta: Array, firth: bool) -> tuple[Array, Array]:
    """The (Firth-modified) score and the Fisher information, per row of a stack. Firth's
    score adds h_i (1/2 - p_i) to each residual, h_i the hat values (Firth, 1993)."""
    eta = np.einsum("rnp,rp->rn", z, beta)
    p = _expit(eta)
    w = p * _expit(-eta)
    information = np.einsum("rni,rn,rnj->rij", z, w, z)
    residual = y - p
    if firth:
        hat = w * np.einsum("rni,rij,rnj->rn", z, np.linalg.pinv(information), z)
        residual = residual + hat * (0.5 - p)
    return np.einsum("rnp,rn->rp", z, residual), information


def _firth_curvature(
    z: Array, y: Array, beta: Array, index: npt.NDArray[np.intp], fisher: Array
) -> Array:
    """Minus the Hessian of the penalised log-likelihood over the free coefficients, by central
    differences of its gradient, where it is positive definite; the Fisher information
    elsewhere. Fisher scoring alone overshoots Firth's maximum (near it the penalty's own
    curvature is comparable to the likelihood's: for one comparison, exactly as large, so a
    full step lands as far past the maximum as it started before it) and converges slowly or
    not at all."""
    columns = []
    for k in index:
        h = 1e-5 * np.maximum(1.0, np.abs(beta[:, k]))
        up, down = beta.copy(), beta.copy()
        up[:, k] += h
        down[:, k] -= h
        plus, _ = _score_and_information(z, y, up, True)
        minus, _ = _score_and_information(z, y, down, True)
        columns.append(-(plus - minus)[:, index] / (2.0 * h[:, None]))
    curvature = np.stack(columns, axis=2)
    curvature = 0.5 * (curvature + np.swapaxes(curvature, 1, 2))
    definite = np.linalg.eigvalsh(curvature)[:, 0] > 0
    return np.where(definite[:, None, None], curvature, fisher)


def _fit(
    z: Array, y: Array, *, firth: bool, start: Array, free: npt.NDArray[np.bool_]
) -> tuple[Array, Array, npt.NDArray[np.bool_]]:
    """Maximise the (penalised) log-likelihood over the ``free`` coefficients of each row of a
    stack, the others held at ``start``: (coefficients, objective, converged)."""
    beta = np.array(start, dtype=np.float64)
    rows, n = y.shape
    done = np.zeros(rows, dtype=bool)
    converged = np.zeros(rows, dtype=bool)
    index = np.flatnonzero(free)
    value = _objective(z, y, beta, firth)
    for _ in range(_MAX_ITER):
        active = ~done
        if not active.any():
            break
        za, ya, ba = z[active], y[active], beta[active]
        score, information = _score_and_information(za, ya, ba, firth)
        score_f = score[:, index]
        small = np.max(np.abs(score_f), axis=1, initial=0.0) <= _SCORE_TOL * max(1, n)
        sub = information[:, index[:, None], index[None, :]]
        if firth and len(index):
            sub = _firth_curvature(za, ya, ba, index, sub)
        step_f = np.einsum("rij,rj->ri", np.linalg.pinv(sub), score_f)
        step = np.zeros_like(ba)
        step[:, index] = step_f
        tiny = np.max(np.abs(step_f), axis=1, initial=0.0) <= _STEP_TOL
        # The Newton decrement: how far the quadratic model says the objective can still rise.
        decrement = np.einsum("ri,ri->r", score_f, step_f)
        # Step halving: the full step, halved until the objective does not fall (by more than
        # its rounding: at the maximum a step can change it by less than one unit in the last
        # place, either way).
        old = value[active]
        floor = old - 1e-13 * np.maximum(1.0, np.abs(old))
        scale = np.ones(len(ba))
        trial = ba + step
        new = _objective(za, ya, trial, firth)
        for _ in range(_MAX_HALVINGS):
            worse = ~(new >= floor) & ~small
            if not worse.any():
                break
            scale[worse] /= 2.0
            trial[worse] = ba[worse] + scale[worse, None] * step[worse]
            new[worse] = _objective(za[worse], ya[worse], trial[worse], firth)
        stuck = ~(new >= floor)
        trial[stuck | small] = ba[stuck | small]
        new[stuck | small] = old[stuck | small]
        beta[active] = trial
        value[active] = new
        ids = np.flatnonzero(active)
        finished = small | tiny | stuck
        converged[ids] = (
            small | tiny | (stuck & (decrement <= 1e-12 * np.maximum(1.0, np.abs(old))))
        )
        done[ids[finished]] = True
    return beta, value, converged


# --------------------------------------------------------------------------- separation


def detect_separation(z: Sequence[Sequence[float]] | Array, y: Sequence[int] | Array,
                      names: Sequence[str]) -> Separation:  # fmt: skip
    """Separation of the outcomes ``y`` (0/1) by the full-rank design ``z`` (first column the
    intercept, named ``names``): first Stiemke's alternative (`_stiemke`, p rows,
    cheap at any n), and only when that finds separation the linear programme (Konis, 2007)
    for which comparisons and terms."""
    design = np.asarray(z, dtype=np.float64)
    outcome = np.asarray(y, dtype=np.float64)
    signed, scaled = _signed_and_scaled(design, outcome)
    by = _single_separators(signed, names)
    if _stiemke(scaled):
        return Separation("none", 0, (), by)
    return _konis(scaled, names, by)


def _signed_and_scaled(design: Array, outcome: Array) -> tuple[Array, Array]:
    """Each row signed by its outcome, and that scaled: columns to max |x| = 1 and rows to
    unit length (the cone {b: A b >= 0} keeps its shape up to a diagonal map, and the box
    bounds every margin the same way)."""
    signed = design * (2.0 * outcome - 1.0)[:, None]
    scaled = signed / np.maximum(np.max(np.abs(signed), axis=0), 1e-300)
    scaled /= np.linalg.norm(scaled, axis=1, keepdims=True)
    return signed, scaled


def _single_separators(signed: Array, names: Sequence[str]) -> tuple[tuple[str, int], ...]:
    by = []
    for j, name in enumerate(names):
        column = signed[:, j]
        if column.any() and (column >= 0).all():
            by.append((name, 1))
        elif column.any() and (column <= 0).all():
            by.append((name, -1))
    return tuple(by)


def _stiemke(scaled: Array) -> bool:
    """True when no direction b has ``scaled @ b >= 0`` with some entry > 0 (no comparison can
    be decided: the picks are not separated), by Stiemke's alternative (1915): exactly one of
    that b and a w > 0 (scaled here to w >= 1) with ``scaled.T @ w = 0`` exists. A linear
    programme with p rows, not n: cheap at any n. Konis's programme decides no comparison
    exactly when there is no such b, so the two agree on "none" whatever the rank."""
    from scipy import optimize, sparse

    n, p = scaled.shape
    found = optimize.linprog(
        np.ones(n),
        A_eq=sparse.csr_matrix(scaled.T),
        b_eq=np.zeros(p),
        bounds=(1.0, None),
        method="highs",
    )
    return bool(found.status == 0)


def _konis(scaled: Array, names: Sequence[str], by: tuple[tuple[str, int], ...]) -> Separation:
    """Konis's (2007) linear programme on the signed, scaled design: maximise ``sum s_i``
    subject to ``scaled b >= s``, ``0 <= s <= 1``; which comparisons a separating direction
    decides, and which terms are infinite."""
    from scipy import linalg, optimize, sparse

    n, p = scaled.shape
    # The constraints held sparse: as a dense matrix the identity block is n x n (7 GB at
    # 30,000 trials); HiGHS is handed the same nonzero entries either way.
    found = optimize.linprog(
        np.concatenate([np.zeros(p), -np.ones(n)]),
        A_ub=sparse.hstack(
            [sparse.csr_array(-scaled), sparse.identity(n, format="csr")], format="csr"
        ),
        b_ub=np.zeros(n),
        bounds=[(-_LP_BOX, _LP_BOX)] * p + [(0.0, 1.0)] * n,
        method="highs",
    )
    decided = np.asarray(found.x[p:] > _LP_DECIDED) if found.status == 0 else np.zeros(n, bool)
    count = int(decided.sum())
    if count == 0:
        return Separation("none", 0, (), by)
    if count == n:
        terms = list(range(p))
    else:
        # Every separating direction lies in the null space of the undecided rows (each of them
        # is zero along every such direction), and spans it.
        null = linalg.null_space(scaled[~decided])
        terms = [j for j in range(p) if np.linalg.norm(null[j]) > 1e-8]
    signs = tuple(_infinite_sign(scaled, decided, j) for j in terms)
    status = "complete" if count == n else "quasi"
    return Separation(status, count, tuple(names[j] for j in terms), by, signs)


def _infinite_sign(scaled: Array, decided: npt.NDArray[np.bool_], j: int) -> int:
    """+1 (-1) when every separating direction has coefficient j >= 0 (<= 0), 0 when they go
    both ways: the largest and smallest b_j over the cone, by two linear programmes."""
    from scipy import optimize

    p = scaled.shape[1]
    kept = scaled[~decided]
    reach = []
    for sense in (-1.0, 1.0):
        c = np.zeros(p)
        c[j] = sense
        found = optimize.linprog(
            c,
            A_ub=-scaled[decided],
            b_ub=np.zeros(int(decided.sum())),
            A_eq=kept if len(kept) else None,
            b_eq=np.zeros(len(kept)) if len(kept) else None,
            bounds=[(-1.0, 1.0)] * p,
            method="highs",
        )
        reach.append(sense * found.fun if found.status == 0 else 0.0)
    up, down = reach[0] > 1e-7, reach[1] < -1e-7
    return 0 if up == down else (1 if up else -1)


# --------------------------------------------------------------------------- the result


def _columns(x: Array) -> tuple[list[int], dict[int, str], set[int]]:
    """The covariates kept for the fit (in order, each adding rank to the intercept and the
    ones before it), the status of each one left out, and what an aliased covariate is
    confounded with: the intercept (-1) and the kept covariates it is a combination of."""
    kept: list[int] = []
    left: dict[int, str] = {}
    confounded: set[int] = set()
    n = x.shape[0]
    for j in range(x.shape[1]):
        if not np.any(x[:, j]):
            left[j] = "no variation"
            continue
        basis = np.column_stack([np.ones(n), x[:, kept]])
        weights, *_ = np.linalg.lstsq(basis, x[:, j], rcond=None)
        if np.allclose(basis @ weights, x[:, j], rtol=0.0, atol=1e-12):
            left[j] = "aliased"
            involved = np.flatnonzero(np.abs(weights) > 1e-9)
            confounded |= {-1 if k == 0 else kept[k - 1] for k in involved}
        else:
            kept.append(j)
    return kept, left, confounded


def _profile(
    z: Array,
    y: Array,
    firth: bool,
    beta: Array,
    value: float,
    j: int,
    se: float,
    q: float,
    sides: tuple[float, ...] = (-1.0, 1.0),
) -> tuple[float, float]:
    """The profile (penalised) likelihood interval of coefficient ``j``: where
    2 (l_max - l_profile(b)) reaches ``q`` on each of ``sides`` (-1 below, +1 above); infinite
    on a side not asked for, or when the crossing is further than the limit."""
    from scipy import optimize

    free = np.ones(z.shape[1], dtype=bool)
    free[j] = False
    bounds = {-1.0: -math.inf, 1.0: math.inf}
    step0 = se if math.isfinite(se) and se > 0 else 1.0
    for side in sides:

        def gap(d: float, side: float = side) -> float:
            # Every constrained fit starts from the maximum, so that a value never depends on
            # the order the root finder asks for them in.
            start = beta.copy()
            start[j] = beta[j] + side * d
            _, profiled, _ = _fit(z[None], y[None], firth=firth, start=start[None], free=free)
            found = 2.0 * (value - float(profiled[0])) - q
            return float(np.clip(found, -1e6, 1e6)) if math.isfinite(found) else 1e6

        near, far = 0.0, step0
        while gap(far) < 0:
            near, far = far, 2.0 * far
            if far > _PROFILE_LIMIT:
                break
        if far > _PROFILE_LIMIT:
            continue
        root = optimize.brentq(gap, near, far, xtol=1e-12, rtol=1e-13)
        bounds[side] = float(beta[j] + side * root)
    return bounds[-1.0], bounds[1.0]


def likelihood_ratio_statistics(
    z: Array, y: Array, *, firth: bool, style: npt.NDArray[np.bool_]
) -> tuple[Array, npt.NDArray[np.bool_]]:
    """For a stack of designs ``z`` (r, n, p) and outcomes ``y`` (r, n): the (penalised)
    likelihood-ratio statistic of the ``style`` columns jointly against none, and whether both
    fits converged. Vectorised, so that a test can simulate the test's size."""
    start = np.zeros((z.shape[0], z.shape[2]))
    everything = np.ones(z.shape[2], dtype=bool)
    _, full, ok_full = _fit(z, y, firth=firth, start=start, free=everything)
    _, reduced, ok_reduced = _fit(z, y, firth=firth, start=start, free=~style)
    return np.maximum(2.0 * (full - reduced), 0.0), ok_full & ok_reduced


def _check(y: Sequence[int] | Array, x: Sequence[Sequence[float]] | Array,
           names: Sequence[str]) -> tuple[Array, Array]:  # fmt: skip
    outcome = np.asarray(y, dtype=np.float64)
    design = np.asarray(x, dtype=np.float64)
    if outcome.ndim != 1 or outcome.size == 0:
        raise ValueError(f"y must be a non-empty sequence of 0 and 1, got shape {outcome.shape}")
    if not np.isin(outcome, (0.0, 1.0)).all():
        raise ValueError("y must hold only 0 (B preferred) and 1 (A preferred)")
    if design.ndim != 2 or design.shape != (outcome.size, len(names)):
        raise ValueError(
            f"x must have one row per comparison and one column per name: shape "
            f"{(outcome.size, len(names))}, got {design.shape}"
        )
    if not np.isfinite(design).all():
        raise ValueError("x must hold finite numbers")
    if STRENGTH in names or len(set(names)) != len(names):
        raise ValueError(f"names must be distinct and not {STRENGTH!r}, got {list(names)}")
    return outcome, design


def equal_style_outside(x: Sequence[Sequence[float]] | Array) -> bool:
    """Whether x = 0 (equal style) lies outside the convex hull of the rows of ``x``: no convex
    combination of the comparisons' style differences is 0, so a value at equal style is an
    extrapolation. False when ``x`` has no columns."""
    from scipy import optimize

    rows = np.asarray(x, dtype=np.float64)
    if rows.ndim != 2 or rows.shape[1] == 0 or rows.shape[0] == 0:
        return False
    n = rows.shape[0]
    found = optimize.linprog(
        np.zeros(n),
        A_eq=np.vstack([rows.T, np.ones(n)]),
        b_eq=np.concatenate([np.zeros(rows.shape[1]), [1.0]]),
        bounds=[(0.0, None)] * n,
        method="highs",
    )
    return bool(found.status == 2)  # infeasible


def _one_signed(x: Array, names: Sequence[str]) -> tuple[tuple[str, int], ...]:
    """Each column whose entries are all positive (+1) or all negative (-1)."""
    signed = []
    for j, name in enumerate(names):
        if (x[:, j] > 0).all():
            signed.append((name, 1))
        elif (x[:, j] < 0).all():
            signed.append((name, -1))
    return tuple(signed)


def _withheld(varies: bool, separation: Separation, extrapolated: bool) -> str | None:
    """Why the test of the style terms is not reported (module docstring), or None."""
    if not varies:
        return None
    if separation.status == "complete":
        return "separated"
    return "extrapolated" if extrapolated else None


def _nan_interval() -> Interval:
    return Interval(math.nan, math.nan, math.nan)


def style_control(
    y: Sequence[int] | Array,
    x: Sequence[Sequence[float]] | Array,
    names: Sequence[str],
    *,
    confidence_level: float = 0.95,
) -> StyleControlResult:
    """Fit the style-control model to ``y`` (1: A preferred) and the A-minus-B style differences
    ``x`` (one column per name); see the module docstring for the model and its conventions."""
    from scipy import stats

    outcome, design = _check(y, x, names)
    level = _check_confidence(confidence_level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    n = outcome.size
    kept, left, confounded = _columns(design)
    z = np.column_stack([np.ones(n), design[:, kept]])
    terms = [STRENGTH, *(names[j] for j in kept)]
    separation = detect_separation(z, outcome, terms)
    firth = separation.separated
    style_mask = np.array([False] + [True] * len(kept))
    extrapolated = (-1 not in confounded) and equal_style_outside(design[:, kept])
    withheld = _withheld(bool(kept), separation, extrapolated)
    lr_test = None
    if kept and withheld is None:
        # Always Firth's penalised likelihood ratio: the plain one rejects too often at the
        # sizes a blind test has (see the module docstring).
        statistic, _ = likelihood_ratio_statistics(
            z[None], outcome[None], firth=True, style=style_mask
        )
        value = float(statistic[0])
        lr_test = LikelihoodRatioTest(
            value, len(kept), float(stats.chi2.sf(value, len(kept))), penalised=True
        )
    everything = np.ones(len(terms), dtype=bool)
    beta_stack, value_stack, ok = _fit(
        z[None], outcome[None], firth=firth, start=np.zeros((1, len(terms))), free=everything
    )
    beta, value, converged = beta_stack[0], float(value_stack[0]), bool(ok[0])
    _, information = _score_and_information(z[None], outcome[None], beta[None], firth)
    se = np.sqrt(np.clip(np.diag(np.linalg.pinv(information[0])), 0.0, None))
    q = float(stats.chi2.ppf(level, 1))
    estimable = converged and separation.status != "complete"
    fitted: list[tuple[float, float, float, float, str]] = []
    for j, term in enumerate(terms):
        status = "separated" if term in separation.terms else "estimated"
        if j == 0 and extrapolated and estimable:
            # Equal style is outside the data: no number, however the fit went.
            fitted.append((math.nan, math.nan, math.nan, math.nan, "extrapolated"))
        elif (kept[j - 1] if j else -1) in confounded:
            # An aliased covariate is a combination of this term and others: their effects
            # cannot be told apart (every comparison had the same style difference, say).
            fitted.append((math.nan, math.nan, math.nan, math.nan, "confounded"))
        elif not estimable:
            fitted.append((math.nan, math.nan, math.nan, math.nan, status))
        else:
            # A separated term's likelihood runs off to infinity on one side (or both): that
            # side is unbounded, and only the other is profiled.
            sign = dict(zip(separation.terms, separation.infinite, strict=True)).get(term)
            sides = (-1.0, 1.0) if sign is None else ((-float(sign),) if sign else ())
            lo, hi = _profile(z, outcome, firth, beta, value, j, float(se[j]), q, sides)
            fitted.append((float(beta[j]), float(se[j]), lo, hi, status))
    coefficients = []
    for j, name in enumerate(names):
        if j in left:
            coefficients.append(
                StyleCoefficient(name, math.nan, math.nan, math.nan, math.nan, left[j])
            )
        else:
            estimate, error, lo, hi, status = fitted[1 + kept.index(j)]
            coefficients.append(StyleCoefficient(name, estimate, error, lo, hi, status))
    a_estimate, a_se, a_lo, a_hi, a_status = fitted[0]
    strength = Interval(a_estimate, a_lo, a_hi)
    return StyleControlResult(
        n=n,
        a_wins=int(outcome.sum()),
        differing=tuple(int(k) for k in np.count_nonzero(design, axis=0)),
        a_strength=strength,
        a_strength_se=a_se,
        a_strength_status=a_status,
        a_win_rate_adjusted=Interval(
            *(float(_expit(np.array(v))) for v in (a_estimate, a_lo, a_hi))
        ),
        coefficients=tuple(coefficients),
        lr_test=lr_test,
        separation=separation,
        method=(
            "Firth's penalised likelihood (the picks are separated)"
            if firth
            else "maximum likelihood"
        ),
        interval_method=("profile penalised likelihood" if firth else "profile likelihood"),
        confidence_level=level,
        converged=converged,
        lr_test_withheld=withheld,
        side_confounded=_one_signed(design[:, kept], [names[j] for j in kept]),
    )
