"""Pre-registered decisions: champion against challenger with a margin, and their outcomes.

**Unit and score.** The unit is the comparison: one prompt's champion answer against the
challenger's, judged blind. An LLM judge's two swap passes are one comparison (passes that
disagree read as a tie, as everywhere in blindtest); a panel's judges on one comparison count
as the mean of their scores, each 1 (the challenger preferred), 1/2 (tie) or 0. A comparison's
score is therefore a multiple of ``1 / (2 judges)`` in [0, 1], and it is tied when it equals
1/2 exactly.

**Estimands** (on the 0..1 scale, 1/2 meaning no difference):

* ``untied-share`` (default): the challenger's share of untied comparisons,
  ``theta = E[score | score != 1/2]``; with one judge, wins / (wins + losses). The tie rate
  (comparisons whose score is 1/2) is reported beside it, never folded in.
* ``mean-score``: the mean score over every comparison, a tie counting as half a win. Its null
  is composite (the tie rate is a nuisance). Never "wins plus ties".

**Rules** (``margin`` on the same scale: 0.05 means "at least 45%"):

* ``noninferior:M`` claims ``theta > 1/2 - M``; refuted when ``theta < 1/2 - M`` is shown.
* ``superior`` claims ``theta > 1/2``; refuted when ``theta < 1/2`` is shown.
* ``equivalent:M`` claims ``1/2 - M < theta < 1/2 + M`` by two one-sided tests (Schuirmann
  1987; the 1 - 2 alpha interval inside the margin); refuted when the 1 - 2 alpha interval
  lies wholly outside it (one one-sided test at alpha per direction).
* ``similar:PD0`` (triangle and pair): the existing similarity test of `similarity`, wrapped
  by `similarity_decision`.

Each claim is a one-sided test at ``alpha``; the interval is the two-sided ``1 - 2 alpha``
interval whose lower end is the one-sided ``1 - alpha`` bound the claim reads (its upper end
the bound "refuted" reads). **Outcomes**: ``shown`` (the rule's claim), ``refuted`` (the
opposite shown), ``not_shown`` (neither), with the n that would settle it at the design's
planning value (never at the observed estimate).

**Tests** (the method is chosen from the design, never from the scores):

* ``exact-binomial``: one judge, untied share. Exact binomial test conditional on the
  untied count U (given U, the challenger's untied wins are Bin(U, theta) whatever the tie
  rate, so the size is at most alpha at every tie rate); Clopper-Pearson interval.
* ``exact-unconditional``: one judge, mean score. Tango's score statistic with the exact
  unconditional p-value, the supremum over the tie rate (`mean_score`). The claim also needs
  the inverted interval to agree: these p-values are not monotone in the null value, so the
  two can differ near a bound by about 1e-4, and requiring both keeps the size below alpha.
* ``betting``: a panel (scores such as 2/3). No exact conditional test exists: given U the
  untied scores are iid on a lattice, but their law is not fixed by their mean, so the null is
  composite in every direction. The test is Waudby-Smith and Ramdas's (2024) betting test for
  a bounded mean at a fixed n (`betting`), valid for every law on [0, 1] by Ville's
  inequality; its size is shown by seeded simulation. It reads the scores in the order given
  (the design's comparison order, fixed before any answer).

Several challengers against one champion: `adjust_decisions` applies Holm (1979) across them,
to the claims' p-values and, separately, to the refutations'. Pure; no I/O.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from blindtest.stats.betting import betting_bound, betting_p_value
from blindtest.stats.binomial import lower_tail, upper_tail
from blindtest.stats.intervals import (
    Interval,
    _check_alpha,
    _check_choice,
    _check_closed,
    _check_int,
    _check_open,
    clopper_pearson,
    result_to_dict,
)
from blindtest.stats.mean_score import mean_score_interval, mean_score_p_value
from blindtest.stats.multiple import holm
from blindtest.stats.similarity import (
    SIMILARITY_PROTOCOLS,
    SimilarityProtocol,
    pc_at_pd,
    similarity_test,
)
from blindtest.stats.sizing import (
    SampleSize,
    decision_sample_size,
    similarity_sample_size,
)

__all__ = [
    "ESTIMANDS",
    "OUTCOMES",
    "RULES",
    "DecisionResult",
    "DecisionRule",
    "Planning",
    "adjust_decisions",
    "decide",
    "decide_counts",
    "interval_outcome",
    "p_value_outcome",
    "parse_rule",
    "similarity_decision",
]

Rule = Literal["noninferior", "superior", "equivalent", "similar"]
RULES: tuple[str, ...] = ("noninferior", "superior", "equivalent", "similar")
Estimand = Literal["untied-share", "mean-score"]
ESTIMANDS: tuple[str, ...] = ("untied-share", "mean-score")
Outcome = Literal["shown", "refuted", "not_shown"]
OUTCOMES: tuple[str, ...] = ("shown", "refuted", "not_shown")
_LATTICE_TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class DecisionRule:
    """A parsed ``--decide`` rule: ``rule`` and its ``margin`` (0 for superior; PD0 for
    similar). `lower` and `upper` are the null boundaries on the estimand's scale."""

    rule: str
    margin: float

    @property
    def lower(self) -> float | None:
        """The boundary the claim must clear from below (None for similar)."""
        if self.rule == "similar":
            return None
        return 0.5 if self.rule == "superior" else 0.5 - self.margin

    @property
    def upper(self) -> float | None:
        """The boundary the claim must stay under (equivalence: 1/2 + margin; similar: PD0)."""
        if self.rule == "equivalent":
            return 0.5 + self.margin
        return self.margin if self.rule == "similar" else None

    def __str__(self) -> str:
        return self.rule if self.rule == "superior" else f"{self.rule}:{self.margin:g}"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


def parse_rule(text: str | DecisionRule) -> DecisionRule:
    """``"noninferior:0.05"``, ``"superior"``, ``"equivalent:0.1"`` or ``"similar:0.3"``.

    Margins for noninferior and equivalent are in (0, 0.5) on the untied-share scale (0.05
    means "at least 45% of the untied comparisons"); PD0 for similar is in (0, 1).
    """
    if isinstance(text, DecisionRule):
        return text
    if not isinstance(text, str):
        raise ValueError(f"rule must be a string such as 'noninferior:0.05', got {text!r}")
    name, _, value = text.partition(":")
    _check_choice("rule", name, RULES)
    if name == "superior":
        if value:
            raise ValueError(f"superior takes no margin, got {text!r}; use 'superior'")
        return DecisionRule("superior", 0.0)
    if not value:
        raise ValueError(f"{name} needs a margin, got {text!r}; e.g. '{name}:0.05'")
    try:
        margin = float(value)
    except ValueError:
        raise ValueError(f"margin must be a number, got {value!r} in {text!r}") from None
    if name == "similar":
        return DecisionRule(name, _check_open("pd0", margin))
    return DecisionRule(name, _check_open("margin", margin, 0.0, 0.5))


@dataclass(frozen=True, slots=True)
class Planning:
    """The design's planning values: ``true`` on the estimand's scale (the untied share, or
    the mean score), the expected tie rate ``ties``, and the target ``power``."""

    true: float
    ties: float = 0.0
    power: float = 0.8

    def __post_init__(self) -> None:
        _check_closed("true", self.true)
        _check_closed("ties", self.ties, 0.0, 1.0)
        _check_open("power", self.power)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values."""
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class DecisionResult:
    """One pre-registered decision.

    * ``rule``, ``margin``, ``alpha``, ``estimand`` echo the design; ``unit`` is
      ``"comparison"``; ``method`` names the test (see the module docstring); ``lower`` and
      ``upper`` are the null boundaries on the estimand's scale (None where the rule has none).
    * ``n`` comparisons, of which ``untied`` have a score other than 1/2 and ``tied`` equal
      it; ``tie_rate`` is tied / n with its Clopper-Pearson interval at ``interval_level``.
    * ``estimate`` and ``interval``: the estimand (NaN, null in JSON, for the untied share
      when every comparison tied) with its two-sided interval at ``interval_level`` =
      1 - 2 alpha. ``claim_reads`` says which end the claim reads: ``"lower"`` (noninferior,
      superior: the one-sided 1 - alpha lower bound; "refuted" reads the upper),
      ``"both"`` (equivalent), ``"upper"`` (similar).
    * ``p_value``: the claim's p-value (equivalence: the larger of the two one-sided ones,
      ``p_lower`` for ``H0: theta <= lower`` and ``p_upper`` for ``H0: theta >= upper``);
      ``p_refute``: the opposite claim's p-value, ``direction`` its side (``"below"`` or
      ``"above"`` the margin).
    * ``outcome`` in ``OUTCOMES``. With several challengers, ``p_adjusted`` and
      ``p_refute_adjusted`` are Holm's and ``adjustment`` says so (``"holm:K"``); the outcome
      then reads the adjusted p-values.
    * ``settle``: for ``not_shown`` with a planning value, the n at which the claim would be
      shown with the planned power (`SampleSize`); otherwise None. ``note``: why a claim was
      left unshown despite a p-value below alpha (disagreement with the interval, or both
      directions), else "". ``planning`` echoes the planning values given.
    """

    rule: str
    margin: float
    alpha: float
    estimand: str
    unit: str
    method: str
    lower: float | None
    upper: float | None
    n: int
    untied: int
    tied: int
    tie_rate: Interval
    estimate: float
    interval: Interval
    interval_level: float
    claim_reads: str
    p_value: float
    p_lower: float | None
    p_upper: float | None
    p_refute: float
    direction: str
    outcome: str
    p_adjusted: float | None = None
    p_refute_adjusted: float | None = None
    adjustment: str | None = None
    settle: SampleSize | None = None
    planning: Planning | None = None
    note: str = ""

    @property
    def shown(self) -> bool:
        """True when the outcome is "shown"."""
        return self.outcome == "shown"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (intervals as ``{estimate, lo, hi}``; NaN and inf as null)."""
        return result_to_dict(self)


# --- scores --------------------------------------------------------------------------------


def _check_scores(
    scores: npt.ArrayLike, judges: int | Sequence[int]
) -> tuple[npt.NDArray[np.float64], bool]:
    """The scores as floats, and whether every comparison had one judge (whole scores)."""
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"scores must be a non-empty list of comparison scores, got {scores!r}")
    if np.isnan(values).any() or (values < 0).any() or (values > 1).any():
        bad = values[np.isnan(values) | (values < 0) | (values > 1)][0]
        raise ValueError(f"every score must be in [0, 1], got {float(bad)!r}")
    if isinstance(judges, numbers.Integral) and not isinstance(judges, bool):
        counts = np.full(values.size, _check_int("judges", judges, 1), dtype=np.int64)
    else:
        listed = list(judges)  # type: ignore[arg-type]
        if len(listed) != values.size:
            raise ValueError(
                f"judges must give one count per score ({values.size}), got {len(listed)}"
            )
        counts = np.asarray(
            [_check_int(f"judges[{i}]", j, 1) for i, j in enumerate(listed)], dtype=np.int64
        )
    # A panel's mean of 1, 1/2 and 0 is a multiple of 1 / (2 judges).
    halves = values * 2 * counts
    off = np.abs(halves - np.round(halves)) > _LATTICE_TOLERANCE
    if off.any():
        index = int(np.flatnonzero(off)[0])
        raise ValueError(
            f"scores[{index}] = {float(values[index])!r} is not a mean of "
            f"{int(counts[index])} judges' scores of 1, 1/2 or 0"
        )
    snapped = np.round(halves) / (2 * counts)
    return np.asarray(snapped, dtype=np.float64), bool((counts == 1).all())


def _tie_mask(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    return np.asarray(np.abs(scores - 0.5) <= _LATTICE_TOLERANCE, dtype=np.bool_)


# --- the one-sided p-values of each method -------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Evidence:
    """p_above(b): H0 theta <= b; p_below(b): H0 theta >= b; and the interval."""

    method: str
    estimate: float
    interval: Interval
    above: Any
    below: Any
    needs_agreement: bool = False


def _binomial_evidence(wins: int, untied: int, alpha: float) -> _Evidence:
    if untied == 0:
        return _Evidence(
            "exact-binomial", math.nan, Interval(math.nan, 0.0, 1.0), lambda b: 1.0, lambda b: 1.0
        )
    interval = clopper_pearson(wins, untied, confidence_level=1.0 - 2.0 * alpha)
    return _Evidence(
        "exact-binomial",
        wins / untied,
        interval,
        lambda b: float(upper_tail(wins, untied, b)),
        lambda b: float(lower_tail(wins, untied, b)),
    )


def _mean_score_evidence(wins: int, ties: int, losses: int, alpha: float) -> _Evidence:
    interval = mean_score_interval(wins, ties, losses, confidence_level=1.0 - 2.0 * alpha)
    return _Evidence(
        "exact-unconditional",
        interval.estimate,
        interval,
        lambda b: mean_score_p_value(wins, ties, losses, b, alternative="greater"),
        lambda b: mean_score_p_value(wins, ties, losses, b, alternative="less"),
        needs_agreement=True,
    )


def _betting_evidence(x: npt.NDArray[np.float64], alpha: float) -> _Evidence:
    if x.size == 0:
        return _Evidence(
            "betting", math.nan, Interval(math.nan, 0.0, 1.0), lambda b: 1.0, lambda b: 1.0
        )
    horizon = int(x.size)
    lo = betting_bound(x, alpha=alpha, side="above", horizon=horizon)
    hi = betting_bound(x, alpha=alpha, side="below", horizon=horizon)
    return _Evidence(
        "betting",
        float(x.mean()),
        Interval(float(x.mean()), lo, hi),
        lambda b: betting_p_value(x, b, alpha=alpha, side="above", horizon=horizon),
        lambda b: betting_p_value(x, b, alpha=alpha, side="below", horizon=horizon),
    )


# --- outcomes ------------------------------------------------------------------------------


def _margins(rule: DecisionRule) -> tuple[float, float]:
    """(lower, upper) boundaries of a margin rule; upper is 1 where the rule has none."""
    lower = 0.5 if rule.rule == "superior" else 0.5 - rule.margin
    return lower, 0.5 + rule.margin if rule.rule == "equivalent" else 1.0


def _claims(rule: DecisionRule, evidence: _Evidence) -> dict[str, Any]:
    """The claim's and the refutation's p-values for a margin rule."""
    lower, upper = _margins(rule)
    p_lower = evidence.above(lower)
    if rule.rule != "equivalent":
        return {
            "p_value": p_lower,
            "p_lower": p_lower,
            "p_upper": None,
            "p_refute": evidence.below(lower),
            "direction": "below",
        }
    p_upper = evidence.below(upper)
    refute_below, refute_above = evidence.below(lower), evidence.above(upper)
    return {
        "p_value": max(p_lower, p_upper),
        "p_lower": p_lower,
        "p_upper": p_upper,
        "p_refute": min(refute_below, refute_above),
        "direction": "below" if refute_below <= refute_above else "above",
    }


def _interval_agrees(rule: DecisionRule, interval: Interval, claim: bool) -> bool:
    """Whether the interval says what the test says (for the mean score's non-monotone
    p-values): the claim needs the interval past the margin, a refutation the other way."""
    lower, upper = _margins(rule)
    if claim:
        return interval.lo > lower and (rule.rule != "equivalent" or interval.hi < upper)
    return interval.hi < lower or (rule.rule == "equivalent" and interval.lo > upper)


def interval_outcome(rule: str | DecisionRule, interval: Interval) -> str:
    """A margin rule decided by a 1 - 2 alpha two-sided interval for the estimand (each tail
    alpha), as a one-sided alpha test inverts it: ``shown`` when the interval clears the margin
    (non-inferiority: its lower bound above 1/2 - margin; superiority: above 1/2; equivalence:
    both bounds within 1/2 +- margin, two one-sided tests, Schuirmann 1987), ``refuted`` when
    it lies wholly on the other side, else ``not_shown``. For an estimate with no exact test
    of its own, such as the prediction-powered one (`blindtest.stats.ppi`); an interval with
    a missing bound decides nothing."""
    parsed = parse_rule(rule)
    if parsed.rule == "similar":
        raise ValueError("similar:PD0 is decided by similarity_decision (triangle and pair)")
    if not (math.isfinite(interval.lo) and math.isfinite(interval.hi)):
        return "not_shown"
    if _interval_agrees(parsed, interval, claim=True):
        return "shown"
    return "refuted" if _interval_agrees(parsed, interval, claim=False) else "not_shown"


def p_value_outcome(p_claim: float | None, p_refute: float | None, alpha: float) -> str:
    """A margin rule decided by its one-sided p-values at ``alpha`` (Holm-adjusted ones, with
    several challengers): ``shown`` when the claim's p is at most alpha, ``refuted`` when the
    opposite claim's is, ``not_shown`` otherwise or when both are (the scores drift). A missing
    p (None or NaN) shows nothing. For an estimate whose tests `decide` does not run, such as
    the prediction-powered one (`blindtest.stats.ppi.ppi_decision`); with one challenger it
    says what `interval_outcome` says of the 1 - 2 alpha interval those p-values invert."""
    alpha_value = _check_alpha(alpha)

    def below(p: float | None) -> bool:
        return p is not None and math.isfinite(p) and p <= alpha_value

    shown, refuted = below(p_claim), below(p_refute)
    if shown and refuted:
        return "not_shown"
    return "shown" if shown else "refuted" if refuted else "not_shown"


def _outcome(
    rule: DecisionRule,
    interval: Interval,
    p_claim: float,
    p_refute: float,
    alpha: float,
    needs_agreement: bool,
) -> tuple[str, str]:
    shown = p_claim <= alpha
    refuted = p_refute <= alpha
    note = ""
    if needs_agreement:
        if shown and not _interval_agrees(rule, interval, claim=True):
            shown, note = False, "the test rejects but its inverted interval reaches the margin"
        if refuted and not _interval_agrees(rule, interval, claim=False):
            refuted, note = False, "the test refutes but its inverted interval reaches the margin"
    if shown and refuted:
        return "not_shown", "both the claim and its opposite reject (the scores drift)"
    if shown:
        return "shown", note
    return ("refuted", note) if refuted else ("not_shown", note)


def _settle(
    rule: DecisionRule, alpha: float, estimand: str, method: str, planning: Planning | None
) -> SampleSize | None:
    if planning is None or estimand != "untied-share" or rule.rule == "similar":
        return None
    found = decision_sample_size(
        rule.rule,  # type: ignore[arg-type]
        None if rule.rule == "superior" else rule.margin,
        true=planning.true,
        ties=planning.ties,
        power=planning.power,
        alpha=alpha,
    )
    if method != "betting":
        return found
    basis = found.basis + " (one judge; a panel's betting test differs: see docs/statistics.md)"
    return dataclasses.replace(found, basis=basis)


def _tie_interval(tied: int, n: int, alpha: float) -> Interval:
    return clopper_pearson(tied, n, confidence_level=1.0 - 2.0 * alpha)


def decide(
    scores: npt.ArrayLike,
    rule: str | DecisionRule,
    *,
    alpha: float = 0.05,
    estimand: Estimand = "untied-share",
    judges: int | Sequence[int] = 1,
    planning: Planning | None = None,
) -> DecisionResult:
    """Decide a margin rule from the challenger's comparison scores (in the design's order).

    ``scores``: one per comparison, the challenger's score (panel mean of 1 / 1/2 / 0).
    ``judges``: how many judges' scores each comparison's score is the mean of, one count for
    all or one per comparison; every count 1 selects the exact tests, any panel the betting
    test (the choice depends on the design, never on the scores). ``planning`` gives the
    planning value for the n that would settle a ``not_shown`` (untied share only).
    """
    parsed = parse_rule(rule)
    if parsed.rule == "similar":
        raise ValueError("similar:PD0 is decided by similarity_decision (triangle and pair)")
    alpha_value = _check_alpha(alpha)
    _check_choice("estimand", estimand, ESTIMANDS)
    if alpha_value >= 0.5:
        raise ValueError(f"alpha must be below 0.5 (the interval is 1 - 2 alpha), got {alpha!r}")
    values, whole = _check_scores(scores, judges)
    tie = _tie_mask(values)
    n, tied = int(values.size), int(tie.sum())
    if whole:
        wins = int(np.sum(values[~tie] > 0.5))
        if estimand == "untied-share":
            evidence = _binomial_evidence(wins, n - tied, alpha_value)
        else:
            evidence = _mean_score_evidence(wins, tied, n - tied - wins, alpha_value)
    else:
        chosen = values[~tie] if estimand == "untied-share" else values
        evidence = _betting_evidence(chosen, alpha_value)
    claims = _claims(parsed, evidence)
    outcome, note = _outcome(
        parsed,
        evidence.interval,
        claims["p_value"],
        claims["p_refute"],
        alpha_value,
        evidence.needs_agreement,
    )
    return DecisionResult(
        rule=parsed.rule,
        margin=parsed.margin,
        alpha=alpha_value,
        estimand=estimand,
        unit="comparison",
        method=evidence.method,
        lower=parsed.lower,
        upper=parsed.upper,
        n=n,
        untied=n - tied,
        tied=tied,
        tie_rate=_tie_interval(tied, n, alpha_value),
        estimate=evidence.estimate,
        interval=evidence.interval,
        interval_level=1.0 - 2.0 * alpha_value,
        claim_reads="both" if parsed.rule == "equivalent" else "lower",
        outcome=outcome,
        settle=(
            _settle(parsed, alpha_value, estimand, evidence.method, planning)
            if outcome == "not_shown"
            else None
        ),
        planning=planning,
        note=note,
        **claims,
    )


def decide_counts(
    wins: int,
    ties: int,
    losses: int,
    rule: str | DecisionRule,
    *,
    alpha: float = 0.05,
    estimand: Estimand = "untied-share",
    planning: Planning | None = None,
) -> DecisionResult:
    """`decide` for one judge per comparison, from the counts of wins, ties and losses."""
    w = _check_int("wins", wins)
    t = _check_int("ties", ties)
    loss = _check_int("losses", losses)
    if w + t + loss == 0:
        raise ValueError("wins + ties + losses must be at least 1, got 0")
    scores = np.concatenate([np.ones(w), np.full(t, 0.5), np.zeros(loss)])
    return decide(scores, rule, alpha=alpha, estimand=estimand, judges=1, planning=planning)


def adjust_decisions(results: Sequence[DecisionResult]) -> tuple[DecisionResult, ...]:
    """Holm across several challengers' decisions against one champion (same rule and alpha):
    the claims' p-values form one family, the refutations' another; each outcome is then read
    from its adjusted p-values (the unadjusted interval is kept, and says so in
    ``adjustment``)."""
    items = list(results)
    if not items:
        return ()
    rules = {(r.rule, r.margin, r.alpha, r.estimand) for r in items}
    if len(rules) > 1:
        raise ValueError(f"every decision must share rule, margin, alpha and estimand, got {rules}")
    claims = holm([r.p_value for r in items])
    refutes = holm([r.p_refute for r in items])
    out = []
    parsed = DecisionRule(items[0].rule, items[0].margin)
    # Holm's first step tests at alpha / K: the n that settles a claim is planned there.
    level = items[0].alpha / len(items)
    for result, p_claim, p_refute in zip(items, claims, refutes, strict=True):
        outcome, note = _outcome(
            parsed,
            result.interval,
            p_claim,
            p_refute,
            result.alpha,
            result.method == "exact-unconditional",
        )
        out.append(
            dataclasses.replace(
                result,
                p_adjusted=p_claim,
                p_refute_adjusted=p_refute,
                adjustment=f"holm:{len(items)}",
                outcome=outcome,
                note=note,
                settle=(
                    _settle(parsed, level, result.estimand, result.method, result.planning)
                    if outcome == "not_shown"
                    else None
                ),
            )
        )
    return tuple(out)


def _pd_interval(correct: int, n: int, protocol: str, alpha: float) -> Interval:
    """pd with the image of Pc's two-sided 1 - 2 alpha Clopper-Pearson interval: triangle
    pd = (3 Pc - 1) / 2 clipped at 0; pair pd = |2 Pc - 1| (the fold)."""
    pc = clopper_pearson(correct, n, confidence_level=1.0 - 2.0 * alpha)
    if protocol == "triangle":

        def to_pd(value: float) -> float:
            return min(1.0, max(0.0, (3.0 * value - 1.0) / 2.0))

        return Interval(to_pd(pc.estimate), to_pd(pc.lo), to_pd(pc.hi))
    ends = (abs(2.0 * pc.lo - 1.0), abs(2.0 * pc.hi - 1.0))
    lo = 0.0 if pc.lo <= 0.5 <= pc.hi else min(ends)
    return Interval(abs(2.0 * pc.estimate - 1.0), lo, max(ends))


def similarity_decision(
    correct: int,
    n: int,
    pd0: float | str | DecisionRule,
    *,
    protocol: SimilarityProtocol = "triangle",
    alpha: float = 0.05,
    planning: Planning | None = None,
) -> DecisionResult:
    """``similar:PD0`` for the triangle and pair protocols in the decision vocabulary.

    The claim is `blindtest.stats.similarity.similarity_test`'s (pd below PD0: the one-sided
    1 - alpha upper bound of pd at most PD0; ``p_upper`` is its p-value). Refuted: a
    difference beyond PD0 shown, the one-sided 1 - alpha lower bound of pd above PD0: the
    exact test of ``H0: pc <= pc0`` (triangle), or either one-sided test of pair's
    ``|Pc - 1/2| <= pd0 / 2``, at alpha. The unit is the trial; there are no ties
    (``tie_rate`` is 0). ``planning.true`` is the planning pd (usually 0); ``planning.ties``
    is ignored.
    """
    _check_choice("protocol", protocol, SIMILARITY_PROTOCOLS)
    if isinstance(pd0, (str, DecisionRule)):
        parsed = parse_rule(pd0)
        if parsed.rule != "similar":
            raise ValueError(f"similarity_decision takes a similar:PD0 rule, got {str(parsed)!r}")
    else:
        parsed = DecisionRule("similar", _check_open("pd0", pd0))
    alpha_value = _check_alpha(alpha)
    if alpha_value >= 0.5:
        raise ValueError(f"alpha must be below 0.5 (the interval is 1 - 2 alpha), got {alpha!r}")
    test = similarity_test(correct, n, parsed.margin, protocol=protocol, alpha=alpha_value)
    pc0 = pc_at_pd(parsed.margin, protocol)
    p_refute = float(upper_tail(correct, n, pc0))
    if protocol == "pair":
        p_refute = min(p_refute, float(lower_tail(correct, n, 1.0 - pc0)))
    outcome = "shown" if test.similar else "refuted" if p_refute <= alpha_value else "not_shown"
    settle = None
    if outcome == "not_shown" and planning is not None:
        settle = similarity_sample_size(
            parsed.margin,
            protocol=protocol,
            pd=planning.true,
            power=planning.power,
            alpha=alpha_value,
        )
    return DecisionResult(
        rule="similar",
        margin=parsed.margin,
        alpha=alpha_value,
        estimand="pd",
        unit="trial",
        method="exact-binomial",
        lower=None,
        upper=parsed.margin,
        n=int(n),
        untied=int(n),
        tied=0,
        tie_rate=Interval(0.0, 0.0, 0.0),
        estimate=_pd_interval(correct, n, protocol, alpha_value).estimate,
        interval=_pd_interval(correct, n, protocol, alpha_value),
        interval_level=1.0 - 2.0 * alpha_value,
        claim_reads="upper",
        p_value=test.p_value,
        p_lower=None,
        p_upper=test.p_value,
        p_refute=p_refute,
        direction="above",
        outcome=outcome,
        settle=settle,
        planning=planning,
    )
