"""bt-generate's batch modes, as the CLI runs them: --batch-export FILE, --batch-import
FILE..., --batch. Resolves files and prints; the work is in :mod:`blindtest.batch` (formats),
:mod:`blindtest.generate` (bodies, rows) and :mod:`blindtest.batch_run` (submit and collect).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from blindtest import artifacts
from blindtest.artifact_types import GenerationRecord, TrialRecord
from blindtest.artifacts import JsonObject
from blindtest.cli._common import grouped
from blindtest.errors import BadInput, EndpointFailed
from blindtest.hints import stage_command

if TYPE_CHECKING:
    from blindtest.batch import BatchResult

Say = Callable[[str], None]


_OPTIONS = [
    click.option(
        "--batch-export",
        "batch_export",
        metavar="FILE",
        type=click.Path(path_type=Path, dir_okay=False),
        help="Write every missing slot as a batch input file instead of asking "
        "(split into FILE.partN over 50,000 requests or 200 MB).",
    ),
    click.option(
        "--batch-import",
        "batch_import",
        metavar="FILE",
        multiple=True,
        type=click.Path(path_type=Path, exists=True, dir_okay=False),
        help="Import batch output and error files (OpenAI, vLLM run-batch or Anthropic); "
        "repeatable.",
    ),
    click.option(
        "--batch",
        "batch",
        is_flag=True,
        help="Submit the missing slots to the endpoints' Batch API (/v1/files, /v1/batches), "
        "wait, and import; a rerun picks up the recorded batches.",
    ),
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
#: bt-generate's batch options, as one group (they arrive as ``**batch``).
options = grouped(*_OPTIONS)


def wanted(batch: dict[str, Any]) -> bool:
    """Whether a batch mode was asked for (refusing two at once)."""
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
    """Run the batch mode asked for."""
    say: Say = (lambda _: None) if quiet else (lambda text: click.echo(text, err=True))
    fmt = batch["batch_format"]
    if batch["batch_export"] is not None:
        export(run_dir, batch["batch_export"], fmt, say)
    elif batch["batch_import"]:
        import_files(run_dir, list(batch["batch_import"]), prices, quiet)
    else:
        if fmt != "openai":
            raise BadInput(
                "--batch speaks OpenAI's Batch API; for Anthropic, --batch-export FILE "
                "--batch-format anthropic and submit it there"
            )
        progress = None
        if not quiet and sys.stderr.isatty():

            def progress(line: str, final: bool) -> None:
                click.echo(f"\r{line}   ", err=True, nl=final)

        submit(run_dir, prices, quiet, timeout, batch["poll_interval"], progress)


def part_paths(path: Path, parts: int) -> list[Path]:
    """``FILE`` for one part; ``STEM.partN.SUFFIX`` for N parts (``batch.part2.jsonl``)."""
    if parts == 1:
        return [path]
    return [path.with_name(f"{path.stem}.part{n}{path.suffix}") for n in range(1, parts + 1)]


def _ours(path: Path, run: str) -> bool:
    """An earlier export of this run (so it may be replaced): its first line's custom_id."""
    with path.open("rb") as handle:
        first = handle.readline()
    return f'"custom_id":"bt-{run}-'.encode() in first


def export(run_dir: Path, out: Path, fmt: str, say: Say) -> None:
    from blindtest import generate as lib
    from blindtest.batch import request_lines, split_parts
    from blindtest.slots import LAUNDER, SlotState, pending_work

    loaded = artifacts.load_design(run_dir)
    rows = artifacts.read_jsonl(run_dir / artifacts.RESPONSES, "responses", missing_ok=True)
    state = SlotState.from_rows(rows.records)
    requests = lib.batch_requests(loaded.design, loaded.sha256, state)
    if not requests:
        launder = any(w.stage == LAUNDER for w in pending_work(loaded.design, state))
        rest = f"; launder live: {stage_command('generate', run_dir)}" if launder else ""
        say(f"nothing to export: every slot is answered{rest}")
        return
    parts = split_parts(request_lines(((cid, body) for _, cid, body in requests), fmt))
    paths = part_paths(out, len(parts))
    for path in paths:
        if path.is_dir() or path.name in artifacts.RUN_FILE_KINDS:
            raise BadInput(f"{path}: choose another name for the batch file")
        if path.exists() and not _ours(path, loaded.sha256[:16]):
            raise BadInput(
                f"{path} exists and is not a batch file of this run; refusing to overwrite it"
            )
    for path, lines in zip(paths, parts, strict=True):
        artifacts.write_bytes_atomic(path, b"".join(lines))
    sides = {side: sum(r[0] == side for r in requests) for side in ("A", "B")}
    names = ", ".join(str(p) for p in paths)
    say(
        f"wrote {names}: {len(requests)} requests in the {fmt} batch format "
        f"({sides['A']} + {sides['B']} slots); when the results are back: "
        f"{stage_command('generate', run_dir, '--batch-import', 'RESULTS.jsonl')}"
    )


def _io(run_dir: Path, quiet: bool) -> Any:
    from blindtest import generate as lib

    loaded = artifacts.load_design(run_dir)
    path = run_dir / artifacts.RESPONSES

    @contextmanager
    def open_responses() -> Iterator[Callable[[Mapping[str, Any]], None]]:
        with artifacts.JsonlAppender(path, "responses", grouped=True) as out:
            yield out.append

    def write_generation(record: GenerationRecord) -> bool:
        target = run_dir / artifacts.GENERATION
        if target.exists() and artifacts.read_json(target, "generation") == record:
            return False
        artifacts.write_json(target, record, "generation", force=True)
        return True

    say = (lambda _: None) if quiet else (lambda text: click.echo(text, err=True))
    io = lib.StageIO(open_responses, write_generation, lambda *_: "", say=say)
    return loaded, io


def _previous(run_dir: Path) -> JsonObject | None:
    path = run_dir / artifacts.GENERATION
    return artifacts.read_json(path, "generation") if path.exists() else None


def _finish(run_dir: Path, trials: list[TrialRecord] | None, say: Say) -> int:
    """Write the blinded view when every slot is answered; else say what is missing and
    return how many slots a batch could still answer (laundering is done live)."""
    from blindtest.slots import LAUNDER, SlotState, pending_work

    if trials is not None:
        artifacts.write_jsonl(run_dir / artifacts.TRIALS, trials, "trials", force=True)
        say(
            f"wrote {run_dir / artifacts.TRIALS}: {len(trials)} blinded trials; "
            f"next: {stage_command('judge', run_dir)}"
        )
        return 0
    loaded = artifacts.load_design(run_dir)
    rows = artifacts.read_jsonl(run_dir / artifacts.RESPONSES, "responses", missing_ok=True)
    missing = pending_work(loaded.design, SlotState.from_rows(rows.records))
    asks = sum(w.stage != LAUNDER for w in missing)
    if not asks:
        say(f"{len(missing)} answers still to launder: {stage_command('generate', run_dir)}")
        return 0
    else:
        say(
            f"{asks} slots still missing; export just those: "
            f"{stage_command('generate', run_dir, '--batch-export', 'missing.jsonl')}"
        )
    return asks


def import_files(
    run_dir: Path, files: Sequence[Path], prices: dict[str, tuple[float, float]], quiet: bool
) -> None:
    from blindtest import generate as lib
    from blindtest.batch import read_results

    loaded, io = _io(run_dir, quiet)
    results: list[BatchResult] = []
    for file in files:  # every file read and checked before anything is written
        results += read_results(artifacts.read_bytes(file), str(file))
    existing = artifacts.read_jsonl(run_dir / artifacts.RESPONSES, "responses", missing_ok=True)
    found, trials = lib.import_batch_stage(
        loaded.design, loaded.sha256, existing.records, _previous(run_dir), results, prices, io
    )
    failed = sum(row["status"] != "ok" for row in found.rows)
    never = f"; {found.not_run} requests never ran (batch expired or cancelled)"
    io.say(
        f"imported {len(found.rows)} rows ({failed} failed) from {len(files)} files"
        + (never if found.not_run else "")
    )
    _finish(run_dir, trials, io.say)


def submit(
    run_dir: Path,
    prices: dict[str, tuple[float, float]],
    quiet: bool,
    timeout: float,
    poll_interval: float,
    progress: Callable[[str, bool], None] | None,
) -> None:
    from blindtest import batch_run
    from blindtest import generate as lib
    from blindtest.slots import SlotState

    loaded, io = _io(run_dir, quiet)
    endpoints = lib.endpoints_for(loaded.design)
    for side in ("A", "B"):
        endpoints[side].check_key(side)
    record_path = run_dir / artifacts.BATCHES
    responses = run_dir / artifacts.RESPONSES
    trials: list[list[TrialRecord] | None] = [None]

    def rows() -> list[JsonObject]:
        return artifacts.read_jsonl(responses, "responses", missing_ok=True).records

    def pending() -> list[tuple[str, str, dict[str, object]]]:
        state = SlotState.from_rows(rows())
        return lib.batch_requests(loaded.design, loaded.sha256, state)

    def import_results(results: list[BatchResult]) -> tuple[int, int]:
        found, trials[0] = lib.import_batch_stage(
            loaded.design,
            loaded.sha256,
            rows(),
            _previous(run_dir),
            results,
            prices,
            io,
            skip_answered=True,
        )
        return len(found.rows), found.not_run

    def read_record() -> JsonObject | None:
        return artifacts.read_json(record_path, "batches") if record_path.exists() else None

    def write_record(record: JsonObject) -> None:
        artifacts.write_json(record_path, record, "batches", force=True)

    collect_io = batch_run.CollectIO(
        read_record=read_record,
        write_record=write_record,
        pending=pending,
        import_results=import_results,
        say=io.say,
        progress=progress,
    )
    sides = {side: endpoints[side] for side in ("A", "B")}
    done = batch_run.collect(
        loaded.sha256, sides, collect_io, poll_interval=poll_interval, timeout=timeout
    )
    if trials[0] is None and not done.ended:
        trials[0] = _trials_if_complete(run_dir)
    left = _finish(run_dir, trials[0], io.say)
    if left:
        raise EndpointFailed(
            f"{left} slot(s) still unanswered after the batch; rerun "
            f"{stage_command('generate', run_dir, '--batch')} to submit them again"
        )


def _trials_if_complete(run_dir: Path) -> list[TrialRecord] | None:
    from blindtest.slots import SlotState, build_trials_view, pending_work

    loaded = artifacts.load_design(run_dir)
    rows = artifacts.read_jsonl(run_dir / artifacts.RESPONSES, "responses", missing_ok=True)
    state = SlotState.from_rows(rows.records)
    if pending_work(loaded.design, state):
        return None
    return build_trials_view(loaded.design, state)
