"""An LLM judge's own position gate counts the comparisons the run's gate counts: the
sensitivity check's planted comparisons (the champion's answer against its degraded copy, a
known-answer test of the judge, not a comparison of the candidates) are left out of both."""

from __future__ import annotations

import json
from pathlib import Path

from blindtest.model.planted import planted_trials
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke


def test_an_llm_judges_position_gate_leaves_the_planted_comparisons_out(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    url = simulator.base_url
    prompts = tmp_path / "p.txt"
    prompts.write_text("\n".join(f"How should one approach topic {i}?" for i in range(40)) + "\n")
    run = tmp_path / "run"
    result = invoke(
        "run", "sim-large", "sim-small", "--a-url", url, "--b-url", url, "--prompts", prompts,
        "--protocol", "preference", "--trials", "30", "--seed", "gate", "--run-dir", run,
        "--decide", "noninferior:0.05", "--sensitivity", "10",
        "--judge", "llm:sim-judge-longer", "--judge-url", url,
    )  # fmt: skip
    assert result.exit_code == 4, result.stderr[-2000:]
    report = json.loads((run / artifacts.REPORT).read_text())
    assert len(planted_trials(artifacts.load_design(run).design)) == 10
    (judge,) = report["llm_judges"]["judges"]
    # Was 40: the 30 real comparisons and the 10 planted ones, where the run's gate has 30.
    assert judge["position"]["gate"]["comparisons"] == 30
    assert report["position_bias"]["comparisons"] == 30
    assert report["decision"]["sensitivity"]["planted"] == 10
    assert invoke("verify", run).exit_code == 0
