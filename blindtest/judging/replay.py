"""A judge that copies another run's picks: ``bt-judge RUN --judge replay:PATH``.

PATH is a picks file written for the same design (another copy of the run, a run made again
from the same design and trials). Its one judge's picks are copied into this run's picks file
as that judge made them (the pick, reason, time, nicknames, answers, passes and settings; the
judge's kind is the source's, so the analysis treats them as it treated the source), each
through the same recorder as a live judge's, so the picks contract and a sequential design's
stopping rule apply as they did. A trial the source has a failure row for gets it again; the
replay stops at the first trial the source judge never reached.

Refused in one line, before anything is written, when PATH was judged against another design
(its picks carry another design hash, or none), names a trial this run does not have, sits
beside a ``trials.jsonl`` that differs from this run's (the picks judged other texts), or holds
more than one judge's picks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from blindtest.errors import BadInput, option
from blindtest.judging.driver import (
    Answer,
    Failed,
    Judge,
    JudgeKind,
    JudgeSetup,
    JudgingResult,
    Stop,
    Turn,
)
from blindtest.model.picks import JsonObject, JudgeRun, Pick, PicksFile, read_picks, settings_of
from blindtest.rundir import artifacts

__all__ = ["ReplayJudge", "judge_kind"]


class ReplayJudge:
    """Answers each trial with the source judge's records for it (both passes of an LLM
    judge's position swap), its failure row, or stops where the source judge stopped."""

    def __init__(self, setup: JudgeSetup, source: PicksFile, kind: JudgeKind) -> None:
        self.judge_id = setup.judge_id
        self.total = setup.run.view.total
        self.source = source.path
        self._kind = kind
        self._records: dict[int, list[Pick]] = {}
        for pick in sorted((*source.picks, *source.later_passes), key=_order):
            self._records.setdefault(pick.trial, []).append(pick)
        judges = set(source.judges)
        self._failures = {
            int(row["trial"]): row for row in source.failures if row.get("judge") in judges
        }

    @property
    def kind(self) -> JudgeKind:
        return self._kind

    @contextmanager
    def sitting(self, progress: Callable[[], JudgingResult]) -> Iterator[None]:
        yield

    def judge(self, turn: Turn) -> Answer:
        number = turn.trial.number
        if number in self._records:
            return tuple(
                replace(p, judge=self.judge_id, correction=False, line=None)
                for p in self._records[number]
            )
        if number in self._failures:
            return Failed(self._failures[number])
        return Stop()

    def end(self, result: JudgingResult) -> None:
        pass

    def closing(self, result: JudgingResult, out: Path, analyze_command: str) -> str:
        stop = " (the sequential design stopped)" if result.stopped_early else ""
        return (
            f"Replayed {result.judged_now} of {self.total} trials from {self.source}{stop} into "
            f"{out}. Run {analyze_command} to see the result."
        )


def _order(pick: Pick) -> tuple[int, int]:
    return pick.trial, pick.pass_number or 1


def _rows(path: Path, value: str) -> tuple[list[JsonObject], list[Pick]]:
    """The source's failure rows and picks, read without a run (its kind comes first)."""
    contents = artifacts.read_jsonl(path, "picks")
    rows = [row for row in contents.records if row.get("failed") is not True]
    failed = [row for row in contents.records if row.get("failed") is True]
    try:
        picks = [Pick.from_record(row) for row in rows]
    except (KeyError, TypeError, IndexError):
        raise BadInput(f"{option('kind', value)}: {path} is not a picks file") from None
    if not picks:
        raise BadInput(f"{option('kind', value)}: {path} holds no picks to replay")
    return failed, picks


def judge_kind(value: str) -> JudgeKind:
    """``replay:PATH``: the kind of PATH's one judge, who that judge was (the default
    ``--judge-id``) and the settings its picks were made with."""
    path = Path(value.partition(":")[2])
    if not str(path).strip() or str(path) == ".":
        raise BadInput(
            f"{option('kind', 'replay:PATH')}: name the picks file to copy, e.g. "
            f"{option('kind', 'replay:other-run/picks.jsonl')}"
        )
    failed, picks = _rows(path, value)
    judges = list(dict.fromkeys(p.judge for p in picks))
    if len(judges) > 1:
        listed = ", ".join(repr(j) for j in judges[:5]) + (", ..." if len(judges) > 5 else "")
        raise BadInput(
            f"{option('kind', value)}: {path} holds picks by {len(judges)} judges ({listed}); "
            "a replay copies one judge's picks: give each judge a file of its own"
        )
    kinds = {p.kind for p in picks}
    if len(kinds) > 1:
        raise BadInput(f"{option('kind', value)}: {path} holds picks of several kinds of judge")
    settings = next((s for p in picks if (s := settings_of(p)) is not None), None)
    loaded: list[PicksFile] = []

    def check(run: JudgeRun) -> None:
        _check_source(run, path, value, [*failed, *(p.to_record() for p in picks)])
        loaded[:] = [read_picks(path, run.view)]  # read before --force may empty the output

    def make(setup: JudgeSetup) -> Judge:
        source = loaded[0] if loaded else read_picks(path, setup.run.view)
        return ReplayJudge(setup, source, kind)

    kind = JudgeKind(
        value,
        kinds.pop(),
        make,
        check,
        default_id=judges[0],
        settings=None if settings is None else (lambda protocol: settings),
        from_file=True,
    )
    return kind


def _check_source(run: JudgeRun, path: Path, value: str, records: list[Mapping[str, Any]]) -> None:
    """Refuse a source made for another design or other trials, in one line."""
    ours = run.design_sha256
    theirs = {str(r.get("design_sha256")) for r in records}
    if theirs != {ours}:
        other = sorted(theirs - {ours})[0]
        said = "no design hash" if other == "None" else f"design {other[:12]}"
        raise BadInput(
            f"{option('kind', value)}: {path} was judged against {said}, not this run's design "
            f"{ours[:12]}; a replay copies picks into a run of the same design only"
        )
    total = run.view.total
    outside = sorted({t for r in records if not _trial_in(t := r.get("trial"), total)}, key=str)
    if outside:
        raise BadInput(
            f"{option('kind', value)}: {path} names trial {outside[0]!r}, which this run does not "
            f"have (trials 1..{total}); a replay copies picks for the same trials only"
        )
    source_trials = path.parent / artifacts.TRIALS
    own_trials = run.run_dir / artifacts.TRIALS
    elsewhere = source_trials.is_file() and source_trials.resolve() != own_trials.resolve()
    if elsewhere and artifacts.sha256_file(source_trials) != artifacts.sha256_file(own_trials):
        raise BadInput(
            f"{option('kind', value)}: {source_trials} differs from {own_trials}: those picks "
            "judged other texts; a replay copies picks for the same trials only"
        )


def _trial_in(trial: object, total: int) -> bool:
    return isinstance(trial, int) and not isinstance(trial, bool) and 1 <= trial <= total
