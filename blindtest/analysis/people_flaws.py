"""``report["people_estimate"]["flaw_costs"]``: what each of the LLM judge's flaws cost the
people's prediction-powered estimate in width.

A flaw of the judge (its position lean, its taste for the longer answer or for markdown, its
leaked verdicts) never biases the estimate: it is a warning, not a gate, and its price is width.
Per flaw and per pair of candidates this says how much, by `blindtest.stats.ppi_flaws`: the
interval's width as estimated against the width with a judge whose scores did not follow the
flaw's variable beyond what people's did (its variable on each comparison, read here):

- ``position``: +1 when the pair's first candidate was shown on the left (the output the judge
  saw first), -1 on the right;
- ``length``: the sign of the first candidate's answer's word count minus the second's (the
  diagnostics' "longer output" counts words the same way);
- ``markdown``: the sign of the difference in markdown marks
  (`blindtest.analysis.llm_diagnostics.markdown_marks`);
- ``leakage``: no variable: the verdicts left out for identity leakage (predicted 1/2) against
  the same verdicts counted (`blindtest.stats.ppi_flaws.ppi_prediction_cost`).

A flaw with nothing in the data to say on which comparisons it acted (the judge's family or
endpoint is a candidate's; every verdict unsure) is listed with why it is not measured. Pure;
opens no file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from blindtest.analysis.common import excluded_reason
from blindtest.analysis.llm_diagnostics import markdown_marks, warning_kind
from blindtest.analysis.people_estimate import PairData, pairs_data
from blindtest.model.candidates import comparison_sides
from blindtest.model.picks import Pick
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import ArrangementEntry, DesignRecord
from blindtest.stats.ppi_flaws import PPIFlawCost, ppi_flaw_cost, ppi_prediction_cost

__all__ = ["VARIABLES", "flaw_costs", "leakage_flaw"]

#: Each measured flaw's variable, in words.
VARIABLES = {
    "position": "the side the first candidate was shown on",
    "length": "the longer answer (in words)",
    "markdown": "the answer with more markdown",
    "leakage": "its verdicts left out for identity leakage, counted",
}
_NOT_MEASURED = {
    "family": (
        "nothing in the data says where a judge favoured its own family (a bias alike on "
        "every verdict costs no width: the correction takes it off whole)"
    ),
    "endpoint": (
        "nothing in the data says where a shared endpoint acted (a bias alike on every "
        "verdict costs no width: the correction takes it off whole)"
    ),
    "unsure": (
        "every verdict counted as a tie, so the judge adds nothing and the interval is the "
        "people's own"
    ),
    "other": "no variable of the comparisons goes with it",
}
#: Why a variable the same on every comparison leaves the cost unmeasured, per kind.
_CONSTANT = {
    "length": (
        "one candidate's answer was the longer on every comparison, so length cannot be told "
        "apart from the candidates"
    ),
    "markdown": (
        "one candidate's answer had more markdown on every comparison, so markdown cannot be "
        "told apart from the candidates"
    ),
}


def leakage_flaw(diagnostics: Mapping[str, Any] | None) -> str | None:
    """The flaw a judge's identity leakage is (None without leakage): the diagnostics list
    the comparisons, which the judge's verdicts leave out."""
    leaks = (diagnostics or {}).get("leakage") or []
    if not leaks:
        return None
    total = int((diagnostics or {}).get("comparisons") or 0)
    return (
        f"identity leakage: the judge named or recognised a candidate in {len(leaks)} of "
        f"{total} comparisons; those verdicts are left out (its prediction there is 1/2)"
    )


def _said(kind: str, diagnostics: Mapping[str, Any]) -> str:
    """The flaw in a few words, its direction from the diagnostics."""
    if kind == "position":
        lean = (diagnostics.get("position") or {}).get("lean")
        side = "one side" if lean is None else "the left side" if lean > 0 else "the right side"
        return f"The judge preferred {side}"
    if kind in ("length", "markdown"):
        share = (diagnostics.get("p_longer" if kind == "length" else "p_more_markdown")
                 or {}).get("estimate")  # fmt: skip
        more = share is None or share >= 0.5
        if kind == "length":
            return f"The judge preferred the {'longer' if more else 'shorter'} answer"
        return f"The judge preferred the answer with {'more' if more else 'less'} markdown"
    return {
        "leakage": "The judge recognised a candidate (identity leakage)",
        "family": "The judge is of the same family as a candidate",
        "endpoint": "The judge is served by the same endpoint as the candidates",
        "unsure": "The judge was unsure of every verdict",
    }.get(kind, "The judge showed a flaw")


def _sign(value: float) -> float:
    return float((value > 0) - (value < 0))


def _variable(
    kind: str, first: str, texts: Mapping[int, Sequence[str]]
) -> Callable[[ArrangementEntry], float]:
    """The flaw's variable on one comparison, for the pair's ``first`` candidate."""

    def position(entry: ArrangementEntry) -> float:
        return 1.0 if comparison_sides(entry)[0] == first else -1.0

    def measure(entry: ArrangementEntry) -> float:
        shown = texts.get(int(entry["trial"])) or ()
        if len(shown) != 2:
            return 0.0
        count = markdown_marks if kind == "markdown" else (lambda t: len(t.split()))
        left, right = count(shown[0]), count(shown[1])
        return _sign(left - right) * (1.0 if comparison_sides(entry)[0] == first else -1.0)

    return position if kind == "position" else measure


def _cost(
    kind: str,
    data: PairData,
    counterfactual: PairData | str | None,
    texts: Mapping[int, Sequence[str]],
    level: float,
) -> PPIFlawCost:
    people = [float(s) for s in data.people if s is not None]
    if kind == "leakage" and isinstance(counterfactual, PairData):
        return ppi_prediction_cost(
            people, data.judge_sampled, data.judge_unsampled,
            counterfactual.judge_sampled, counterfactual.judge_unsampled,
            confidence_level=level, **data.options,
        )  # fmt: skip
    x = _variable(kind, data.first, texts)
    return ppi_flaw_cost(
        people, data.judge_sampled, data.judge_unsampled,
        [x(e) for e in data.inside], [x(e) for e in data.outside],
        confidence_level=level, **data.options,
    )  # fmt: skip


def _pair_costs(
    kind: str,
    section: Mapping[str, Any],
    pairs: Mapping[tuple[str, str], PairData | str],
    counterfactual: Mapping[tuple[str, str], PairData | str],
    texts: Mapping[int, Sequence[str]],
    level: float,
) -> list[JsonObject]:
    out: list[JsonObject] = []
    for pair in section.get("pairs") or []:
        key = (str(pair["first"]), str(pair["second"]))
        record: JsonObject = {"first": key[0], "second": key[1]}
        data = pairs.get(key)
        if pair.get("status") != "complete" or not isinstance(data, PairData):
            why = "bounded: no single width" if pair.get("status") == "bounded" else "no estimate"
            out.append(record | {"measured": False, "reason": why})
            continue
        try:
            found = _cost(kind, data, counterfactual.get(key), texts, level)
        except ValueError as error:
            out.append(record | {"measured": False, "reason": str(error)})
            continue
        cost = found.to_dict()
        if not found.measured and kind in _CONSTANT and "same on every" in found.reason:
            cost["reason"] = _CONSTANT[kind]
        out.append(record | cost | {"headline": (pair.get("result") or {}).get("method")})
    return out


def flaw_costs(
    design: DesignRecord,
    section: Mapping[str, Any],
    people: Sequence[Pick],
    judge: Sequence[Pick],
    texts: Mapping[int, Sequence[str]],
    diagnostics: Mapping[str, Any] | None,
    *,
    confidence_level: float = 0.95,
) -> list[JsonObject]:
    """One record per flaw in ``section["judge_flaws"]`` (module doc): ``flaw`` (its words),
    ``kind``, ``said`` (in a few words), ``variable`` (words; null when not measured),
    ``swapped`` (the judge judged each comparison twice, positions exchanged),
    ``not_measured`` (why, or null) and ``pairs``: per pair of the section, its
    `blindtest.stats.ppi_flaws.PPIFlawCost` record and the ``headline`` interval's method,
    or ``measured`` false with a ``reason`` (a bounded or missing estimate). ``people`` and
    ``judge``: the picks `blindtest.analysis.people_estimate.people_estimate` read;
    ``texts``: each trial's shown answers, left then right."""
    found = diagnostics or {}
    counted = {p.trial: p for p in judge if excluded_reason(p) is None}
    pairs = pairs_data(design, people, counted)
    with_leaks = {p.trial: p for p in judge if excluded_reason(p) in (None, "identity_leakage")}
    out: list[JsonObject] = []
    for flaw in section.get("judge_flaws") or []:
        text = str(flaw)
        kind = "leakage" if text.startswith("identity leakage:") else warning_kind(text)
        record: JsonObject = {
            "flaw": text,
            "kind": kind,
            "said": _said(kind, found),
            "variable": VARIABLES.get(kind),
            "swapped": bool((found.get("position") or {}).get("swapped")),
            "not_measured": _NOT_MEASURED.get(kind),
            "pairs": [],
        }
        if kind in VARIABLES:
            others = pairs_data(design, people, with_leaks) if kind == "leakage" else {}
            record["pairs"] = _pair_costs(kind, section, pairs, others, texts, confidence_level)
        out.append(record)
    return out
