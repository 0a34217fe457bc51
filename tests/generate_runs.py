"""Run directories for the bt-generate tests: a two-sided design against the simulator
(``make_design``) and the rows bt-generate wrote (``rows``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from blindtest.rundir import artifacts
from blindtest.rundir.types import DesignRecord
from blindtest.simulator import Simulator

from conftest import Invoke, numbered_prompts


def make_design(
    invoke: Invoke,
    run: Path,
    simulator: Simulator,
    tmp_path: Path,
    *extra: str,
    trials: int = 6,
    prompts: list[str] | None = None,
) -> DesignRecord:
    prompt_path = tmp_path / "prompts.txt"
    prompt_path.write_text("\n".join(prompts or numbered_prompts(max(trials, 6))) + "\n")
    result = invoke(
        "design",
        run,
        "--prompts",
        prompt_path,
        "--a",
        "sim-large",
        "--b",
        "sim-small",
        "--a-url",
        simulator.base_url,
        "--b-url",
        simulator.base_url,
        "--seed",
        "gen",
        "--trials",
        trials,
        *extra,
    )
    assert result.exit_code == 0, result.stderr
    design: DesignRecord = orjson.loads((run / "design.json").read_bytes())
    return design


def rows(run: Path) -> list[dict[str, Any]]:
    return artifacts.read_jsonl(run / "responses.jsonl", "responses").records
