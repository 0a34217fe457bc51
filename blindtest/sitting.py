"""One sitting of a judge into its picks file (bt-judge without --check or --panel): the file
planned (:func:`blindtest.judgment.plan_output`: restarted with --force, refused when it holds
another judge's kind of picks), the judge made, and the trials it still has to judge driven
through the :class:`~blindtest.judgment.Recorder` into the file. A live judge sits here, and so
does an LLM judge's batch import (the same judge, answered from the files).

The picks file through :mod:`blindtest.artifacts`; what the judge shows and asks is its own.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from blindtest import artifacts
from blindtest.hints import stage_command
from blindtest.judges import Judge, JudgeKind, JudgeSetup, JudgingResult, drive
from blindtest.judgment import (
    JudgeRun,
    Recorder,
    check_default_id,
    check_settings,
    plan_output,
    read_picks,
    remaining_trials,
)

__all__ = ["analyze_command", "sit"]


def sit(
    run: JudgeRun,
    kind: JudgeKind,
    judge_id: str,
    out: Path,
    force: bool,
    resume: str,
    options: Mapping[str, object],
    only: Collection[int] | None = None,
    *,
    default_of: str | None = None,
) -> tuple[Judge, JudgingResult]:
    """One sitting of ``kind`` into ``out`` (``only``: just the trials numbered there);
    ``resume`` is the command that carries on, for the judge to show. ``default_of``: where
    ``judge_id`` came from when no --judge-id was given (None: it was given).

    Refused before anything is written: resuming a machine judge with other settings than
    its picks in ``out`` were made with, and a default judge id in a file that holds only
    other judges' picks (:func:`~blindtest.judgment.check_default_id`)."""
    kind.check(run.view.protocol)
    settings = kind.settings(run.view.protocol) if kind.settings is not None else None
    existing = read_picks(out, run.view, missing_ok=True)
    if plan_output(existing, judge_id, bot=kind.mechanical, force=force, kind=kind.records_as):
        artifacts.write_jsonl(out, [], "picks", force=True)
        existing = read_picks(out, run.view, missing_ok=True)
    else:
        if default_of is not None:
            check_default_id(existing, judge_id, default_of)
        check_settings(existing, judge_id, settings)
    judge = kind.make(JudgeSetup(run, judge_id, existing, resume, options))
    remaining = remaining_trials(run.view, existing.picks, judge_id, existing.later_passes)
    if only is not None:
        remaining = [trial for trial in remaining if trial.number in only]
    with artifacts.JsonlAppender(
        out, "picks", fsync=kind.sync_each_pick or kind.sync_grouped, grouped=kind.sync_grouped
    ) as appender:
        recorder = Recorder(
            run,
            judge_id,
            appender.append,
            earlier=(*existing.picks, *existing.later_passes),
            kind=kind.records_as,
            settings=settings,
        )
        ended = drive(judge, recorder, remaining)
    return judge, ended


def analyze_command(run_dir: Path, out: Path) -> str:
    """The bt-analyze command that reads the picks file ``out``."""
    if out != run_dir / artifacts.PICKS:
        return stage_command("analyze", run_dir, "--picks", out)
    return stage_command("analyze", run_dir)
