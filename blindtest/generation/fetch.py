"""Fetching: the workers that ask the endpoints for the slots still pending, the one
recorder that writes their answers, and the guard's stop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from blindtest.errors import CheckFailed, PromptTooLong
from blindtest.generation.guard import DrawCollisions, deterministic_endpoint_error
from blindtest.generation.ledger import AddRow, AppendRow, Ledger
from blindtest.generation.requests import SlotRequests, messages_for, prompt_texts
from blindtest.generation.responses import response_record
from blindtest.model.derived import trial_slot_seed
from blindtest.model.normalize import launder_messages
from blindtest.model.slots import LAUNDER, SlotState, Work
from blindtest.rundir.types import DesignRecord, ResponseRow
from blindtest.transport.client import ChatClient, Completion
from blindtest.transport.wire import ChatMessage


@dataclass
class Progress:
    """Counts the CLI renders; updated by `run_generation` as results arrive."""

    total: int
    done: int = 0
    failed: int = 0
    retries: int = 0
    started: float = field(default_factory=time.monotonic)


# --------------------------------------------------------------------------- fetching


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
    take: Callable[[], Work | None],
    queue: asyncio.Queue[Work | None] | None,
    prompt_text: Callable[[str], str],
    on_answer: Callable[[Work, Completion, str], Awaitable[None]],
) -> None:
    """Ask for work from ``take`` until it has none, then (the launder role) from ``queue``
    until it holds the end mark. Each answer goes to ``on_answer`` (work, completion, model)
    as it arrives, which returns once it is recorded: only then does the worker ask for its
    next piece of work."""
    while True:
        work = take()
        if work is None:
            if queue is None:
                return
            work = await queue.get()
            if work is None:
                return
        role = LAUNDER if work.stage == LAUNDER else work.slot.side
        if work.stage == LAUNDER:
            messages: list[ChatMessage] = launder_messages(work.source or "")  # type: ignore[assignment]
            seed = None
        else:
            slot = work.slot
            text = prompt_text(slot.prompt_id)
            messages = messages_for(design, text, slot.side, slot.prompt_id)
            seed = trial_slot_seed(design, work.slot.trial, work.slot.slot)
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
        await on_answer(work, completion, client.endpoint(role).model)


class _Recorder:
    """The one writer of a run: a task that records the answers the workers hand it
    (``record``), one at a time, in the order they arrived.

    A worker waits in ``record`` until its answer is recorded (appended: in the OS's buffers,
    so a kill -9 cannot lose it) before it asks for its next slot, so at any moment at most
    one answer per worker is received and not yet on disk. A worker cancelled while it waits
    (Ctrl-C, another request's 401) leaves its answer queued: ``close`` records everything
    queued before it returns. A recording that fails (a full disk) sets ``failed``, which
    stops the run as a failing worker would; the answers still queued then stay unrecorded
    (a rerun asks for them again)."""

    def __init__(self, record: Callable[[Work, Completion, str], None]) -> None:
        self._record = record
        self._queue: asyncio.Queue[tuple[Work, Completion, str, asyncio.Future[None]] | None]
        self._queue = asyncio.Queue()
        self.failed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._write())

    async def record(self, work: Work, completion: Completion, model: str) -> None:
        """Hand an answer to the writer and wait until it is recorded."""
        written = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((work, completion, model, written))
        await written

    async def _write(self) -> None:
        while (item := await self._queue.get()) is not None:
            work, completion, model, written = item
            try:
                self._record(work, completion, model)
            except Exception as error:  # the run stops on it (``failed`` is awaited)
                if not self.failed.done():
                    self.failed.set_exception(error)
                if not written.done():
                    written.set_exception(error)
                return
            if not written.done():
                written.set_result(None)

    async def close(self) -> None:
        """Record every answer still queued, then end the writer."""
        self._queue.put_nowait(None)
        await self._task
        if self.failed.done():
            self.failed.exception()  # raised already, by the worker whose answer it was


def _memory_ledger(
    design: DesignRecord, state: SlotState, append: AppendRow
) -> tuple[Ledger, AddRow]:
    """A ledger over rows held in memory (a caller that gives a ``SlotState``), kept in step
    with ``state``."""
    rows: list[Mapping[str, Any]] = []
    ledger = Ledger(design, rows.__getitem__, SlotRequests(design))
    for row in [*state.generated.values(), *state.laundered.values()]:
        rows.append(row)
        ledger.record(row, len(rows) - 1)

    def add(row: ResponseRow) -> int:
        append(row)
        state.record(row)
        rows.append(row)
        return len(rows) - 1

    return ledger, add


def _collisions_of(design: DesignRecord, ledger: Ledger) -> DrawCollisions:
    collisions = DrawCollisions.empty(design)
    for _, _, index in ledger.slot_indexes():
        if ledger.ok["generate"][index]:
            row = ledger.read_row(ledger.refs["generate"][index])
            collisions.take(row["trial"], row["slot"], row)
    return collisions


def _role_work(ledger: Ledger, answered: bytes, role: str) -> Iterator[Work]:
    if role == LAUNDER:
        return ledger.pending(answered, LAUNDER)
    return (w for w in ledger.pending(answered, "generate") if w.slot.side == role)


def _taker(works: Iterator[Work], stop: Sequence[object]) -> Callable[[], Work | None]:
    """The next slot of ``works``, or None once ``stop`` holds anything (the guard tripped:
    no more money on the run)."""
    return lambda: None if stop else next(works, None)


async def run_generation(
    design: DesignRecord,
    client: ChatClient,
    state: SlotState | Ledger,
    append: AppendRow | AddRow,
    *,
    concurrency: int,
    progress: Progress | None = None,
    on_update: Callable[[], None] | None = None,
    collisions: DrawCollisions | None = None,
) -> SlotState | Ledger:
    """Fetch every pending slot (and laundering), appending each row as it arrives.

    One worker pool per role, so a rate-limited side never holds up the other; each worker
    takes the next missing slot when it is free (the work is never listed whole). Raises
    ``CheckFailed`` as soon as the deterministic-endpoint guard trips, and lets fatal
    ``EndpointFailed`` errors (bad key, unknown model) through at once; rows already appended
    stay. ``state`` is a ``Ledger`` (``append`` then returns each row's reference) or a
    ``SlotState`` (rows kept in memory). Returns the updated state.
    """
    if isinstance(state, Ledger):
        ledger, add = state, cast(AddRow, append)
    else:
        ledger, add = _memory_ledger(design, state, cast(AppendRow, append))
    if collisions is None:
        collisions = _collisions_of(design, ledger)
    guard_error: list[CheckFailed] = []
    # Set the moment the guard trips: the wait below wakes at once (a fast endpoint answers
    # hundreds of requests in a quarter of a second) and no worker takes another slot.
    tripped: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    counts = progress if progress is not None else Progress(total=0)
    if collisions.refused():
        raise deterministic_endpoint_error(design, collisions)  # no more money on it
    roles = client.sides
    queue: asyncio.Queue[Work | None] | None = asyncio.Queue() if LAUNDER in roles else None
    requests = ledger.requests or SlotRequests(design)

    def on_result(work: Work, completion: Completion, model: str) -> None:
        row = response_record(design, work, completion, model, requests)
        newly = ledger.record(row, add(row), current=True)
        counts.done += 1
        counts.failed += row["status"] != "ok"
        if newly and work.stage != LAUNDER:
            if queue is not None:
                queue.put_nowait(Work(work.slot, LAUNDER, row.get("raw_text", row["text"])))
                counts.total += 1
            collisions.take(work.slot.trial, work.slot.slot, row)
            if not guard_error and collisions.refused():
                guard_error.append(CheckFailed("deterministic endpoint"))
                tripped.set_result(None)
        if on_update is not None:
            on_update()

    prompt_text = prompt_texts(design)
    answered = bytes(ledger.ok["generate"])  # laundering of later answers is queued
    recorder = _Recorder(on_result)
    tasks: dict[str, list[asyncio.Task[None]]] = {}
    for role in roles:
        take = _taker(_role_work(ledger, answered, role), guard_error)
        tasks[role] = [
            asyncio.create_task(
                _worker(
                    design,
                    client,
                    take,
                    queue if role == LAUNDER else None,
                    prompt_text,
                    recorder.record,
                )
            )
            for _ in range(max(concurrency, client.ceiling(role)))
        ]
    await _drain_or_stop(design, queue, tasks, guard_error, tripped, collisions, recorder)
    return state


async def _drain_or_stop(
    design: DesignRecord,
    queue: asyncio.Queue[Work | None] | None,
    tasks: Mapping[str, list[asyncio.Task[None]]],
    guard_error: list[CheckFailed],
    tripped: asyncio.Future[None],
    collisions: DrawCollisions,
    recorder: _Recorder,
) -> None:
    try:
        await _drain(queue, tasks, guard_error, tripped, recorder)
    except CheckFailed as error:
        if not guard_error or error is not guard_error[0]:
            raise
        # Stated after every request in flight has ended: the count over all fetched trials.
        raise deterministic_endpoint_error(design, collisions) from None


async def _drain(
    queue: asyncio.Queue[Work | None] | None,
    tasks: Mapping[str, list[asyncio.Task[None]]],
    guard_error: list[CheckFailed],
    tripped: asyncio.Future[None],
    recorder: _Recorder,
) -> None:
    """Wait for the candidate roles, then close and drain the launder queue; cancel all on the
    first error or when the deterministic guard trips. Every answer received is recorded
    before this returns or raises (unless recording itself failed)."""
    everything = [t for group in tasks.values() for t in group]
    try:
        candidates = [t for role, group in tasks.items() if role != LAUNDER for t in group]
        stops = (recorder.failed, tripped)
        await _wait_all(candidates, guard_error, stops)
        if queue is not None and LAUNDER in tasks:
            for _ in tasks[LAUNDER]:
                queue.put_nowait(None)
            await _wait_all(tasks[LAUNDER], guard_error, stops)
    finally:
        for task in everything:
            task.cancel()
        await asyncio.gather(*everything, return_exceptions=True)
        # What arrived before a stop was paid for: the writer records what is still queued.
        await recorder.close()


async def _wait_all(
    tasks: Sequence[asyncio.Task[None]],
    guard_error: list[CheckFailed],
    stops: Sequence[asyncio.Future[None]],
) -> None:
    """Wait until every task has ended, raising the first error (of a task, or of the
    recorder's ``failed`` among ``stops``) and the deterministic guard's (``tripped``) as soon
    as they happen."""
    pending: set[asyncio.Future[None]] = set(tasks)
    while pending:
        done, _ = await asyncio.wait(pending | set(stops), return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        pending -= done
        if guard_error:
            raise guard_error[0]
