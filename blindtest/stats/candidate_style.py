"""Style control for several candidates: a Bradley-Terry model of the untied comparisons with
one strength per candidate and style-difference covariates (Chatbot Arena's style control: Li,
Angelopoulos and Chiang, 2024, "Does style matter?").

**Model.** Untied comparison c shows candidate i on the left and j on the right; y_c = 1 when
the left answer was preferred, 0 when the right one was, and::

    logit P(y_c = 1) = s_i - s_j + sum_k g_k x_ck

with x_ck the left answer's style minus the right answer's on covariate k, already normalised
by the caller (`blindtest.analysis.candidate_style` uses the two-sided analysis's
``(f_L - f_R) / (f_L + f_R)``, so that x = 0 means equal style). Without the style terms this is
the ranking's Bradley-Terry model (`blindtest.stats.ranking`) without ties; with them, s_i is
candidate i's strength with style held equal. A difference d of strengths means the first is
preferred in 1/(1+e^-d) of the comparisons between answers of equal style. Position is not a
term (the design balances it; the position-bias gate watches it), as in the ranking. It is a
logistic regression without intercept on a design whose candidate columns are +1 (left), -1
(right), 0, which is how the reference values are computed (statsmodels Logit).

**Anchor.** The mean strength is 0, or a named candidate (the reference) is 0, as the ranking;
the mean is over the candidates whose strength can be estimated (below), and a reference that
cannot be gives way to that mean (``anchor`` says "mean").

**A candidate's strength that cannot be estimated** (``status`` "extrapolated", no number): its
strength is its chance of being preferred at equal style, and when equal style lies outside its
comparisons' style differences (taken from its side; outside their convex hull, the two-sided
analysis's `blindtest.stats.style.equal_style_outside`: its answer was longer in every
comparison it was in, say), no comparison shows it at equal style and any number would
extrapolate the linear style terms beyond the data; preferring it and preferring that style
cannot be told apart. The fit keeps its comparisons (they still show, within the data, how the
size of a style difference moves the picks), but its strength is not given, and it takes no
part in the mean anchor, so its extrapolated value moves no other candidate's strength; the
order and the differences are of the candidates with a strength. When fewer than two have one,
none is given (one strength at the mean of one says nothing). The check is per candidate, on
its own comparisons; a difference between two estimable candidates that only a chain through
an extrapolated one connects is not checked separately.

**Fit.** Maximum likelihood by Newton's method with step halving (`blindtest.stats.style`'s,
with its stopping rules).

**When there is no estimate** (said in words in ``problem``, nothing numeric given): fewer
than two candidates met in an untied comparison, the candidates fall into parts never compared
with each other (their strengths are not on one scale), or the picks are separated (Albert and
Anderson, 1984): some direction of the coefficients puts every comparison on its observed side,
the likelihood keeps rising along it and the maximum-likelihood estimate is infinite. The
separation check is `blindtest.stats.style.detect_separation`'s exact linear programme (Konis,
2007), in sparse form, and the terms it finds infinite are named. A style covariate that never
varies ("no variation") or is a combination of the candidate columns and earlier covariates
("aliased") gets no coefficient.

**Intervals: Wald's**, estimate +/- z se, named as such. Each strength and coefficient at the
confidence level; the differences of strengths at the family's level, Bonferroni across the
k(k-1)/2 pairs, and a difference is *separated* when its interval excludes 0. Two standard
errors are given: ``se`` from the inverse Fisher information (the comparison is the unit,
comparisons treated as independent), and ``se_prompt``, the cluster-robust (sandwich) one with
every comparison of a prompt in one cluster (the prompt is the unit), with statsmodels' small-
sample factor G/(G-1) (N-1)/(N-K) (G prompts, N comparisons, K free coefficients). The intervals
use ``se_prompt``, since comparisons on one prompt share its difficulty and the same answers;
with one prompt, or as many free coefficients as comparisons, there is no clustered standard
error and the intervals use ``se`` (``interval_unit`` says which). A prompt bootstrap as the
ranking's would need one logistic fit per resample over every comparison (2,000 fits of 45,000
rows at the scale the tool promises), which is not cheap enough here.

Pure: arrays in, a frozen result out; no file, no seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from blindtest.stats.intervals import Interval, result_to_dict
from blindtest.stats.style import (
    _LP_BOX,
    _LP_DECIDED,
    _fit,
    _one_signed,
    _stiemke,
    equal_style_outside,
)

__all__ = [
    "CandidateStyleResult",
    "StyleDifference",
    "StyleStrength",
    "StyleTerm",
    "candidate_style_control",
]

Array = npt.NDArray[np.float64]

INTERVAL_METHOD = "Wald"


@dataclass(frozen=True, slots=True)
class StyleStrength:
    """One candidate's strength with style held equal (log-odds, anchored), its standard
    errors (``se``: comparisons as the unit; ``se_prompt``: prompt-clustered) and its Wald
    interval (from ``se_prompt`` when there is one). ``status``: "estimated"; "extrapolated"
    (equal style lies outside its comparisons' style differences: no number, module doc);
    "not estimated" (the model has no estimate, or no other candidate has a strength to set
    it against). ``comparisons`` and ``wins``: its untied comparisons and how many it won;
    ``confounded``: each style covariate on one side in all of them, from its side (+1: its
    answer had more of it in every one, -1: less)."""

    candidate: str
    strength: Interval
    se: float
    se_prompt: float
    status: str
    comparisons: int
    wins: int
    confounded: tuple[tuple[str, int], ...]

    def to_dict(self) -> dict[str, Any]:
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class StyleTerm:
    """One style covariate's coefficient: log-odds per unit of the normalised left-minus-right
    difference. ``status``: "estimated", "no variation", "aliased" (no coefficient), or
    "not estimated" (the model has no estimate)."""

    name: str
    coefficient: Interval
    se: float
    se_prompt: float
    status: str

    def to_dict(self) -> dict[str, Any]:
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class StyleDifference:
    """``first`` minus ``second`` with style held equal, its Wald interval at the family's
    level (Bonferroni across every pair: z at 1 - (1 - level) / (2 m), m = k(k-1)/2, from the
    prompt-clustered standard error when there is one), and whether it excludes 0."""

    first: str
    second: str
    difference: Interval
    separated: bool

    def to_dict(self) -> dict[str, Any]:
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class CandidateStyleResult:
    """The style-controlled Bradley-Terry fit of ``n`` untied comparisons over ``prompts``
    prompts. ``strengths`` in the candidates' order; all NaN, and ``problem`` set (words),
    when there is no estimate; NaN for a candidate whose strength cannot be estimated
    (``extrapolated`` names them; module doc). ``separated_terms``: the terms whose ML
    estimate is infinite (candidate names and covariate names). ``interval_unit``: "prompt"
    (prompt-clustered standard errors) or "comparison"."""

    candidates: tuple[str, ...]
    anchor: str
    n: int
    prompts: int
    strengths: tuple[StyleStrength, ...]
    terms: tuple[StyleTerm, ...]
    differences: tuple[StyleDifference, ...]
    log_likelihood: float
    problem: str | None
    separation: str
    separated_terms: tuple[str, ...]
    #: Each style covariate that separates the picks on its own: +1 when every comparison in
    #: which it differed went to the side with more of it, -1 to the side with less.
    separated_by: tuple[tuple[str, int], ...]
    converged: bool
    confidence_level: float
    interval_method: str
    interval_unit: str
    #: The candidates whose strength is "extrapolated" (equal style outside their comparisons).
    extrapolated: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return result_to_dict(self)

    def order(self) -> tuple[str, ...]:
        """The candidates with a strength, strongest first with style held equal (ties by the
        given order); empty when there is no estimate."""
        if self.problem is not None:
            return ()
        ranked = sorted(
            (m for m, s in enumerate(self.strengths) if s.status == "estimated"),
            key=lambda m: (-self.strengths[m].strength.estimate, m),
        )
        return tuple(self.strengths[m].candidate for m in ranked)


def _components(k: int, first: npt.NDArray[np.int64], second: npt.NDArray[np.int64]) -> int:
    """The number of connected parts of the graph of who met whom (untied)."""
    parent = list(range(k))

    def root(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for i, j in zip(first.tolist(), second.tolist(), strict=True):
        parent[root(i)] = root(j)
    return len({root(v) for v in range(k)})


def _style_columns(base: Array, x: Array) -> tuple[list[int], dict[int, str]]:
    """The covariates kept (each adding rank to the candidate columns and the ones before)
    and the status of each one left out."""
    kept: list[int] = []
    left: dict[int, str] = {}
    for j in range(x.shape[1]):
        if not np.any(x[:, j]):
            left[j] = "no variation"
            continue
        basis = np.column_stack([base, x[:, kept]])
        weights, *_ = np.linalg.lstsq(basis, x[:, j], rcond=None)
        if np.allclose(basis @ weights, x[:, j], rtol=0.0, atol=1e-12):
            left[j] = "aliased"
        else:
            kept.append(j)
    return kept, left


def _nan_result(
    candidates: tuple[str, ...],
    names: Sequence[str],
    anchor: str,
    n: int,
    prompts: int,
    problem: str,
    level: float,
    separation: str = "none",
    separated: tuple[str, ...] = (),
    by: tuple[tuple[str, int], ...] = (),
    left: dict[int, str] | None = None,
    tallies: tuple[tuple[int, int, tuple[tuple[str, int], ...]], ...] | None = None,
) -> CandidateStyleResult:
    nan = Interval(math.nan, math.nan, math.nan)
    counts = tallies or tuple((0, 0, ()) for _ in candidates)
    return CandidateStyleResult(
        candidates=candidates,
        anchor=anchor,
        n=n,
        prompts=prompts,
        strengths=tuple(
            StyleStrength(c, nan, math.nan, math.nan, "not estimated", *counts[m])
            for m, c in enumerate(candidates)
        ),
        terms=tuple(
            StyleTerm(name, nan, math.nan, math.nan, (left or {}).get(j, "not estimated"))
            for j, name in enumerate(names)
        ),
        differences=(),
        log_likelihood=math.nan,
        problem=problem,
        separation=separation,
        separated_terms=separated,
        separated_by=by,
        converged=False,
        confidence_level=level,
        interval_method=INTERVAL_METHOD,
        interval_unit="prompt",
    )


def _check(
    candidates: Sequence[str],
    first: Sequence[int] | npt.NDArray[np.int64],
    second: Sequence[int] | npt.NDArray[np.int64],
    y: Sequence[int] | Array,
    x: Sequence[Sequence[float]] | Array,
    names: Sequence[str],
    prompt: Sequence[int] | npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], Array, Array, npt.NDArray[np.int64]]:
    k = len(candidates)
    if k < 2 or len(set(candidates)) != k:
        raise ValueError("style control needs two or more distinct candidates")
    i = np.asarray(first, dtype=np.int64)
    j = np.asarray(second, dtype=np.int64)
    outcome = np.asarray(y, dtype=np.float64)
    n = outcome.size
    design = np.asarray(x, dtype=np.float64).reshape(n, len(names))
    group = np.asarray(prompt, dtype=np.int64)
    if i.shape != (n,) or j.shape != (n,) or group.shape != (n,):
        raise ValueError("first, second, y and prompt must have one entry per comparison")
    if n and (i.min() < 0 or j.min() < 0 or i.max() >= k or j.max() >= k or (i == j).any()):
        raise ValueError("first and second must be different candidate indices in 0..k-1")
    if not np.isin(outcome, (0.0, 1.0)).all():
        raise ValueError("y must hold only 0 (right preferred) and 1 (left preferred)")
    if not np.isfinite(design).all():
        raise ValueError("x must hold finite numbers")
    if len(set(names)) != len(names) or set(names) & set(candidates):
        raise ValueError("covariate names must be distinct and differ from the candidates")
    return i, j, outcome, design, group


def _clustered(
    z: Array, y: Array, beta: Array, group: npt.NDArray[np.int64], bread: Array
) -> Array:
    """The prompt-clustered sandwich covariance with statsmodels' small-sample factor."""
    n, p = z.shape
    eta = z @ beta
    residual = y - 1.0 / (1.0 + np.exp(-eta))
    clusters = np.unique(group, return_inverse=True)[1]
    g = int(clusters.max()) + 1
    sums = np.zeros((g, p))
    np.add.at(sums, clusters, z * residual[:, None])
    meat = sums.T @ sums
    factor = g / (g - 1) * (n - 1) / (n - p)
    cov: Array = factor * bread @ meat @ bread
    return cov


def _separation(z: Array, y: Array, names: Sequence[str]) -> tuple[str, int, tuple[str, ...]]:
    """(status, comparisons decided, terms with an infinite ML estimate). First Stiemke's
    alternative (`blindtest.stats.style._stiemke`: p rows, fast); only when that finds
    separation, the linear programme of `blindtest.stats.style.detect_separation` (Konis,
    2007) for which comparisons and terms, written with sparse matrices so that tens of
    thousands of comparisons fit in memory (the dense form holds an n x n identity), and the
    null space of the undecided rows from the SVD of QR's R."""
    from scipy import optimize, sparse

    n, p = z.shape
    signed = z * (2.0 * y - 1.0)[:, None]
    scaled = signed / np.maximum(np.max(np.abs(signed), axis=0), 1e-300)
    scaled /= np.maximum(np.linalg.norm(scaled, axis=1, keepdims=True), 1e-300)
    if _stiemke(scaled):
        return "none", 0, ()
    found = optimize.linprog(
        np.concatenate([np.zeros(p), -np.ones(n)]),
        A_ub=sparse.hstack([sparse.csr_matrix(-scaled), sparse.identity(n, format="csr")]),
        b_ub=np.zeros(n),
        bounds=[(-_LP_BOX, _LP_BOX)] * p + [(0.0, 1.0)] * n,
        method="highs",
    )
    decided = np.asarray(found.x[p:] > _LP_DECIDED) if found.status == 0 else np.zeros(n, bool)
    count = int(decided.sum())
    if count == 0:
        return "none", 0, ()
    if count == n:
        return "complete", n, tuple(names)
    # Every separating direction lies in the null space of the undecided rows.
    kept = scaled[~decided]
    # The SVD of QR's R has the same singular values and right vectors, without an n x n U.
    square = np.linalg.qr(kept, mode="r") if kept.shape[0] >= p else kept
    _, singular, vh = np.linalg.svd(square, full_matrices=True)
    rank = int(np.sum(singular > 1e-10 * max(1.0, float(singular.max(initial=0.0)))))
    null = vh[rank:].T
    terms = tuple(names[j] for j in range(p) if np.linalg.norm(null[j]) > 1e-8)
    return "quasi", count, terms


def _alone(x: Array, y: Array, names: Sequence[str]) -> tuple[tuple[str, int], ...]:
    """The covariates that separate the picks on their own, with the side they favour."""
    signed = x * (2.0 * y - 1.0)[:, None]
    out = []
    for j, name in enumerate(names):
        column = signed[:, j]
        if column.any() and (column >= 0).all():
            out.append((name, 1))
        elif column.any() and (column <= 0).all():
            out.append((name, -1))
    return tuple(out)


def _separation_words(status: str, determined: int, terms: Sequence[str], n: int) -> str:
    infinite = list(terms)
    how = "every comparison" if status == "complete" else f"{determined} of the {n} comparisons"
    return (
        f"the picks are separated: one weighting of {', '.join(infinite)} puts {how} on the "
        "side that was preferred, so the likelihood keeps rising and no finite estimate "
        f"exists (the maximum-likelihood estimate of {'it' if len(infinite) == 1 else 'them'} "
        "is infinite); no strengths are given"
    )


def _terms(
    names: Sequence[str],
    left: dict[int, str],
    kept: list[int],
    estimates: Array,
    se: Array,
    se_prompt: Array,
    clustered: bool,
    quantile: float,
) -> tuple[StyleTerm, ...]:
    terms = []
    for c, name in enumerate(names):
        if c in left:
            nan = Interval(math.nan, math.nan, math.nan)
            terms.append(StyleTerm(name, nan, math.nan, math.nan, left[c]))
            continue
        r = kept.index(c)
        terms.append(
            StyleTerm(
                name,
                _wald(float(estimates[r]), float(se_prompt[r]), quantile),
                float(se[r]),
                float(se_prompt[r]) if clustered else math.nan,
                "estimated",
            )
        )
    return tuple(terms)


def _differences(
    names: tuple[str, ...], s: Array, to_s: Array, cov: Array, level: float, among: Sequence[int]
) -> tuple[StyleDifference, ...]:
    """Every pair of the candidates ``among`` (those with a strength), Bonferroni over them."""
    from scipy import stats

    pairs = [(a, b) for n_a, a in enumerate(among) for b in among[n_a + 1 :]]
    if not pairs:
        return ()
    quantile = float(stats.norm.ppf(1.0 - (1.0 - level) / (2.0 * len(pairs))))
    out = []
    for a, b in pairs:
        contrast = to_s[a] - to_s[b]
        se = math.sqrt(max(float(contrast @ cov @ contrast), 0.0))
        found = _wald(float(s[a] - s[b]), se, quantile)
        out.append(StyleDifference(names[a], names[b], found, found.lo > 0 or found.hi < 0))
    return tuple(out)


def _own_sides(k: int, i: npt.NDArray[np.int64], j: npt.NDArray[np.int64], x: Array) -> list[Array]:
    """Per candidate, the style differences of its comparisons taken from its side (its
    answer's minus the other's)."""
    return [np.concatenate([x[i == m], -x[j == m]]) for m in range(k)]


def _surely_inside(rows: Array) -> bool:
    """True when 0 is surely inside the convex hull of ``rows``: some row lies in every open
    orthant. (0 is outside exactly when some a has a.r > 0 for every row r; the open orthant
    of signs -sign(a), with any sign where a is 0, lies wholly in a.r < 0, so a row there rules
    every a out.) A cheap pass before the linear programme, which decides the rest: at 45,000
    comparisons over 10 candidates the ten programmes took a third of a second."""
    if rows.shape[1] == 0 or rows.shape[1] > 8:
        return False
    signs = np.sign(rows)
    seen = {tuple(r) for r in np.unique(signs, axis=0).tolist()}
    patterns = np.array(np.meshgrid(*[[-1.0, 1.0]] * rows.shape[1])).reshape(rows.shape[1], -1).T
    return all(tuple(pattern) in seen for pattern in patterns.tolist())


def _tallies(
    k: int,
    i: npt.NDArray[np.int64],
    j: npt.NDArray[np.int64],
    outcome: Array,
    own: Sequence[Array],
    names: Sequence[str],
) -> tuple[tuple[int, int, tuple[tuple[str, int], ...]], ...]:
    """Per candidate: (untied comparisons, wins, covariates one-signed from its side)."""
    return tuple(
        (
            int(np.count_nonzero(i == m) + np.count_nonzero(j == m)),
            int(outcome[i == m].sum() + (1.0 - outcome[j == m]).sum()),
            _one_signed(own[m], names) if own[m].shape[0] else (),
        )
        for m in range(k)
    )


def _anchoring(
    p: int, free_candidates: Sequence[int], anchor: str | None, outside: Sequence[bool]
) -> tuple[Array, str, list[int]]:
    """(the map from the coefficients to the anchored strengths, the anchor's name, the
    candidates with a strength). Strengths: s = A beta, with the dropped candidate at 0, then
    anchored: the reference at 0 is the dropped one already; the mean is over the candidates
    with a strength, so that an extrapolated one moves none of the others, and a reference
    whose strength is extrapolated gives way to it. Equal style outside a candidate's
    comparisons leaves it without a strength (module doc); with fewer than two left none has
    one (a strength is only ever against another's)."""
    k = len(outside)
    estimable = [m for m in range(k) if not outside[m]]
    if len(estimable) < 2:
        estimable = []
    to_s = np.zeros((k, p))
    to_s[list(free_candidates), np.arange(k - 1)] = 1.0
    dropped = next(m for m in range(k) if m not in free_candidates)
    if anchor is not None and not outside[dropped]:
        return to_s, anchor, estimable
    if estimable:
        to_s = to_s - to_s[estimable].mean(axis=0, keepdims=True)
    return to_s, "mean", estimable


def _strength(
    name: str,
    estimate: float,
    se: float,
    se_prompt: float,
    quantile: float,
    tally: tuple[int, int, tuple[tuple[str, int], ...]],
    extrapolated: bool = False,
) -> StyleStrength:
    """One candidate's strength (the Wald interval from ``se_prompt``, or ``se`` without it),
    or, with a NaN estimate, none ("extrapolated" or "not estimated")."""
    if math.isnan(estimate):
        nan = Interval(math.nan, math.nan, math.nan)
        status = "extrapolated" if extrapolated else "not estimated"
        return StyleStrength(name, nan, math.nan, math.nan, status, *tally)
    spread = se_prompt if math.isfinite(se_prompt) else se
    return StyleStrength(
        name,
        _wald(float(estimate), float(spread), quantile),
        float(se),
        float(se_prompt),
        "estimated",
        *tally,
    )


def _wald(estimate: float, se: float, quantile: float) -> Interval:
    return Interval(estimate, estimate - quantile * se, estimate + quantile * se)


def candidate_style_control(
    candidates: Sequence[str],
    first: Sequence[int] | npt.NDArray[np.int64],
    second: Sequence[int] | npt.NDArray[np.int64],
    y: Sequence[int] | Array,
    x: Sequence[Sequence[float]] | Array,
    names: Sequence[str],
    prompt: Sequence[int] | npt.NDArray[np.int64],
    *,
    anchor: str | None = None,
    confidence_level: float = 0.95,
) -> CandidateStyleResult:
    """Fit the model (module doc) to untied comparisons: ``first``/``second`` the left and right
    candidates' indices, ``y`` 1 when the left was preferred, ``x`` the left-minus-right style
    differences (one column per name), ``prompt`` each comparison's prompt (any integer label:
    the clusters of ``se_prompt``). ``anchor`` names the candidate at 0 (None: the mean)."""
    from scipy import stats

    names_t = tuple(candidates)
    if anchor is not None and anchor not in names_t:
        raise ValueError(f"anchor {anchor!r} is not a candidate")
    if not 0.0 < confidence_level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    level = float(confidence_level)
    i, j, outcome, design, group = _check(names_t, first, second, y, x, names, prompt)
    k, n = len(names_t), outcome.size
    prompts = int(np.unique(group).size)
    anchor_name = "mean" if anchor is None else anchor
    args = (names_t, names, anchor_name, n, prompts)
    counted = _tallies(k, i, j, outcome, _own_sides(k, i, j, design[:, :0]), ())
    if n == 0:
        return _nan_result(*args, "there is no untied comparison, so nothing to fit", level)
    if _components(k, i, j) > 1:
        return _nan_result(
            *args,
            "some candidates never met the rest in an untied comparison, directly or through "
            "others, so their strengths cannot be put on one scale",
            level,
            tallies=counted,
        )
    # Candidate columns: +1 left, -1 right; the anchor's column (or candidate 0's) is dropped
    # to fix the scale, and the fit re-anchored afterwards.
    dropped = 0 if anchor is None else names_t.index(anchor)
    full = np.zeros((n, k))
    full[np.arange(n), i] = 1.0
    full[np.arange(n), j] = -1.0
    free_candidates = [m for m in range(k) if m != dropped]
    base = full[:, free_candidates]
    kept, left = _style_columns(base, design)
    own = _own_sides(k, i, j, design[:, kept])
    tallies = _tallies(k, i, j, outcome, own, [names[c] for c in kept])
    z = np.column_stack([base, design[:, kept]])
    term_names = [names_t[m] for m in free_candidates] + [names[c] for c in kept]
    status, determined, infinite = _separation(z, outcome, term_names)
    if status != "none":
        return _nan_result(
            *args,
            _separation_words(status, determined, infinite, n),
            level,
            status,
            infinite,
            by=_alone(design, outcome, names),
            left=left,
            tallies=tallies,
        )
    p = z.shape[1]
    beta_stack, value, ok = _fit(
        z[None], outcome[None], firth=False, start=np.zeros((1, p)), free=np.ones(p, dtype=bool)
    )
    beta, converged = beta_stack[0], bool(ok[0])
    if not converged:
        return _nan_result(
            *args, "the fit did not converge; no strengths are given", level, tallies=tallies
        )
    outside = [not _surely_inside(rows) and equal_style_outside(rows) for rows in own]
    to_s, anchor_name, estimable = _anchoring(p, free_candidates, anchor, outside)
    eta = z @ beta
    w = 1.0 / (1.0 + np.exp(-eta)) / (1.0 + np.exp(eta))
    bread = np.linalg.pinv((z * w[:, None]).T @ z)
    clustered = prompts > 1 and n > p
    cov_prompt = _clustered(z, outcome, beta, group, bread) if clustered else bread
    quantile = float(stats.norm.ppf(0.5 + level / 2.0))

    def ses(a: Array) -> tuple[Array, Array]:
        plain = np.sqrt(np.clip(np.einsum("ri,ij,rj->r", a, bread, a), 0.0, None))
        robust = np.sqrt(np.clip(np.einsum("ri,ij,rj->r", a, cov_prompt, a), 0.0, None))
        return plain, robust

    s = to_s @ beta
    se_s, se_sp = ses(to_s)
    se_sp = se_sp if clustered else np.full(k, math.nan)
    strengths = tuple(
        _strength(names_t[m], s[m], se_s[m], se_sp[m], quantile, tallies[m])
        if m in estimable
        else _strength(names_t[m], math.nan, math.nan, math.nan, quantile, tallies[m], outside[m])
        for m in range(k)
    )
    to_g = np.zeros((len(kept), p))
    to_g[np.arange(len(kept)), k - 1 + np.arange(len(kept))] = 1.0
    terms = _terms(
        names, left, kept, beta[k - 1 :], *ses(to_g), clustered=clustered, quantile=quantile
    )
    return CandidateStyleResult(
        candidates=names_t,
        anchor=anchor_name,
        n=n,
        prompts=prompts,
        strengths=strengths,
        terms=terms,
        differences=_differences(names_t, s, to_s, cov_prompt, level, estimable),
        log_likelihood=float(value[0]),
        problem=None,
        separation="none",
        separated_terms=(),
        separated_by=(),
        converged=True,
        confidence_level=level,
        interval_method=INTERVAL_METHOD,
        interval_unit="prompt" if clustered else "comparison",
        extrapolated=tuple(names_t[m] for m in range(k) if outside[m]),
    )
