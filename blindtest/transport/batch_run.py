"""Submit and collect (``bt-generate RUN --batch``): hand the missing slots to a Batch API and
bring the answers back, surviving interruption at any point.

One batch per side and input file (the sides may live at different providers). The steps,
each recorded in ``batches.json`` (through the caller's ``write_record``) as soon as it
happened, so the record is the state: upload the input file (``file_id``), create the batch
(``batch_id``), poll until it ends, download its output and error files, import them
(``imported``). A rerun reads the record and carries on from there: a recorded batch is
polled, never submitted again; an upload recorded without a batch is first looked up among
the API's recent batches by its input file (a process killed between creating a batch and
recording it), and only created when none holds it. Results already imported are skipped
on a second import of the same batch (the caller's ``import_results`` sorts them with
:func:`blindtest.transport.batch.triage`, as ``--batch-import`` does). An expired or cancelled
batch: what finished is imported, the rest is reported; the next ``--batch`` submits what is
still missing.

:func:`collect` opens no file (the record, the pending requests and the import are
callbacks) and no socket but through :class:`blindtest.transport.batch_client.BatchClient`.
An LLM judge
drives the same loop with its own requests and import callback.

Also the file side both stages' ``--batch-export`` and ``--batch-import`` share (through
:mod:`blindtest.rundir.artifacts`): an export's part files named, checked and written
(:func:`write_export`), result files read (:func:`read_result_files`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blindtest import reportfmt
from blindtest.errors import BadInput, option
from blindtest.rundir import artifacts
from blindtest.rundir.artifacts import JsonObject, schema_tag, sha256_bytes
from blindtest.transport.batch import BatchResult, read_results, request_lines, split_parts
from blindtest.transport.batch_client import BATCH_DONE, BatchClient
from blindtest.transport.endpoint import Endpoint
from blindtest.transport.retry import DEFAULT_POLICY, RetryPolicy

__all__ = [
    "CollectIO",
    "Collected",
    "check_submittable",
    "collect",
    "part_paths",
    "read_result_files",
    "write_export",
]

#: Called with the name of each step just done ("uploaded", "created, not yet recorded",
#: "created", "polled", "downloaded", "imported"); the tests set it to kill the process there.
CHECKPOINT: Callable[[str], None] | None = None


def _checkpoint(step: str) -> None:
    if CHECKPOINT is not None:
        CHECKPOINT(step)


Request = tuple[str, str, dict[str, object]]  # (side, custom_id, body)


@dataclass(frozen=True, slots=True)
class CollectIO:
    """``read_record``/``write_record``: ``batches.json``; ``pending()``: the requests for
    every slot still missing now; ``import_results(results)``: import one batch's results
    (results already imported skipped), returning the count of rows written and of requests
    that never ran; ``say``: a line for the user; ``progress(line, final)``: a progress line."""

    read_record: Callable[[], JsonObject | None]
    write_record: Callable[[JsonObject], None]
    pending: Callable[[], Sequence[Request]]
    import_results: Callable[[list[BatchResult]], tuple[int, int]]
    say: Callable[[str], None] = field(default=lambda _: None)
    progress: Callable[[str, bool], None] | None = None
    #: What ``import_results`` counts, for the closing line ("rows"; an LLM judge's
    #: "comparisons").
    unit: str = "rows"


@dataclass(slots=True)
class Collected:
    """What one ``--batch`` run did."""

    submitted: int = 0
    imported_rows: int = 0
    not_run: int = 0
    ended: dict[str, int] = field(default_factory=dict)  # final status -> batches


def collect(
    design_sha256: str,
    endpoints: Mapping[str, Endpoint],
    io: CollectIO,
    *,
    poll_interval: float = 10.0,
    timeout: float = 120.0,
    policy: RetryPolicy = DEFAULT_POLICY,
) -> Collected:
    """Submit what is missing (unless a recorded batch is still open), wait for every open
    batch, and import its results. See the module's docstring for the resume rules."""
    record = io.read_record() or {
        "schema": schema_tag("batches"),
        "design_sha256": design_sha256,
        "batches": [],
    }
    if record["design_sha256"] != design_sha256:
        raise BadInput("batches.json belongs to another design; use a new run directory")
    return asyncio.run(_collect(record, endpoints, io, poll_interval, timeout, policy))


async def _collect(
    record: JsonObject,
    endpoints: Mapping[str, Endpoint],
    io: CollectIO,
    poll_interval: float,
    timeout: float,
    policy: RetryPolicy,
) -> Collected:
    done = Collected()
    clients = {
        side: BatchClient(endpoint, timeout=timeout, policy=policy)
        for side, endpoint in endpoints.items()
    }
    for client in clients.values():
        await client.__aenter__()
    try:
        await _submit(record, clients, io)
        done.submitted = await _create(record, clients, io)
        await _poll(record, clients, io, poll_interval)
        await _import(record, clients, io, done)
    finally:
        for client in clients.values():
            await client.__aexit__(None, None, None)
    return done


def _who(entry: Mapping[str, Any]) -> str:
    """ "side A", "candidate alpha", or "judge" for an LLM judge's batch (bt-judge --batch)."""
    side = str(entry["side"])
    if side in ("A", "B"):
        return f"side {side}"
    return side if side == "judge" else f"candidate {side}"


def _open(record: JsonObject) -> list[dict[str, Any]]:
    return [entry for entry in record["batches"] if not entry["imported"]]


async def _submit(record: JsonObject, clients: Mapping[str, BatchClient], io: CollectIO) -> None:
    """Upload one input file per side (and part) for the sides with no open batch."""
    busy = {entry["side"] for entry in _open(record)}
    by_side: dict[str, list[tuple[str, dict[str, object]]]] = {}
    for side, cid, body in io.pending():
        if side not in busy:
            by_side.setdefault(side, []).append((cid, body))
    run = str(record["design_sha256"])[:16]
    for side, requests in sorted(by_side.items()):
        parts = split_parts(request_lines(requests))
        for number, lines in enumerate(parts, start=1):
            data = b"".join(lines)
            uploaded = await clients[side].upload(f"blindtest-{run}-{side}-{number}.jsonl", data)
            record["batches"].append(
                {
                    "side": side,
                    "origin": clients[side].origin,
                    "requests": len(lines),
                    "input_sha256": sha256_bytes(data),
                    "file_id": str(uploaded["id"]),
                    "batch_id": None,
                    "status": "uploaded",
                    "output_file_id": None,
                    "error_file_id": None,
                    "imported": False,
                }
            )
            io.write_record(record)
            io.say(
                f"uploaded {_who({'side': side})}'s batch file {number}: "
                f"{reportfmt.count(len(lines), 'request')}"
            )
            _checkpoint("uploaded")


async def _create(record: JsonObject, clients: Mapping[str, BatchClient], io: CollectIO) -> int:
    """Create the batch of every upload recorded without one (or adopt the batch a killed
    run created from it before it could record it); return how many were created."""
    created = 0
    for entry in _open(record):
        if entry["batch_id"] is not None:
            continue
        client = clients[entry["side"]]
        found = [b for b in await client.recent() if b.get("input_file_id") == entry["file_id"]]
        if found:
            batch = found[0]
            io.say(f"{_who(entry)}: found batch {batch['id']} already created")
        else:
            metadata = {"blindtest_run": str(record["design_sha256"])[:16], "side": entry["side"]}
            batch = await client.create(entry["file_id"], metadata)
            created += 1
            _checkpoint("created, not yet recorded")
            io.say(f"{_who(entry)}: created batch {batch['id']} (24h window)")
        entry["batch_id"] = str(batch["id"])
        _update(entry, batch)
        io.write_record(record)
        _checkpoint("created")
    return created


def _update(entry: dict[str, Any], batch: Mapping[str, Any]) -> bool:
    before = (entry["status"], entry["output_file_id"], entry["error_file_id"])
    entry["status"] = str(batch.get("status"))
    entry["output_file_id"] = batch.get("output_file_id") or None
    entry["error_file_id"] = batch.get("error_file_id") or None
    return before != (entry["status"], entry["output_file_id"], entry["error_file_id"])


async def _poll(
    record: JsonObject, clients: Mapping[str, BatchClient], io: CollectIO, poll_interval: float
) -> None:
    """Poll every open batch until each has ended, with a progress line."""
    while True:
        waiting = [e for e in _open(record) if e["status"] not in BATCH_DONE]
        if not waiting:
            break
        counts = [0, 0, 0]  # done, failed, total
        for entry in waiting:
            batch = await clients[entry["side"]].retrieve(entry["batch_id"])
            if _update(entry, batch):
                io.write_record(record)
            tally: Any = batch.get("request_counts") or {}
            counts[0] += int(tally.get("completed") or 0)
            counts[1] += int(tally.get("failed") or 0)
            counts[2] += int(tally.get("total") or entry["requests"])
        _checkpoint("polled")
        ended = all(e["status"] in BATCH_DONE for e in _open(record))
        if io.progress is not None:
            states = ", ".join(f"{e['side']} {e['status']}" for e in _open(record))
            line = f"batches: {states}; {counts[0]}/{counts[2]} done, {counts[1]} failed"
            io.progress(line, ended)
        if not ended:
            await asyncio.sleep(poll_interval)


async def _import(
    record: JsonObject, clients: Mapping[str, BatchClient], io: CollectIO, done: Collected
) -> None:
    """Download and import the files of every ended batch, then mark it imported."""
    for entry in _open(record):
        client = clients[entry["side"]]
        results: list[BatchResult] = []
        for name in ("output_file_id", "error_file_id"):
            if entry[name] is not None:
                data = await client.content(entry[name])
                results += read_results(data, f"batch {entry['batch_id']} {name[:-8]} file")
        _checkpoint("downloaded")
        rows, not_run = io.import_results(results)
        done.imported_rows += rows
        done.not_run += not_run
        done.ended[entry["status"]] = done.ended.get(entry["status"], 0) + 1
        entry["imported"] = True
        io.write_record(record)
        _checkpoint("imported")
        done.not_run += entry["requests"] - len(results)  # lines missing from the files
        io.say(f"{_who(entry)}: batch {entry['batch_id']} {entry['status']}, imported")
    if done.ended:
        # Totals over both sides only: per-side failures are for after judging.
        never = f"; {reportfmt.count(done.not_run, 'request')} never ran" if done.not_run else ""
        io.say(f"imported {done.imported_rows} {io.unit}{never}")


# --------------------------------------------------------------------------- the files


def check_submittable(fmt: str) -> None:
    """``--batch`` speaks OpenAI's Batch API only: refuse another ``--batch-format``."""
    if fmt != "openai":
        raise BadInput(
            f"{option('batch')} speaks OpenAI's Batch API; for Anthropic, "
            f"{option('batch_export', 'FILE')} {option('batch_format', 'anthropic')} and submit "
            "it there"
        )


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


def write_export(
    out: Path,
    requests: Iterable[tuple[str, dict[str, object]]],
    fmt: str,
    design_sha256: str,
    *,
    taken: Collection[Path] = (),
) -> list[Path]:
    """Write ``(custom_id, body)`` pairs as batch input in format ``fmt`` to ``out`` (split
    into ``out``'s part files over the limits) and return the paths written. Refused, nothing
    written: a directory, a run file's name or a path in ``taken`` (the picks file), or an
    existing file that is not an earlier export of this run."""
    parts = split_parts(request_lines(requests, fmt))
    paths = part_paths(out, len(parts))
    for path in paths:
        if path.is_dir() or path.name in artifacts.RUN_FILE_KINDS or path in taken:
            raise BadInput(f"{path}: choose another name for the batch file")
        if path.exists() and not _ours(path, design_sha256[:16]):
            raise BadInput(
                f"{path} exists and is not a batch file of this run; refusing to overwrite it"
            )
    for path, lines in zip(paths, parts, strict=True):
        artifacts.write_bytes_atomic(path, b"".join(lines))
    return paths


def read_result_files(files: Sequence[Path]) -> list[BatchResult]:
    """Every result of the output and error ``files``, each read and checked whole before
    anything is written."""
    results: list[BatchResult] = []
    for file in files:
        results += read_results(artifacts.read_bytes(file), str(file))
    return results
