"""bt-generate's work is one library call,
``generate.generate_stage``, whose files and output come in as callbacks; the CLI resolves
options, reads the design, and writes what the call returns."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from blindtest.errors import BadInput
from blindtest.generation.generate import FetchOptions, generate_stage
from blindtest.generation.stage_io import StageIO
from blindtest.rundir import artifacts
from blindtest.rundir.artifacts import JsonObject
from blindtest.simulator import Simulator

from conftest import Invoke
from generate_runs import make_design

CLI = Path(__file__).parents[2] / "blindtest" / "cli" / "generate.py"


class Memory:
    """The run directory's files as the stage sees them, in memory."""

    def __init__(self) -> None:
        self.responses: list[JsonObject] = []
        self.generation: list[Mapping[str, Any]] = []
        self.said: list[str] = []
        self.opened = 0

    @contextlib.contextmanager
    def open_responses(self) -> Iterator[Any]:
        self.opened += 1
        yield self.responses.append

    def write_generation(self, record: Mapping[str, Any]) -> bool:
        self.generation.append(record)
        return True

    def io(self) -> StageIO:
        def no_files(side: str, item: str, variant: str) -> str:
            raise AssertionError("not a --from-dirs design")

        return StageIO(self.open_responses, self.write_generation, no_files, self.said.append)


def test_the_stage_is_one_library_call_with_its_files_as_callbacks(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=6)
    loaded = artifacts.load_design(run)
    memory = Memory()
    trials = generate_stage(loaded.design, loaded.sha256, [], None, {}, FetchOptions(), memory.io())
    assert len(memory.responses) == 18
    assert [t["trial"] for t in trials] == list(range(1, 7))
    assert memory.generation[-1]["complete"] is True
    assert memory.said[0] == "fetching 18 responses"
    assert memory.said[-1].startswith("fetched 18 rows (0 failed) in 18 requests")
    # The CLI on the same design writes exactly these trials.
    assert invoke("generate", run, "--quiet").exit_code == 0
    written = artifacts.read_jsonl(run / artifacts.TRIALS, "trials").records
    assert written == trials


def test_a_rerun_with_every_slot_answered_appends_nothing_and_opens_nothing(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=6)
    assert invoke("generate", run, "--quiet").exit_code == 0
    loaded = artifacts.load_design(run)
    rows = artifacts.read_jsonl(run / artifacts.RESPONSES, "responses").records
    memory = Memory()
    trials = generate_stage(
        loaded.design, loaded.sha256, rows, None, {}, FetchOptions(), memory.io()
    )
    assert (memory.opened, memory.responses) == (0, [])
    assert trials == artifacts.read_jsonl(run / artifacts.TRIALS, "trials").records


def test_a_missing_key_is_refused_before_anything_is_opened(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=6)
    loaded = artifacts.load_design(run)
    design = loaded.design.copy()
    remote = {"base_url": "https://api.example.com/v1", "key_env": "BT_I11_UNSET_KEY"}
    design["models"] = {side: {**spec, **remote} for side, spec in design["models"].items()}
    monkeypatch.delenv("BT_I11_UNSET_KEY", raising=False)
    memory = Memory()
    with pytest.raises(BadInput, match="BT_I11_UNSET_KEY is not set"):
        generate_stage(design, loaded.sha256, [], None, {}, FetchOptions(), memory.io())
    assert (memory.opened, memory.generation) == (0, [])


def test_cli_generate_is_thin() -> None:
    source = CLI.read_text()
    assert len(source.splitlines()) <= 160
    for orchestration in ("asyncio", "ChatClient", "ledger(", "session_summary", "collision"):
        assert orchestration not in source, orchestration
