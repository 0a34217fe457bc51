"""a rerun of bt-generate that fetches nothing changes nothing; a resumed run adds
to the ledger (wall time and requests per session), keeps the recorded prices unless new ones
are given, and says so in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke
from generate_runs import make_design, rows


def generation(run: Path) -> dict[str, Any]:
    return artifacts.read_json(run / "generation.json", "generation")


def test_rerun_that_fetches_nothing_changes_nothing_and_verify_passes(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    first = invoke("generate", run, "--price-a", "2.5,10", "--price-b", "0.15,0.6")
    assert first.exit_code == 0, first.stderr
    before = (run / "generation.json").read_bytes()
    trials = (run / "trials.jsonl").read_bytes()
    again = invoke("generate", run)  # prices not repeated
    assert again.exit_code == 0, again.stderr
    assert (run / "generation.json").read_bytes() == before
    assert (run / "trials.jsonl").read_bytes() == trials
    assert again.stderr.splitlines()[0] == (
        "nothing to fetch (18 rows on disk); generation.json unchanged; "
        "recorded prices kept for A, B"
    )
    assert generation(run)["prices"]["A"] == {"input": 2.5, "output": 10.0}
    verified = invoke("verify", run)
    assert verified.exit_code == 0, verified.stdout + verified.stderr


def test_new_prices_on_a_rerun_replace_only_those_given(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    assert invoke("generate", run, "--quiet", "--price-a", "2.5,10").exit_code == 0
    sessions = generation(run)["sessions"]
    result = invoke("generate", run, "--price-a", "1,2", "--price-b", "3,4")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        "nothing to fetch (18 rows on disk); generation.json updated; "
        "prices replaced for A; prices recorded for B"
    )
    record = generation(run)
    assert record["prices"] == {
        "A": {"input": 1.0, "output": 2.0},
        "B": {"input": 3.0, "output": 4.0},
    }
    a = record["roles"]["A"]
    assert a["cost"] == pytest.approx((a["prompt_tokens"] * 1 + a["completion_tokens"] * 2) / 1e6)
    assert record["sessions"] == sessions  # no fetch, no new session
    assert invoke("verify", run).exit_code == 0


def test_prices_given_again_unchanged_are_not_said_replaced(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    prices = ("--price-a", "2.5,10", "--price-b", "0.15,0.6")
    assert invoke("generate", run, "--quiet", *prices).exit_code == 0
    before = (run / "generation.json").read_bytes()
    same = invoke("generate", run, *prices)
    assert same.exit_code == 0, same.stderr
    assert same.stderr.splitlines()[0] == (
        "nothing to fetch (18 rows on disk); generation.json unchanged"
    )
    assert (run / "generation.json").read_bytes() == before
    one = invoke("generate", run, "--price-a", "2.5,10", "--price-b", "0.2,0.6")
    assert one.exit_code == 0, one.stderr
    assert one.stderr.splitlines()[0] == (
        "nothing to fetch (18 rows on disk); generation.json updated; prices replaced for B"
    )
    assert generation(run)["prices"]["B"] == {"input": 0.2, "output": 0.6}


def test_a_resumed_run_adds_a_session_to_the_ledger_and_says_so(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    simulator.inject("500", times=40, model="sim-small")  # side B fails for now
    first = invoke("generate", run, "--max-retries", "0", "--price-a", "2.5,10")
    assert first.exit_code == 3
    ledger = generation(run)["sessions"]
    assert len(ledger) == 1
    assert ledger[0]["rows"] == 18
    assert ledger[0]["requests"] == 18
    simulator.reset()
    second = invoke("generate", run)
    assert second.exit_code == 0, second.stderr
    lines = second.stderr.splitlines()
    assert lines[0] == "fetching 9 responses (resuming: 18 rows already on disk)"
    assert "resumed: session 2 added to the ledger; recorded prices kept for A" in lines
    record = generation(run)
    assert [s["rows"] for s in record["sessions"]] == [18, 9]
    assert [s["requests"] for s in record["sessions"]] == [18, 9]
    assert record["wall_seconds"] == pytest.approx(
        sum(s["wall_seconds"] for s in record["sessions"]), abs=0.002
    )
    assert record["prices"] == {"A": {"input": 2.5, "output": 10.0}}
    assert record["complete"] is True
    assert invoke("verify", run).exit_code == 0
    # ... and the rerun after that changes nothing.
    before = (run / "generation.json").read_bytes()
    assert invoke("generate", run, "--quiet").exit_code == 0
    assert (run / "generation.json").read_bytes() == before


def test_an_old_generation_json_without_a_ledger_stays_valid_and_is_carried_over(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    simulator.inject("500", times=40, model="sim-small")
    assert invoke("generate", run, "--quiet", "--max-retries", "0").exit_code == 3
    old = orjson.loads((run / "generation.json").read_bytes())
    del old["sessions"]
    old["wall_seconds"] = 7.5
    artifacts.write_json(run / "generation.json", old, "generation", force=True)
    assert invoke("verify", run).exit_code in (0, 1)  # readable; verify judges the rest
    simulator.reset()
    assert invoke("generate", run, "--quiet").exit_code == 0
    record = generation(run)
    assert record["sessions"][0] == {"rows": 18, "requests": 18, "wall_seconds": 7.5}
    assert record["sessions"][1]["rows"] == 9
    assert record["wall_seconds"] == pytest.approx(7.5 + record["sessions"][1]["wall_seconds"])
    assert len(rows(run)) == 27


def test_a_rerun_leaves_an_old_generation_json_without_a_ledger_byte_identical(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    assert invoke("generate", run, "--quiet").exit_code == 0
    old = orjson.loads((run / "generation.json").read_bytes())
    del old["sessions"]
    artifacts.write_json(run / "generation.json", old, "generation", force=True)
    before = (run / "generation.json").read_bytes()
    again = invoke("generate", run)
    assert again.exit_code == 0, again.stderr
    assert "generation.json unchanged" in again.stderr
    assert (run / "generation.json").read_bytes() == before
    assert invoke("verify", run).exit_code == 0
