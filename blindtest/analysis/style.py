"""Style control for a preference run (``report["style_control"]``): the style differences of
each untied comparison's two answers, the model of :mod:`blindtest.stats.style` fitted to
them, and what the screen and the report page say about it.

The unit is a trial's outcome as the headline test counts it (the majority of its judges;
ties and excluded comparisons left out), so that A's adjusted strength answers the same
question as the verdict, with style held equal. Secondary: the verdict never uses it.

Covariates, each A's minus B's as Chatbot Arena's normalised difference (f_A - f_B) /
(f_A + f_B) (0 when both are 0; without Arena's centring, so 0 means equal style):
- ``length``: words (whitespace-separated);
- ``markdown``: markdown density, the headers, list items and bold spans per 100 words.
One markdown term, not Arena's three: a blind test has tens of comparisons, not a million.
Position (left or right) is not a term: the arrangement balances A's side and position has
its own gate.

Pure: the design, the trials' texts and the picks come in; nothing is opened here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from blindtest.analysis.common import excluded_reason
from blindtest.model.protocols import PROTOCOLS
from blindtest.model.scoring import option1_side, preferred_side
from blindtest.reportfmt import format_p, pct

if TYPE_CHECKING:
    from blindtest.model.picks import JudgeView, Pick
    from blindtest.rundir.types import DesignRecord
    from blindtest.stats.style import StyleCoefficient, StyleControlResult

__all__ = ["MIN_COMPARISONS", "markdown_density", "style_differences", "style_section"]

#: Fewer untied comparisons than this are not fitted (said in words).
MIN_COMPARISONS = 10
COVARIATES = ("length", "markdown")
_DESCRIBED = {
    "length": "answer length in words",
    "markdown": "markdown density (headers, list items and bold per 100 words)",
}
_HEADER = re.compile(r"^ {0,3}#{1,6}\s", re.MULTILINE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\S", re.MULTILINE)
_BOLD = re.compile(r"\*\*(?=\S)[^\n]*?\S\*\*|__(?=\S)[^\n]*?\S__")


def _words(text: str) -> int:
    return len(text.split())


def markdown_density(text: str) -> float:
    """Headers, list items and bold spans per 100 words (0 for an empty text)."""
    words = _words(text)
    if not words:
        return 0.0
    marks = len(_HEADER.findall(text)) + len(_LIST_ITEM.findall(text)) + len(_BOLD.findall(text))
    return 100.0 * marks / words


def _normalised(a: float, b: float) -> float:
    return (a - b) / (a + b) if a + b > 0 else 0.0


def style_differences(text_a: str, text_b: str) -> tuple[float, float]:
    """(length, markdown): A's minus B's, each as (f_A - f_B) / (f_A + f_B)."""
    return (
        _normalised(_words(text_a), _words(text_b)),
        _normalised(markdown_density(text_a), markdown_density(text_b)),
    )


def _outcomes(design: DesignRecord, picks: Sequence[Pick]) -> dict[int, str]:
    """Per trial, the side most of its judges preferred (as the headline test counts it);
    trials whose judges tied or split are left out."""
    votes: dict[int, dict[str, int]] = {}
    for pick in picks:
        if excluded_reason(pick) is not None:
            continue
        side = preferred_side(design, pick.trial, pick.pick) or "tie"
        count = votes.setdefault(pick.trial, {})
        count[side] = count.get(side, 0) + 1
    outcome = {}
    for trial, count in votes.items():
        ranked = sorted(count.values(), reverse=True)
        top = max(count, key=lambda side: count[side])
        if (len(ranked) == 1 or ranked[0] > ranked[1]) and top != "tie":
            outcome[trial] = top
    return outcome


def style_section(
    design: DesignRecord, view: JudgeView, picks: Sequence[Pick]
) -> dict[str, Any] | None:
    """``report["style_control"]``; None when the protocol is not preference or the answers'
    texts are not there (trials.jsonl)."""
    from blindtest.stats.style import style_control

    if not PROTOCOLS[view.protocol].prefers:
        return None
    shown = {t.number: t.options for t in view.trials if len(t.options) == 2}
    if not shown:
        return None
    outcome = _outcomes(design, picks)
    trials = sorted(t for t in outcome if t in shown)
    about = {
        "unit": "a trial's outcome (the majority of its judges), ties left out",
        "covariates": {name: f"{_DESCRIBED[name]}, as (A - B) / (A + B)" for name in COVARIATES},
    }
    if len(trials) < MIN_COMPARISONS:
        return {
            "fitted": False,
            "n": len(trials),
            **about,
            "lines": [
                f"Style control (secondary): not fitted; it needs at least {MIN_COMPARISONS} "
                f"untied comparisons and this run has {len(trials)}."
            ],
        }
    y, x = [], []
    for trial in trials:
        left, right = shown[trial]
        a_left = option1_side(design, trial) == "A"
        text_a, text_b = (left, right) if a_left else (right, left)
        y.append(1 if outcome[trial] == "A" else 0)
        x.append(style_differences(text_a, text_b))
    found = style_control(y, x, COVARIATES)
    return {"fitted": True, **found.to_dict(), **about, "lines": style_lines(found)}


# --------------------------------------------------------------------------- words


def _signed(value: float) -> str:
    return f"{value:+.2f}"


def _interval(lo: float, hi: float, method: str) -> str:
    def bound(v: float) -> str:
        return _signed(v) if math.isfinite(v) else ("-inf" if v < 0 else "+inf")

    return f"95% {method} interval {bound(lo)} to {bound(hi)}"


def _label(term: str) -> str:
    return "A's strength" if term == "a_strength" else term


def _joined(terms: Sequence[str]) -> str:
    labels = [_label(t) for t in terms]
    return (
        " and ".join(labels) if len(labels) < 3 else ", ".join(labels[:-1]) + " and " + labels[-1]
    )


def _separation_words(found: StyleControlResult) -> str:
    """What separated the picks and what follows from it, in words."""
    separation = found.separation
    n = found.n
    by = dict(separation.by)
    more = {"length": "longer answer", "markdown": "answer with more markdown"}
    less = {"length": "shorter answer", "markdown": "answer with less markdown"}
    differed = {"length": "lengths", "markdown": "markdown densities"}
    parts = []
    for name, sign in by.items():
        if name == "a_strength":
            continue
        unequal = found.differing[COVARIATES.index(name)]
        side = more[name] if sign > 0 else less[name]
        if unequal == n:
            parts.append(f"every pick went to the {side}")
        else:
            parts.append(
                f"in all {unequal} comparisons whose {differed[name]} differed the pick went "
                f"to the {side}"
            )
    if by.get("a_strength"):
        winner = "A" if by["a_strength"] > 0 else "B"
        also = "".join(f", and {part}" for part in parts)
        return (
            f"  The picks are separated: {winner} won every one of the {n} comparisons{also}, "
            "so strength and style cannot be weighed against each other and no estimate is "
            "given; the result above says what can be said."
        )
    label = _joined(list(by) or list(separation.terms))
    how = "; ".join(parts) or (
        f"one weighting of {label} agrees with every pick and decides {separation.determined} "
        f"of the {n} outright"
    )
    if separation.status == "complete":
        return (
            f"  The picks are separated by {label}: {how}. The judge's choices follow {label} "
            "completely, so no strength net of style can be estimated and no estimate is given."
        )
    infinite = _joined(separation.terms)
    them = "it" if len(separation.terms) == 1 else "them"
    return (
        f"  The picks are partly separated by {label}: {how}. By maximum likelihood the "
        f"estimate of {infinite} is infinite, so the fit is Firth's penalised likelihood, and "
        f"for {them} only the 95% bound the data support is shown."
    )


def _separated(label: str, found: StyleControlResult, term: str, lo: float, hi: float) -> str:
    """A separated term: the bound on the side its likelihood does not run off to."""
    signs = dict(zip(found.separation.terms, found.separation.infinite, strict=True))
    sign = signs.get(term, 0)
    if (
        found.separation.status == "complete"
        or not sign
        or not math.isfinite(lo if sign > 0 else hi)
    ):
        return f"  {label}: separated; not estimable."
    bound = f"at least {_signed(lo)}" if sign > 0 else f"at most {_signed(hi)}"
    edge = "upper" if sign > 0 else "lower"
    return (
        f"  {label}: separated; {bound} (95% profile penalised-likelihood bound), no {edge} "
        "bound and no estimate."
    )


def _term_line(found: StyleControlResult, c: StyleCoefficient, method: str) -> str:
    label, estimate, lo, hi, status = c.name, c.estimate, c.lo, c.hi, c.status
    if status == "separated":
        return _separated(label, found, c.name, lo, hi)
    if status == "no variation":
        return f"  {label}: no difference between A's and B's answer in any comparison; left out."
    if status == "aliased":
        return (
            f"  {label}: the same difference in every comparison, so it cannot be told apart "
            "from A's strength; left out."
        )
    if status == "confounded":
        return f"  {label}: cannot be told apart from a style difference that never varied."
    if not math.isfinite(estimate):
        return f"  {label}: no estimate (the fit did not converge)."
    return f"  {label}: {_signed(estimate)} ({_interval(lo, hi, method)})"


def style_lines(found: StyleControlResult) -> list[str]:
    """The screen lines: what the model holds equal, A's adjusted strength, each style term,
    the test of the style terms; separation and what cannot be estimated said in words."""
    method = "profile penalised-likelihood" if found.firth else "profile-likelihood"
    fit = "Firth's penalised likelihood" if found.firth else "maximum likelihood"
    lines = [
        "Style control (secondary: the verdict above does not use it): a Bradley-Terry model "
        f"of the {found.n} untied comparisons that holds {_DESCRIBED['length']} and "
        f"{_DESCRIBED['markdown']} equal between A and B ({fit}). Estimates are log-odds; a "
        "style term is per unit of (A - B) / (A + B), which runs from -1 (only B has it) to "
        "+1 (only A has it)."
    ]
    if found.separation.separated:
        lines.append(_separation_words(found))
    raw = pct(found.a_wins / found.n)
    strength = found.a_strength
    if found.a_strength_status == "confounded":
        lines.append(
            "  A's strength with style held equal: cannot be estimated; a style difference "
            "was the same in every comparison, so preferring A and preferring that style are "
            f"the same thing here (A won {found.a_wins} of {found.n}, {raw})."
        )
    elif found.a_strength_status == "separated" and found.separation.status == "quasi":
        label = "A's strength with style held equal"
        line = _separated(label, found, "a_strength", strength.lo, strength.hi)
        lines.append(f"{line[:-1]} (A won {found.a_wins} of {found.n}, {raw}, unadjusted).")
    elif found.a_strength_status == "separated" or not math.isfinite(strength.estimate):
        lines.append(
            "  A's strength with style held equal: not estimable from these picks "
            f"(A won {found.a_wins} of {found.n}, {raw}, unadjusted)."
        )
    else:
        rate = found.a_win_rate_adjusted
        lines.append(
            f"  A's strength with style held equal: {_signed(strength.estimate)} "
            f"({_interval(strength.lo, strength.hi, method)}); A's win rate at equal style "
            f"{pct(rate.estimate)} (95% {pct(rate.lo)} to {pct(rate.hi)}), against "
            f"{found.a_wins} of {found.n} ({raw}) unadjusted."
        )
    for c in found.coefficients:
        lines.append(_term_line(found, c, method))
    test = found.lr_test
    if test is None:
        lines.append("  No style term varies, so there is nothing to test.")
    else:
        lines.append(
            f"  Do the style terms move the picks? Firth's penalised likelihood-ratio test, "
            f"{test.df} df: chi-square {test.statistic:.2f}, {format_p(test.p_value)}."
        )
    return lines
