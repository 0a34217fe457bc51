"""An unfinished fixed design stops `blindtest run`
before audit and analyze, with nothing revealing printed; a sequential design that stopped
early is finished, and the chain goes on to the result."""

from __future__ import annotations

from pathlib import Path

from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke


def args(simulator: Simulator, run: Path, *extra: object) -> list[object]:
    url = simulator.base_url
    return [
        "run", "sim-large", "sim-small", "--demo", "--a-url", url, "--b-url", url,
        "--run-dir", run, *extra,
    ]  # fmt: skip


def test_quitting_before_any_pick_stops_the_chain_and_reveals_nothing(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    result = invoke(*args(simulator, run, "--trials", 6), input="q\ny\n")
    assert result.exit_code == 0, result.stderr
    shown = result.stdout + result.stderr
    for word in ("bot", "correct", "p =", "verdict", "Tells"):
        assert word not in shown, word
    assert result.stderr.strip().splitlines()[-1].startswith("0 of 6 judged; continue with: ")
    assert not (run / artifacts.AUDIT).exists()
    assert not (run / artifacts.REPORT).exists()


def test_a_sequential_design_that_stopped_early_is_finished(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    extra = ("--trials", 30, "--sequential", "--judge", "bot:length")
    result = invoke(*args(simulator, run, *extra))
    assert result.exit_code == 0, result.stderr
    picks = artifacts.read_jsonl(run / artifacts.PICKS, "picks").records
    assert len(picks) < 30  # the e-value crossed: the design stopped itself
    report = artifacts.read_json(run / artifacts.REPORT, "report")
    assert report["n"] == len(picks)
    assert "judged; continue with" not in result.stderr
