"""One sitting of a judge into its picks file (bt-judge without --check, and each reviewer of
a --panel: the same file handling, recorder and syncing): the file planned
(:func:`blindtest.judging.output.plan_output`: restarted with --force, refused when it holds
another judge's kind of picks), the judge made, and the trials it still has to judge driven
through the :class:`~blindtest.judging.recorder.Recorder` into the file. A live judge sits
here, and so does an LLM judge's batch import (the same judge, answered from the files).

The picks file through :mod:`blindtest.rundir.artifacts`; what the judge shows and asks is its own.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindtest.judging.driver import Judge, JudgeKind, JudgeSetup, JudgingResult, drive
from blindtest.judging.output import check_default_id, check_settings, plan_output
from blindtest.judging.recorder import Recorder
from blindtest.model.picks import JudgeRun, PicksFile, read_picks, remaining_trials
from blindtest.present.hints import stage_command
from blindtest.rundir import artifacts

__all__ = ["OpenedPicks", "analyze_command", "open_picks", "people_share", "sit", "sit_opened"]


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
    other judges' picks (:func:`~blindtest.judging.output.check_default_id`). A kind that
    answers a share of the trials (:attr:`JudgeKind.answers`) is asked only those; a person,
    when the design samples the prompts people judge, only the sample's comparisons
    (:func:`people_share`)."""
    if only is None and kind.answers is not None:
        only = kind.answers(run, judge_id)
    share = people_share(run, kind)
    if share is not None:
        sampled = set(share)
        only = share if only is None else [trial for trial in only if trial in sampled]
    opened = open_picks(run, kind, judge_id, out, force, default_of=default_of)
    judge = kind.make(JudgeSetup(run, judge_id, opened.existing, resume, options, share))
    return judge, sit_opened(run, kind, judge, opened, only, share=share)


def people_share(run: JudgeRun, kind: JudgeKind) -> tuple[int, ...] | None:
    """The comparisons a person is asked when the design samples the prompts people judge
    (:mod:`blindtest.model.people_sample`); None for any other judge, or without a sample.
    A person's progress counts its share ("trial 9 (3 of 3)"); nothing it is shown comes from
    the LLM judge."""
    from blindtest.model.people_sample import people_trials

    if kind.records_as != "human":
        return None
    return people_trials(run.design)


@dataclass(frozen=True, slots=True)
class OpenedPicks:
    """A picks file ready for one judge's sitting: what it holds (after ``--force`` emptied
    it), and the settings the judge's picks are stamped with (None: a person)."""

    judge_id: str
    out: Path
    existing: PicksFile
    settings: Mapping[str, Any] | None


def open_picks(
    run: JudgeRun,
    kind: JudgeKind,
    judge_id: str,
    out: Path,
    force: bool,
    *,
    default_of: str | None = None,
) -> OpenedPicks:
    """Decide what happens to ``out`` before ``kind`` judges into it
    (:func:`~blindtest.judging.output.plan_output`): restarted with ``force``, refused when it holds
    another kind of judge's picks, or this judge's made with other settings."""
    kind.check(run)
    settings = kind.settings(run.view.protocol) if kind.settings is not None else None
    existing = read_picks(out, run.view, missing_ok=True)
    if plan_output(existing, judge_id, bot=kind.mechanical, force=force, kind=kind.records_as):
        artifacts.write_jsonl(out, [], "picks", force=True)
        existing = read_picks(out, run.view, missing_ok=True)
    else:
        if default_of is not None:
            check_default_id(existing, judge_id, default_of)
        check_settings(existing, judge_id, settings)
    return OpenedPicks(judge_id, out, existing, settings)


def sit_opened(
    run: JudgeRun,
    kind: JudgeKind,
    judge: Judge,
    opened: OpenedPicks,
    only: Collection[int] | None = None,
    on_record: Callable[[Mapping[str, Any]], object] | None = None,
    order: Sequence[int] | None = None,
    *,
    share: Collection[int] | None = None,
) -> JudgingResult:
    """Drive ``judge`` through the trials it still has to judge (``only``: just those
    numbered there; ``order``: in this order, a panel reviewer's own, else design order) into
    the opened file, each pick through the :class:`~blindtest.judging.recorder.Recorder`
    (stamped with the kind and the settings) and synced as the kind promises; ``on_record`` is
    told of every record appended. ``share``: the trials the judge is asked, when they are a
    share of the run (a person on a people's sample): its progress and its end count those."""
    existing = opened.existing
    remaining = remaining_trials(
        run.view, existing.answered, opened.judge_id, existing.later_passes
    )
    if only is not None:
        remaining = [trial for trial in remaining if trial.number in only]
    if order is not None:
        place = {number: index for index, number in enumerate(order)}
        remaining.sort(key=lambda trial: place.get(trial.number, len(place) + trial.number))
    with artifacts.JsonlAppender(
        opened.out,
        "picks",
        fsync=kind.sync_each_pick or kind.sync_grouped,
        grouped=kind.sync_grouped,
    ) as appender:

        def append(record: dict[str, Any]) -> None:
            appender.append(record)
            if on_record is not None:
                on_record(record)

        recorder = Recorder(
            run,
            opened.judge_id,
            append,
            earlier=(*existing.answered, *existing.later_passes),
            kind=kind.records_as,
            settings=opened.settings,
            share=share,
        )
        return drive(judge, recorder, remaining)


def analyze_command(run_dir: Path, out: Path) -> str:
    """The bt-analyze command that reads the picks file ``out``."""
    if out != run_dir / artifacts.PICKS:
        return stage_command("analyze", run_dir, "--picks", out)
    return stage_command("analyze", run_dir)
