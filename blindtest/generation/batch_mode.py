"""bt-generate's batch modes: ``--batch-export FILE`` writes every missing
slot as a batch input file, ``--batch-import FILE...`` reads the results back into
``responses.jsonl``, ``--batch`` submits and collects through the endpoints' Batch API; each
writes the blinded view once every slot is answered, or says what is still missing.

The run's files through :mod:`blindtest.rundir.artifacts`; the formats are
:mod:`blindtest.transport.batch`,
the bodies and rows :mod:`blindtest.generation.batch_rows`, submitting and collecting
:mod:`blindtest.transport.batch_run`. No click: lines for the user go to the caller's ``say``.

Import. Results are sorted against the rows on disk (:func:`slot_triage`): a result for a slot
already answered with the same content (an interrupted import run again) is skipped with a
count; one for another run or a slot this design lacks, or answering a slot again with a
different result in the same files, refuses the whole import (nothing written); one for a slot
already answered with a different result is skipped and the stored answer stands.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from blindtest import reportfmt
from blindtest.errors import EndpointFailed
from blindtest.generation.batch_rows import (
    BatchImport,
    batch_requests,
    batch_row,
    import_batch_stage,
)
from blindtest.generation.cost import check_price_roles
from blindtest.generation.ledger import check_rows_current
from blindtest.generation.requests import SlotRequests, endpoints_for
from blindtest.generation.stage_io import StageIO
from blindtest.model.candidates import candidates_of
from blindtest.model.slots import LAUNDER, SlotState, build_trials_view, pending_work, plan_slots
from blindtest.present.hints import stage_command
from blindtest.rundir import artifacts
from blindtest.rundir.artifacts import JsonObject, LoadedDesign
from blindtest.rundir.types import DesignRecord, GenerationRecord, TrialRecord
from blindtest.transport.batch import BatchResult, Triage, parse_custom_id, triage

__all__ = ["export", "import_files", "slot_triage", "submit"]

Say = Callable[[str], None]
Prices = Mapping[str, tuple[float, float]]


def export(run_dir: Path, out: Path, fmt: str, say: Say) -> None:
    """``--batch-export FILE``: every unanswered slot's request (laundering is done live)."""
    from blindtest.transport.batch_run import write_export

    loaded = artifacts.load_design(run_dir)
    rows = artifacts.read_jsonl(run_dir / artifacts.RESPONSES, "responses", missing_ok=True)
    check_rows_current(loaded.design, rows.records)
    state = SlotState.from_rows(rows.records)
    requests = batch_requests(loaded.design, loaded.sha256, state)
    if not requests:
        launder = any(w.stage == LAUNDER for w in pending_work(loaded.design, state))
        rest = f"; launder live: {stage_command('generate', run_dir)}" if launder else ""
        say(f"nothing to export: every slot is answered{rest}")
        return
    paths = write_export(out, ((cid, body) for _, cid, body in requests), fmt, loaded.sha256)
    counts = " + ".join(
        str(sum(r[0] == side for r in requests)) for side in candidates_of(loaded.design)
    )
    names = ", ".join(str(p) for p in paths)
    say(
        f"wrote {names}: {reportfmt.count(len(requests), 'request')} in the {fmt} batch format "
        f"({counts} slots); when the results are back: "
        f"{stage_command('generate', run_dir, '--batch-import', 'RESULTS.jsonl')}"
    )


def import_files(run_dir: Path, files: Sequence[Path], prices: Prices, say: Say) -> None:
    """``--batch-import FILE...``: every file read and checked before anything is written."""
    from blindtest.transport.batch_run import read_result_files

    loaded, io = _io(run_dir, say)
    check_price_roles(loaded.design, prices)
    results = read_result_files(files)
    found, sorted_, trials = _import_slots(run_dir, loaded, results, prices, io)
    failed = sum(row["status"] != "ok" for row in found.rows)
    never = f"; {reportfmt.count(found.not_run, 'request')} never ran (batch expired or cancelled)"
    skipped = sorted_.summary()
    say(
        f"imported {reportfmt.count(len(found.rows), 'row')} ({failed} failed) from "
        f"{reportfmt.count(len(files), 'file')}"
        + (never if found.not_run else "")
        + (f"; {skipped}" if skipped else "")
    )
    _finish(run_dir, trials, say)


def submit(
    run_dir: Path,
    prices: Prices,
    timeout: float,
    poll_interval: float,
    progress: Callable[[str, bool], None] | None,
    say: Say,
) -> None:
    """``--batch``: submit the missing slots, wait, import
    (:func:`blindtest.transport.batch_run.collect`; a rerun picks up the batches recorded in
    ``batches.json``). ``EndpointFailed`` when slots are still unanswered after it."""
    from blindtest.transport import batch_run

    loaded, io = _io(run_dir, say)
    check_rows_current(
        loaded.design,
        artifacts.read_jsonl(run_dir / artifacts.RESPONSES, "responses", missing_ok=True).records,
    )
    check_price_roles(loaded.design, prices)
    endpoints = endpoints_for(loaded.design)
    for side in candidates_of(loaded.design):
        endpoints[side].check_key(side)
    record_path = run_dir / artifacts.BATCHES
    responses = run_dir / artifacts.RESPONSES
    trials: list[list[TrialRecord] | None] = [None]

    def rows() -> list[JsonObject]:
        return artifacts.read_jsonl(responses, "responses", missing_ok=True).records

    def pending() -> list[tuple[str, str, dict[str, object]]]:
        state = SlotState.from_rows(rows())
        return batch_requests(loaded.design, loaded.sha256, state)

    def import_results(results: list[BatchResult]) -> tuple[int, int]:
        found, _, trials[0] = _import_slots(run_dir, loaded, results, prices, io)
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
        say=say,
        progress=progress,
    )
    sides = {side: endpoints[side] for side in candidates_of(loaded.design)}
    done = batch_run.collect(
        loaded.sha256, sides, collect_io, poll_interval=poll_interval, timeout=timeout
    )
    if trials[0] is None and not done.ended:
        trials[0] = _trials_if_complete(run_dir)
    left = _finish(run_dir, trials[0], say)
    if left:
        raise EndpointFailed(
            f"{left} slot(s) still unanswered after the batch; rerun "
            f"{stage_command('generate', run_dir, '--batch')} to submit them again"
        )


def _io(run_dir: Path, say: Say) -> tuple[LoadedDesign, StageIO]:
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

    io = StageIO(open_responses, write_generation, lambda *_: "", say=say)
    return loaded, io


def _previous(run_dir: Path) -> JsonObject | None:
    path = run_dir / artifacts.GENERATION
    return artifacts.read_json(path, "generation") if path.exists() else None


def _finish(run_dir: Path, trials: list[TrialRecord] | None, say: Say) -> int:
    """Write the blinded view when every slot is answered; else say what is missing and
    return how many slots a batch could still answer (laundering is done live)."""
    if trials is not None:
        path = run_dir / artifacts.TRIALS
        if path.exists() and path.read_bytes() == b"".join(map(artifacts.dump_line, trials)):
            say(f"every slot is answered; {path} stands; next: {stage_command('judge', run_dir)}")
            return 0
        artifacts.write_jsonl(path, trials, "trials", force=True)
        say(
            f"wrote {path}: {reportfmt.count(len(trials), 'blinded trial')}; next: "
            f"{stage_command('judge', run_dir)}"
        )
        return 0
    loaded = artifacts.load_design(run_dir)
    rows = artifacts.read_jsonl(run_dir / artifacts.RESPONSES, "responses", missing_ok=True)
    missing = pending_work(loaded.design, SlotState.from_rows(rows.records))
    asks = sum(w.stage != LAUNDER for w in missing)
    if not asks:
        say(
            f"{reportfmt.count(len(missing), 'answer')} still to launder: "
            f"{stage_command('generate', run_dir)}"
        )
        return 0
    else:
        say(
            f"{reportfmt.count(asks, 'slot')} still missing; export just those: "
            f"{stage_command('generate', run_dir, '--batch-export', 'missing.jsonl')}"
        )
    return asks


def _said(row: Mapping[str, Any]) -> bytes:
    """What a responses.jsonl row says the endpoint answered: status, text as returned,
    finish reason, usage, error (not how long it took or how often it was asked)."""
    said = {k: row.get(k) for k in ("status", "finish_reason", "usage", "error", "refusal")}
    said["text"] = row.get("raw_text", row.get("text"))
    return orjson.dumps(said, option=orjson.OPT_SORT_KEYS)


def slot_triage(
    design: DesignRecord,
    design_sha256: str,
    rows: Sequence[Mapping[str, Any]],
    results: list[BatchResult],
) -> Triage:
    """bt-generate's results sorted against ``rows`` (:func:`blindtest.transport.batch.triage`): a
    result is "the same" as a stored row of its slot when the row it makes says the same."""
    slots = {(s.trial, s.slot): s for s in plan_slots(design)}
    stored: dict[Hashable, tuple[bool, set[Hashable]]] = {}
    for row in rows:
        if row.get("stage", "generate") != "generate":
            continue
        done, contents = stored.setdefault((row["trial"], row["slot"]), (False, set()))
        contents.add(_said(row))
        if row["status"] == "ok" and not done:
            stored[(row["trial"], row["slot"])] = (True, contents)

    def place(result: BatchResult) -> tuple[str, Hashable, str]:
        cid = parse_custom_id(result.custom_id)
        where = f"{result.source}:{result.line}"
        if cid is None or cid.run != design_sha256[:16]:
            return "foreign", None, f"{where} ({result.custom_id!r} is not this run's)"
        if cid.part != "s" or (cid.trial, cid.number) not in slots:
            return "unknown", None, f"{where} (no slot {result.custom_id!r} in this design)"
        return "ok", (cid.trial, cid.number), f"trial {cid.trial} slot {cid.number}"

    requests = SlotRequests(design)

    def content(key: Hashable, result: BatchResult) -> Hashable:
        return _said(batch_row(design, slots[key], result, requests))  # type: ignore[index]

    def refusal(counts: Mapping[str, int], first: str) -> str:
        return (
            f"refused {reportfmt.count(sum(counts.values()), 'batch result')} "
            f"({counts.get('foreign', 0)} for "
            f"another run, {counts.get('unknown', 0)} for slots this design does not have, "
            f"{counts.get('twice', 0)} answering a slot again with a different result; "
            f"first: {first}); nothing written"
        )

    return triage(
        results,
        place=place,
        content=content,
        stored=lambda key: stored.get(key, (False, set())),
        refusal=refusal,
    )


def _import_slots(
    run_dir: Path,
    loaded: LoadedDesign,
    results: list[BatchResult],
    prices: Prices,
    io: StageIO,
) -> tuple[BatchImport, Triage, list[TrialRecord] | None]:
    """Sort ``results`` against the rows on disk, import the fresh ones."""
    existing = artifacts.read_jsonl(run_dir / artifacts.RESPONSES, "responses", missing_ok=True)
    check_rows_current(loaded.design, existing.records)
    sorted_ = slot_triage(loaded.design, loaded.sha256, existing.records, results)
    found, trials = import_batch_stage(
        loaded.design,
        loaded.sha256,
        existing.records,
        _previous(run_dir),
        sorted_.fresh,
        prices,
        io,
    )
    return found, sorted_, trials


def _trials_if_complete(run_dir: Path) -> list[TrialRecord] | None:
    loaded = artifacts.load_design(run_dir)
    rows = artifacts.read_jsonl(run_dir / artifacts.RESPONSES, "responses", missing_ok=True)
    state = SlotState.from_rows(rows.records)
    if pending_work(loaded.design, state):
        return None
    return build_trials_view(loaded.design, state)
