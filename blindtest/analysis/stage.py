"""The analysis stage: design + picks (+ whatever else RUN holds) -> RUN/report.json, the
e-values of a sequential design, and on request an HTML page and a preference export."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from blindtest.errors import BadInput, option
from blindtest.present.hints import stage_command
from blindtest.rundir import artifacts
from blindtest.rundir.locking import holding_run
from blindtest.rundir.types import ReportRecord

__all__ = ["AnalyzeResult", "analyze"]


@dataclass(frozen=True, slots=True)
class AnalyzeResult:
    """What :func:`analyze` wrote and found: the report (``report_path``; ``report`` its
    document), the e-values file of a sequential design, the HTML page and the preference
    export when asked for (``exported`` rows kept, ``dropped`` by reason). ``verdict`` is the
    report's; ``exit_code`` is 0 when the result can be acted on, 1 when it cannot (void,
    unusable, incomplete, or a failed gate: ``gates_failed``) or when a warning was asked to
    fail the run (``failed_on``: the warnings ``fail_on`` and ``strict`` matched)."""

    run_dir: Path
    report_path: Path
    e_values_path: Path | None
    html_path: Path | None
    export_path: Path | None
    report: ReportRecord
    exit_code: int
    exported: int | None = None
    dropped: Mapping[str, int] | None = None
    failed_on: tuple[Mapping[str, Any], ...] = ()

    @property
    def verdict(self) -> str:
        return str(self.report["verdict"])

    @property
    def gates_failed(self) -> tuple[str, ...]:
        return tuple(self.report.get("gates_failed") or ())

    @property
    def statement(self) -> str:
        return str(self.report["statement"])


def _paths(values: Sequence[str | os.PathLike[str]]) -> list[Path]:
    return [Path(v) for v in values]


def analyze(
    run_dir: str | os.PathLike[str],
    *,
    picks: Sequence[str | os.PathLike[str]] = (),
    out: str | os.PathLike[str] | None = None,
    html: str | os.PathLike[str] | None = None,
    min_kappa: float | None = None,
    position_margin: float | None = None,
    fail_on: Sequence[str] = (),
    strict: bool = False,
    against: Sequence[str | os.PathLike[str]] = (),
    export_preferences: str | os.PathLike[str] | None = None,
    export_min_confidence: float = 0.8,
    export_text: str = "original",
    reveal_void: bool = False,
    force: bool = False,
    holder: str | None = None,
    say: Callable[[str], None] | None = None,
    decide: str | None = None,
    champion: str | None = None,
    estimand: str | None = None,
    by_tag: bool = False,
    junit: str | os.PathLike[str] | None = None,
) -> AnalyzeResult:
    """Score the picks (default RUN/picks.jsonl; several files: several judges), compute the
    exact statistics and write the report (``bt-analyze``; ``out``: another report file).
    ``against``: another judge kind's picks, compared with, never pooled; with a people's
    sample in the design, the judge whose picks on every comparison the people's estimate uses
    (default: RUN's picks files holding only an LLM judge's picks). ``reveal_void``
    shows the analysis of an unfinished fixed design (whoever sees it can no longer judge
    blind). ``min_kappa``: a stricter agreement rule (Krippendorff's alpha below it fails the
    run); ``position_margin``: the position gate's margin when the design fixes none.
    ``fail_on``: warning codes (docs/formats.md; comma-separated allowed) that make the exit
    code 1 when the report holds one; ``strict``: every serious code. A report from the same
    inputs is replaced without ``force``. Holds RUN's lock,
    except when nothing is written into RUN and RUN cannot be written (a read-only archive
    analysed to ``out`` elsewhere): then it reads without the lock and tells ``say`` why.

    A decision (:mod:`blindtest.analysis.decision`): the design's, or ``decide`` (with
    ``champion`` and ``estimand``), not pre-registered; ``by_tag`` decides per tag too;
    ``junit`` writes one JUnit test case per decision. The exit code is the decision's (0, 4,
    5) unless a gate failed; a warning ``fail_on`` or ``strict`` names makes it 1 whatever the
    decision says, with a decision or without."""
    from blindtest.analysis.api import (
        AnalysisOptions,
        analyze_run,
        default_against,
        export_rows,
        input_name,
        report_page,
    )
    from blindtest.analysis.common import check_options
    from blindtest.analysis.warnings import check_codes, failing_warnings

    codes = tuple(check_codes(fail_on))  # before anything is read or written
    options = AnalysisOptions(
        min_kappa=min_kappa,
        position_margin=position_margin,
        reveal_void=reveal_void,
        decide=decide,
        champion=champion,
        estimand=estimand,
        fail_on=codes,
        strict=strict,
        by_tag=by_tag,
    )
    check_options(options)

    run = Path(run_dir)
    picks_given = _paths(picks)
    report_path = Path(out) if out is not None else run / artifacts.REPORT
    html_path = Path(html) if html is not None else None
    export_path = Path(export_preferences) if export_preferences is not None else None
    junit_path = Path(junit) if junit is not None else None
    e_values_path = report_path.with_name(artifacts.e_values_name(report_path.name))
    written = [report_path, e_values_path, html_path, export_path, junit_path]
    inside = any(_inside(path, run) for path in written if path is not None)
    with holding_run(run, holder, unlocked=_read_only(run) if inside else (say or _silent)):
        inputs = picks_given or default_picks(run)
        if not picks_given and inputs != [run / artifacts.PICKS] and say is not None:
            say(f"reading the panel's picks: {_names(inputs)}")
        beside = _paths(against) or default_against(run, inputs)
        if not against and beside and say is not None:
            say(f"reading the LLM judge's picks beside the people's: {_names(beside)}")
        read = [*inputs, *beside]
        names = [input_name(run, path) for path in read]
        _check_decision_options(run, options, junit_path)
        _check_people_judge(run, options, beside)
        artifacts.claim_report(run, read, names, report_path, e_values_path, html_path, force)
        if junit_path is not None:  # derived from the report, as the e-values: replaced
            artifacts.claim_output(junit_path, artifacts.JUNIT, force=True, inputs=read)
        _check_export(export_path, run, inputs, force)
        exported = (
            export_rows(run, inputs, export_min_confidence, export_text) if export_path else None
        )
        result = analyze_run(run, inputs, options, e_values_path=e_values_path, against=beside)
        if result.e_values:
            artifacts.write_jsonl(e_values_path, result.e_values, "e_values", force=True)
        artifacts.write_json(report_path, result.report, "report", force=True)  # claimed
        if html_path is not None:
            artifacts.write_bytes_atomic(html_path, report_page(run, result).encode())
        if junit_path is not None:
            from blindtest.present.decision import junit_xml

            artifacts.write_bytes_atomic(junit_path, junit_xml(result.report))
        if export_path is not None and exported is not None:
            _write_export(export_path, exported[0])
    failed = tuple(failing_warnings(result.report, codes, strict=strict))
    return AnalyzeResult(
        run_dir=run,
        report_path=report_path,
        e_values_path=e_values_path if result.e_values else None,
        html_path=html_path,
        export_path=export_path,
        report=result.report,
        exit_code=1 if failed else result.exit_code,
        failed_on=failed,
        exported=len(exported[0]) if exported is not None else None,
        dropped=dict(exported[1]) if exported is not None else None,
    )


def _names(paths: Sequence[Path]) -> str:
    return ", ".join(p.name for p in paths)


def _check_people_judge(run: Path, options: Any, beside: Sequence[Path]) -> None:
    """Before anything is written: a decision given after the fact on a design with a
    people's sample is made on the people's prediction-powered estimate, which needs one LLM
    judge's picks on every comparison; without any (no --against, none found in RUN) it is
    refused with what to type, never decided on the people's picks alone. (A pre-registered
    one is the design's: its report says it has no result.)"""
    from blindtest.model.people_sample import sample_of

    design = artifacts.load_design(run).design
    if options.decide is None or beside or "decision" in design or sample_of(design) is None:
        return
    if str(options.decide).startswith("similar"):
        return  # not a preference rule: refused as such by the decision
    raise BadInput(
        f"{option('decide')} {options.decide}: this design draws a people's sample, so the "
        "decision is made on the people's prediction-powered estimate, which needs an LLM "
        f"judge's picks on every comparison, and {run} holds none: add {option('against')} "
        f"{run / 'picks-JUDGE.jsonl'} ("
        + stage_command("judge", run, "--judge", "llm:MODEL", "--out", run / "picks-JUDGE.jsonl")
        + " makes it)"
    )


def _check_decision_options(run: Path, options: Any, junit: Path | None) -> None:
    """Before anything is written: --junit and --by-tag read a decision (the design's or
    --decide's). --fail-on and --strict work on every run (their codes are checked first)."""
    wanted = {
        option("junit"): junit is not None,
        option("by_tag"): options.by_tag,
    }
    given = [flag for flag, on in wanted.items() if on]
    if given and options.decide is None and "decision" not in artifacts.load_design(run).design:
        raise BadInput(
            f"{given[0]} reads a decision, and this design pre-registers none: add "
            f"{option('decide')} RULE (labelled not pre-registered) or design with bt-design "
            f"{option('decide')}"
        )


def _silent(_: str) -> None:
    pass


def _read_only(run: Path) -> Callable[[str], None]:
    """What a report written into a run that cannot be written says: where to write it."""

    def refuse(why: str) -> None:
        raise BadInput(
            f"{why.partition(', so')[0]}: write the report elsewhere with {option('out')} FILE "
            f"(e.g. {stage_command('analyze', str(run), '--out', 'report.json')})"
        )

    return refuse


def default_picks(run: Path) -> list[Path]:
    """The picks a bare ``bt-analyze RUN`` reads: RUN/picks.jsonl; when there is none, the
    files a panel judged into (``RUN/picks-<name>.jsonl`` whose picks carry ``panel``)."""
    main = run / artifacts.PICKS
    if main.exists():
        return [main]
    panel = [path for path in sorted(run.glob("picks-*.jsonl")) if _from_panel(path)]
    return panel or [main]


def _from_panel(path: Path) -> bool:
    try:
        records = artifacts.read_jsonl(path, "picks").records
    except BadInput:
        return False  # not a picks file this version reads: never taken unasked
    return any(isinstance(r.get("panel"), dict) for r in records)


def _inside(path: Path, run_dir: Path) -> bool:
    """Whether writing ``path`` writes into ``run_dir`` (a file directly in it or below)."""
    return path.resolve().is_relative_to(run_dir.resolve())


def _check_export(path: Path | None, run_dir: Path, picks: Sequence[Path], force: bool) -> None:
    """Before anything is written: never over a run file or an input; ``force`` replaces."""
    if path is None:
        return
    inputs = [*picks, run_dir / artifacts.DESIGN, run_dir / artifacts.TRIALS]
    if path.name in artifacts.RUN_FILE_KINDS or any(path.resolve() == p.resolve() for p in inputs):
        raise BadInput(
            f"{option('export_preferences', path)}: that is a run file or an input; name another"
        )
    if path.exists() and not force:
        raise BadInput(
            f"{option('export_preferences', path)} already exists; use {option('force', True)} "
            "to overwrite it"
        )


def _write_export(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    artifacts.write_bytes_atomic(path, b"".join(orjson.dumps(r) + b"\n" for r in rows))
