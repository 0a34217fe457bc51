"""bt-generate's library: fetch the slots a design still needs (the slot model is
:mod:`blindtest.slots`), record each answer or failure, guard against deterministic
endpoints, and keep the per-session ledger. Never opens a file (records go out through an
``append`` callback, files are read and written by the caller's callbacks) and never opens a
socket (requests go through the ``ChatClient`` it is given).

Resume. ``responses.jsonl`` is append-only; an answered slot is never requested again, and a
failure row leaves its slot pending for the next run.

Normalization. Per response: ``--strip-formatting`` is applied to the text stored in the row
(the original kept in ``raw_text``); laundering adds a second row per slot holding the
rewrite. Per trial: ``--truncate-match`` is applied when the blinded view is built
(:func:`blindtest.slots.build_trials_view`); ``trials.jsonl`` is exactly what the judge sees.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypedDict, cast

from blindtest.artifact_types import (
    DesignRecord,
    GenerationRecord,
    ResponseRow,
    TrialRecord,
    UsageRecord,
)
from blindtest.artifacts import JsonObject, schema_tag
from blindtest.batch import BatchResult, custom_id, parse_custom_id
from blindtest.client import (
    DEFAULT_CONCURRENCY,
    DEFAULT_TIMEOUT,
    ChatClient,
    Completion,
    CompletionKind,
    Endpoint,
)
from blindtest.endpoints import is_loopback
from blindtest.errors import (
    BadInput,
    CheckFailed,
    EndpointFailed,
    PromptTooLong,
)
from blindtest.identity import strip_identity
from blindtest.normalize import (
    count_words,
    launder_messages,
    outside_band,
    strip_formatting,
)
from blindtest.retry import DEFAULT_POLICY, RetryPolicy
from blindtest.sides import SIDES, fill_template, parse_header_env, side_system
from blindtest.slots import (
    LAUNDER,
    Slot,
    SlotState,
    Work,
    build_trials_view,
    check_rows_match_design,
    original_text,
    pending_work,
    plan_slots,
    slot_seed,
)
from blindtest.wire import ChatMessage, ServerError, prompt_too_long, token_field_for

#: A deterministic endpoint (temperature ignored or 0) repeats itself on nearly every triangle
#: trial, and the triangle degenerates into spot-the-twin; short answers at a real temperature
#: collide on some. The run is stopped only when at least this share of the trials whose two
#: same-model draws are both fetched came back identical ...
DETERMINISTIC_SHARE = 0.9
#: ... and at least this many did (so one coincidence, or a design of a few trials, never
#: stops it: the duplicate spotter and the notice cover those) ...
MIN_IDENTICAL = 5
#: ... judged once this many pairs are in (or all of them, in a smaller design).
MIN_PAIRS = 10
#: Assumed output length for a cost estimate when the design sets no token limit.
ASSUMED_OUTPUT_TOKENS = 600


@dataclass
class Progress:
    """Counts the CLI renders; updated by `run_generation` as results arrive."""

    total: int
    done: int = 0
    failed: int = 0
    retries: int = 0
    started: float = field(default_factory=time.monotonic)


def system_prompt(design: DesignRecord, side: str | None = None) -> str | None:
    """The system prompt a side gets: its own or the design's shared one, plus the
    length-band instruction (``side`` None: the shared one)."""
    parts = [design.get("system") if side is None else side_system(design, side)]
    band = design["normalization"]["length_band"]
    if band is not None:
        parts.append(band["instruction"])
    text = "\n\n".join(p for p in parts if p)
    return text or None


#: The prompts list last indexed by id, its length, and the index: one dict lookup per request
#: instead of a scan of every prompt (issue 15: that scan made bt-generate quadratic).
_PROMPT_INDEX: list[tuple[Any, int, dict[str, Any]]] = []


def _prompt_by_id(prompts: Sequence[Any], prompt_id: str) -> Any:
    if (
        not _PROMPT_INDEX
        or _PROMPT_INDEX[0][0] is not prompts
        or _PROMPT_INDEX[0][1] != len(prompts)
    ):
        index: dict[str, Any] = {}
        for prompt in prompts:
            index.setdefault(prompt["id"], prompt)  # the first of a repeated id, as before
        _PROMPT_INDEX[:] = [(prompts, len(prompts), index)]
    return _PROMPT_INDEX[0][2].get(prompt_id)


def messages_for(
    design: DesignRecord, prompt_text: str, side: str | None = None, prompt_id: str = ""
) -> list[ChatMessage]:
    """What ``side`` is sent for a prompt: its system prompt, a conversation's earlier turns
    (when ``prompt_id`` names one), then the prompt (through the side's template, when it has
    one): the side answers the last turn."""
    messages: list[ChatMessage] = []
    system = system_prompt(design, side)
    if system is not None:
        messages.append({"role": "system", "content": system})
    record = _prompt_by_id(design["prompts"], prompt_id) if prompt_id else None
    for turn in (record or {}).get("messages", [])[:-1]:
        messages.append({"role": turn["role"], "content": turn["content"]})
    template = None if side is None else design["models"][side].get("template")
    messages.append({"role": "user", "content": fill_template(template, prompt_text)})
    return messages


def endpoints_for(
    design: DesignRecord, environ: Mapping[str, str] | None = None
) -> dict[str, Endpoint]:
    """Client endpoints for A, B (and the launderer). A local server (127.0.0.1, localhost)
    needs no key: when the named variable is unset, no Authorization header is sent."""
    environ = os.environ if environ is None else environ
    specs: dict[str, dict[str, Any]] = {
        side: {**spec, **spec["params"]}
        for side, spec in design["models"].items()
        if design["source"]["kind"] == "endpoints"
    }
    launder = design["normalization"]["launder"]
    if launder is not None:
        specs[LAUNDER] = {**launder, "temperature": None, "max_tokens": None}
    endpoints = {}
    for role, spec in specs.items():
        key_env = spec["key_env"]
        if not environ.get(key_env) and is_loopback(spec["base_url"]):
            key_env = None
        endpoints[role] = Endpoint(
            base_url=spec["base_url"],
            model=spec["model"],
            key_env=key_env,
            temperature=spec.get("temperature"),
            top_p=spec.get("top_p"),
            max_tokens=spec.get("max_tokens"),
            max_tokens_field=token_field_for(spec["base_url"]),
            extra=spec.get("extra_params") or None,
        )
    return endpoints


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
    text = strip_formatting(raw) if design["normalization"]["strip_formatting"] else raw
    # Issue 13: names and self-identification out of what the judge sees (old designs: none).
    text, stripped = strip_identity(text, design["normalization"].get("identity_strip"))
    row |= {"status": "ok", "text": text}
    if text != raw:
        row["raw_text"] = raw
    if stripped:
        row["identity_stripped"] = stripped
    return row


def response_record(
    design: DesignRecord, work: Work, completion: Completion, model: str
) -> ResponseRow:
    """The ``responses.jsonl`` row for one finished request (answer or explicit failure)."""
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


def _same(first: str, second: str) -> bool:
    return " ".join(first.split()) == " ".join(second.split())


@dataclass
class DrawCollisions:
    """Triangle trials whose two same-model draws are both fetched (``pairs``) and of those,
    the ones that came back identical, whitespace aside (``identical``).

    Built once from the rows on disk, then kept up to date with :meth:`add` at O(1) per
    response (one comparison when a trial's second twin arrives), so the guard costs the
    event loop nothing as the run grows.
    """

    twins: dict[tuple[int, int], tuple[int, int]]
    trials: int
    pairs: int = 0
    identical: int = 0
    counted: set[int] = field(default_factory=set)

    @classmethod
    def for_design(cls, design: DesignRecord, state: SlotState) -> DrawCollisions:
        twins: dict[tuple[int, int], tuple[int, int]] = {}
        if design["protocol"] == "triangle":
            for entry in design["arrangement"]:
                first, second = (p for p in (1, 2, 3) if p != entry["odd_position"])
                twins[(entry["trial"], first)] = (entry["trial"], second)
                twins[(entry["trial"], second)] = (entry["trial"], first)
        collisions = cls(twins, len(design["arrangement"]))
        for key in twins:
            collisions.add(state, key)
        return collisions

    def add(self, state: SlotState, key: tuple[int, int]) -> None:
        """Count the trial of slot ``key`` once both of its twin draws are answered."""
        other = self.twins.get(key)
        if other is None or key[0] in self.counted:
            return
        rows = [state.generated.get(key), state.generated.get(other)]
        if any(row is None or row["status"] != "ok" for row in rows):
            return
        self.counted.add(key[0])
        self.pairs += 1
        self.identical += _same(original_text(rows[0]), original_text(rows[1]))  # type: ignore[arg-type]

    def deterministic(self) -> bool:
        """Nearly every fetched pair identical, over enough pairs to tell it from chance."""
        return (
            self.pairs >= min(MIN_PAIRS, self.trials)
            and self.identical >= MIN_IDENTICAL
            and self.identical >= DETERMINISTIC_SHARE * self.pairs
        )


def identical_draws(design: DesignRecord, state: SlotState) -> int:
    """Triangle trials whose two same-model draws came back identical (whitespace aside)."""
    return DrawCollisions.for_design(design, state).identical


def _over(collisions: DrawCollisions) -> str:
    if collisions.pairs == collisions.trials:
        return f"of all {collisions.trials} triangle trials"
    return f"of the {collisions.pairs} triangle trials fetched (of {collisions.trials})"


def deterministic_endpoint_error(design: DesignRecord, collisions: DrawCollisions) -> CheckFailed:
    doubled = ", ".join(sorted({m["model"] for m in design["models"].values()}))
    return CheckFailed(
        f"{collisions.identical} {_over(collisions)} got two identical answers from the same "
        f"model ({doubled}): the endpoint is deterministic (temperature ignored or 0), so the "
        "odd response could be found without reading; use --protocol pair for this endpoint"
    )


def collision_notice(collisions: DrawCollisions) -> str | None:
    """What to say when some same-model draws collide but the endpoint is not deterministic
    (short answers at a real temperature): the count, and what it does to the test."""
    if not collisions.identical or collisions.deterministic():
        return None
    k = collisions.identical
    trials = "trial" if k == 1 else "trials"
    return (
        f"note: {k} {_over(collisions)} got two identical answers from the same model (short "
        f"answers collide by chance); in {'that' if k == 1 else 'those'} {k} {trials} the odd "
        "one can be found by the identical pair without reading, and bt-audit's duplicate "
        "spotter will do so and report it as a tell"
    )


# --------------------------------------------------------------------------- imported outputs


def _variant_for(design: DesignRecord, slot: Slot) -> str:
    """Which file answers a slot: the doubled side's two triangle slots take variants 1 and 2
    in slot order; every other slot takes the candidate's first output."""
    variants: list[str] = sorted(design["source"]["files"][slot.prompt_id][slot.side])
    if design["protocol"] != "triangle":
        return variants[0]
    entry = design["arrangement"][slot.trial - 1]
    if slot.side != entry["doubled"]:
        return variants[0]
    twins = [p for p in (1, 2, 3) if p != entry["odd_position"]]
    return str(twins.index(slot.slot) + 1)


def import_rows(
    design: DesignRecord, state: SlotState, read: Callable[[str, str, str], str]
) -> list[ResponseRow]:
    """``responses.jsonl`` rows for a --from-dirs design's unanswered slots.

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
    for slot in plan_slots(design):
        if state.answered(slot, "generate") is not None:
            continue
        raw = read(slot.side, slot.prompt_id, _variant_for(design, slot))
        model = design["models"][slot.side]["model"]
        rows.append(_row(design, slot, "generate", model, "imported", measured, raw))
    return rows


# --------------------------------------------------------------------------- fetching


AppendRow = Callable[[ResponseRow], None]


def too_long_row_error(work: Work, error: PromptTooLong) -> str:
    """A too-long failure row's ``error``: the trial and prompt, then the server's words (no
    side or model: the final message repeats it before any judging)."""
    said = error.server_message or str(error)
    return (
        f"trial {work.slot.trial}, prompt {work.slot.prompt_id}: the prompt is too long for "
        f"the server (HTTP {error.status}: {said})"
    )


async def _worker(
    design: DesignRecord,
    client: ChatClient,
    queue: asyncio.Queue[Work | None],
    prompts: Mapping[str, str],
    append: AppendRow,
    on_result: Callable[[Work, ResponseRow], None],
) -> None:
    while True:
        work = await queue.get()
        if work is None:
            return
        role = LAUNDER if work.stage == LAUNDER else work.slot.side
        if work.stage == LAUNDER:
            messages: list[ChatMessage] = launder_messages(work.source or "")  # type: ignore[assignment]
            seed = None
        else:
            slot = work.slot
            messages = messages_for(design, prompts[slot.prompt_id], slot.side, slot.prompt_id)
            seed = slot_seed(design["seed"], work.slot.trial, work.slot.slot)
        # "a per-slot seed where the server accepts one": the client asks again without it
        # when the server refuses it (the row then records seed null).
        try:
            completion = await client.complete(role, messages, seed=seed)
        except PromptTooLong as error:
            # One prompt too long for the model is this slot's failure, not the run's.
            completion = Completion(
                role,
                "too_long",
                "",
                None,
                None,
                0.0,
                error.attempts or 1,
                error.status,
                error=too_long_row_error(work, error),
                seed=seed if client.sends_seed(role) else None,
            )
        row = response_record(design, work, completion, client.endpoint(role).model)
        append(row)
        on_result(work, row)


async def run_generation(
    design: DesignRecord,
    client: ChatClient,
    state: SlotState,
    append: AppendRow,
    *,
    concurrency: int,
    progress: Progress | None = None,
    on_update: Callable[[], None] | None = None,
) -> SlotState:
    """Fetch every pending slot (and laundering), appending each row as it arrives.

    One worker pool per role, so a rate-limited side never holds up the other. Raises
    ``CheckFailed`` as soon as the deterministic-endpoint guard trips, and lets fatal
    ``EndpointFailed`` errors (bad key, unknown model) through at once; rows already appended
    stay. Returns the updated state.
    """
    prompts = {p["id"]: p["text"] for p in design["prompts"]}
    queues: dict[str, asyncio.Queue[Work | None]] = {role: asyncio.Queue() for role in client.sides}
    collisions = DrawCollisions.for_design(design, state)
    guard_error: list[CheckFailed] = []
    counts = progress if progress is not None else Progress(total=0)
    if collisions.deterministic():
        raise deterministic_endpoint_error(design, collisions)  # no more money on it

    def on_result(work: Work, row: ResponseRow) -> None:
        state.record(row)
        key = (work.slot.trial, work.slot.slot)
        counts.done += 1
        counts.failed += row["status"] != "ok"
        if row["status"] == "ok" and work.stage != LAUNDER:
            if LAUNDER in queues:
                queues[LAUNDER].put_nowait(
                    Work(work.slot, LAUNDER, row.get("raw_text", row["text"]))
                )
                counts.total += 1
            collisions.add(state, key)
            if not guard_error and collisions.deterministic():
                guard_error.append(CheckFailed("deterministic endpoint"))
        if on_update is not None:
            on_update()

    for work in pending_work(design, state):
        role = LAUNDER if work.stage == LAUNDER else work.slot.side
        queues[role].put_nowait(work)
    tasks = {
        role: [
            asyncio.create_task(_worker(design, client, queue, prompts, append, on_result))
            for _ in range(max(concurrency, client.ceiling(role)))
        ]
        for role, queue in queues.items()
    }
    await _drain_or_stop(design, queues, tasks, guard_error, collisions)
    return state


async def _drain_or_stop(
    design: DesignRecord,
    queues: Mapping[str, asyncio.Queue[Work | None]],
    tasks: Mapping[str, list[asyncio.Task[None]]],
    guard_error: list[CheckFailed],
    collisions: DrawCollisions,
) -> None:
    try:
        await _drain(queues, tasks, guard_error)
    except CheckFailed as error:
        if not guard_error or error is not guard_error[0]:
            raise
        # Stated after every request in flight has ended: the count over all fetched trials.
        raise deterministic_endpoint_error(design, collisions) from None


async def _drain(
    queues: Mapping[str, asyncio.Queue[Work | None]],
    tasks: Mapping[str, list[asyncio.Task[None]]],
    guard_error: list[CheckFailed],
) -> None:
    """Wait for the candidate roles, then close and drain the launder queue; cancel all on the
    first error or when the deterministic guard trips."""
    everything = [t for group in tasks.values() for t in group]
    try:
        for role in (r for r in queues if r != LAUNDER):
            for _ in tasks[role]:
                queues[role].put_nowait(None)
        candidates = [t for role, group in tasks.items() if role != LAUNDER for t in group]
        await _wait_all(candidates, guard_error)
        if LAUNDER in queues:
            for _ in tasks[LAUNDER]:
                queues[LAUNDER].put_nowait(None)
            await _wait_all(tasks[LAUNDER], guard_error)
    finally:
        for task in everything:
            task.cancel()
        await asyncio.gather(*everything, return_exceptions=True)


async def _wait_all(tasks: Sequence[asyncio.Task[None]], guard_error: list[CheckFailed]) -> None:
    pending: set[asyncio.Task[None]] = set(tasks)
    while pending:
        done, pending = await asyncio.wait(
            pending, timeout=0.25, return_when=asyncio.FIRST_EXCEPTION
        )
        for task in done:
            if task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        if guard_error:
            raise guard_error[0]


def endpoint_failure_summary(design: DesignRecord, state: SlotState) -> EndpointFailed:
    """Exit-3 error for a run that ended with slots still unanswered. Prompts too long for the
    server are named by trial and prompt (never by side or slot: this is shown before judging)."""
    missing = pending_work(design, state)
    too_long: dict[int, str] = {}
    said = last_error = ""
    n_long = 0
    for work in missing:
        rows = state.laundered if work.stage == LAUNDER else state.generated
        row: Mapping[str, Any] = rows.get((work.slot.trial, work.slot.slot)) or {}
        if row.get("kind") == "too_long":
            too_long[work.slot.trial] = work.slot.prompt_id
            n_long += 1
            said = str(row.get("error", "")).partition(": ")[2]
        elif row.get("error"):
            last_error = f"; last error: {row['error']}"
    rest = "what was fetched is kept, rerun bt-generate to fetch the rest"
    if not too_long:
        return EndpointFailed(
            f"{len(missing)} slot(s) still unanswered after retries{last_error}; {rest}"
        )
    named = ", ".join(f"trial {t} (prompt {p})" for t, p in sorted(too_long.items()))
    these = "that prompt" if len(too_long) == 1 else "those prompts"
    others = len(missing) - n_long
    more = f"; {others} more after retries{last_error}" if others else ""
    return EndpointFailed(
        f"{len(missing)} slot(s) still unanswered: {named}: {said}; shorten or drop {these} "
        f"in a new design, or give the server a larger context{more}; {rest}"
    )


# --------------------------------------------------------------------------- summary and cost


def _role_model(design: DesignRecord, role: str) -> str:
    if role == LAUNDER:
        return str(design["normalization"]["launder"]["model"])
    return str(design["models"][role]["model"])


def _cost(price: tuple[float, float], tokens_in: float, tokens_out: float) -> float:
    """Dollars, for prices in dollars per million tokens (in, out)."""
    return (tokens_in * price[0] + tokens_out * price[1]) / 1e6


def summarize(
    design: DesignRecord,
    rows: Iterable[Mapping[str, Any]],
    prices: Mapping[str, tuple[float, float]],
) -> dict[str, dict[str, Any]]:
    """Per-role totals over every row in ``responses.jsonl`` (all runs, resumed ones too)."""
    roles = ["A", "B"] + ([LAUNDER] if design["normalization"]["launder"] else [])
    band = design["normalization"]["length_band"]
    summary: dict[str, dict[str, Any]] = {}
    for role in roles:
        summary[role] = {
            "model": _role_model(design, role),
            "responses": 0,
            "failures": 0,
            "requests": 0,
            "retries": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "truncated": 0,
            "refusals": 0,
            "outside_length_band": 0 if band and role != LAUNDER else None,
            "mean_latency_ms": None,
            "cost": None,
        }
    latencies: dict[str, list[float]] = {role: [] for role in roles}
    for row in rows:
        role = LAUNDER if row.get("stage") == LAUNDER else row["side"]
        entry = summary[role]
        entry["requests"] += row["attempts"]
        entry["retries"] += max(0, row["attempts"] - 1)
        usage = row.get("usage") or {}
        entry["prompt_tokens"] += usage.get("prompt_tokens") or 0
        entry["completion_tokens"] += usage.get("completion_tokens") or 0
        if row["status"] != "ok":
            entry["failures"] += 1
            continue
        entry["responses"] += 1
        entry["truncated"] += bool(row.get("truncated"))
        entry["refusals"] += row.get("kind") == "refusal"
        if row.get("latency_ms") is not None:
            latencies[role].append(row["latency_ms"])
        if entry["outside_length_band"] is not None:
            entry["outside_length_band"] += outside_band(row["text"], band["lo"], band["hi"])
    for role, entry in summary.items():
        if latencies[role]:
            entry["mean_latency_ms"] = round(sum(latencies[role]) / len(latencies[role]), 3)
        if role in prices:
            entry["cost"] = _cost(prices[role], entry["prompt_tokens"], entry["completion_tokens"])
    return summary


def generation_record(
    design: DesignRecord,
    design_sha256: str,
    rows: Sequence[Mapping[str, Any]],
    prices: Mapping[str, tuple[float, float]],
    wall_seconds: float,
    sessions: Sequence[JsonObject] | None = None,
) -> GenerationRecord:
    """``generation.json``: totals over every row, and whether every slot is answered.

    ``sessions`` is the ledger (one entry per bt-generate run that fetched something: its
    wall time, requests and rows), a measurement carried from the file as ``wall_seconds`` is.
    """
    state = SlotState.from_rows(rows)
    record: GenerationRecord = {
        "schema": schema_tag("generation"),
        "design_sha256": design_sha256,
        "complete": not pending_work(design, state),
        "wall_seconds": round(wall_seconds, 3),
        "prices": {role: {"input": p[0], "output": p[1]} for role, p in prices.items()},
        "roles": summarize(design, rows, prices),
        "identical_draws": identical_draws(design, state)
        if design["protocol"] == "triangle"
        else None,
    }
    if sessions is not None:
        record["sessions"] = [dict(session) for session in sessions]
    return record


def session_entry(rows: Sequence[Mapping[str, Any]], wall_seconds: float) -> JsonObject:
    """One ledger entry: the rows a session appended, the HTTP requests behind them."""
    return {
        "wall_seconds": round(wall_seconds, 3),
        "requests": sum(int(row.get("attempts") or 0) for row in rows),
        "rows": len(rows),
    }


def ledger(
    previous: Mapping[str, Any] | None,
    design_sha256: str,
    earlier_rows: Sequence[Mapping[str, Any]],
    session: JsonObject | None,
) -> tuple[list[JsonObject] | None, float]:
    """The sessions and total wall time after this session (``None``: it fetched nothing).

    A ``generation.json`` from before the ledger counts as one session holding every row
    that was on disk before this one; one that fetched nothing since keeps no ledger (so a
    rerun leaves its bytes as they are).
    """
    sessions: list[JsonObject] | None = None
    wall = 0.0
    if previous is not None and previous.get("design_sha256") == design_sha256:
        wall = float(previous.get("wall_seconds", 0.0))
        if "sessions" in previous:
            sessions = [dict(entry) for entry in previous["sessions"]]
        elif session is not None:
            sessions = [session_entry(earlier_rows, wall)]
    if session is not None:
        sessions = [*(sessions or []), session]
        wall += float(session["wall_seconds"])
    return sessions, wall


def recorded_prices(
    previous: Mapping[str, Any] | None, design_sha256: str
) -> dict[str, tuple[float, float]]:
    """Prices an earlier session recorded (kept unless new ones are given)."""
    if previous is None or previous.get("design_sha256") != design_sha256:
        return {}
    return {role: (p["input"], p["output"]) for role, p in previous.get("prices", {}).items()}


def _said_prices(
    previous: Mapping[str, Any] | None,
    given: Mapping[str, tuple[float, float]],
    prices: Mapping[str, tuple[float, float]],
) -> str:
    recorded = set((previous or {}).get("prices", {}))
    kept = sorted(set(prices) - set(given))
    replaced = sorted(role for role in given if role in recorded)
    added = sorted(role for role in given if role not in recorded)
    said = f"; recorded prices kept for {', '.join(kept)}" if kept else ""
    said += f"; prices replaced for {', '.join(replaced)}" if replaced else ""
    if previous is not None and added:
        said += f"; prices recorded for {', '.join(added)}"
    return said


def session_summary(
    fetched: Sequence[Mapping[str, Any]],
    total_rows: int,
    previous: Mapping[str, Any] | None,
    sessions: Sequence[JsonObject] | None,
    given: Mapping[str, tuple[float, float]],
    prices: Mapping[str, tuple[float, float]],
    changed: bool,
) -> str:
    """What a session did, the same whichever side is which: totals over both sides only
    (tokens, costs, timings and failures per side are in generation.json, for after judging);
    a second line for a resumed run: the ledger and the prices."""
    said_prices = _said_prices(previous, given, prices)
    if not fetched:
        state = "updated" if changed else "unchanged"
        return f"nothing to fetch ({total_rows} rows on disk); generation.json {state}{said_prices}"
    requests = sum(int(row.get("attempts") or 0) for row in fetched)
    failed = sum(row["status"] != "ok" for row in fetched)
    line = (
        f"fetched {len(fetched)} rows ({failed} failed) in {requests} requests; per-side "
        "figures are in generation.json, for after judging"
    )
    if sessions is not None and len(sessions) > 1:
        line += f"\nresumed: session {len(sessions)} added to the ledger{said_prices}"
    return line


def check_not_deterministic(design: DesignRecord, state: SlotState) -> None:
    """Raise the deterministic-endpoint stop if the rows on disk already show it."""
    collisions = DrawCollisions.for_design(design, state)
    if collisions.deterministic():
        raise deterministic_endpoint_error(design, collisions)


def check_finished(design: DesignRecord, state: SlotState) -> None:
    """Raise why the blinded view cannot be written yet (deterministic endpoint: exit 1;
    slots still unanswered: exit 3); return when every slot is answered."""
    collisions = DrawCollisions.for_design(design, state)
    if collisions.deterministic():
        raise deterministic_endpoint_error(design, collisions)
    if pending_work(design, state):
        raise endpoint_failure_summary(design, state)


def estimate_cost(
    design: DesignRecord, prices: Mapping[str, tuple[float, float]]
) -> dict[str, dict[str, float]]:
    """A rough pre-run estimate per role: input tokens ~ words x 4/3 of system + prompt;
    output tokens = the design's token limit, or ``ASSUMED_OUTPUT_TOKENS`` without one."""
    prompts = {p["id"]: p["text"] for p in design["prompts"]}
    system_words = {side: count_words(system_prompt(design, side) or "") for side in SIDES}
    estimate: dict[str, dict[str, float]] = {}
    imported = design["source"]["kind"] == "dirs"
    for slot in plan_slots(design):
        roles = [] if imported else [slot.side]
        roles += [LAUNDER] if design["normalization"]["launder"] else []
        for role in roles:
            params = design["models"][slot.side].get("params", {})
            output = params.get("max_tokens") or ASSUMED_OUTPUT_TOKENS
            if role == LAUNDER:
                words_in = output * 0.75 + 80
            else:
                words_in = system_words[slot.side] + count_words(prompts[slot.prompt_id])
            entry = estimate.setdefault(role, {"input_tokens": 0.0, "output_tokens": 0.0})
            entry["input_tokens"] += words_in * 4 / 3
            entry["output_tokens"] += output
    for role, entry in estimate.items():
        if role in prices:
            entry["cost"] = _cost(prices[role], entry["input_tokens"], entry["output_tokens"])
    return estimate


def parse_prices(texts: Mapping[str, str | None]) -> dict[str, tuple[float, float]]:
    """``{role: "IN,OUT"}`` as given to ``--price-ROLE`` -> dollars per million tokens, in
    and out; refuses anything but two finite numbers >= 0."""
    prices = {}
    for role, text in texts.items():
        if text is None:
            continue
        try:
            parts = [float(p) for p in text.split(",")]
        except ValueError:
            parts = []
        if len(parts) != 2 or not all(math.isfinite(p) and p >= 0 for p in parts):
            option = f"--price-{role.lower()}"
            raise BadInput(
                f"{option}: expected IN,OUT dollars per million tokens (two finite numbers "
                f">= 0), e.g. 2.5,10; got {text!r}"
            )
        prices[role] = (parts[0], parts[1])
    return prices


# --------------------------------------------------------------------------- the stage

_ROLE_ORDER = ("A", "B", LAUNDER)


@dataclass(frozen=True, slots=True)
class FetchOptions:
    """How hard to ask: requests in flight per endpoint, seconds of silence before giving up
    on an answer, requests started per minute, retries per request."""

    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    rpm: float | None = None
    max_retries: int = DEFAULT_POLICY.max_retries
    #: Issue 12, per side: ``--a-concurrency``, ``--a-rpm`` (the shared ones for the rest),
    #: and ``--a-header-env NAME:ENVVAR`` headers (values read when sending, never written).
    side_concurrency: Mapping[str, int] = field(default_factory=dict)
    side_rpm: Mapping[str, float] = field(default_factory=dict)
    header_env: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)


def side_transport(given: dict[str, Any]) -> dict[str, Any]:
    """``FetchOptions`` keywords from the per-side transport options, popped from ``given``
    (``a_concurrency``, ``b_rpm``, ``a_header_env``...; None or empty: not given)."""
    found: dict[str, Any] = {"side_concurrency": {}, "side_rpm": {}, "header_env": {}}
    for side in SIDES:
        lower = side.lower()
        concurrency = given.pop(f"{lower}_concurrency", None)
        rpm = given.pop(f"{lower}_rpm", None)
        headers = given.pop(f"{lower}_header_env", ()) or ()
        if concurrency is not None:
            found["side_concurrency"][side] = concurrency
        if rpm is not None:
            if not (math.isfinite(rpm) and rpm > 0):
                raise BadInput(f"--{lower}-rpm: expected a finite number > 0, got {rpm}")
            found["side_rpm"][side] = rpm
        found["header_env"][side] = tuple(
            parse_header_env(f"--{lower}-header-env", item) for item in headers
        )
    return found


@dataclass(frozen=True, slots=True)
class StageIO:
    """Everything the stage does outside itself, as callbacks (the CLI gives them files and
    stderr): ``open_responses`` opens ``responses.jsonl`` for appending (opened only when
    there is something to append); ``write_generation`` writes ``generation.json`` unless it
    already holds that record, returning whether it wrote; ``read_imported(side, item,
    variant)`` reads a --from-dirs output; ``say`` prints a line; ``on_progress(progress,
    final)`` redraws a progress display."""

    open_responses: Callable[[], AbstractContextManager[AppendRow]]
    write_generation: Callable[[GenerationRecord], bool]
    read_imported: Callable[[str, str, str], str]
    say: Callable[[str], None] = field(default=lambda _: None)
    on_progress: Callable[[Progress, bool], None] | None = None


def generate_stage(
    design: DesignRecord,
    design_sha256: str,
    existing: Sequence[JsonObject],
    previous: Mapping[str, Any] | None,
    given_prices: Mapping[str, tuple[float, float]],
    options: FetchOptions,
    io: StageIO,
) -> list[TrialRecord]:
    """bt-generate's work: fetch (or import) every slot still missing, record the session in
    ``generation.json``, and return the blinded view (``trials.jsonl``) once every slot is
    answered.

    ``existing`` are the rows already on disk, ``previous`` the ``generation.json`` an earlier
    session wrote (its ledger and prices). Checks everything before appending anything: rows
    that do not fit the design and unset key variables are ``BadInput``. A run that stops
    (``EndpointFailed``, the deterministic guard's ``CheckFailed``, Ctrl-C) still records what
    it fetched in ``generation.json`` before the error goes on; a run that leaves slots
    unanswered raises (:func:`check_finished`); a triangle with some identical draws says so.
    """
    check_rows_match_design(design, existing)
    endpoints = {
        role: replace(endpoint, header_env=options.header_env.get(role, ()))
        for role, endpoint in endpoints_for(design).items()
    }
    for role, endpoint in endpoints.items():
        endpoint.check_key(role)
    prices = recorded_prices(previous, design_sha256) | dict(given_prices)
    state = SlotState.from_rows(existing)
    appended: list[ResponseRow] = []
    if design["source"]["kind"] == "dirs":
        _import_missing(design, state, io, appended)
    started = time.monotonic()
    stopped = _fetch_missing(design, endpoints, state, prices, len(existing), options, io, appended)
    if stopped is not None and not appended:
        raise stopped
    session = session_entry(appended, time.monotonic() - started) if appended else None
    sessions, wall = ledger(previous, design_sha256, existing, session)
    rows = [*existing, *appended]
    record = generation_record(design, design_sha256, rows, prices, wall, sessions)
    changed = io.write_generation(record)
    io.say(session_summary(appended, len(rows), previous, sessions, given_prices, prices, changed))
    if stopped is not None:
        raise stopped
    check_finished(design, state)
    notice = collision_notice(DrawCollisions.for_design(design, state))
    if notice:
        io.say(notice)
    return build_trials_view(design, state)


def _keeping(append: AppendRow, appended: list[ResponseRow]) -> AppendRow:
    """``append``, also keeping each row this session appended (in file order)."""

    def both(row: ResponseRow) -> None:
        append(row)
        appended.append(row)

    return both


def _import_missing(
    design: DesignRecord, state: SlotState, io: StageIO, appended: list[ResponseRow]
) -> None:
    """--from-dirs: append the imported outputs of every unanswered slot (no network)."""
    rows = import_rows(design, state, io.read_imported)  # every file read (and checked) first
    with io.open_responses() as append:
        for row in rows:
            _keeping(append, appended)(row)
            state.record(row)


def _fetch_missing(
    design: DesignRecord,
    endpoints: Mapping[str, Endpoint],
    state: SlotState,
    prices: Mapping[str, tuple[float, float]],
    on_disk: int,
    options: FetchOptions,
    io: StageIO,
    appended: list[ResponseRow],
) -> BaseException | None:
    """Fetch every pending slot; return the error that stopped the run early, if one did."""
    pending = len(pending_work(design, state))
    if not pending:
        return None
    check_not_deterministic(design, state)  # found so on an earlier run: no more calls
    _announce(estimate_cost(design, prices), pending, on_disk, io.say)
    progress = Progress(total=pending)
    try:
        with io.open_responses() as append:
            append = _keeping(append, appended)
            asyncio.run(_fetch(design, endpoints, state, append, options, progress, io))
    except (EndpointFailed, CheckFailed, KeyboardInterrupt) as error:
        return error  # the ledger still records what this session fetched
    return None


async def _fetch(
    design: DesignRecord,
    endpoints: Mapping[str, Endpoint],
    state: SlotState,
    append: AppendRow,
    options: FetchOptions,
    progress: Progress,
    io: StageIO,
) -> None:
    policy = RetryPolicy(max_retries=options.max_retries)
    async with ChatClient(
        endpoints,
        concurrency=options.concurrency,
        rpm=options.rpm,
        timeout=options.timeout,
        policy=policy,
        side_concurrency=options.side_concurrency,
        side_rpm=options.side_rpm,
    ) as client:

        def update(final: bool = False) -> None:
            progress.retries = client.counters().retries
            if io.on_progress is not None:
                io.on_progress(progress, final)

        try:
            await run_generation(
                design,
                client,
                state,
                append,
                concurrency=options.concurrency,
                progress=progress,
                on_update=update,
            )
        finally:
            update(final=True)


def _announce(
    estimate: Mapping[str, Mapping[str, float]],
    pending: int,
    existing: int,
    say: Callable[[str], None],
) -> None:
    resumed = f" (resuming: {existing} rows already on disk)" if existing else ""
    say(f"fetching {pending} responses{resumed}")
    for role, entry in sorted(estimate.items(), key=lambda item: _ROLE_ORDER.index(item[0])):
        cost = f", about ${entry['cost']:.2f}" if "cost" in entry else ""
        say(
            f"  estimate for the whole run, {role}: ~{entry['input_tokens']:.0f} input and "
            f"<= {entry['output_tokens']:.0f} output tokens{cost}"
        )


# --------------------------------------------------------------------------- batch files


def batch_requests(
    design: DesignRecord, design_sha256: str, state: SlotState
) -> list[tuple[str, str, dict[str, object]]]:
    """``(side, custom_id, body)`` for every slot still unanswered: the exact body a live run
    sends for it (:meth:`Endpoint.request_body`, per-slot seed included). Laundering is not
    batched: it needs the answers first, and a live rerun launders them."""
    if design["source"]["kind"] == "dirs":
        raise BadInput("this design imports its outputs (--from-dirs): nothing to ask in a batch")
    endpoints = endpoints_for(design, environ={})  # the bodies only: no key is read
    prompts = {p["id"]: p["text"] for p in design["prompts"]}
    requests = []
    for work in pending_work(design, state):
        if work.stage == LAUNDER:
            continue
        slot = work.slot
        seed = slot_seed(design["seed"], slot.trial, slot.slot)
        body = endpoints[slot.side].request_body(
            messages_for(design, prompts[slot.prompt_id], slot.side, slot.prompt_id), seed=seed
        )
        requests.append((slot.side, custom_id(design_sha256, slot.trial, slot.slot), body))
    return requests


@dataclass
class BatchImport:
    """What a batch import found: the ``rows`` to append, results that never ran
    (``not_run``: the batch expired or was cancelled first), and with ``skip_answered`` the
    results for slots already answered (``skipped``)."""

    rows: list[ResponseRow] = field(default_factory=list)
    not_run: int = 0
    skipped: int = 0


def _batch_failure_kind(result: BatchResult) -> CompletionKind:
    status, said = result.status, result.said or ServerError("")
    if prompt_too_long(status, said):
        return "too_long"
    if status == 429:
        return "rate_limited"
    if status is None or status >= 500 or status in (408, 409):
        return "server_error"
    return "rejected"


def _batch_completion(design: DesignRecord, slot: Slot, result: BatchResult) -> Completion:
    seed = slot_seed(design["seed"], slot.trial, slot.slot) if result.fmt == "openai" else None
    parsed = result.completion
    if parsed is not None:
        error = None if parsed.ok else f"batch result: {parsed.detail}"
        return Completion(
            slot.side,
            parsed.kind,
            parsed.text if parsed.ok else "",
            parsed.finish_reason,
            parsed.usage,
            0.0,
            1,
            result.status,
            model=parsed.model,
            refused=parsed.kind == "refusal",
            refusal=parsed.refusal,
            truncated=parsed.truncated,
            response_id=parsed.response_id,
            error=error,
            seed=seed,
            reasoning=parsed.reasoning,
        )
    kind = _batch_failure_kind(result)
    said = (result.said or ServerError("failed")).message
    status = f"HTTP {result.status}: " if result.status is not None else ""
    error = f"batch result: {status}{said}"
    if kind == "too_long":
        error = (
            f"trial {slot.trial}, prompt {slot.prompt_id}: the prompt is too long for the "
            f"server ({status}{said})"
        )
    return Completion(
        slot.side,
        kind,
        "",
        None,
        None,
        0.0,
        1,
        result.status,
        error=error,
        seed=seed,
    )


def batch_rows(
    design: DesignRecord,
    design_sha256: str,
    state: SlotState,
    results: Iterable[BatchResult],
    *,
    skip_answered: bool = False,
) -> BatchImport:
    """The ``responses.jsonl`` rows for batch results, built as a live answer's are
    (:func:`response_record`: the same normalization and failure rows; ``latency_ms`` null,
    nothing was timed, ``attempts`` 1).

    Refuses the whole import (``BadInput`` with the counts; nothing is to be written) when any
    result belongs to another run, names a slot this design does not have, or answers a slot
    already answered (on disk, or earlier in the same files); ``skip_answered`` (a collect of
    the run's own recorded batch, imported again after an interruption) skips those instead.
    """
    expected = {(s.trial, s.slot): s for s in plan_slots(design)}
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
            if skip_answered:
                found.skipped += 1
                continue
            answered += 1
            first_bad = first_bad or f"{where} (trial {slot.trial} slot {slot.slot} answered)"
            continue
        if result.not_run:
            found.not_run += 1
            continue
        row = batch_row(design, slot, result)
        found.rows.append(row)
        if row["status"] == "ok":
            done.add(key)
    if foreign or unknown or answered:
        raise BadInput(
            f"refused {foreign + unknown + answered} batch results ({foreign} for another run, "
            f"{unknown} for slots this design does not have, {answered} for slots already "
            f"answered; first: {first_bad}); nothing written"
        )
    return found


def batch_row(design: DesignRecord, slot: Slot, result: BatchResult) -> ResponseRow:
    """The row a batch ``result`` for ``slot`` makes (nothing timed: ``latency_ms`` null)."""
    completion = _batch_completion(design, slot, result)
    row = response_record(design, Work(slot, "generate"), completion, _side_model(design, slot))
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
    *,
    skip_answered: bool = False,
) -> tuple[BatchImport, list[TrialRecord] | None]:
    """bt-generate --batch-import's work: check every result (:func:`batch_rows`), append
    the rows, record the session in ``generation.json`` (no wall time: a batch is not timed
    here), and return what was found with the blinded view once every slot is answered
    (None while some are missing: a partial import is fine, a later one fills the rest)."""
    check_rows_match_design(design, existing)
    state = SlotState.from_rows(existing)
    found = batch_rows(design, design_sha256, state, results, skip_answered=skip_answered)
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
