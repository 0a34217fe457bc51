"""bt-judge's batch modes for an LLM judge (``--judge llm:MODEL``):
``--batch-export FILE`` writes every comparison this judge still has to make (both passes of a
swap), ``--batch-import FILE...`` sits the judge with each call answered from the files,
``--batch`` submits and collects through ``--judge-url``'s Batch API (the batches recorded
next to the picks file, so a rerun picks them up). A sequential design whose stopping rule
this judge's picks meet asks nothing more, as a live judge is asked nothing more.

The requests, the sorting of results and the replaying judge are
:mod:`blindtest.judging.llm.batch_requests`; the sitting :mod:`blindtest.judging.sitting`;
the export files and submitting :mod:`blindtest.transport.batch_run`. No click: lines go to
the caller's ``say`` (stderr) and ``show`` (the closing line, stdout).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from blindtest import reportfmt
from blindtest.errors import BadInput, EndpointFailed, option
from blindtest.judging import sitting
from blindtest.judging.driver import Judge, JudgeKind, JudgingResult
from blindtest.judging.llm.batch_requests import Selection, judge_requests, replay_kind, select
from blindtest.judging.llm.options import LlmOptions
from blindtest.judging.output import check_default_id, check_settings
from blindtest.judging.recorder import Recorder
from blindtest.model.picks import JudgeRun, PicksFile, Trial, read_picks, remaining_trials
from blindtest.model.protocols import PROTOCOLS
from blindtest.present.hints import stage_command
from blindtest.rundir import artifacts
from blindtest.rundir.artifacts import JsonObject
from blindtest.transport.batch import BatchResult

__all__ = ["JudgeBatch", "export", "import_files", "record_path", "submit"]

Say = Callable[[str], None]


@dataclass(frozen=True)
class JudgeBatch:
    """What a judge batch mode works on: the run, the LLM judge's options, its id and picks
    file, and the commands printed (``again``: this judge's command line without a mode)."""

    run: JudgeRun
    options: LlmOptions
    judge_id: str
    out: Path
    force: bool
    again: list[str | Path]
    #: Where ``judge_id`` came from when no --judge-id was given (None: it was given).
    default_of: str | None = None

    def earlier(self) -> PicksFile | None:
        """What the picks file holds (None with --force: it is started again); refused when
        it holds this judge's picks made with other settings, or only other judges' picks
        and no --judge-id was given."""
        if self.force:
            return None
        existing = read_picks(self.out, self.run.view, missing_ok=True)
        if self.default_of is not None:
            check_default_id(existing, self.judge_id, self.default_of)
        check_settings(existing, self.judge_id, self.options.settings(self.run.view.protocol))
        return existing

    def remaining(self) -> list[Trial]:
        existing = self.earlier()
        if existing is None:
            return list(self.run.view.trials)
        return remaining_trials(self.run.view, existing.picks, self.judge_id, existing.later_passes)

    def stopped(self) -> bool:
        """Whether a sequential design's stopping rule is met by this judge's picks: as a
        live judge is asked nothing more then, nothing more is exported or submitted."""
        existing = self.earlier()
        if existing is None or not self.run.view.sequential:
            return False
        earlier = (*existing.picks, *existing.later_passes)
        recorder = Recorder(self.run, self.judge_id, lambda _: None, earlier=earlier, kind="llm")
        return recorder.stopped_early

    def to_ask(self) -> list[Trial]:
        """The trials a batch should ask: the remaining ones, none past a sequential stop."""
        return [] if self.stopped() else self.remaining()

    def command(self, *args: str | Path) -> str:
        return stage_command("judge", *self.again, *args)

    def sit(self, kind: JudgeKind, only: Collection[int]) -> tuple[Judge, JudgingResult]:
        """The judge ``kind`` sat over the trials numbered in ``only``, into the picks file."""
        return sitting.sit(
            self.run,
            kind,
            self.judge_id,
            self.out,
            self.force,
            "",
            {},
            only,
            default_of=self.default_of,
        )

    def analyze(self) -> str:
        return sitting.analyze_command(self.run.run_dir, self.out)


def _passes(work: JudgeBatch, both: bool) -> str:
    """How many passes the export holds per comparison, said only for a preference judge."""
    if PROTOCOLS[work.run.view.protocol].llm.asking != "passes":
        return ""
    if not work.options.swap:
        return ", one pass each, no swap"
    return ", both passes" if both else ""


def export(work: JudgeBatch, out: Path, fmt: str, say: Say) -> None:
    """``--batch-export FILE``: every comparison still to ask (both passes of a swap)."""
    from blindtest.transport.batch_run import write_export

    requests = judge_requests(work.run, work.options, work.to_ask())
    if not requests:
        if work.stopped():
            say(
                f"nothing to export: the sequential design stopped for the judge "
                f"{work.judge_id}; its rule is met"
            )
        else:
            say(f"nothing to export: the judge {work.judge_id} has judged every trial")
        return
    pairs = ((cid, body) for _, cid, body in requests)
    paths = write_export(out, pairs, fmt, work.run.design_sha256, taken=(work.out,))
    trials = len({trial for trial, _, _ in requests})
    names = ", ".join(str(p) for p in paths)
    say(
        f"wrote {names}: {reportfmt.count(len(requests), 'request')} ("
        f"{reportfmt.count(trials, 'comparison')}"
        f"{_passes(work, len(requests) > trials)}) for the judge "
        f"{work.options.model} in the {fmt} batch format; when the results are back: "
        f"{work.command('--batch-import', 'RESULTS.jsonl')}"
    )


def _missing(work: JudgeBatch, say: Say) -> int:
    left = len(work.to_ask()) if not work.force else 0
    if left:
        say(
            f"{reportfmt.count(left, 'comparison')} still missing; export just those: "
            f"{work.command('--batch-export', 'missing.jsonl')}"
        )
    return left


def import_files(work: JudgeBatch, files: Sequence[Path], say: Say, show: Say) -> None:
    """``--batch-import FILE...``: the judge sat over the comparisons whose passes are all
    back. ``EndpointFailed`` when some failed (a batch asks no verdict again)."""
    from blindtest.transport.batch_run import read_result_files

    results = read_result_files(files)
    selection = _select(work, results)
    judge, ended = work.sit(replay_kind(work.options, selection.answers), selection.trials)
    failed = int(getattr(judge, "failed", 0))
    show(judge.closing(ended, work.out, work.analyze()))
    left_out = selection.not_run + selection.partial
    imported = ended.judged_now + failed
    said = [
        f"imported {reportfmt.count(imported, 'comparison')} ({failed} failed) from "
        f"{reportfmt.count(len(files), 'file')}"
    ]
    if left_out:
        said.append(
            f"{reportfmt.count(left_out, 'result')} left out (a pass missing from these files, "
            "or never run)"
        )
    past = len(selection.trials) - ended.judged_now - failed
    if ended.stopped_early and past > 0:
        said.append(f"{reportfmt.count(past, 'comparison')} past the sequential stop not recorded")
    if selection.skipped.summary():  # results are passes: a comparison has one or two
        said.append(selection.skipped.summary("result"))
    say("; ".join(said))
    work = replace(work, force=False)
    _missing(work, say)
    failed += selection.failed_before
    if failed:
        raise EndpointFailed(
            f"{failed} comparison(s) failed and recorded as failure rows in {work.out} "
            "(a batch asks no verdict again); export them again with "
            f"{work.command('--batch-export', 'missing.jsonl')}"
        )


def _select(work: JudgeBatch, results: list[BatchResult]) -> Selection:
    """The results sorted against the judge's picks file
    (:func:`blindtest.judging.llm.batch_requests.select`)."""
    return select(
        work.run,
        work.options,
        work.remaining(),
        results,
        earlier=work.earlier(),
        judge_id=work.judge_id,
    )


def record_path(out: Path) -> Path:
    """Where bt-judge --batch records its batches: next to the picks file."""
    return out.with_name(f"{out.stem}.batches.json")


def _record_io(
    path: Path, model: str
) -> tuple[Callable[[], JsonObject | None], Callable[[JsonObject], None]]:
    """Read and write the judge's batches record (refusing one of another judge model)."""

    def read_record() -> JsonObject | None:
        if not path.exists():
            return None
        record = artifacts.read_json(path, "batches")
        if record.get("judge_model", model) != model:
            raise BadInput(
                f"{path} holds the batches of the judge {record['judge_model']}; give "
                f"this judge its own {option('out')}"
            )
        return record

    def write_record(record: JsonObject) -> None:
        record["judge_model"] = model
        artifacts.write_json(path, record, "batches", force=True)

    return read_record, write_record


def submit(
    work: JudgeBatch,
    timeout: float,
    poll_interval: float,
    progress: Callable[[str, bool], None] | None,
    say: Say,
    show: Say,
) -> None:
    """``--batch``: submit what is still to ask, wait, import (a rerun resumes the recorded
    batches; ``--force`` is refused). ``EndpointFailed`` when comparisons are still
    unjudged after it."""
    from blindtest.transport import batch_run

    if work.force:
        raise BadInput(
            f"{option('batch')} resumes its recorded batches; {option('force')} is not for it"
        )
    endpoint = work.options.endpoint()
    endpoint.check_key("judge")
    failed = [0]
    judged = [0]

    def pending() -> list[tuple[str, str, dict[str, object]]]:
        requests = judge_requests(work.run, work.options, work.to_ask())
        return [("judge", cid, body) for _, cid, body in requests]

    def import_results(results: list[BatchResult]) -> tuple[int, int]:
        selection = _select(work, results)
        if not selection.trials:
            return 0, selection.not_run
        judge, _ = work.sit(replay_kind(work.options, selection.answers), selection.trials)
        now = int(getattr(judge, "failed", 0))
        failed[0] += now
        judged[0] += len(selection.trials) - now
        return len(selection.trials), selection.not_run + selection.partial

    read_record, write_record = _record_io(record_path(work.out), work.options.model)
    collect_io = batch_run.CollectIO(
        read_record=read_record,
        write_record=write_record,
        pending=pending,
        import_results=import_results,
        say=say,
        progress=progress,
        unit="comparisons",
    )
    batch_run.collect(
        work.run.design_sha256,
        {"judge": endpoint},
        collect_io,
        poll_interval=poll_interval,
        timeout=timeout,
    )
    show(
        f"The LLM judge {work.options.model} judged {reportfmt.count(judged[0], 'comparison')} "
        f"through the "
        f"Batch API into {work.out}. Run {work.analyze()} to see the result."
    )
    left = _missing(work, say)
    if left:
        raise EndpointFailed(
            f"{left} comparison(s) still unjudged after the batch ({failed[0]} failed); rerun "
            f"{work.command('--batch')} to submit them again"
        )
