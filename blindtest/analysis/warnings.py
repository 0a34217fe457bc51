"""Every warning a preference report holds, in one top-level list (``report["warnings"]``):
each ``{code, severity, message}``, plus ``judge`` when it concerns one judge, whatever level
of the report says it at length (a failed gate, an LLM judge's diagnostics, the hidden
controls, the audit's tells, the responses, what was skipped when reading).

The codes are stable (docs/formats.md lists them): a script may act on a code, never on the
words. ``serious``: the result cannot be taken at face value (a failed gate, a judge that
follows position, length or markdown, controls that do not back the verdict, a tell that
explains the preference); ``notice``: worth a look, the result stands.

Built from the finished report alone (:func:`collect_warnings`), so the list says what the
sections say and bt-verify recomputes it with them. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from blindtest.analysis.preference import (
    GATE_AGREEMENT,
    GATE_AGREEMENT_UNMEASURED,
    GATE_NOTHING_COUNTED,
    GATE_POSITION,
    margin_warning,
)
from blindtest.rundir.artifacts import JsonObject

__all__ = ["CODES", "SERIOUS", "collect_warnings"]

SERIOUS = "serious"
NOTICE = "notice"

#: code -> (severity, what it means): the list docs/formats.md prints.
CODES: dict[str, tuple[str, str]] = {
    "gate.position": (SERIOUS, "the judges chose left or right more often than chance allows"),
    "gate.llm_position": (SERIOUS, "an LLM judge answered by position beyond spec 003's limit"),
    "gate.agreement": (SERIOUS, "the panel's agreement is below --min-kappa"),
    "gate.agreement_unmeasured": (SERIOUS, "too few comparisons were seen by two judges"),
    "gate.nothing_counted": (SERIOUS, "every comparison was left out of the test"),
    "position.margin": (NOTICE, "the left share is beyond the margin, not significantly"),
    "llm.position": (SERIOUS, "an LLM judge chose the first position more often than chance"),
    "llm.length": (SERIOUS, "an LLM judge's verdicts follow length"),
    "llm.markdown": (SERIOUS, "an LLM judge's verdicts follow markdown"),
    "llm.same_family": (NOTICE, "an LLM judge is of the same model family as a candidate"),
    "llm.same_endpoint": (NOTICE, "an LLM judge is served by a candidate's endpoint"),
    "controls.indistinguishable": (
        SERIOUS,
        "a judge prefers as often where nothing differs (hidden controls)",
    ),
    "controls.identical_outputs": (NOTICE, "a hidden control showed two identical outputs"),
    "tell.length": (SERIOUS, "the judges preferred the longer answer: length may explain it"),
    "tell.length_partial": (NOTICE, "length separates the candidates, and the judges followed it"),
    "ranking.intervals": (NOTICE, "failed bootstrap resamples left some intervals unbounded"),
    "responses.singled_out": (NOTICE, "a refusal or a cut-off answer singled one answer out"),
    "responses.served_model": (NOTICE, "the server said another model, or several, answered"),
    "reading.skipped": (NOTICE, "something was read past (a torn line, another design's audit)"),
    "estimate.void": (
        SERIOUS,
        "a sampled comparison has no people's judgement and the design's rule voids the estimate",
    ),
    "estimate.bounded": (
        SERIOUS,
        "sampled comparisons lack a people's judgement: the estimate is a worst-case bound",
    ),
    "estimate.no_judge": (
        NOTICE,
        "a people's sample without one judge's picks on every comparison: no estimate",
    ),
    "estimate.people_interval": (
        NOTICE,
        "the prediction-powered interval could not be trusted: the people's own is given",
    ),
    "estimate.judge_flaw": (
        NOTICE,
        "the judge beside the people's sample follows position, length or markdown: the "
        "estimate stays valid, only wider",
    ),
    # The pre-registered decision's own (blindtest.analysis.decision).
    "sensitivity.failed": (
        SERIOUS,
        "the judge did not prefer the champion's answer to its degraded copy",
    ),
    "sensitivity.missing": (NOTICE, "a non-inferiority or equivalence claim without a check"),
    "decision.not_pre_registered": (NOTICE, "the decision was given to bt-analyze, not designed"),
    "llm.excluded": (NOTICE, "an LLM judge left comparisons out (leakage, an inconsistent swap)"),
}

#: The LLM judge's warning sentences by how they start (blindtest.analysis.llm_diagnostics).
_LLM_PREFIXES = (
    ("position bias:", "llm.position"),
    ("length:", "llm.length"),
    ("markdown:", "llm.markdown"),
    ("the judge model ", "llm.same_family"),
    ("the judge is served by the same endpoint", "llm.same_endpoint"),
)
#: The gates' messages by how they start (blindtest.analysis.preference).
_LLM_GATE = GATE_POSITION + "the LLM judge "
_GATES = (
    (GATE_AGREEMENT_UNMEASURED, "gate.agreement_unmeasured"),
    (GATE_AGREEMENT, "gate.agreement"),
    (GATE_NOTHING_COUNTED, "gate.nothing_counted"),
    (GATE_POSITION, "gate.position"),
)


def _warning(code: str, message: str, **about: str) -> JsonObject:
    return {"code": code, "severity": CODES[code][0], "message": message, **about}


def _llm_judge_of(report: Mapping[str, Any], gate: str) -> str | None:
    """The judge an LLM judge's gate names (by its model, else its id)."""
    for found in (report.get("llm_judges") or {}).get("judges") or []:
        name = found.get("model") or found["judge"]
        if gate.startswith(f"{_LLM_GATE}{name!r}"):
            return str(found["judge"])
    return None


def _gates(report: Mapping[str, Any]) -> list[JsonObject]:
    out = []
    for gate in report.get("gates_failed") or []:
        if gate.startswith(_LLM_GATE):
            judge = _llm_judge_of(report, gate)
            out.append(_warning("gate.llm_position", gate, **({"judge": judge} if judge else {})))
            continue
        code = next(c for prefix, c in _GATES if gate.startswith(prefix))
        out.append(_warning(code, gate))
    return out


def _llm(report: Mapping[str, Any]) -> list[JsonObject]:
    out = []
    for found in (report.get("llm_judges") or {}).get("judges") or []:
        for message in found.get("warnings") or []:
            code = next((c for prefix, c in _LLM_PREFIXES if message.startswith(prefix)), None)
            if code is not None:
                out.append(_warning(code, message, judge=str(found["judge"])))
    return out


def _controls(report: Mapping[str, Any]) -> list[JsonObject]:
    controls = report.get("controls") or {}
    out = []
    for judge in controls.get("indistinguishable") or []:
        said = next(
            (j["statement"] for j in controls.get("judges") or [] if j["judge"] == judge), ""
        )
        out.append(_warning("controls.indistinguishable", said, judge=str(judge)))
    identical = controls.get("identical_outputs") or []
    if identical:
        out.append(
            _warning(
                "controls.identical_outputs",
                f"{len(identical)} control(s) showed two identical outputs (trial "
                f"{', '.join(map(str, identical))}): a judge could tell them without reading.",
            )
        )
    return out


def _tells(report: Mapping[str, Any]) -> list[JsonObject]:
    out = []
    for sentence in (report.get("audit") or {}).get("sentences") or []:
        code = "tell.length" if "may be a preference for length" in sentence else None
        if code is None and sentence.startswith("Length separates"):
            code = "tell.length_partial"
        if code is not None:
            out.append(_warning(code, sentence))
    return out


def _responses(report: Mapping[str, Any]) -> list[JsonObject]:
    out = []
    for sentence in report.get("responses_sentences") or []:
        if sentence.startswith("In ") and "singled one" in sentence:
            out.append(_warning("responses.singled_out", sentence))
        elif "the server said" in sentence:
            out.append(_warning("responses.served_model", sentence))
    return out


def _people(report: Mapping[str, Any]) -> list[JsonObject]:
    """The people's estimate: missing people's judgements (serious: void or only bounded),
    no judge, an interval that falls back to the people's own, the judge's own flaws (a
    notice: they cost width, never validity)."""
    section = report.get("people_estimate")
    if not section:
        return []
    out = []
    if section.get("status") in ("no judge", "several judges"):
        out.append(_warning("estimate.no_judge", str(section["lines"][0])))
    for pair in section.get("pairs") or []:
        said = f"{pair['first']} over {pair['second']}: {pair.get('reason')}"
        if pair["status"] == "void":
            out.append(_warning("estimate.void", said))
        elif pair["status"] == "bounded":
            out.append(_warning("estimate.bounded", said))
        result = pair.get("result") or {}
        if result.get("method") not in (None, "ppi-normal"):
            reason = f"{pair['first']} over {pair['second']}: {result.get('reason')}"
            out.append(_warning("estimate.people_interval", reason))
    judge = section.get("judge")
    for flaw in section.get("judge_flaws") or []:
        out.append(
            _warning("estimate.judge_flaw", str(flaw), **({"judge": judge} if judge else {}))
        )
    return out


def collect_warnings(report: Mapping[str, Any]) -> list[JsonObject]:
    """The report's warnings, serious ones first, each in the order its section says it."""
    found = _gates(report)
    position = margin_warning(report.get("position_bias"))
    if position is not None:
        found.append(_warning("position.margin", position))
    found += _people(report) + _llm(report) + _controls(report) + _tells(report)
    problem = (report.get("candidates") or {}).get("interval_problem")
    if problem:
        found.append(_warning("ranking.intervals", f"Intervals: {problem}."))
    found += _responses(report)
    for skipped in (report.get("reading") or {}).get("skipped") or []:
        found.append(_warning("reading.skipped", f"Skipped: {skipped}."))
    return sorted(found, key=lambda w: w["severity"] != SERIOUS)
