"""The committed example run: it recomputes, and regenerating it gives the same artifacts."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.designing.build import (
    DesignOptions,
    ModelSpec,
    build_design,
)
from blindtest.model.prompts import load_prompts
from blindtest.pipeline.recompute import diff as verify_diff
from blindtest.pipeline.recompute import verify_run
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GOLDEN = EXAMPLES / "run"
# Fields that depend on the clock or on where the run was made, not on the data.
TIMING = {"mean_latency_ms", "wall_seconds"}


def load(path: Path) -> Any:
    return orjson.loads(path.read_bytes())


def test_committed_example_recomputes() -> None:
    result = verify_run(GOLDEN)
    assert result.ok, "\n".join(map(str, result.differences))
    assert "report.json from its inputs" in result.checked
    assert "report-duplicate.json from its inputs" in result.checked


def test_example_design_rebuilds_byte_for_byte() -> None:
    golden = load(GOLDEN / "design.json")
    models = golden["models"]
    options = DesignOptions(
        a=ModelSpec(models["A"]["model"], models["A"]["base_url"], models["A"]["key_env"]),
        b=ModelSpec(models["B"]["model"], models["B"]["base_url"], models["B"]["key_env"]),
        seed=golden["seed"],
        trials=golden["trials"],
    )
    rebuilt = build_design(load_prompts(EXAMPLES / "prompts.jsonl"), options, golden["provenance"])
    assert artifacts.dump_json(rebuilt) == (GOLDEN / "design.json").read_bytes()


def strip_timing(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_timing(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [strip_timing(v) for v in value]
    return value


def test_regenerating_the_example_gives_the_same_trials_picks_audit_and_report(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    # Point the committed design at this test's simulator port; everything else is unchanged.
    design = (
        (GOLDEN / "design.json")
        .read_bytes()
        .replace(b"http://127.0.0.1:8799/v1", simulator.base_url.encode())
    )
    (run / "design.json").write_bytes(design)
    (run / "design.sha256").write_text(artifacts.sha256_bytes(design) + "\n")
    for args in (
        ("generate", run, "--price-a", "2.5,10", "--price-b", "0.15,0.6", "--quiet"),
        ("judge", run, "--judge", "bot:length", "--quiet"),
        ("audit", run, "--quiet"),
        ("analyze", run, "--quiet"),
    ):
        result = invoke(*args)
        assert result.exit_code == 0, result.stderr
    assert (run / "trials.jsonl").read_bytes() == (GOLDEN / "trials.jsonl").read_bytes()
    # Picks name the design they were made against; this design differs from the golden one
    # only in the simulator's port, so everything else in them must be byte for byte the same.
    assert without_design_hash(run / "picks.jsonl") == without_design_hash(GOLDEN / "picks.jsonl")
    golden_audit, new_audit = load(GOLDEN / "audit.json"), load(run / "audit.json")
    assert new_audit["bots"] == golden_audit["bots"]
    assert new_audit["census"] == golden_audit["census"]
    golden_report, new_report = load(GOLDEN / "report.json"), load(run / "report.json")
    for key in golden_report:
        if key in ("design_sha256", "inputs", "models"):
            continue
        # The design differs only in this test's simulator port: URLs and design hashes
        # quoted inside the report are mapped back to the golden ones.
        ours = orjson.loads(
            orjson.dumps(new_report[key])
            .replace(simulator.base_url.encode(), b"http://127.0.0.1:8799/v1")
            .replace(new_report["design_sha256"].encode(), golden_report["design_sha256"].encode())
        )
        # Floats compare as bt-verify compares them (relative 1e-9): a library's last bit
        # (scipy's root finder behind d') may differ between the versions pip resolves.
        differences = list(verify_diff(strip_timing(golden_report[key]), strip_timing(ours)))
        assert not differences, (key, differences[:3])


@pytest.mark.parametrize("name", ["picks.jsonl", "report.json", "responses.jsonl"])
def test_tampering_with_the_example_is_caught(tmp_path: Path, name: str) -> None:
    run = tmp_path / "run"
    shutil.copytree(GOLDEN, run)
    lines = (run / name).read_bytes().splitlines(keepends=True)
    if name == "report.json":
        edited = (run / name).read_bytes().replace(b'"correct": 16', b'"correct": 17')
        (run / name).write_bytes(edited)
    else:
        record = orjson.loads(lines[2])
        if name == "picks.jsonl":
            record["pick"] = record["pick"] % 3 + 1
        else:
            record["text"] = (record["text"] or "") + " edited"
        lines[2] = artifacts.dump_line(record)
        (run / name).write_bytes(b"".join(lines))
    assert not verify_run(run).ok


def without_design_hash(path: Path) -> list[bytes]:
    records = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert all(len(r.pop("design_sha256")) == 64 for r in records)
    return [artifacts.dump_line(r) for r in records]
