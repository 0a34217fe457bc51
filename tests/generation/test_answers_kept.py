"""Nothing received is lost: bt-generate's one writer appends an answer before the worker that
received it asks for its next slot, so a kill -9 loses at most the answers in flight (one per
worker), and a run stopped for any reason (another request's 401, Ctrl-C, a cancelled worker)
has every answer whose body arrived on disk. The simulator counts an answer only once its body
is written to the connection."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import orjson
import pytest

from blindtest.errors import BadInput
from blindtest.generation.fetch import run_generation
from blindtest.model.slots import SlotState
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator
from blindtest.transport.client import ChatClient, Completion
from blindtest.transport.wire import Usage

from conftest import Invoke, numbered_prompts
from generate_runs import make_design

BT_GENERATE = str(Path(sys.executable).parent / "bt-generate")


class OnDiskClient:
    """Answers every request after a millisecond; when a worker asks for its next slot, checks
    that the answer it received last is already in ``path`` (read as another process would)."""

    def __init__(self, path: Path | None, stop_after: int | None = None) -> None:
        self.sides = ("A", "B")
        self.path = path
        self.stop_after = stop_after
        self.last: dict[asyncio.Task[Any], int | None] = {}
        self.checked = 0
        self.answered: list[int | None] = []

    def ceiling(self, role: str) -> int:
        return 3

    def sends_seed(self, role: str) -> bool:
        return True

    def endpoint(self, role: str) -> Any:
        return SimpleNamespace(model=f"model-{role}")

    async def complete(
        self, role: str, messages: Sequence[Any], *, seed: int | None = None
    ) -> Completion:
        worker = asyncio.current_task()
        assert worker is not None
        if worker in self.last and self.path is not None:
            on_disk = self.path.read_bytes() if self.path.exists() else b""
            seeds = [orjson.loads(line)["seed"] for line in on_disk.splitlines()]
            assert self.last[worker] in seeds  # recorded before this slot was asked for
            self.checked += 1
        await asyncio.sleep(0.001)
        if self.stop_after is not None and len(self.answered) >= self.stop_after:
            raise asyncio.CancelledError  # as Ctrl-C reaches a worker: mid-request
        self.last[worker] = seed
        self.answered.append(seed)
        usage = Usage(prompt_tokens=5, completion_tokens=7, total_tokens=12)
        return Completion(role, "ok", f"answer {seed}", "stop", usage, 1.0, 1, 200, seed=seed)


def _design(invoke: Invoke, tmp_path: Path, simulator: Simulator, trials: int) -> Any:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=trials)
    return artifacts.load_design(run).design


def test_an_answer_is_on_disk_before_its_worker_asks_for_the_next_slot(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    design = _design(invoke, tmp_path, simulator, 10)
    path = tmp_path / "responses.jsonl"
    client = OnDiskClient(path)
    with artifacts.JsonlAppender(path, "responses", grouped=True) as out:
        state = SlotState({}, {})
        asyncio.run(
            run_generation(design, cast(ChatClient, client), state, out.append, concurrency=3)
        )
    assert len(state.generated) == 30
    assert client.checked == 30 - 6  # every request but each worker's first was checked


def test_a_recording_that_fails_stops_the_run_with_its_error(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    design = _design(invoke, tmp_path, simulator, 10)
    recorded: list[Any] = []

    def append(row: Any) -> None:
        if len(recorded) == 4:
            raise BadInput("cannot write responses.jsonl: No space left on device")
        recorded.append(row)

    client = OnDiskClient(None)  # rows kept in memory: nothing to look for on disk
    with pytest.raises(BadInput, match="No space left"):
        asyncio.run(
            run_generation(
                design, cast(ChatClient, client), SlotState({}, {}), append, concurrency=1
            )
        )
    assert len(recorded) == 4
    assert len(client.answered) < 30  # stopped at once, not after asking for all 30 slots


def test_a_cancelled_run_has_recorded_every_answer_it_received(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    design = _design(invoke, tmp_path, simulator, 10)
    path = tmp_path / "responses.jsonl"
    client = OnDiskClient(path, stop_after=11)
    with (
        artifacts.JsonlAppender(path, "responses") as out,
        pytest.raises(asyncio.CancelledError),
    ):
        asyncio.run(
            run_generation(
                design, cast(ChatClient, client), SlotState({}, {}), out.append, concurrency=2
            )
        )
    on_disk = [orjson.loads(line)["seed"] for line in path.read_bytes().splitlines()]
    assert len(client.answered) >= 11
    assert sorted(on_disk, key=str) == sorted(client.answered, key=str)  # each, none twice


# --------------------------------------------------------------------------- whole processes
#
# The simulator counts an answer once its body is written to the connection; a client stopping
# at that moment may never read it (a body in the socket's buffer has not reached bt-generate).
# So the server's count bounds what is kept (at most one answer per worker beyond it, at any
# moment), and what must be kept exactly is what the client received, or, in another process,
# what was on disk before the stop, the answers after it never sent (the simulator holds them).


def _answered(simulator: Simulator) -> int:
    return sum(slot.answered for slot in simulator.slots.values())


def _on_disk(run: Path) -> int:
    path = run / artifacts.RESPONSES
    return len(artifacts.read_jsonl(path, "responses").records) if path.exists() else 0


def _start(run: Path, concurrency: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [BT_GENERATE, str(run), "--quiet", "--concurrency", str(concurrency)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OPENAI_API_KEY": "unused"},
    )


def _wait_until(reached: Callable[[], bool], process: subprocess.Popen[str]) -> None:
    """Until ``reached`` (no clock: the simulator holds every answer after the ones waited
    for, so bt-generate cannot end first)."""
    while not reached():
        assert process.poll() is None, "bt-generate ended before it was stopped"
        time.sleep(0.002)


def test_a_kill_9_loses_at_most_the_answers_in_flight(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    # Two sides, 3 workers each: at any moment each worker has at most one answer that the
    # server sent and the disk does not hold (in flight, or received and being appended).
    workers = 2 * 3
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=60)
    simulator.config.latency = 0.02
    simulator.config.fail_after, simulator.config.fail_with = 40, "hang"  # 40 answers, no more
    process = _start(run, 3)
    assert process.stderr is not None
    try:
        _wait_until(lambda: _answered(simulator) == 40, process)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()
        process.stderr.close()
    kept = _on_disk(run)
    assert 40 - workers <= kept <= _answered(simulator) == 40
    simulator.config.latency, simulator.config.fail_after = 0.0, None
    assert invoke("generate", run, "--quiet").exit_code == 0  # a rerun finishes the run


def test_ctrl_c_keeps_every_answer_it_received_and_no_answer_is_sent_after_it(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=60)
    simulator.config.fail_after, simulator.config.fail_with = 12, "hang"  # then none answered
    process = _start(run, 3)
    assert process.stderr is not None
    try:
        _wait_until(lambda: _on_disk(run) == 12, process)  # every answer sent has arrived
        process.send_signal(signal.SIGINT)  # the other requests wait on the simulator
        assert process.wait() == 130
        assert "interrupted" in process.stderr.read()
    finally:
        process.kill()
        process.wait()
        process.stderr.close()
    assert _answered(simulator) == _on_disk(run) == 12
    simulator.config.fail_after = None
    assert invoke("generate", run, "--quiet").exit_code == 0  # a rerun finishes the run
    assert _on_disk(run) == 60 * 3


def test_a_401_on_one_request_keeps_every_answer_whose_body_arrived(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The 401 comes at once, while the other workers' requests are in flight; the run stops,
    # and every answer the client had received by then is on disk, each once.
    prompts = numbered_prompts(40)
    prompts[24] = "[sim:401] " + prompts[24]
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=40, prompts=prompts)
    simulator.config.latency = 0.05
    received: list[tuple[str, int | None]] = []
    complete = ChatClient.complete

    async def receiving(self: ChatClient, role: str, *args: Any, **kwargs: Any) -> Completion:
        completion = await complete(self, role, *args, **kwargs)
        received.append((role, completion.seed))  # handed to the worker, nothing between
        return completion

    monkeypatch.setattr(ChatClient, "complete", receiving)
    stopped = invoke("generate", run, "--quiet", "--concurrency", 3)
    assert stopped.exit_code == 3, stopped.output
    assert "HTTP 401" in stopped.stderr
    rows = artifacts.read_jsonl(run / artifacts.RESPONSES, "responses").records
    kept_slots = [(row["side"], row["seed"]) for row in rows]
    assert sorted(kept_slots, key=str) == sorted(received, key=str)
    kept, workers = len(rows), 2 * 3
    assert 0 < kept < 40 * 3  # stopped before every slot of the 40 triangle trials
    assert kept <= _answered(simulator) <= kept + workers
