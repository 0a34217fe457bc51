"""The rows of ``responses.jsonl``: an answer or failure as fetched, and the rows a
--from-dirs design imports from files."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypedDict, cast

from blindtest.generation.ledger import Ledger
from blindtest.generation.requests import SlotRequests, _variant_for
from blindtest.model.normalize import normalize_answer
from blindtest.model.slots import Slot, SlotState, Work, iter_slots
from blindtest.rundir.artifacts import schema_tag
from blindtest.rundir.types import DesignRecord, ResponseRow, UsageRecord
from blindtest.transport.client import Completion

# --------------------------------------------------------------------------- records


class _MeasuredRequired(TypedDict):
    finish_reason: str | None
    usage: UsageRecord | None
    latency_ms: float | None
    attempts: int
    seed: int | None


class _Measured(_MeasuredRequired, total=False):
    """How a request went: the ``ResponseRow`` keys ``_row`` takes from the caller."""

    served_model: str | None


def _row(
    design: DesignRecord,
    slot: Slot,
    stage: str,
    model: str,
    kind: str,
    measured: _Measured,
    raw: str | None,
    error: str | None = None,
) -> ResponseRow:
    """One ``responses.jsonl`` row: the slot, what asked and how it went (``measured``), then
    the answer ``raw`` as normalized (the original kept in ``raw_text`` when that changed
    it), or, with ``raw`` None, an explicit failure."""
    row: ResponseRow = {
        "schema": schema_tag("responses"),
        "trial": slot.trial,
        "slot": slot.slot,
        "side": slot.side,
        "prompt_id": slot.prompt_id,
        # Work.stage is "generate" or LAUNDER.
        "stage": cast(Literal["generate", "launder"], stage),
        "model": model,
        "kind": kind,
        "finish_reason": measured["finish_reason"],
        "usage": measured["usage"],
        "latency_ms": measured["latency_ms"],
        "attempts": measured["attempts"],
        "seed": measured["seed"],
        "status": "failed",
        "text": None,
    }
    if "served_model" in measured:
        row["served_model"] = measured["served_model"]
    if raw is None:
        return row | {"error": error or "failed"}
    # Formatting, names and self-identification out of what the judge sees; bt-verify
    # re-derives every row's text with the same function.
    text, stripped = normalize_answer(design["normalization"], raw)
    row |= {"status": "ok", "text": text}
    if text != raw:
        row["raw_text"] = raw
    if stripped:
        row["identity_stripped"] = stripped
    return row


def response_record(
    design: DesignRecord,
    work: Work,
    completion: Completion,
    model: str,
    requests: SlotRequests | None = None,
) -> ResponseRow:
    """The ``responses.jsonl`` row for one finished request (answer or explicit failure);
    with ``requests``, the row records the hash of the request it answers."""
    row = _response_row(design, work, completion, model)
    if requests is not None:
        key, digest = requests.determined_by(work)
        if key == "source_sha256":
            row["source_sha256"] = digest
        else:
            row["request_sha256"] = digest
    return row


def _response_row(
    design: DesignRecord, work: Work, completion: Completion, model: str
) -> ResponseRow:
    usage = completion.usage
    measured: _Measured = {
        "finish_reason": completion.finish_reason,
        "usage": None
        if usage is None
        else {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        },
        "latency_ms": round(completion.latency_ms, 3),
        "attempts": completion.attempts,
        "seed": completion.seed,
        # What the server says answered: a single-model server answers any name it is given.
        "served_model": completion.model,
    }
    if not completion.ok:
        return _row(
            design, work.slot, work.stage, model, completion.kind, measured, None, completion.error
        )
    raw = completion.text if completion.text else (completion.refusal or "")
    row = _row(design, work.slot, work.stage, model, completion.kind, measured, raw)
    if completion.reasoning is not None:  # recorded apart; the judge never sees it
        row["reasoning"] = completion.reasoning
    return row | {"truncated": completion.truncated, "refusal": completion.refusal}


# --------------------------------------------------------------------------- imported outputs


def import_rows(
    design: DesignRecord, state: SlotState | Ledger, read: Callable[[str, str, str], str]
) -> list[ResponseRow]:
    """``responses.jsonl`` rows for a --from-dirs design's unanswered slots (``state``'s
    answered slots are skipped: a ``Ledger``'s answers are the rows still current).

    ``read(side, item, variant)`` returns a file's text (``outputs.imported_text`` refuses a
    file that changed since the design).
    """
    # Nothing was asked: no tokens, latency, attempts or seed to record.
    measured: _Measured = {
        "finish_reason": None,
        "usage": None,
        "latency_ms": None,
        "attempts": 0,
        "seed": None,
    }
    rows = []
    for slot in iter_slots(design):
        if state.answered(slot, "generate") is not None:
            continue
        variant = _variant_for(design, slot)
        raw = read(slot.side, slot.prompt_id, variant)
        model = design["models"][slot.side]["model"]
        row = _row(design, slot, "generate", model, "imported", measured, raw)
        # What determined it: the file, by the hash the design holds (read() refused it if
        # the file no longer has it).
        row["source_sha256"] = design["source"]["files"][slot.prompt_id][slot.side][variant]
        rows.append(row)
    return rows
