"""Style control for a several-candidate run (``report["candidates"]["style_control"]``): the
style differences of each untied comparison's two answers, the model of
:mod:`blindtest.stats.candidate_style` fitted to them, and the plain lines the screen shows
after the ranking (whether its order holds with style held equal).

The unit is a comparison's outcome as the ranking counts it (the majority of its judges; ties
and excluded picks left out). Covariates are the two-sided analysis's
(`blindtest.analysis.style.style_differences`): answer length in words and markdown density,
each the left answer's minus the right one's as (f_L - f_R) / (f_L + f_R). Intervals are
Wald's with prompt-clustered standard errors (the prompt is the unit). Secondary: the ranking
and the verdict never use it.

Pure: the design, the trials' texts, the picks and the ranking's order come in; nothing is
opened here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from blindtest.analysis.common import by_judge, excluded_reason
from blindtest.analysis.preference import _majority
from blindtest.analysis.style import (
    COVARIATES,
    MIN_COMPARISONS,
    _normalised,
    _words,
    markdown_density,
)

if TYPE_CHECKING:
    from blindtest.model.picks import JudgeView, Pick
    from blindtest.rundir.types import DesignRecord
    from blindtest.stats.candidate_style import CandidateStyleResult

__all__ = ["attach_candidate_style", "candidate_style_lines", "candidate_style_section"]

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


def _anchor_of(section: Mapping[str, Any]) -> str | None:
    anchor = section.get("anchor")
    return None if anchor in (None, "mean") else str(anchor)


def candidate_style_section(
    design: DesignRecord,
    view: JudgeView,
    picks: Sequence[Pick],
    section: Mapping[str, Any],
) -> dict[str, Any] | None:
    """The ``style_control`` record of ``report["candidates"]`` (``section``, whose anchor and
    ranking order it uses); None when trials.jsonl's texts are not there."""
    from blindtest.stats.candidate_style import candidate_style_control

    shown = {t.number: t.options for t in view.trials if len(t.options) == 2}
    if not shown:
        return None
    names = list(section["names"])
    counted = [p for p in picks if excluded_reason(p) is None]
    outcome = _majority(design, by_judge(counted))
    entries = {e["trial"]: e for e in design["arrangement"]}
    about: dict[str, Any] = {
        "unit": UNIT,
        "covariates": dict(COVARIATE_WORDS),
        "interval_method": INTERVALS,
    }
    trials = sorted(t for t, won in outcome.items() if won != "tie" and t in shown)
    if len(trials) < MIN_COMPARISONS:
        return {
            "fitted": False,
            "n": len(trials),
            **about,
            "lines": [
                f"Style control: not fitted; it needs at least {MIN_COMPARISONS} untied "
                f"comparisons and this run has {len(trials)}."
            ],
        }
    index = {name: m for m, name in enumerate(names)}
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
        left, right = str(entry["left"]), str(entry["right"])
        first.append(index[left])
        second.append(index[right])
        y.append(1 if outcome[trial] == left else 0)
        (words_l, marks_l), (words_r, marks_r) = (measure(t) for t in shown[trial])
        # As blindtest.analysis.style.style_differences: (left - right) / (left + right).
        x.append((_normalised(words_l, words_r), _normalised(marks_l, marks_r)))
        prompt.append(prompt_index[str(entry["prompt_id"])])
    found = candidate_style_control(
        names, first, second, y, x, COVARIATES, prompt, anchor=_anchor_of(section)
    )
    raw = [str(r["candidate"]) for r in section.get("ranking") or [] if r.get("rank")]
    whole = found.to_dict()
    return {
        **whole,
        "fitted": found.problem is None,
        **about,
        "strengths": {s["candidate"]: _strength(s) for s in whole["strengths"]},
        "terms": {t["name"]: _term(t) for t in whole["terms"]},
        "order": list(found.order()),
        "order_holds": (list(found.order()) == raw) if raw and found.problem is None else None,
        "lines": candidate_style_lines(found, raw),
    }


def _strength(record: Mapping[str, Any]) -> dict[str, Any]:
    return {"strength": record["strength"], "se": record["se"], "se_prompt": record["se_prompt"]}


def _term(record: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "coefficient": record["coefficient"],
        "se": record["se"],
        "se_prompt": record["se_prompt"],
        "status": record["status"],
    }


def attach_candidate_style(
    report: Any, design: DesignRecord, view: JudgeView, picks: Sequence[Pick]
) -> None:
    """Put the style control into a revealed several-candidate report (``report["candidates"]``
    of a report with ``per_trial``); any other report is left as it is."""
    section = report.get("candidates")
    if "per_trial" not in report or not isinstance(section, dict):
        return
    found = candidate_style_section(design, view, picks, section)
    if found is not None:
        section["style_control"] = found


# --------------------------------------------------------------------------- words


_DIFFERED = {"length": "lengths", "markdown": "markdown densities"}
_MORE = {"length": "longer answer", "markdown": "answer with more markdown"}
_LESS = {"length": "shorter answer", "markdown": "answer with less markdown"}


def _signed(value: float) -> str:
    return f"{round(value, 2) or 0.0:+.2f}"  # never "-0.00"


def candidate_style_lines(found: CandidateStyleResult, raw: Sequence[str]) -> list[str]:
    """One or two plain lines: whether the ranking's order holds with style held equal, each
    candidate's style-controlled strength, and the style terms whose interval excludes 0."""
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
    if not raw:
        verdict = f"the order is {', '.join(order)}"
    elif order == list(raw):
        verdict = "the ranking's order is the same"
    else:
        verdict = (
            f"the order of the estimates becomes {', '.join(order)} (the ranking has "
            f"{', '.join(raw)})"
        )
    apart = [
        f"{d.first} over {d.second}" if d.difference.estimate > 0 else f"{d.second} over {d.first}"
        for d in found.differences
        if d.separated
    ]
    told = f"told apart: {'; '.join(apart)}" if apart else "no two candidates are told apart"
    family = f"Wald 95% with Bonferroni across the {len(found.differences)} pairs, {unit}"
    anchor = "mean" if found.anchor == "mean" else found.anchor
    strengths = ", ".join(
        f"{s.candidate} {_signed(s.strength.estimate)}"
        + (
            f" ({_signed(s.strength.lo)} to {_signed(s.strength.hi)})"
            if s.strength.lo != s.strength.hi
            else ""
        )
        for s in sorted(found.strengths, key=lambda s: order.index(s.candidate))
    )
    terms = []
    for t in found.terms:
        c = t.coefficient
        if t.status != "estimated" or not math.isfinite(c.estimate):
            terms.append(f"{t.name}: {t.status}")
            continue
        moves = c.lo > 0 or c.hi < 0
        side = "more" if c.estimate > 0 else "less"
        what = f"picks lean to {side} {t.name}" if moves else "no clear effect"
        terms.append(f"{t.name} {_signed(c.estimate)} ({_signed(c.lo)} to {_signed(c.hi)}; {what})")
    if all(t.status == "no variation" for t in found.terms):
        about_terms = (
            "No style term varies (every two answers compared had equal length and markdown), "
            "so nothing was held equal: this is the ranking's model without ties."
        )
    else:
        about_terms = (
            f"Style terms per unit of (left - right) / (left + right): {'; '.join(terms)}."
        )
    return [
        f"Style control, {found.n} untied comparisons with {held}: {verdict}; {told} ({family}).",
        f"  Strengths with style held equal (log-odds, {anchor} at 0, 95% Wald intervals, "
        f"{unit}): {strengths}. {about_terms}",
    ]
