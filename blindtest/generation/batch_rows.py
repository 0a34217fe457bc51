"""Batch files: the request bodies of a batch and the rows made from its results."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from blindtest import reportfmt
from blindtest.errors import BadInput, option
from blindtest.generation.guard import DrawCollisions, collision_notice
from blindtest.generation.requests import SlotRequests
from blindtest.generation.responses import response_record
from blindtest.generation.stage_io import StageIO
from blindtest.generation.summary import (
    check_not_deterministic,
    generation_record,
    ledger,
    recorded_prices,
    session_entry,
)
from blindtest.model.derived import trial_slot_seed
from blindtest.model.slots import (
    LAUNDER,
    Slot,
    SlotState,
    Work,
    build_trials_view,
    check_rows_match_design,
    pending_work,
    plan_slots,
)
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord, ResponseRow, TrialRecord
from blindtest.transport.batch import BatchResult, custom_id, parse_custom_id, result_completion
from blindtest.transport.client import Completion
from blindtest.transport.wire import ServerError, prompt_too_long

# --------------------------------------------------------------------------- batch files


def batch_requests(
    design: DesignRecord, design_sha256: str, state: SlotState
) -> list[tuple[str, str, dict[str, object]]]:
    """``(side, custom_id, body)`` for every slot still unanswered: the exact body a live run
    sends for it (:meth:`Endpoint.request_body`, per-slot seed included). Laundering is not
    batched: it needs the answers first, and a live rerun launders them."""
    if design["source"]["kind"] == "dirs":
        raise BadInput(
            f"this design imports its outputs ({option('from_dirs')}): nothing to ask in a batch"
        )
    asks = SlotRequests(design)  # the bodies only: no key is read
    requests = []
    for work in pending_work(design, state):
        if work.stage == LAUNDER:
            continue
        slot = work.slot
        body = asks.body(work)
        requests.append((slot.side, custom_id(design_sha256, slot.trial, slot.slot), body))
    return requests


@dataclass
class BatchImport:
    """What a batch import found: the ``rows`` to append and the results that never ran
    (``not_run``: the batch expired or was cancelled first)."""

    rows: list[ResponseRow] = field(default_factory=list)
    not_run: int = 0


def _batch_completion(design: DesignRecord, slot: Slot, result: BatchResult) -> Completion:
    seed = trial_slot_seed(design, slot.trial, slot.slot) if result.fmt == "openai" else None
    completion = result_completion(result, slot.side, seed=seed)
    said = result.said or ServerError("failed")
    if result.completion is None and prompt_too_long(result.status, said):
        # One prompt too long for the model is this slot's failure, as in a live run.
        shown = f"HTTP {result.status}: " if result.status is not None else ""
        return replace(
            completion,
            kind="too_long",
            error=f"trial {slot.trial}, prompt {slot.prompt_id}: the prompt is too long for "
            f"the server ({shown}{said.message})",
        )
    return completion


def batch_rows(
    design: DesignRecord,
    design_sha256: str,
    state: SlotState,
    results: Iterable[BatchResult],
) -> BatchImport:
    """The ``responses.jsonl`` rows for batch results, built as a live answer's are
    (:func:`response_record`: the same normalization and failure rows; ``latency_ms`` null,
    nothing was timed, ``attempts`` 1).

    Refuses the whole import (``BadInput`` with the counts; nothing is to be written) when any
    result belongs to another run, names a slot this design does not have, or answers a slot
    already answered (on disk, or earlier in the same files): the caller has already set
    aside the results it skips (:func:`blindtest.generation.batch_mode.slot_triage`).
    """
    expected = {(s.trial, s.slot): s for s in plan_slots(design)}
    requests = SlotRequests(design)
    found = BatchImport()
    foreign = unknown = answered = 0
    done: set[tuple[int, int]] = set()
    first_bad = ""
    for result in results:
        cid = parse_custom_id(result.custom_id)
        where = f"{result.source}:{result.line}"
        if cid is None or cid.run != design_sha256[:16]:
            foreign += 1
            first_bad = first_bad or f"{where} ({result.custom_id!r} is not this run's)"
            continue
        slot = expected.get((cid.trial, cid.number)) if cid.part == "s" else None
        if slot is None:
            unknown += 1
            first_bad = first_bad or f"{where} (no slot {result.custom_id!r} in this design)"
            continue
        key = (slot.trial, slot.slot)
        if state.answered(slot, "generate") is not None or key in done:
            answered += 1
            first_bad = first_bad or f"{where} (trial {slot.trial} slot {slot.slot} answered)"
            continue
        if result.not_run:
            found.not_run += 1
            continue
        row = batch_row(design, slot, result, requests)
        found.rows.append(row)
        if row["status"] == "ok":
            done.add(key)
    if foreign or unknown or answered:
        raise BadInput(
            f"refused {reportfmt.count(foreign + unknown + answered, 'batch result')} "
            f"({foreign} for another run, "
            f"{unknown} for slots this design does not have, {answered} for slots already "
            f"answered; first: {first_bad}); nothing written"
        )
    return found


def batch_row(
    design: DesignRecord, slot: Slot, result: BatchResult, requests: SlotRequests | None = None
) -> ResponseRow:
    """The row a batch ``result`` for ``slot`` makes (nothing timed: ``latency_ms`` null),
    recording the hash of the body exported for it (its custom_id names this design)."""
    completion = _batch_completion(design, slot, result)
    model = _side_model(design, slot)
    requests = requests or SlotRequests(design)
    row = response_record(design, Work(slot, "generate"), completion, model, requests)
    row["latency_ms"] = None
    return row


def _side_model(design: DesignRecord, slot: Slot) -> str:
    return str(design["models"][slot.side]["model"])


def import_batch_stage(
    design: DesignRecord,
    design_sha256: str,
    existing: Sequence[JsonObject],
    previous: Mapping[str, Any] | None,
    results: Iterable[BatchResult],
    given_prices: Mapping[str, tuple[float, float]],
    io: StageIO,
) -> tuple[BatchImport, list[TrialRecord] | None]:
    """bt-generate --batch-import's work: check every result (:func:`batch_rows`), append
    the rows, record the session in ``generation.json`` (no wall time: a batch is not timed
    here), and return what was found with the blinded view once every slot is answered
    (None while some are missing: a partial import is fine, a later one fills the rest)."""
    check_rows_match_design(design, existing)
    state = SlotState.from_rows(existing)
    found = batch_rows(design, design_sha256, state, results)
    if found.rows:
        with io.open_responses() as append:
            for row in found.rows:
                append(row)
                state.record(row)
    prices = recorded_prices(previous, design_sha256) | dict(given_prices)
    session = session_entry(found.rows, 0.0) if found.rows else None
    sessions, wall = ledger(previous, design_sha256, existing, session)
    rows = [*existing, *found.rows]
    io.write_generation(generation_record(design, design_sha256, rows, prices, wall, sessions))
    check_not_deterministic(design, state)
    if pending_work(design, state):
        return found, None
    notice = collision_notice(DrawCollisions.for_design(design, state))
    if notice:
        io.say(notice)
    return found, build_trials_view(design, state)
