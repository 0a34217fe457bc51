"""Style control for a preference run (``report["style_control"]``), for any number of
candidates: the style differences of each untied comparison's two answers, a Bradley-Terry
model with style terms fitted to them, and what the screen and the report page say about it.
Secondary: the verdict and the ranking never use it.

The unit is a comparison's outcome as the headline counts it (the majority of its judges;
ties and excluded comparisons left out), so that the adjusted strengths answer the same
question as the result, with style held equal. The comparisons are gathered once
(:func:`style_section`); the model is the one for the result it sits beside:

- two candidates (A and B of a two-sided design; the first and the second otherwise):
  :mod:`blindtest.stats.style`, the first's strength and the style terms by Firth's penalised
  likelihood, profile intervals and the likelihood-ratio test of the style terms; each
  covariate the first's minus the second's as Chatbot Arena's normalised difference
  (f_1 - f_2) / (f_1 + f_2) (0 when both are 0; without Arena's centring, so 0 means equal
  style);
- three or more: :mod:`blindtest.stats.candidate_style`, every strength beside the ranking's,
  Wald intervals with prompt-clustered standard errors (the prompt is the unit, as the
  ranking's bootstrap takes it), each covariate the left answer's minus the right one's.
  It has no likelihood-ratio test: the lines say whether the ranking's order holds. A
  candidate whose equal style lies outside its comparisons (longer in every one, say) has no
  strength, and the main screen says so and why; the order is of the others.

Covariates: ``length``, words (whitespace-separated); ``markdown``, markdown density, the
headers, list items and bold spans per 100 words. One markdown term, not Arena's three: a blind
test has tens of comparisons, not a million. Position (left or right) is not a term: the
arrangement balances it and position has its own gate.

Pure: the design, the trials' texts and the outcomes come in; nothing is opened here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from blindtest.model.candidates import comparison_sides
from blindtest.model.protocols import PROTOCOLS
from blindtest.model.scoring import arrangement_entry
from blindtest.reportfmt import format_p, pct

if TYPE_CHECKING:
    from blindtest.analysis.preference import Outcomes
    from blindtest.model.picks import JudgeView
    from blindtest.rundir.types import DesignRecord
    from blindtest.stats.candidate_style import CandidateStyleResult
    from blindtest.stats.style import StyleCoefficient, StyleControlResult

__all__ = [
    "MIN_COMPARISONS",
    "candidate_style_lines",
    "markdown_density",
    "style_differences",
    "style_lines",
    "style_section",
    "style_technical_lines",
]

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


def style_section(
    design: DesignRecord,
    view: JudgeView,
    found: Outcomes,
    ranked: Sequence[str] = (),
    anchor: str | None = None,
) -> dict[str, Any] | None:
    """``report["style_control"]``; None when the protocol is not preference or the answers'
    texts are not there (trials.jsonl). ``found``: the comparisons' outcomes as the result
    counts them; ``ranked``: the ranking's order (from three candidates), which the lines say
    whether style control keeps; ``anchor``: the ranking's reference, if any."""
    if not PROTOCOLS[view.protocol].prefers:
        return None
    shown = {t.number: t.options for t in view.trials if len(t.options) == 2}
    if not shown:
        return None
    trials = sorted(t for t, won in found.winner.items() if won != "tie" and t in shown)
    if len(found.names) == 2:
        return _two(design, found, shown, trials)
    return _several(design, found, shown, trials, ranked, anchor)


def _not_fitted(n: int, about: Mapping[str, Any], secondary: bool) -> dict[str, Any]:
    said = "Style control (secondary)" if secondary else "Style control"
    return {
        "fitted": False,
        "n": n,
        **about,
        "lines": [
            f"{said}: not fitted; it needs at least {MIN_COMPARISONS} untied comparisons and "
            f"this run has {n}."
        ],
    }


def _two(
    design: DesignRecord,
    found: Outcomes,
    shown: Mapping[int, Sequence[str]],
    trials: Sequence[int],
) -> dict[str, Any]:
    """Two candidates: the first's strength and the style terms (module doc)."""
    from blindtest.stats.style import style_control

    first, second = found.names
    about = {
        "unit": "a trial's outcome (the majority of its judges), ties left out",
        "covariates": {
            name: f"{_DESCRIBED[name]}, as ({first} - {second}) / ({first} + {second})"
            for name in COVARIATES
        },
    }
    if len(trials) < MIN_COMPARISONS:
        return _not_fitted(len(trials), about, secondary=True)
    y, x = [], []
    for trial in trials:
        left_text, right_text = shown[trial]
        left, _ = comparison_sides(arrangement_entry(design, trial))
        text_first, text_second = (
            (left_text, right_text) if left == first else (right_text, left_text)
        )
        y.append(1 if found.winner[trial] == first else 0)
        x.append(style_differences(text_first, text_second))
    fitted = style_control(y, x, COVARIATES)
    return {
        "fitted": True,
        **fitted.to_dict(),
        **about,
        "lines": style_lines(fitted, first, second),
        "technical": style_technical_lines(fitted, first, second),
    }


# --------------------------------------------------------------------------- words


def _signed(value: float) -> str:
    return f"{value:+.2f}"


def _interval(lo: float, hi: float, method: str) -> str:
    def bound(v: float) -> str:
        return _signed(v) if math.isfinite(v) else ("-inf" if v < 0 else "+inf")

    return f"95% {method} interval {bound(lo)} to {bound(hi)}"


def _label(term: str, first: str = "A") -> str:
    return f"{first}'s strength" if term == "a_strength" else term


def _joined(terms: Sequence[str], first: str = "A") -> str:
    labels = [_label(t, first) for t in terms]
    return (
        " and ".join(labels) if len(labels) < 3 else ", ".join(labels[:-1]) + " and " + labels[-1]
    )


def _separation_words(found: StyleControlResult, a: str, b: str) -> str:
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
        winner = a if by["a_strength"] > 0 else b
        also = "".join(f", and {part}" for part in parts)
        return (
            f"  The picks are separated: {winner} won every one of the {n} comparisons{also}, "
            "so strength and style cannot be weighed against each other and no estimate is "
            "given; the result above says what can be said."
        )
    label = _joined(list(by) or list(separation.terms), a)
    how = "; ".join(parts) or (
        f"one weighting of {label} agrees with every pick and decides {separation.determined} "
        f"of the {n} outright"
    )
    if separation.status == "complete":
        return (
            f"  The picks are separated by {label}: {how}. The judge's choices follow {label} "
            "completely, so no strength net of style can be estimated and no estimate is given."
        )
    if not parts:
        return ""  # no single term to name: the technical section says it (_firth_words)
    return f"  The picks are partly separated by {label}: {how}."


def _firth_words(found: StyleControlResult, a: str) -> str:
    """Partial separation, for the technical section: which estimates are infinite by
    maximum likelihood and what is shown instead."""
    separation = found.separation
    label = _joined(list(dict(separation.by)) or list(separation.terms), a)
    infinite = _joined(separation.terms, a)
    them = "it" if len(separation.terms) == 1 else "them"
    return (
        f"    The picks are partly separated by {label} (one weighting of them agrees with "
        f"every pick and decides {separation.determined} of the {found.n} outright). By "
        f"maximum likelihood the estimate of {infinite} is infinite, so the fit is Firth's "
        f"penalised likelihood, and for {them} only the 95% bound the data support is shown."
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


def _term_line(found: StyleControlResult, c: StyleCoefficient, method: str, a: str, b: str) -> str:
    label, estimate, lo, hi, status = c.name, c.estimate, c.lo, c.hi, c.status
    if status == "separated":
        return _separated(label, found, c.name, lo, hi)
    if status == "no variation":
        return (
            f"  {label}: no difference between {a}'s and {b}'s answer in any comparison; left out."
        )
    if status == "aliased":
        return (
            f"  {label}: the same difference in every comparison, so it cannot be told apart "
            f"from {a}'s strength; left out."
        )
    if status == "confounded":
        return f"  {label}: cannot be told apart from a style difference that never varied."
    if not math.isfinite(estimate):
        return f"  {label}: no estimate (the fit did not converge)."
    return f"  {label}: {_signed(estimate)} ({_interval(lo, hi, method)})"


_SIDE_MORE = {"length": "longer", "markdown": "more marked up"}
_SIDE_LESS = {"length": "shorter", "markdown": "less marked up"}


def _extrapolated_words(found: StyleControlResult, a: str, b: str) -> str:
    """Why A's win rate at equal style has no number: no comparison had equal style."""
    raw = pct(found.a_wins / found.n)
    signed = [
        f"{_SIDE_MORE[name] if sign > 0 else _SIDE_LESS[name]}"
        for name, sign in found.side_confounded
        if name in _SIDE_MORE
    ]
    if signed:
        how = f"{a}'s answer was {' and '.join(signed)} in every one of the {found.n} comparisons"
    else:
        how = (
            f"the {found.n} comparisons' style differences all lie on one side of equal style "
            f"(one weighting of them favours {a} in every one)"
        )
    return (
        f"  {a}'s win rate at equal style: cannot be estimated. {how}, so no comparison shows "
        f"{a} and {b} at equal style, and any figure would extrapolate beyond the data; "
        f"preferring {a} and preferring that style cannot be told apart here ({a} won "
        f"{found.a_wins} of {found.n}, {raw}, unadjusted)."
    )


def _rate_line(found: StyleControlResult, a: str, b: str) -> str | None:
    """The main screen's figure: A's win rate at equal style, or why there is none."""
    raw = pct(found.a_wins / found.n)
    status = found.a_strength_status
    if status == "extrapolated":
        return _extrapolated_words(found, a, b)
    if status == "confounded":
        return (
            f"  {a}'s win rate at equal style: cannot be estimated; a style difference was the "
            f"same in every comparison, so preferring {a} and preferring that style are the "
            f"same thing here ({a} won {found.a_wins} of {found.n}, {raw})."
        )
    if found.separation.status == "complete":
        return None  # the separation words say it
    rate, strength = found.a_win_rate_adjusted, found.a_strength
    if status == "separated":
        signs = dict(zip(found.separation.terms, found.separation.infinite, strict=True))
        sign = signs.get("a_strength", 0)
        bound = strength.lo if sign > 0 else strength.hi
        if not sign or not math.isfinite(bound):
            return (
                f"  {a}'s win rate at equal style: not estimable from these picks ({a} won "
                f"{found.a_wins} of {found.n}, {raw}, unadjusted)."
            )
        edge = f"at least {pct(rate.lo)}" if sign > 0 else f"at most {pct(rate.hi)}"
        return (
            f"  {a}'s win rate at equal style: {edge} (95%; the picks bound it on one side "
            f"only), against {found.a_wins} of {found.n} ({raw}) unadjusted."
        )
    if not math.isfinite(strength.estimate):
        return f"  {a}'s win rate at equal style: no estimate (the fit did not converge)."
    return (
        f"  {a}'s win rate at equal style: {pct(rate.estimate)} (95% {pct(rate.lo)} to "
        f"{pct(rate.hi)}), against {found.a_wins} of {found.n} ({raw}) unadjusted."
    )


def _terms_line(found: StyleControlResult) -> str | None:
    """The style terms in words: which way the picks lean, where an interval says so."""
    said = []
    for c in found.coefficients:
        if c.status != "estimated" or not math.isfinite(c.estimate):
            continue
        if c.lo > 0:
            said.append(f"{c.name}: the picks lean to the {_SIDE_MORE[c.name]} answer")
        elif c.hi < 0:
            said.append(f"{c.name}: the picks lean to the {_SIDE_LESS[c.name]} answer")
        else:
            said.append(f"{c.name}: no clear effect (its 95% interval includes 0)")
    if not said:
        return None
    within = (
        " (within the data: how the size of the difference moves the picks)"
        if found.side_confounded
        else ""
    )
    return "  Style terms" + within + ": " + "; ".join(said) + "."


def style_lines(found: StyleControlResult, a: str = "A", b: str = "B") -> list[str]:
    """The main screen's lines of two candidates ``a`` and ``b``: what the model holds equal,
    a's win rate at equal style (or in words why there is none), the style terms in words;
    the log-odds, intervals and the test are :func:`style_technical_lines`."""
    lines = [
        f"Style control (secondary: the verdict above does not use it): {a} against {b} with "
        f"{_DESCRIBED['length']} and {_DESCRIBED['markdown']} held equal, over the "
        f"{found.n} untied comparisons."
    ]
    if found.separation.separated and (words := _separation_words(found, a, b)):
        lines.append(words)
    rate = _rate_line(found, a, b)
    if rate is not None:
        lines.append(rate)
    terms = _terms_line(found)
    if terms is not None:
        lines.append(terms)
    return lines


def _withheld_line(found: StyleControlResult, a: str) -> str:
    if found.lr_test_withheld == "separated":
        return (
            "    No test of the style terms: the picks are separated, and the words above say "
            "what decided them; a p-value here would read as 'style does not matter' exactly "
            "when style or strength decided every pick."
        )
    return (
        "    No test of the style terms: equal style lies outside the data, so a test could "
        "see only whether a larger difference moves the picks, never whether the style "
        f"itself does (it cannot be told from {a}'s strength here)."
    )


def style_technical_lines(found: StyleControlResult, a: str = "A", b: str = "B") -> list[str]:
    """The technical section's lines: the model, a's strength and each style term in log-odds
    with their intervals, and the test of the style terms (or why it is withheld)."""
    method = "profile penalised-likelihood" if found.firth else "profile-likelihood"
    fit = "Firth's penalised likelihood" if found.firth else "maximum likelihood"
    lines = [
        f"  Style control: a Bradley-Terry model of the {found.n} untied comparisons ({fit}). "
        f"Estimates are log-odds; a style term is per unit of ({a} - {b}) / ({a} + {b}), "
        f"which runs from -1 (only {b} has it) to +1 (only {a} has it)."
    ]
    if found.separation.status == "quasi":
        lines.append(_firth_words(found, a))
    raw = pct(found.a_wins / found.n)
    strength = found.a_strength
    label = f"    {a}'s strength with style held equal"
    if found.a_strength_status in ("confounded", "extrapolated"):
        lines.append(f"{label}: cannot be estimated (see above).")
    elif found.a_strength_status == "separated" and found.separation.status == "quasi":
        line = _separated(label.strip(), found, "a_strength", strength.lo, strength.hi)
        lines.append(f"  {line[:-1]} ({a} won {found.a_wins} of {found.n}, {raw}, unadjusted).")
    elif found.a_strength_status == "separated" or not math.isfinite(strength.estimate):
        lines.append(
            f"{label}: not estimable from these picks ({a} won {found.a_wins} of {found.n}, "
            f"{raw}, unadjusted)."
        )
    else:
        lines.append(
            f"{label}: {_signed(strength.estimate)} "
            f"({_interval(strength.lo, strength.hi, method)})."
        )
    for c in found.coefficients:
        lines.append("  " + _term_line(found, c, method, a, b))
    test = found.lr_test
    if test is not None:
        lines.append(
            f"    Do the style terms move the picks? Firth's penalised likelihood-ratio test, "
            f"{test.df} df: chi-square {test.statistic:.2f}, {format_p(test.p_value)}."
        )
    elif found.lr_test_withheld is not None:
        lines.append(_withheld_line(found, a))
    else:
        lines.append("    No style term varies, so there is nothing to test.")
    return lines


# --------------------------------------------------------------------------- three or more


UNIT = (
    "a comparison: its outcome as the ranking counts it (the majority of its judges), ties "
    "and excluded picks left out"
)
INTERVALS = (
    "Wald, estimate +/- 1.96 se, with prompt-clustered (sandwich) standard errors: the prompt "
    "is the unit; 'se' is the model-based standard error, comparisons as independent units"
)
COVARIATE_WORDS = {
    "length": "answer length in words, as (left - right) / (left + right)",
    "markdown": "markdown density (headers, list items and bold per 100 words), as "
    "(left - right) / (left + right)",
}


def _several(
    design: DesignRecord,
    found: Outcomes,
    shown: Mapping[int, Sequence[str]],
    trials: Sequence[int],
    ranked: Sequence[str],
    anchor: str | None,
) -> dict[str, Any]:
    """Three or more candidates: every strength with style held equal (module doc)."""
    from blindtest.stats.candidate_style import candidate_style_control

    names = list(found.names)
    about: dict[str, Any] = {
        "unit": UNIT,
        "covariates": dict(COVARIATE_WORDS),
        "interval_method": INTERVALS,
    }
    if len(trials) < MIN_COMPARISONS:
        return _not_fitted(len(trials), about, secondary=False)
    index = {name: m for m, name in enumerate(names)}
    entries = {t: arrangement_entry(design, t) for t in trials}
    prompt_ids = sorted({str(entries[t]["prompt_id"]) for t in trials})
    prompt_index = {pid: q for q, pid in enumerate(prompt_ids)}
    first, second, y, x, prompt = [], [], [], [], []
    # An answer appears in every comparison of its candidate on its prompt: measure each text
    # once (at 45,000 comparisons, measuring per comparison took longer than the rest).
    measured: dict[str, tuple[int, float]] = {}

    def measure(text: str) -> tuple[int, float]:
        if text not in measured:
            measured[text] = (_words(text), markdown_density(text))
        return measured[text]

    for trial in trials:
        entry = entries[trial]
        left, right = comparison_sides(entry)
        first.append(index[left])
        second.append(index[right])
        y.append(1 if found.winner[trial] == left else 0)
        (words_l, marks_l), (words_r, marks_r) = (measure(t) for t in shown[trial])
        # As style_differences: (left - right) / (left + right).
        x.append((_normalised(words_l, words_r), _normalised(marks_l, marks_r)))
        prompt.append(prompt_index[str(entry["prompt_id"])])
    fitted = candidate_style_control(names, first, second, y, x, COVARIATES, prompt, anchor=anchor)
    raw = list(ranked)
    whole = fitted.to_dict()
    # Which candidates differ is the separations' word (exact pair tests): the Bonferroni
    # Wald intervals describe the differences and claim none, so no "separated" flag.
    whole["differences"] = [
        {key: value for key, value in d.items() if key != "separated"} for d in whole["differences"]
    ]
    lines = candidate_style_lines(fitted, raw, reference=anchor)
    order = list(fitted.order())
    # Whether the order holds is said of the candidates with a strength (an extrapolated one
    # has no place in it): the ranking's order of those same candidates.
    placed = [c for c in raw if c in order]
    return {
        **whole,
        "fitted": fitted.problem is None,
        **about,
        "strengths": {s["candidate"]: _strength(s) for s in whole["strengths"]},
        "terms": {t["name"]: _term(t) for t in whole["terms"]},
        "order": order,
        "order_holds": (order == placed) if raw and order else None,
        # The main screen says whether the order holds (which candidates differ is the pair
        # tests' word) and which strengths cannot be estimated; the log-odds strengths and
        # terms are the technical section's.
        "lines": lines[:1],
        "technical": [f"  {line.strip()}" for line in lines[1:]],
    }


def _strength(record: Mapping[str, Any]) -> dict[str, Any]:
    return {
        key: record[key]
        for key in ("strength", "se", "se_prompt", "status", "comparisons", "wins", "confounded")
    }


def _term(record: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "coefficient": record["coefficient"],
        "se": record["se"],
        "se_prompt": record["se_prompt"],
        "status": record["status"],
    }


_DIFFERED = {"length": "lengths", "markdown": "markdown densities"}
_MORE = {"length": "longer answer", "markdown": "answer with more markdown"}
_LESS = {"length": "shorter answer", "markdown": "answer with less markdown"}


def _rounded(value: float) -> str:
    return f"{round(value, 2) or 0.0:+.2f}"  # never "-0.00"


def _unplaced_words(found: CandidateStyleResult) -> str:
    """Why some candidates' strengths at equal style have no number (module doc), in words."""
    said = []
    for s in found.strengths:
        if s.status != "extrapolated":
            continue
        raw = pct(s.wins / s.comparisons) if s.comparisons else "n/a"
        signed = [
            _SIDE_MORE[name] if sign > 0 else _SIDE_LESS[name]
            for name, sign in s.confounded
            if name in _SIDE_MORE
        ]
        how = (
            f"its answer was {' and '.join(signed)} in every one of its {s.comparisons} comparisons"
            if signed
            else f"the style differences of its {s.comparisons} comparisons all lie on one "
            "side of equal style"
        )
        said.append(
            f"{s.candidate}'s strength at equal style cannot be estimated: {how}, so none shows "
            "it at equal style and any figure would extrapolate beyond the data; preferring it "
            f"cannot be distinguished from preferring that style here (it won {s.wins} of "
            f"{s.comparisons}, {raw}, unadjusted)."
        )
    alone = [s.candidate for s in found.strengths if s.status == "not estimated"]
    if alone:
        said.append(
            f"{_joined(alone)} {'has' if len(alone) == 1 else 'have'} no strength either: no "
            "other candidate's can be estimated to set it against."
        )
    elif said:
        said.append("The order and the strengths are of the other candidates.")
    return " ".join(said)


def _order_verdict(order: Sequence[str], raw: Sequence[str], among: str) -> str:
    """Whether the ranking's order (of the same candidates) holds with style held equal."""
    placed = [c for c in raw if c in order]
    if not order:
        return "no candidate's strength with style held equal can be estimated"
    if not raw:
        return f"the order{among} is {', '.join(order)}"
    if list(order) == placed:
        return f"the ranking's order{among} is the same"
    return (
        f"the order of the estimates{among} becomes {', '.join(order)} (the ranking has "
        f"{', '.join(placed)})"
    )


_NO_STRENGTH = {
    "extrapolated": "cannot be estimated (no comparison at equal style)",
    "not estimated": "none (no other strength to set it against)",
}


def _strength_list(found: CandidateStyleResult, order: Sequence[str]) -> str:
    """The strengths in order, then those without one and why."""
    given = sorted(
        (s for s in found.strengths if s.candidate in order),
        key=lambda s: list(order).index(s.candidate),
    )
    return ", ".join(
        [
            f"{s.candidate} {_rounded(s.strength.estimate)}"
            + (
                f" ({_rounded(s.strength.lo)} to {_rounded(s.strength.hi)})"
                if s.strength.lo != s.strength.hi
                else ""
            )
            for s in given
        ]
        + [
            f"{s.candidate} {_NO_STRENGTH.get(s.status, 'none')}"
            for s in found.strengths
            if s.candidate not in order
        ]
    )


def candidate_style_lines(
    found: CandidateStyleResult, raw: Sequence[str], reference: str | None = None
) -> list[str]:
    """One or two plain lines: whether the ranking's order holds with style held equal (for
    the candidates with a strength), which strengths cannot be estimated and why, each
    candidate's style-controlled strength, and the style terms whose interval excludes 0. They
    describe: no line says two candidates differ (the separations alone do). ``reference``:
    the anchor asked for (the ranking's), said when it gave way to the mean."""
    held = "answer length and markdown density held equal"
    if found.problem is not None:
        follows = [
            f"every comparison whose {_DIFFERED[name]} differed went to the "
            f"{_MORE[name] if sign > 0 else _LESS[name]}"
            for name, sign in found.separated_by
            if name in _DIFFERED
        ]
        if follows:
            return [
                f"Style control ({held}): the picks follow style exactly ("
                + "; ".join(follows)
                + "), so no strength net of style can be estimated."
            ]
        return [f"Style control ({held}): no estimate; {found.problem}."]
    order = list(found.order())
    unit = (
        "prompts as the unit"
        if found.interval_unit == "prompt"
        else "comparisons as the unit (one prompt)"
    )
    unplaced = _unplaced_words(found)
    verdict = _order_verdict(order, raw, " of the candidates with a strength" if unplaced else "")
    # A description: which candidates differ is said from the exact pair tests alone (the
    # separations); the clustered Wald intervals run short with few prompts and claim nothing.
    told = "a description: which candidates differ is the pair tests' word, above"
    anchor = "mean at 0" if found.anchor == "mean" else f"{found.anchor} at 0"
    if found.anchor == "mean" and unplaced:
        anchor = "the mean of the candidates with a strength at 0"
        if reference is not None and reference in found.extrapolated:
            anchor += f" in place of the reference {reference}, which has none"
    strengths = _strength_list(found, order)
    terms = []
    for t in found.terms:
        c = t.coefficient
        if t.status != "estimated" or not math.isfinite(c.estimate):
            terms.append(f"{t.name}: {t.status}")
            continue
        moves = c.lo > 0 or c.hi < 0
        side = "more" if c.estimate > 0 else "less"
        what = f"picks lean to {side} {t.name}" if moves else "no clear effect"
        terms.append(
            f"{t.name} {_rounded(c.estimate)} ({_rounded(c.lo)} to {_rounded(c.hi)}; {what})"
        )
    if all(t.status == "no variation" for t in found.terms):
        about_terms = (
            "No style term varies (every two answers compared had equal length and markdown), "
            "so nothing was held equal: this is the ranking's model without ties."
        )
    else:
        about_terms = (
            f"Style terms per unit of (left - right) / (left + right): {'; '.join(terms)}. "
            "With more than two candidates there is no likelihood-ratio test of the style "
            "terms: each term's interval says whether it moves the picks."
        )
    return [
        f"Style control, {found.n} untied comparisons with {held}: {verdict}"
        + (f" ({told})." if order else ".")
        + (f" {unplaced}" if unplaced else ""),
        f"  Strengths with style held equal (log-odds, {anchor}, 95% Wald intervals, "
        f"{unit}; with few prompts they run short, nearer 90% at 10): {strengths}. "
        f"{about_terms}",
    ]
