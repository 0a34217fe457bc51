"""The batch options of bt-generate (--batch-export FILE, --batch-import FILE..., --batch) and
of bt-judge for an LLM judge (the second half): parsed here, run by
:mod:`blindtest.generate_batch` and (the judge's) :mod:`blindtest.llm_batch`; the files both
share and submitting are :mod:`blindtest.batch_run`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from blindtest import artifacts
from blindtest.artifacts import JsonObject
from blindtest.cli._common import FilePath, grouped
from blindtest.errors import BadInput, EndpointFailed
from blindtest.hints import stage_command

if TYPE_CHECKING:
    from blindtest.batch import BatchResult
    from blindtest.judge import JudgeRun, PicksFile, Trial
    from blindtest.judges import Judge, JudgeKind, JudgingResult
    from blindtest.llm_batch import Selection
    from blindtest.llm_judge import LlmOptions

Say = Callable[[str], None]


def _submit_progress(fmt: str, quiet: bool) -> Callable[[str, bool], None] | None:
    """``--batch``'s progress line (on a terminal only); refuses a format it cannot submit."""
    from blindtest.batch_run import check_submittable

    check_submittable(fmt)
    if quiet or not sys.stderr.isatty():
        return None

    def progress(line: str, final: bool) -> None:
        click.echo(f"\r{line}   ", err=True, nl=final)

    return progress


#: The two options bt-generate and bt-judge share word for word.
_FORMAT_AND_POLL = [
    click.option(
        "--batch-format",
        type=click.Choice(["openai", "anthropic"]),
        default="openai",
        show_default=True,
        help="Format of --batch-export (imports tell the format by each line).",
    ),
    click.option(
        "--poll-interval",
        type=click.FloatRange(min=0),
        default=10.0,
        show_default=True,
        help="Seconds between polls of a submitted batch (--batch).",
    ),
]

_OPTIONS = [
    click.option(
        "--batch-export",
        "batch_export",
        metavar="FILE",
        type=FilePath(),
        help="Write every missing slot as a batch input file instead of asking "
        "(split into FILE.partN over 50,000 requests or 200 MB).",
    ),
    click.option(
        "--batch-import",
        "batch_import",
        metavar="FILE",
        multiple=True,
        type=FilePath(exists=True),
        help="Import batch output and error files (OpenAI, vLLM run-batch or Anthropic): "
        "--batch-import FILE [FILE]...",
    ),
    click.option(
        "--batch",
        "batch",
        is_flag=True,
        help="Submit the missing slots to the endpoints' Batch API (/v1/files, /v1/batches), "
        "wait, and import; a rerun picks up the recorded batches.",
    ),
    *_FORMAT_AND_POLL,
]
#: The files after the first of ``--batch-import FILE FILE...`` (an option takes one value;
#: the rest arrive as trailing arguments, refused without --batch-import).
_MORE_FILES = click.argument(
    "batch_files",
    nargs=-1,
    metavar="[FILE]...",
    type=FilePath(exists=True),
)
#: bt-generate's batch options, as one group (they arrive as ``**batch``).
options = grouped(*_OPTIONS, _MORE_FILES)


def _merge_files(batch: dict[str, Any]) -> None:
    """Fold the trailing files into ``batch_import`` (``--batch-import a.jsonl b.jsonl``)."""
    more = tuple(batch.pop("batch_files", None) or ())
    if not more:
        return
    if not batch["batch_import"]:
        raise BadInput(
            f"unexpected argument {more[0]}; files to import follow --batch-import "
            "(--batch-import FILE [FILE]...)"
        )
    batch["batch_import"] = (*batch["batch_import"], *more)


def wanted(batch: dict[str, Any]) -> bool:
    """Whether a batch mode was asked for (refusing two at once)."""
    _merge_files(batch)
    modes = (batch["batch_export"] is not None, bool(batch["batch_import"]), batch["batch"])
    if sum(modes) > 1:
        raise BadInput("give one of --batch-export, --batch-import and --batch")
    return any(modes)


def dispatch(
    run_dir: Path,
    batch: dict[str, Any],
    prices: dict[str, tuple[float, float]],
    quiet: bool,
    timeout: float,
) -> None:
    """Run the batch mode asked for (:mod:`blindtest.generate_batch`)."""
    from blindtest import generate_batch as core

    say: Say = (lambda _: None) if quiet else (lambda text: click.echo(text, err=True))
    fmt = batch["batch_format"]
    if batch["batch_export"] is not None:
        core.export(run_dir, batch["batch_export"], fmt, say)
    elif batch["batch_import"]:
        core.import_files(run_dir, list(batch["batch_import"]), prices, say)
    else:
        progress = _submit_progress(fmt, quiet)
        core.submit(run_dir, prices, timeout, batch["poll_interval"], progress, say)


def __getattr__(name: str) -> Any:
    # part_paths moved to blindtest.batch_run; read on first use (start-up, issue 15 item 7).
    if name == "part_paths":
        from blindtest.batch_run import part_paths

        return part_paths
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------------------------
# bt-judge --judge llm:MODEL: the same three modes for an LLM judge's comparisons

_JUDGE_OPTIONS = [
    click.option(
        "--batch-export",
        "batch_export",
        metavar="FILE",
        type=FilePath(),
        help="LLM judge: write every missing comparison (both passes) as a batch input file "
        "instead of asking (FILE.partN over 50,000 requests or 200 MB).",
    ),
    click.option(
        "--batch-import",
        "batch_import",
        metavar="FILE",
        multiple=True,
        type=FilePath(exists=True),
        help="LLM judge: import batch output and error files: --batch-import FILE [FILE]...",
    ),
    click.option(
        "--batch",
        "batch",
        is_flag=True,
        help="LLM judge: submit the missing comparisons to --judge-url's Batch API, wait, "
        "and import; a rerun picks up the recorded batches.",
    ),
    *_FORMAT_AND_POLL,
]
#: bt-judge's batch options, as one group (they arrive in ``**llm``; :func:`judge_batch_args`).
judge_options = grouped(*_JUDGE_OPTIONS, _MORE_FILES)
JUDGE_NAMES = (
    "batch_export",
    "batch_import",
    "batch",
    "batch_format",
    "poll_interval",
    "batch_files",
)


def calls(batch: dict[str, Any]) -> bool:
    """Whether the mode asked for calls the judge's endpoint (not a file export or import)."""
    return not wanted(batch) or bool(batch["batch"])


def judge_batch_args(ctx: click.Context, llm: dict[str, Any]) -> dict[str, Any]:
    """Take bt-judge's batch options out of ``llm``; refused with a judge that is no LLM."""
    batch = {name: llm.pop(name) for name in JUDGE_NAMES}
    source = click.core.ParameterSource.COMMANDLINE
    named = [
        "--" + n.replace("_", "-")
        for n in JUDGE_NAMES[:-1]  # not the trailing files: _merge_files says what they are
        if ctx.get_parameter_source(n) is source
    ]
    kind = str(ctx.params.get("kind", ""))
    if named and not kind.startswith("llm:"):
        raise BadInput(f"{', '.join(named)}: only for --judge llm:MODEL")
    _merge_files(batch)
    return batch


#: ``sit(kind, only) -> (judge, result)``: bt-judge's sitting of ``kind`` over the trials
#: numbered in ``only`` (cli/judge.py's, with the run, judge id and picks file bound).
Sit = Callable[["JudgeKind", "set[int]"], "tuple[Judge, JudgingResult]"]


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
    sit: Sit

    def earlier(self) -> PicksFile | None:
        """What the picks file holds (None with --force: it is started again)."""
        from blindtest.judge import read_picks

        return None if self.force else read_picks(self.out, self.run.view, missing_ok=True)

    def remaining(self) -> list[Trial]:
        from blindtest.judge import remaining_trials

        existing = self.earlier()
        if existing is None:
            return list(self.run.view.trials)
        return remaining_trials(self.run.view, existing.picks, self.judge_id, existing.later_passes)

    def stopped(self) -> bool:
        """Whether a sequential design's stopping rule is met by this judge's picks: as a
        live judge is asked nothing more then, nothing more is exported or submitted."""
        from blindtest.judge import Recorder

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


def judge_dispatch(work: JudgeBatch, batch: dict[str, Any], quiet: bool, timeout: float) -> None:
    """Run the batch mode asked for (``wanted(batch)`` is true)."""
    from blindtest.llm_batch import check_batchable

    check_batchable(work.run.view.protocol)
    say: Say = (lambda _: None) if quiet else (lambda text: click.echo(text, err=True))
    if batch["batch_export"] is not None:
        judge_export(work, batch["batch_export"], batch["batch_format"], say)
    elif batch["batch_import"]:
        judge_import(work, list(batch["batch_import"]), quiet, say)
    else:
        progress = _submit_progress(batch["batch_format"], quiet)
        judge_submit(work, quiet, timeout, batch["poll_interval"], progress, say)


def judge_export(work: JudgeBatch, out: Path, fmt: str, say: Say) -> None:
    from blindtest.batch_run import write_export
    from blindtest.llm_batch import judge_requests

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
        f"wrote {names}: {len(requests)} requests ({trials} comparisons"
        f"{', both passes' if len(requests) > trials else ''}) for the judge "
        f"{work.options.model} in the {fmt} batch format; when the results are back: "
        f"{work.command('--batch-import', 'RESULTS.jsonl')}"
    )


def _judge_missing(work: JudgeBatch, say: Say) -> int:
    left = len(work.to_ask()) if not work.force else 0
    if left:
        say(
            f"{left} comparisons still missing; export just those: "
            f"{work.command('--batch-export', 'missing.jsonl')}"
        )
    return left


def judge_import(work: JudgeBatch, files: Sequence[Path], quiet: bool, say: Say) -> None:
    from blindtest.batch_run import read_result_files
    from blindtest.llm_batch import replay_kind

    results = read_result_files(files)
    selection = _select(work, results)
    judge, ended = work.sit(replay_kind(work.options, selection.answers), selection.trials)
    failed = int(getattr(judge, "failed", 0))
    if not quiet:
        click.echo(judge.closing(ended, work.out, _analyze(work)))
    left_out = selection.not_run + selection.partial
    imported = ended.judged_now + failed
    said = [f"imported {imported} comparisons ({failed} failed) from {len(files)} files"]
    if left_out:
        said.append(f"{left_out} results left out (a pass missing from these files, or never run)")
    past = len(selection.trials) - ended.judged_now - failed
    if ended.stopped_early and past > 0:
        said.append(f"{past} comparisons past the sequential stop not recorded")
    if selection.skipped.summary():  # results are passes: a comparison has one or two
        said.append(selection.skipped.summary("results"))
    say("; ".join(said))
    work = replace(work, force=False)
    _judge_missing(work, say)
    failed += selection.failed_before
    if failed:
        raise EndpointFailed(
            f"{failed} comparison(s) failed and recorded as failure rows in {work.out} "
            "(a batch asks no verdict again); export them again with "
            f"{work.command('--batch-export', 'missing.jsonl')}"
        )


def _select(work: JudgeBatch, results: list[BatchResult]) -> Selection:
    """The results sorted against the judge's picks file (:func:`blindtest.llm_batch.select`)."""
    from blindtest.llm_batch import select

    return select(
        work.run,
        work.options,
        work.remaining(),
        results,
        earlier=work.earlier(),
        judge_id=work.judge_id,
    )


def _analyze(work: JudgeBatch) -> str:
    from blindtest.sitting import analyze_command

    return analyze_command(work.run.run_dir, work.out)


def judge_record_path(out: Path) -> Path:
    """Where bt-judge --batch records its batches: next to the picks file."""
    return out.with_name(f"{out.stem}.batches.json")


def _judge_record_io(
    record_path: Path, model: str
) -> tuple[Callable[[], JsonObject | None], Callable[[JsonObject], None]]:
    """Read and write the judge's batches record (refusing one of another judge model)."""

    def read_record() -> JsonObject | None:
        if not record_path.exists():
            return None
        record = artifacts.read_json(record_path, "batches")
        if record.get("judge_model", model) != model:
            raise BadInput(
                f"{record_path} holds the batches of the judge {record['judge_model']}; give "
                "this judge its own --out"
            )
        return record

    def write_record(record: JsonObject) -> None:
        record["judge_model"] = model
        artifacts.write_json(record_path, record, "batches", force=True)

    return read_record, write_record


def judge_submit(
    work: JudgeBatch,
    quiet: bool,
    timeout: float,
    poll_interval: float,
    progress: Callable[[str, bool], None] | None,
    say: Say,
) -> None:
    from blindtest import batch_run
    from blindtest.llm_batch import judge_requests, replay_kind

    if work.force:
        raise BadInput("--batch resumes its recorded batches; --force is not for it")
    endpoint = work.options.endpoint()
    endpoint.check_key("judge")
    record_path = judge_record_path(work.out)
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

    read_record, write_record = _judge_record_io(record_path, work.options.model)
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
    if not quiet:
        click.echo(
            f"The LLM judge {work.options.model} judged {judged[0]} comparisons through the "
            f"Batch API into {work.out}. Run {_analyze(work)} to see the result."
        )
    left = _judge_missing(work, say)
    if left:
        raise EndpointFailed(
            f"{left} comparison(s) still unjudged after the batch ({failed[0]} failed); rerun "
            f"{work.command('--batch')} to submit them again"
        )
