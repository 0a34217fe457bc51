"""bt-generate records an answer one turn of the event loop after it arrives
(``generate._Recorder``), so the request its worker asks next goes out first; nothing is lost
by it: every answer received is recorded when the run ends, stops or is cancelled, and a
recording that fails stops the run with its own error."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from test_generate import make_design

from blindtest import artifacts
from blindtest.client import ChatClient, Completion
from blindtest.errors import BadInput
from blindtest.generating import run_generation
from blindtest.simulator import Simulator
from blindtest.slots import SlotState, slot_seed
from blindtest.wire import Usage

from conftest import Invoke


class FakeClient:
    """Answers every request after a millisecond, logging when it was asked and answered."""

    def __init__(self, log: list[tuple[str, int | None]], stop_after: int | None = None) -> None:
        self.sides = ("A", "B")
        self.log = log
        self.stop_after = stop_after
        self.answered = 0

    def ceiling(self, role: str) -> int:
        return 1

    def sends_seed(self, role: str) -> bool:
        return True

    def endpoint(self, role: str) -> Any:
        return SimpleNamespace(model=f"model-{role}")

    async def complete(
        self, role: str, messages: Sequence[Any], *, seed: int | None = None
    ) -> Completion:
        self.log.append(("ask", seed))
        await asyncio.sleep(0.001)
        self.answered += 1
        if self.stop_after is not None and self.answered > self.stop_after:
            raise asyncio.CancelledError  # as Ctrl-C reaches a worker: mid-request
        self.log.append(("answer", seed))
        usage = Usage(prompt_tokens=5, completion_tokens=7, total_tokens=12)
        return Completion(role, "ok", f"answer {seed}", "stop", usage, 1.0, 1, 200, seed=seed)


def _fake(log: list[tuple[str, int | None]]) -> ChatClient:
    return cast(ChatClient, FakeClient(log))


def _design(invoke: Invoke, tmp_path: Path, simulator: Simulator, trials: int) -> Any:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=trials)
    return artifacts.load_design(run).design


def test_each_answer_is_recorded_after_its_worker_asked_for_the_next(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    design = _design(invoke, tmp_path, simulator, 6)
    log: list[tuple[str, int | None]] = []
    seed_of = {}

    def append(row: Any) -> None:
        seed_of[(row["trial"], row["slot"])] = row["seed"]
        log.append(("record", row["seed"]))

    state = SlotState({}, {})
    asyncio.run(run_generation(design, _fake(log), state, append, concurrency=1))
    assert len(state.generated) == 18
    assert {seed_of[key] for key in seed_of} == {
        slot_seed(design["seed"], trial, slot) for trial, slot in state.generated
    }
    asks = [seed for what, seed in log if what == "ask"]
    for what, seed in log:
        if what != "record":
            continue
        position = log.index(("record", seed))
        # Another request was asked between this answer's arrival and its recording,
        # unless it was among the last (no work left to ask for).
        between = [e for e in log[log.index(("answer", seed)) : position] if e[0] == "ask"]
        assert between or asks.index(seed) >= len(asks) - 2, log


def test_a_recording_that_fails_stops_the_run_with_its_error(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    design = _design(invoke, tmp_path, simulator, 10)
    log: list[tuple[str, int | None]] = []
    recorded: list[Any] = []

    def append(row: Any) -> None:
        if len(recorded) == 4:
            raise BadInput("cannot write responses.jsonl: No space left on device")
        recorded.append(row)

    with pytest.raises(BadInput, match="No space left"):
        asyncio.run(run_generation(design, _fake(log), SlotState({}, {}), append, concurrency=1))
    asked = sum(1 for what, _ in log if what == "ask")
    assert len(recorded) == 4
    assert asked < 30  # stopped at once, not after asking for all 30 slots


def test_a_cancelled_run_has_recorded_every_answer_it_received(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    design = _design(invoke, tmp_path, simulator, 10)
    log: list[tuple[str, int | None]] = []
    recorded: list[int | None] = []
    client = FakeClient(log, stop_after=11)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(
            run_generation(
                design,
                cast(ChatClient, client),
                SlotState({}, {}),
                lambda row: recorded.append(row["seed"]),
                concurrency=1,
            )
        )
    answered = [seed for what, seed in log if what == "answer"]
    assert len(answered) >= 10
    assert sorted(recorded, key=str) == sorted(answered, key=str)  # each received, none twice
