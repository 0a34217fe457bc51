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
from collections.abc import Sequence
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


def _answered(simulator: Simulator) -> int:
    return sum(slot.answered for slot in simulator.slots.values())


def _on_disk(run: Path) -> int:
    return len(artifacts.read_jsonl(run / artifacts.RESPONSES, "responses").records)


def _start(run: Path, concurrency: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [BT_GENERATE, str(run), "--quiet", "--concurrency", str(concurrency)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OPENAI_API_KEY": "unused"},
    )


def _wait_for_answers(simulator: Simulator, count: int, process: subprocess.Popen[str]) -> None:
    while _answered(simulator) < count:
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
    process = _start(run, 3)
    assert process.stderr is not None
    try:
        _wait_for_answers(simulator, 40, process)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()
        process.stderr.close()
    time.sleep(0.1)  # requests the server was still answering meet a closed connection
    sent, kept = _answered(simulator), _on_disk(run)
    assert sent >= 40
    assert sent - workers <= kept <= sent
    simulator.config.latency = 0.0
    assert invoke("generate", run, "--quiet").exit_code == 0  # a rerun finishes the run


def test_ctrl_c_keeps_every_answer_whose_body_arrived(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=60)
    simulator.config.latency = 0.4  # the answers of a round arrive together, 0.4 s apart
    process = _start(run, 3)
    assert process.stderr is not None
    try:
        _wait_for_answers(simulator, 2 * 6, process)  # two rounds of 6 answered
        time.sleep(0.2)  # midway through the third round: no body on its way
        process.send_signal(signal.SIGINT)
        assert process.wait() == 130
        assert "interrupted" in process.stderr.read()
    finally:
        process.kill()
        process.wait()
        process.stderr.close()
    time.sleep(0.5)  # the third round's requests meet a closed connection, uncounted
    assert _answered(simulator) == _on_disk(run) >= 12


def test_a_401_on_one_request_keeps_every_answer_whose_body_arrived(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    # The 401 comes at once; the other requests in flight are 0.4 s from their answers, so
    # every body the server wrote reached bt-generate, and each must be on disk.
    prompts = numbered_prompts(40)
    prompts[24] = "[sim:401] " + prompts[24]
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=40, prompts=prompts)
    simulator.config.latency = 0.4
    stopped = invoke("generate", run, "--quiet", "--concurrency", 3)
    assert stopped.exit_code == 3, stopped.output
    assert "HTTP 401" in stopped.stderr
    time.sleep(0.5)  # the requests still out meet a closed connection, uncounted
    sent = _answered(simulator)
    assert 0 < sent < 40 * 3  # stopped before every slot of the 40 triangle trials
    assert _on_disk(run) == sent
