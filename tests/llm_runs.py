"""Run directories for the LLM-judge tests: a demo design generated against the simulator
(``make_run``), bt-judge with an LLM judge (``llm``), the records of a picks file and the
requests the simulator's judge models received."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from blindtest.simulator import Simulator


def make_run(invoke: Any, url: str, run: Path, protocol: str, trials: int = 12) -> Path:
    made = invoke(
        "design", run, "--demo", "--protocol", protocol, "--trials", trials,
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", "i13",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    generated = invoke("generate", run, "--quiet")
    assert generated.exit_code == 0, generated.output
    return run


def records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def judge_requests(sim: Simulator) -> list[dict[str, Any]]:
    bodies = [orjson.loads(r.body) for r in sim.requests]
    return [b for b in bodies if str(b.get("model", "")).startswith("sim-judge")]


def llm(invoke: Any, run: Path, model: str, *extra: Any, url: str) -> Any:
    return invoke("judge", run, "--judge", f"llm:{model}", "--judge-url", url, *extra)
