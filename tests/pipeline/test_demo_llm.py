"""``make demo-llm`` behaves like ``make demo``: it runs the whole
chain with a simulated LLM judge, and run again on the same directory it resumes (nothing asked
twice, nothing deleted) instead of refusing; a directory holding anything else is refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from blindtest.rundir import artifacts


def demo_llm(run: Path) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("BLINDTEST_DEBUG", "MAKELEVEL")}
    return subprocess.run(
        [sys.executable, "-m", "blindtest.cli.demo_llm", str(run)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )


def test_demo_llm_runs_the_chain_and_a_rerun_resumes(tmp_path: Path) -> None:
    run = tmp_path / "demo-llm"
    first = demo_llm(run)
    assert first.returncode == 0, first.stderr
    out = first.stdout + first.stderr
    assert "LLM judge sim-judge-fair (20 comparisons judged)" in out
    assert "position swap: both passes agreed" in out
    assert "Hidden controls: 4 of the 24 comparisons showed one model on both sides" in out
    assert "--judge llm:sim-judge-fair --show-prompt 1" in out
    kept = {
        name: (run / name).read_bytes()
        for name in (artifacts.DESIGN, artifacts.RESPONSES, artifacts.TRIALS, artifacts.PICKS)
    }

    again = demo_llm(run)
    assert again.returncode == 0, again.stderr
    assert f"resuming the demo in {run}/ (nothing is deleted)" in again.stderr
    assert "judged 0 of 24 trials (24 of 24 in all)" in again.stderr + again.stdout
    assert "0 requests" in again.stderr + again.stdout
    for name, data in kept.items():
        assert (run / name).read_bytes() == data, name


def test_demo_llm_refuses_a_directory_that_is_not_its_demo(tmp_path: Path) -> None:
    run = tmp_path / "mine"
    run.mkdir()
    (run / "notes.txt").write_text("mine\n")
    refused = demo_llm(run)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1
    assert "notes.txt, which is not part of a blindtest demo run" in refused.stderr
    assert sorted(p.name for p in run.iterdir()) == ["notes.txt"]
