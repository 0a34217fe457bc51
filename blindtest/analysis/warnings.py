"""Every warning a preference report holds, in one top-level list (``report["warnings"]``):
each ``{code, severity, message}``, plus ``judge`` when it concerns one judge, whatever level
of the report says it at length (a failed gate, an LLM judge's diagnostics, the hidden
controls, the audit's tells, the responses, what was skipped when reading).

The codes are stable (docs/formats.md lists them, and the codes retired with the analysis
version that stopped writing them): a script may act on a code, never on the words; each
warning also carries ``title``, what its code means. ``serious``: the result cannot be taken
at face value (a failed gate, a judge that leans by position or follows length or markdown, a
tell that explains the preference); ``notice``: worth a look, the result stands. The result
screen and the report page name every serious warning before the result; ``bt-analyze
--fail-on CODE,...`` and ``--strict`` (every serious code) make them fail a CI run
(:func:`failing_warnings`).

Built from the finished report alone (:func:`collect_warnings`), so the list says what the
sections say and bt-verify recomputes it with them. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from blindtest.analysis.gates import (
    GATE_AGREEMENT,
    GATE_AGREEMENT_UNMEASURED,
    GATE_NOTHING_COUNTED,
    GATE_POSITION,
    GATE_UNSURE,
)
from blindtest.errors import BadInput, option
from blindtest.rundir.artifacts import JsonObject

__all__ = [
    "CODES",
    "RETIRED",
    "SERIOUS",
    "check_codes",
    "collect_warnings",
    "failing",
    "failing_warnings",
    "listed_warnings",
    "serious_codes",
]

SERIOUS = "serious"
NOTICE = "notice"

#: code -> (severity, what it means): the list docs/formats.md prints.
CODES: dict[str, tuple[str, str]] = {
    "gate.position": (SERIOUS, "the judges' left share is shown beyond the position margin"),
    "gate.llm_position": (SERIOUS, "an LLM judge's left share is shown beyond the margin"),
    "gate.agreement": (
        SERIOUS,
        "the panel's agreement is not distinguishable from chance (or below --min-kappa)",
    ),
    "gate.agreement_unmeasured": (SERIOUS, "too few comparisons were seen by two judges"),
    "gate.nothing_counted": (SERIOUS, "every comparison was left out of the test"),
    "gate.unsure": (SERIOUS, "an LLM judge put every verdict below --min-confidence"),
    "position.lean": (SERIOUS, "the judges lean to one position, not shown beyond the margin"),
    "position.margin": (NOTICE, "too few comparisons to bound the left share within the margin"),
    "llm.position": (SERIOUS, "an LLM judge leans to one position, not shown beyond the margin"),
    "llm.length": (SERIOUS, "an LLM judge's verdicts follow length"),
    "llm.markdown": (SERIOUS, "an LLM judge's verdicts follow markdown"),
    "llm.same_family": (NOTICE, "an LLM judge is of the same model family as a candidate"),
    "llm.same_endpoint": (NOTICE, "an LLM judge is served by a candidate's endpoint"),
    "controls.identical_outputs": (NOTICE, "a hidden control showed two identical outputs"),
    "tell.length": (SERIOUS, "the judges preferred the longer answer: length may explain it"),
    "tell.length_partial": (NOTICE, "length separates the candidates, and the judges followed it"),
    "ranking.intervals": (NOTICE, "failed bootstrap resamples left some intervals unbounded"),
    "agreement.pair_chance": (
        NOTICE,
        "the panel agrees at chance on a pair of candidates the report calls different",
    ),
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
#: Codes no longer written, with the analysis version that stopped: never reused.
RETIRED: dict[str, str] = {
    "controls.indistinguishable": (
        "analysis version 5: hidden controls describe the judge and withdraw no verdict"
    ),
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
_UNSURE_GATE = GATE_UNSURE + "the LLM judge "
_GATES = (
    (GATE_AGREEMENT_UNMEASURED, "gate.agreement_unmeasured"),
    (GATE_AGREEMENT, "gate.agreement"),
    (GATE_NOTHING_COUNTED, "gate.nothing_counted"),
    (GATE_POSITION, "gate.position"),
)


def _warning(code: str, message: str, **about: Any) -> JsonObject:
    severity, title = CODES[code]
    return {"code": code, "severity": severity, "title": title, "message": message, **about}


def _llm_judge_of(report: Mapping[str, Any], gate: str, prefix: str) -> str | None:
    """The judge an LLM judge's gate names (by its model, else its id)."""
    for found in (report.get("llm_judges") or {}).get("judges") or []:
        name = found.get("model") or found["judge"]
        if gate.startswith(f"{prefix}{name!r}"):
            return str(found["judge"])
    return None


def _gates(report: Mapping[str, Any]) -> list[JsonObject]:
    out = []
    for gate in report.get("gates_failed") or []:
        for prefix, code in ((_LLM_GATE, "gate.llm_position"), (_UNSURE_GATE, "gate.unsure")):
            if gate.startswith(prefix):
                judge = _llm_judge_of(report, gate, prefix)
                out.append(_warning(code, gate, **({"judge": judge} if judge else {})))
                break
        else:
            code = next(c for prefix, c in _GATES if gate.startswith(prefix))
            out.append(_warning(code, gate))
    return out


def _position(report: Mapping[str, Any]) -> list[JsonObject]:
    """The pooled position gate's warning: a lean shown but not beyond the margin (serious),
    or too few comparisons to bound it (a notice). Left out when the run's one judge is an LLM
    judge whose own gate says the same of the same picks (``llm.position``, naming it)."""
    bias = report.get("position_bias") or {}
    if bias.get("verdict") != "warn":
        return []
    code = "position.lean" if bias.get("significant") else "position.margin"
    judges = (report.get("llm_judges") or {}).get("judges") or []
    own = [
        w for found in judges for w in found.get("warnings") or [] if w.startswith("position bias:")
    ]
    if code == "position.lean" and own and len(report.get("judges") or []) == 1:
        return []
    return [_warning(code, str(bias["statement"]))]


def _pair_agreement(report: Mapping[str, Any]) -> list[JsonObject]:
    """A pair of candidates the pair tests call different on which the panel's agreement is
    not distinguishable from chance."""
    pairs = (report.get("agreement") or {}).get("candidate_pairs") or []
    real = {
        tuple(sorted((r["first"], r["second"])))
        for r in ((report.get("candidates") or {}).get("pairs") or {}).get("pairs") or []
        if r.get("significant")
    }
    out = []
    for found in pairs:
        pair = tuple(found["candidates"])
        if pair not in real or found.get("distinguishable") is not False:
            continue
        alpha = found["alpha"]
        interval = alpha.get("interval") or {}
        bounds = (
            f" (95% interval {interval['lo']:.2f} to {interval['hi']:.2f})"
            if interval.get("lo") is not None
            else ""
        )
        out.append(
            _warning(
                "agreement.pair_chance",
                f"Agreement on {pair[0]} against {pair[1]}: Krippendorff's alpha "
                f"{alpha['statistic']:.2f}{bounds} over {found['comparisons']} comparisons is "
                "not distinguishable from chance, though the pair test calls the two different: "
                "the judges do not share the signal behind it.",
                pair=list(pair),
            )
        )
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
    found = _gates(report) + _position(report)
    found += _people(report) + _llm(report) + _pair_agreement(report)
    found += _controls(report) + _tells(report)
    problem = (report.get("candidates") or {}).get("interval_problem")
    if problem:
        found.append(_warning("ranking.intervals", f"Intervals: {problem}."))
    found += _responses(report)
    for skipped in (report.get("reading") or {}).get("skipped") or []:
        found.append(_warning("reading.skipped", f"Skipped: {skipped}."))
    return sorted(found, key=lambda w: w["severity"] != SERIOUS)


def serious_codes() -> list[str]:
    """Every serious code (what ``--strict`` fails on)."""
    return [code for code, (severity, _) in CODES.items() if severity == SERIOUS]


#: The code an older report's warning sentence is read under (report@1 held plain sentences):
#: ``--fail-on warning`` names them, ``--strict`` takes them as serious.
PLAIN = "warning"


def check_codes(codes: Sequence[str]) -> list[str]:
    """``codes`` as given to ``fail_on`` (each may hold several, comma-separated), checked
    before anything is read: an unknown or retired code is refused in one line (BadInput)."""
    wanted = [c.strip() for given in codes for c in given.split(",") if c.strip()]
    if codes and not wanted:
        raise BadInput(f"{option('fail_on')}: give codes separated by commas, e.g. llm.length")
    for code in wanted:
        if code in RETIRED:
            raise BadInput(
                f"{option('fail_on')} {code}: retired ({RETIRED[code]}); no report writes it"
            )
        if code not in CODES and code != PLAIN:
            raise BadInput(
                f"{option('fail_on')} {code}: no warning has that code; give some of "
                f"{', '.join(CODES)} (docs/formats.md)"
            )
    return list(dict.fromkeys(wanted))


def listed_warnings(report: Mapping[str, Any]) -> list[JsonObject]:
    """Every warning ``report`` holds as ``{code, severity, ...}``: its top-level list (an
    older report's plain sentence under the code ``warning``, serious), and a decision's own
    warnings where the list lacks them (a triangle or pair report has no list)."""
    out: list[JsonObject] = []
    for item in report.get("warnings") or ():
        if isinstance(item, Mapping):
            out.append(dict(item))
        else:
            out.append({"code": PLAIN, "severity": SERIOUS, "message": str(item)})
    seen = {(w.get("code"), w.get("message")) for w in out}
    for item in (report.get("decision") or {}).get("warnings") or ():
        if (item.get("code"), item.get("message")) not in seen:
            out.append(dict(item))
    return out


def failing(
    warnings: Iterable[Mapping[str, Any]], fail_on: Sequence[str] = (), *, strict: bool = False
) -> list[JsonObject]:
    """The ``warnings`` that ``fail_on`` (checked codes) and ``strict`` (every serious one)
    turn into exit 1, in their order."""
    wanted = set(fail_on)
    return [
        dict(w)
        for w in warnings
        if w.get("code") in wanted or (strict and w.get("severity") == SERIOUS)
    ]


def failing_warnings(
    report: Mapping[str, Any], fail_on: Sequence[str] = (), *, strict: bool = False
) -> list[JsonObject]:
    """The warnings of ``report`` (:func:`listed_warnings`) that ``--fail-on`` and
    ``--strict`` turn into a failed run, with a decision or without."""
    return failing(listed_warnings(report), fail_on, strict=strict)
