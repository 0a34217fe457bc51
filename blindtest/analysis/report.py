"""``build_report``: the report.json a run's picks make, per protocol, with everything
revealed only after judging; a void fixed design keeps only ``VOID_KEYS``. Triangle and pair
reports are ``blindtest/report@1``; a preference report, for any number of candidates, is
``blindtest/report@2`` (`blindtest.analysis.preference`), with its ``analysis_version`` and its
``warnings`` (`blindtest.analysis.warnings`). Pure; opens no file."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from blindtest.analysis.answers import answers_summary
from blindtest.analysis.common import (
    AnalysisOptions,
    AnalysisResult,
    by_judge,
    finished_design,
    planned_trials,
    void_statement,
)
from blindtest.analysis.pair import analyze_pair
from blindtest.analysis.preference import ANALYSIS_VERSION, analyze_preference
from blindtest.analysis.raters import abstentions_section
from blindtest.analysis.responses import appendix, cost_line, responses_sentences, spend
from blindtest.analysis.tells import audit_summary
from blindtest.analysis.triangle import analyze_triangle
from blindtest.analysis.warnings import collect_warnings
from blindtest.analysis.wording import channels, next_step, notes, screen_summary, torn_why
from blindtest.model.candidates import candidates_of
from blindtest.model.derived import dropped_trials
from blindtest.model.protocols import PROTOCOLS
from blindtest.model.sides import side_config, sides_summary
from blindtest.rundir import artifacts
from blindtest.rundir.artifacts import JsonObject, schema_tag
from blindtest.rundir.types import AnalysisFields, DesignRecord, ReportRecord

if TYPE_CHECKING:
    from blindtest.model.picks import Pick


Analysis = Callable[[DesignRecord, Sequence["Pick"]], tuple[AnalysisFields, int, list[JsonObject]]]

#: The analysis of each protocol that tells two sides apart: (report fields, exit code,
#: e-values). Preference, the protocol that ranks, is `analyze_preference`, for any k.
ANALYSES: Mapping[str, Analysis] = {
    "triangle": analyze_triangle,
    "pair": analyze_pair,
}
#: The major version of a preference report's schema (triangle and pair: 1).
PREFERENCE_REPORT = 2

#: What a void report keeps: nothing about the picks beyond how many there are.
VOID_KEYS = (
    "schema",
    "analysis_version",
    "design_sha256",
    "inputs",
    "missing",
    "protocol",
    "alpha",
    "sequential",
    "trials_planned",
    "people_trials_planned",
    "dropped_trials",
    "judges",
    "n",
    "judged",
    "verdict",
    "statement",
    "reading",
    "analysis_options",
)


def _judged(design: DesignRecord, picks: Sequence[Pick]) -> dict[str, int]:
    return {judge: len(own) for judge, own in sorted(by_judge(picks).items())}


def _abstentions(
    report: ReportRecord, design: DesignRecord, picks: Sequence[Pick], abstentions: Sequence[Pick]
) -> None:
    """A revealed preference report's "both bad" words (`blindtest.analysis.raters`), and its
    judges with those who said only "both bad"."""
    report["abstentions"] = abstentions_section(design, picks, abstentions)
    report["judges"] = sorted({*report["judges"], *(p.judge for p in abstentions)})


def _people_asked(report: ReportRecord, design: DesignRecord) -> None:
    """With a people's sample, the comparisons people were asked (the design's trials are
    every comparison, which the LLM judge judges): what the void line counts against."""
    if "people_sample" in design:
        report["people_trials_planned"] = planned_trials(design)


REVEALED_VOID = (
    "REVEALED BEFORE THE END (--reveal-void): this fixed design is unfinished, and whoever "
    "sees this analysis can no longer judge this run blind. Finish it with another judge, or "
    "start a new design."
)


def _two_sides(
    design: DesignRecord, picks: Sequence[Pick]
) -> tuple[AnalysisFields, int, list[JsonObject]]:
    """A triangle's or a pair's fields (``ANALYSES``); without a pick, void."""
    if not picks:
        void: AnalysisFields = {
            "judges": [],
            "n": 0,
            "p_value": None,
            "per_trial": [],
            "verdict": "void",
            "statement": void_statement(design, 0),
        }
        return void, 1, []
    return ANALYSES[design["protocol"]](design, picks)


def build_report(
    design: DesignRecord,
    design_sha256: str,
    picks: Sequence[Pick],
    *,
    inputs: Mapping[str, str],
    missing: Sequence[str] = (),
    audit: Mapping[str, Any] | None = None,
    generation: Mapping[str, Any] | None = None,
    options: AnalysisOptions | None = None,
    e_values_path: str | None = None,
    reading: Mapping[str, Any] | None = None,
    responses: Mapping[str, Any] | None = None,
    gates: Sequence[str] = (),
    positions: Sequence[Pick] | None = None,
    control_trials: Collection[int] = (),
    abstentions: Sequence[Pick] = (),
) -> AnalysisResult:
    """Everything ``report.json`` holds; ``exit_code`` 1 when the run measured nothing.

    An unfinished fixed design (verdict ``void``) keeps only ``VOID_KEYS`` unless
    ``options.reveal_void``: no bots, census, per-trial sides, p-value or intervals.
    ``responses`` is ``responses_summary``'s; an incomplete one makes the run incomplete.
    ``gates``: the gates the judges' diagnostics failed (``llm_section``'s), which make the
    run say nothing (verdict ``unusable``, exit 1). ``positions`` and ``control_trials``: what
    the preference analysis's position gate reads (every pass, the hidden controls' records
    beside the real ones; default ``picks``). ``abstentions``: the "both bad" words
    (``PicksFile.abstentions``): they judge a trial (a fixed design is finished by them) and
    carry answers to the extra questions, and count in no win rate, test or ranking
    (``report["abstentions"]`` counts them).
    """
    options = options or AnalysisOptions()
    protocol = design["protocol"]
    prefers = PROTOCOLS[protocol].prefers
    names = candidates_of(design)
    answered = [*picks, *abstentions]  # every word: what completeness and the answers read
    if prefers:
        finished = finished_design(design, len({p.trial for p in answered}))
        found = analyze_preference(
            design,
            picks,
            options,
            spend=spend(names, responses, generation),
            judge_gates=gates,
            positions=positions,
            control_trials=control_trials,
            reveal=finished or options.reveal_void,
            abstentions=abstentions,
        )
        fields, code = cast(AnalysisFields, found.fields), found.exit_code
        values: list[JsonObject] = []
    else:
        fields, code, values = _two_sides(design, picks)
    judged = _judged(design, answered)
    void = fields["verdict"] == "void"
    if void:
        least = min(judged.values(), default=0)
        why = torn_why(reading, least)
        if why:
            fields["statement"] = fields["statement"].replace(
                " trials were judged.", " trials were judged." + why, 1
            )
    opened, closed = channels(design)
    report: ReportRecord = {
        "schema": schema_tag("report", PREFERENCE_REPORT if prefers else 1),
        "design_sha256": design_sha256,
        "inputs": dict(inputs),
        "missing": list(missing),
        "protocol": protocol,
        "alpha": design["alpha"],
        "sequential": design["sequential"],
        "trials_planned": design["trials"],
        "models": {name: design["models"][name]["model"] for name in names},
        "correct": None,
        "n": fields["n"],
        "verdict": fields["verdict"],
        "statement": fields["statement"],
        "judged": judged,
        "audit": audit_summary(design, audit, fields),
        "channels_open": opened,
        "channels_closed": closed,
        "notes": notes(design),
        "appendix": appendix(generation),
        # From three candidates the ranking's headline and table put cost beside each.
        "cost": cost_line(generation, names) if len(names) <= 2 else None,
        "e_values": e_values_path if values else None,
        "reading": dict(reading) if reading is not None else None,
        "responses": dict(responses) if responses is not None else None,
        "answers": answers_summary(design, answered),
        "analysis_options": _recorded_options(options, prefers=prefers),
    }
    if prefers:
        report["analysis_version"] = ANALYSIS_VERSION
    _people_asked(report, design)
    if dropped := dropped_trials(design):  # a design made --from another without them
        report["dropped_trials"] = [dict(entry) for entry in dropped]
    # The protocol's figures (over "correct": None), none of them a key set above. mypy's update()
    # wants every report key declared by the argument's type; AnalysisFields declares its own.
    report.update(fields)  # type: ignore[typeddict-item]
    if void and not options.reveal_void:
        whole = dict(report)
        report = cast(ReportRecord, {key: whole[key] for key in VOID_KEYS if key in whole})
        report["n"] = min(judged.values(), default=0)
        return AnalysisResult(report=report, exit_code=1, e_values=[])
    report["responses_sentences"] = (
        responses_sentences(design, responses) if responses is not None else []
    )
    # Each candidate's full configuration, shown after the reveal.
    report["sides"] = {
        "summary": sides_summary(design),
        **{name: side_config(design, name) for name in names},
    }
    if void:
        report["notes"] = [REVEALED_VOID, *report["notes"]]
    incomplete = responses is not None and not responses["complete"] and not void
    if incomplete and responses is not None:
        report["picks_verdict"] = report["verdict"]
        report["verdict"] = "incomplete"
        report["statement"] = (
            f"Incomplete run: {artifacts.RESPONSES} holds {responses['answered']} of the "
            f"{responses['slots']} responses the design needs, so what the judge saw cannot be "
            "checked against what the models answered; rerun bt-generate on this run to fetch "
            "the rest, then analyse again. The picks alone say: " + report["statement"]
        )
        code = 1
    report["summary"] = screen_summary(design, report)
    # A void run's next step is to finish it, an incomplete one's to fetch the rest: the line
    # on stderr names it.
    report["next"] = None if void or incomplete else next_step(design, report)
    if prefers:
        _abstentions(report, design, picks, abstentions)
        report["warnings"] = collect_warnings(report)
    return AnalysisResult(report=report, exit_code=code, e_values=values)


#: What a triangle or pair report (report@1, no analysis version) has always recorded for the
#: preference options it never reads: bt-analyze's defaults before analysis version 5. Kept, so
#: that such a report keeps its bytes.
_REPORT1_OPTIONS = {"min_kappa": 0.2, "position_margin": 0.1}


def _recorded_options(options: AnalysisOptions, *, prefers: bool) -> JsonObject:
    """``report["analysis_options"]``: the options as given (None: not given, the design's or
    the default applies) in a preference report; a triangle or pair report records them as it
    always has."""
    recorded: JsonObject = {
        "min_kappa": options.min_kappa,
        "position_margin": options.position_margin,
        "reveal_void": options.reveal_void,
    }
    if not prefers:
        for key, value in _REPORT1_OPTIONS.items():
            if recorded[key] is None:
                recorded[key] = value
    return recorded
