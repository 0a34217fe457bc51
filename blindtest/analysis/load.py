"""Loading a run directory, in one place: the design, the picks files, and every optional
artifact (responses, audit, generation), read through ``artifacts``, then ``build_report``.
The only module of the analysis that touches the file system."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from blindtest.analysis.common import (
    AnalysisOptions,
    AnalysisResult,
    check_options,
    finished_design,
    position_margin,
)
from blindtest.analysis.controls import (
    control_records,
    control_results,
    control_trials,
    controls_section,
    main_design,
    main_files,
    without_controls,
)
from blindtest.analysis.decision import (
    attach_decision,
    decision_spec,
    planted_texts,
    planted_trials,
    with_decision,
    without_planted,
)
from blindtest.analysis.judges import agreement_section, llm_section, preference_rows
from blindtest.analysis.people_estimate import (
    bounded_words,
    people_estimate,
    people_estimate_lines,
)
from blindtest.analysis.people_flaws import flaw_costs, leakage_flaw
from blindtest.analysis.people_settle import sample_agreement
from blindtest.analysis.preference import comparison_outcomes
from blindtest.analysis.raters import first_picks_section, judge_counts
from blindtest.analysis.report import build_report
from blindtest.analysis.responses import responses_summary
from blindtest.analysis.style import style_section
from blindtest.analysis.warnings import collect_warnings
from blindtest.errors import BadInput, option
from blindtest.model import picks as records
from blindtest.model.people_sample import sample_of
from blindtest.model.picks import Pick
from blindtest.model.protocols import PROTOCOLS
from blindtest.rundir import artifacts
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord, ReportRecord


def input_name(run_dir: Path, path: Path) -> str:
    """How a report names an input: relative to the run directory when inside it."""
    try:
        return path.resolve().relative_to(run_dir.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def _read_picks_files(
    run_dir: Path,
    paths: Sequence[Path],
    view: records.JudgeView,
    skipped: list[str],
    files: list[records.PicksFile] | None = None,
    *,
    first_words: bool = False,
) -> tuple[list[records.Pick], list[JsonObject]]:
    """The picks of every file (``first_words``: each file as it stood before any change),
    and what the report says was read. The picks are what a tally reads; each file's "both
    bad" words are in its ``abstentions`` (``files``)."""
    picks: list[records.Pick] = []
    read_files: list[JsonObject] = []
    answered: list[records.Pick] = []
    for path in paths:
        read = records.read_picks(path, view)
        if first_words:
            read = read.first_words()
        if files is not None:
            files.append(read)
        picks.extend(read.picks)
        answered.extend(read.answered)
        name = input_name(run_dir, path)
        read_files.append(
            {
                "file": name,
                "picks": len(read.answered),
                "judges": sorted({p.judge for p in read.answered}),
                "torn_line": read.torn_line,
                # An LLM judge's model and endpoint origin: what a "finish with" line needs.
                **_llm_judges(read.picks),
            }
        )
        if read.torn_line is not None:
            skipped.append(
                f"{name} line {read.torn_line}: an incomplete final line (a pick cut short "
                "while it was written) was ignored"
            )
    if len(paths) > 1:
        records.check_picks(answered, view, "the picks files together")
    return picks, read_files


def _read_responses(run_dir: Path, design: DesignRecord, skipped: list[str]) -> JsonObject | None:
    path = run_dir / artifacts.RESPONSES
    if not path.exists():
        return None
    contents = artifacts.read_jsonl(path, "responses")
    responses = responses_summary(design, contents.records, contents.torn_line)
    if contents.torn_line is not None:
        skipped.append(
            f"{artifacts.RESPONSES} line {contents.torn_line}: an incomplete final line was ignored"
        )
    if not responses["complete"]:
        skipped.append(
            f"{artifacts.RESPONSES}: {responses['answered']} of {responses['slots']} responses "
            "the design needs; the run is incomplete"
        )
    return responses


def _read_audit(
    run_dir: Path, sha256: str, skipped: list[str]
) -> tuple[JsonObject | None, JsonObject | None]:
    """(audit, how it was used): an audit recorded against another design is not used."""
    audit = _optional_json(run_dir / artifacts.AUDIT, "audit")
    if audit is None:
        return None, None
    recorded = audit.get("design_sha256")
    if recorded is not None and recorded != sha256:
        skipped.append(
            f"{artifacts.AUDIT} was recorded against design {recorded[:12]}, not this design "
            f"({sha256[:12]}); its figures are not used: rerun bt-audit on this run"
        )
        return None, {"used": False, "design_sha256": recorded}
    return audit, {"used": True, "design_sha256": recorded}


def analyze_run(
    run_dir: Path,
    picks_paths: Sequence[Path],
    options: AnalysisOptions | None = None,
    *,
    e_values_path: Path | None = None,
    against: Sequence[Path] = (),
    first_words: bool = False,
) -> AnalysisResult:
    """Load what the run directory holds (through ``artifacts``) and build the report.

    Needs ``design.json`` and at least one picks file; every other artifact adds to the report
    when present and is listed in ``missing`` when not. ``report["reading"]`` says what was
    read and what was skipped (a torn final line, an audit of another design).
    ``first_words``: the analysis of every file as it stood before any change (what
    ``report["first_picks"]`` repeats beside the result).
    """
    options = options or AnalysisOptions()
    check_options(options)
    loaded = artifacts.load_design(run_dir)
    margin = position_margin(loaded.design, options)  # a margin the design fixed is refused
    if (run_dir / artifacts.TRIALS).exists():
        view = records.load_judge_run(run_dir).view
    else:
        # Scoring needs only the design; the trial numbers come from its arrangement.
        blank = [records.Trial(e["trial"], "", ()) for e in loaded.design["arrangement"]]
        view = records.view_of(loaded.design, blank, loaded.sha256)
    paths = list(picks_paths) or [run_dir / artifacts.PICKS]
    skipped: list[str] = []
    files: list[records.PicksFile] = []
    picks, read_files = _read_picks_files(
        run_dir, paths, view, skipped, files, first_words=first_words
    )
    abstentions = _abstentions(files)
    # Hidden controls leave the A-vs-B analysis once every trial is judged;
    # before that the void report counts the trials as the judge saw them and says nothing.
    spec = decision_spec(loaded.design, options.decide, options.champion, options.estimand)
    controls = control_trials(loaded.design)
    all_files = files
    design, picks, abstentions, files, revealed = _main_view(
        loaded.design, picks, abstentions, files, controls, options
    )
    machine = llm_section(
        design,
        view,
        files,
        control_results(all_files, controls, loaded.design["alpha"]),
        spent_in=all_files if files is not all_files else None,
        margin=margin,
        planted=planted_trials(loaded.design),  # never in a judge's position gate
    )
    inputs = {artifacts.DESIGN: loaded.sha256}
    for path in [*paths, *against]:
        inputs[input_name(run_dir, path)] = artifacts.sha256_file(path)
    missing = []
    for name in (artifacts.RESPONSES, artifacts.TRIALS, artifacts.AUDIT, artifacts.GENERATION):
        if (run_dir / name).exists():
            inputs[name] = artifacts.sha256_file(run_dir / name)
        else:
            missing.append(name)
    responses = _read_responses(run_dir, loaded.design, skipped)
    audit, audit_state = _read_audit(run_dir, loaded.sha256, skipped)
    result = build_report(
        design,
        loaded.sha256,
        picks,
        inputs=inputs,
        missing=missing,
        audit=audit,
        generation=_optional_json(run_dir / artifacts.GENERATION, "generation"),
        options=options,
        e_values_path=input_name(run_dir, e_values_path or run_dir / artifacts.E_VALUES),
        reading={"picks": read_files, "audit": audit_state, "skipped": skipped},
        responses=responses,
        gates=machine["gates"] if machine is not None else (),
        # The position gate reads every pass, the hidden controls' beside the real ones.
        positions=[
            *picks,
            *(p for file in files for p in file.later_passes),
            *(control_records(all_files, controls) if revealed else ()),
        ],
        control_trials=controls if revealed else (),
        abstentions=abstentions,
    )
    result.report["picks_files"] = [input_name(run_dir, p) for p in paths]
    if machine is not None and "per_trial" in result.report:  # never in a void report
        result.report["llm_judges"] = machine
    if controls and "per_trial" in result.report:
        shown = {t.number: t.options for t in view.trials}
        result.report["controls"] = controls_section(
            loaded.design, all_files, loaded.design["alpha"], shown
        )
    _against_sections(
        result.report, run_dir, with_decision(design, spec), view, files, picks, against, controls
    )
    if "per_trial" in result.report and PROTOCOLS[view.protocol].prefers:
        _preference_sections(result.report, design, view, picks)
    # The first words' own analysis repeats no first words.
    _judges_records(run_dir, paths, options, e_values_path, all_files, result, first_words)
    if spec is None:
        return result
    return attach_decision(  # the decision's hook: report["decision"] and its exit code
        result,
        loaded.design,
        [p for file in all_files for p in file.picks],
        spec,
        options,
        generation=_optional_json(run_dir / artifacts.GENERATION, "generation"),
        texts=planted_texts(loaded.design, view),
    )


def _main_view(
    whole: DesignRecord,
    picks: list[records.Pick],
    abstentions: list[records.Pick],
    files: list[records.PicksFile],
    controls: dict[int, str],
    options: AnalysisOptions,
) -> tuple[DesignRecord, list[records.Pick], list[records.Pick], list[records.PicksFile], bool]:
    """What the A-vs-B analysis sees: hidden controls leave it once every trial is judged
    (a "both bad" word judges a trial too; before that the void report counts the trials as
    the judge saw them and says nothing), and so do the sensitivity check's planted
    comparisons, from the picks and the "both bad" words alike; ``revealed``: the controls
    left."""
    design = whole
    finished = finished_design(design, len({p.trial for p in (*picks, *abstentions)}))
    revealed = bool(controls) and (finished or options.reveal_void)
    if revealed:
        design = main_design(design)
        picks = without_controls(picks, controls)
        abstentions = without_controls(abstentions, controls)
        files = main_files(files, controls)
    planted = planted_trials(whole) if finished or options.reveal_void else {}
    design, picks, files = without_planted(design, picks, files, planted)
    abstentions = [p for p in abstentions if p.trial not in planted]
    return design, picks, abstentions, files, revealed


def _abstentions(files: Sequence[records.PicksFile]) -> list[Pick]:
    """Every file's "both bad" words: they judge a trial, and are no pick."""
    return [pick for file in files for pick in file.abstentions]


def _judges_records(
    run_dir: Path,
    paths: Sequence[Path],
    options: AnalysisOptions,
    e_values_path: Path | None,
    files: Sequence[records.PicksFile],
    result: AnalysisResult,
    first_words: bool,
) -> None:
    """A revealed report's judges' own records: each judge's counts (every trial it met, the
    hidden controls too), and when any word was changed the same analysis on the first words
    (`blindtest.analysis.raters`). None in a void report, which says nothing of the picks."""
    if first_words or "per_trial" not in result.report:
        return
    result.report["judge_counts"] = judge_counts(files)
    changed = any(file.corrections for file in files)
    first = (
        analyze_run(run_dir, paths, options, e_values_path=e_values_path, first_words=True)
        if changed
        else None
    )
    result.report["first_picks"] = (
        first_picks_section(first.report, result.report, files) if first is not None else None
    )


def _against_sections(
    report: ReportRecord,
    run_dir: Path,
    design: DesignRecord,
    view: records.JudgeView,
    files: Sequence[records.PicksFile],
    picks: Sequence[Pick],
    against: Sequence[Path],
    controls: Mapping[int, str],
) -> None:
    """What ``--against`` files add: the machine-against-person agreement, and with a people's
    sample the people's estimate; the files are named (``against_files``) so that bt-verify
    reads them again."""
    if against:
        report["against_files"] = [input_name(run_dir, p) for p in against]
    if "per_trial" not in report:  # a void report says nothing about the picks
        return
    others = main_files([records.read_picks(path, view) for path in against], controls)
    if against:
        report["machine_vs_person"] = agreement_section(files, others, view.protocol)
    if sample_of(design) is not None:
        _people_section(report, design, view, picks, others)


def _people_section(
    report: ReportRecord,
    design: DesignRecord,
    view: records.JudgeView,
    picks: Sequence[Pick],
    judge_files: Sequence[records.PicksFile],
) -> None:
    """``report["people_estimate"]``: the people's picks on their sample with the judge's (the
    ``--against`` files) on every comparison; the judge's own flaws (position, length,
    markdown) said as warnings, never gates: the estimate is valid whatever the judge does."""
    judge = [p for file in judge_files for p in file.picks if p.kind != "human"]
    people = [p for p in picks if p.kind in ("human", "external")]
    if not people:  # a machine's picks analysed alone: no people's estimate to make
        return
    section = people_estimate(design, people, judge)
    if section is None:
        return
    decision = design.get("decision") or {}
    if section.get("decision") is not None:  # the sample's agreement, for the n that settles it
        champion = str(decision["champion"])
        section["decision_sample"] = sample_agreement(design, champion, people, judge)
    diagnosed = llm_section(design, view, judge_files) if judge_files else None
    flaws = []
    found_judges = (diagnosed or {}).get("judges") or []
    for found in found_judges:
        flaws += [str(w) for w in found.get("warnings") or []]
        leaks = leakage_flaw(found)
        flaws += [leaks] if leaks else []
    flaws += [str(g) for g in (diagnosed or {}).get("gates") or []]
    section["judge_flaws"] = flaws
    if section.get("judge") is not None:
        own = next((j for j in found_judges if j.get("judge") == section["judge"]), None)
        texts = {t.number: t.options for t in view.trials}
        section["flaw_costs"] = flaw_costs(design, section, people, judge, texts, own)
    section["gates_failed"] = list(report.get("gates_failed") or [])
    shown = (report.get("candidates") or {}).get("shown") or {}
    section["lines"] = people_estimate_lines(section, shown)
    report["people_estimate"] = section
    bounded = bounded_words(report, section)
    if bounded is not None:  # the people's own result, counted on what was judged: a bound
        report["summary"] = bounded["summary"]
        report["statement"] = bounded["statement"]


def default_against(run_dir: Path, picks_paths: Sequence[Path]) -> list[Path]:
    """The judge a bare ``bt-analyze RUN`` sets beside a people's sample: RUN's picks files
    (not among ``picks_paths``) that hold an LLM judge's picks and nothing else; none for a
    design without a people's sample."""
    if sample_of(artifacts.load_design(run_dir).design) is None:
        return []
    given = {p.resolve() for p in picks_paths}
    found = []
    for path in sorted(run_dir.glob("picks*.jsonl")):
        if path.resolve() in given:
            continue
        try:
            kinds = {r.get("judge_kind") for r in artifacts.read_jsonl(path, "picks").records}
        except BadInput:
            continue  # not a picks file this version reads: never taken unasked
        if kinds == {"llm"}:
            found.append(path)
    return found


def _preference_sections(
    report: ReportRecord, design: DesignRecord, view: records.JudgeView, picks: Sequence[Pick]
) -> None:
    """A revealed preference report's style control (the answers' texts are in trials.jsonl)
    and its warnings, now that the judges' diagnostics and the controls are in."""
    section = report.get("candidates") or {}
    ranked = [str(r["candidate"]) for r in section.get("ranking") or [] if r.get("rank")]
    anchor = section.get("anchor")
    style = style_section(
        design,
        view,
        comparison_outcomes(design, picks),
        ranked,
        None if anchor in (None, "mean") else str(anchor),
    )
    if style is not None:
        report["style_control"] = style
    report["warnings"] = collect_warnings(report)


def _optional_json(path: Path, name: str) -> JsonObject | None:
    return artifacts.read_json(path, name) if path.exists() else None


def export_rows(
    run_dir: Path, picks_paths: Sequence[Path], min_confidence: float, text: str = "original"
) -> tuple[list[JsonObject], dict[str, int]]:
    """``--export-preferences``: the rows and the dropped counts (preference runs only).
    ``text``: "original" (what the models wrote, from responses.jsonl) or "judged" (what the
    judge saw, trials.jsonl)."""
    from blindtest.analysis.export import TEXTS, shown_answers
    from blindtest.model.slots import SlotState

    if text not in TEXTS:
        raise BadInput(f"{option('export_text', text)}: use one of {', '.join(TEXTS)}")
    run = records.load_judge_run(run_dir)
    if not PROTOCOLS[run.view.protocol].prefers:
        raise BadInput(
            f"{option('export_preferences')} needs a preference run; this run is "
            f"{run.view.protocol}"
        )
    responses = run_dir / artifacts.RESPONSES
    if not responses.exists():
        raise BadInput(
            f"{responses}: not found, so the models' original texts are not there to export; "
            f"use {option('export_text', 'judged')} for the texts the judge saw"
        )
    rows_read = artifacts.read_jsonl(responses, "responses").records
    answers = shown_answers(run.design, SlotState.from_rows(rows_read))
    files = [records.read_picks(path, run.view) for path in picks_paths]
    controls = control_trials(run.design)
    rows, dropped = preference_rows(
        run.view, main_files(files, controls), min_confidence, answers, text
    )
    both_bad = sum(len(file.abstentions) for file in main_files(files, controls))
    if both_bad:  # an abstention prefers neither answer: no chosen, no rejected
        dropped["both bad"] = both_bad
    hidden = sum(p.trial in controls for file in files for p in file.picks)
    if hidden:  # a control compares one model with itself: no A-vs-B preference datum
        dropped["hidden control trial"] = hidden
    return rows, dropped


def report_page(run_dir: Path, result: AnalysisResult) -> str:
    """``bt-analyze --html``: the report page, with the trials as the judge saw them when
    trials.jsonl is there."""
    from blindtest.present.page import render_report_page

    trials_path = run_dir / artifacts.TRIALS
    trials = artifacts.read_jsonl(trials_path, "trials").records if trials_path.exists() else []
    design = artifacts.load_design(run_dir).design
    return render_report_page(
        result.report,
        trials=trials,
        e_values=result.e_values,
        plain=bool(design["normalization"]["strip_formatting"]),
    )


def _llm_judges(picks: Sequence[records.Pick]) -> JsonObject:
    found = {
        p.judge: {"model": p.extra.get("judge_model"), "origin": p.extra.get("judge_origin")}
        for p in picks
        if p.kind == "llm" and p.extra.get("judge_model")
    }
    return {"llm_judges": found} if found else {}
