"""An LLM judge stopped between the two passes of a position swap (the key revoked, a refused
connection, Ctrl-C) keeps the pass it got: a failure row holds it (never a pick), and the rerun
takes it instead of asking again, so no request is paid twice and the picks are those of a run
that was never stopped. After the first failure that would repeat for every request, requests
already in flight may end, but no new one starts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.model.picks import load_judge_run, read_picks
from blindtest.simulator import Simulator

TRIALS = 12


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BLINDTEST_JUDGE_KEY", "OPENAI_API_KEY", "SIM_KEY"):
        monkeypatch.delenv(name, raising=False)


def rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def generated_run(invoke: Any, simulator: Simulator, run: Path) -> Path:
    url = simulator.base_url
    made = invoke(
        "design", run, "--demo", "--protocol", "preference", "--trials", TRIALS,
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", "keep",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    simulator.reset()  # from here on the simulator counts the judge's requests only
    return run


def judge_args(run: Path, simulator: Simulator, out: Path, *extra: Any) -> list[Any]:
    return [
        "judge", run, "--judge", "llm:sim-judge-fair", "--judge-url", simulator.base_url,
        "--out", out, *extra,
    ]  # fmt: skip


def verdicts(path: Path) -> dict[tuple[int, int], tuple[Any, ...]]:
    """Each pick record's verdict by (trial, pass): what an uninterrupted run must match."""
    return {
        (r["trial"], r["pass"]): (r["pick"], r["verdict"], r["pass_pick"], r["raw_response"])
        for r in rows(path)
        if not r.get("failed")
    }


def reference(invoke: Any, simulator: Simulator, run: Path) -> dict[tuple[int, int], Any]:
    """The picks of a run never stopped; the simulator then forgets it (a judge's answer is
    the same for the first request of a slot)."""
    simulator.reset()
    out = run / "picks-reference.jsonl"
    assert invoke(*judge_args(run, simulator, out)).exit_code == 0
    simulator.reset()
    return verdicts(out)


def kept_passes(path: Path) -> set[tuple[int, int]]:
    """Every pass whose answer is on disk: in a pick record or a failure row's kept pass."""
    found = set()
    for row in rows(path):
        if row.get("failed"):
            if "answered_pass" in row:
                found.add((row["trial"], row["answered_pass"]["pass"]))
        else:
            found.add((row["trial"], row["pass"]))
    return found


def assert_resumed_like_a_run_never_stopped(
    invoke: Any, simulator: Simulator, run: Path, out: Path, expected: dict[Any, Any]
) -> None:
    before = len(simulator.requests)
    on_disk = kept_passes(out)
    resumed = invoke(*judge_args(run, simulator, out))
    assert resumed.exit_code == 0, resumed.output
    # Exactly the passes not on disk were asked, each once; none answered before was asked.
    assert len(simulator.requests) - before == 2 * TRIALS - len(on_disk)
    assert simulator.stats()["after_answer"] == 0
    assert verdicts(out) == expected
    assert invoke("analyze", run, "--picks", out).exit_code in (0, 1)


def test_a_judge_stopped_by_a_401_between_passes_keeps_pass_1_and_the_rerun_asks_only_pass_2(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = generated_run(invoke, simulator, tmp_path / "run")
    expected = reference(invoke, simulator, run)
    out = run / "picks.jsonl"
    # One request at a time: requests 1-4 are trials 1 and 2, the 5th is trial 3's pass 1,
    # then the key is refused.
    simulator.config.fail_after = 5
    stopped = invoke(*judge_args(run, simulator, out, "--concurrency", 1))
    assert stopped.exit_code == 3
    assert stopped.stderr.count("\n") == 1
    assert "HTTP 401" in stopped.stderr
    assert len(simulator.requests) == 6  # the 401 stopped it: nothing after
    written = rows(out)
    kept = [r for r in written if r.get("failed")]
    assert [(r["trial"], r["answered_pass"]["pass"]) for r in kept] == [(3, 1)]
    assert kept[0]["pick"] == "failed"
    assert "pass 2 not answered" in kept[0]["error"]
    assert kept_passes(out) == {(1, 1), (1, 2), (2, 1), (2, 2), (3, 1)}
    # The half comparison is no pick: a reader sees trials 1 and 2 only.
    run_view = load_judge_run(run).view
    assert sorted(p.trial for p in read_picks(out, run_view).picks) == [1, 2]
    simulator.config.fail_after = None
    assert_resumed_like_a_run_never_stopped(invoke, simulator, run, out, expected)


def test_a_kept_pass_is_reused_once_and_counted_once_in_the_report(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = generated_run(invoke, simulator, tmp_path / "run")
    out = run / "picks.jsonl"
    simulator.config.fail_after = 7
    assert invoke(*judge_args(run, simulator, out, "--concurrency", 1)).exit_code == 3
    simulator.config.fail_after = None
    assert invoke(*judge_args(run, simulator, out)).exit_code == 0
    report = invoke("analyze", run)
    assert report.exit_code in (0, 1)
    answered = simulator.stats()["answered"]
    assert answered == 2 * TRIALS
    # Every request answered is counted once: the kept pass is in its pick record, and the
    # failure row that kept it does not count it again. The one 401 sent no answer and no row
    # counts it.
    assert f"{answered} requests (0 retries), 1 failure row (0 trials still unjudged)" in " ".join(
        report.stdout.split()
    )


def test_a_kept_pass_made_with_other_settings_is_asked_again(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = generated_run(invoke, simulator, tmp_path / "run")
    out = run / "picks.jsonl"
    simulator.config.fail_after = 1  # trial 1's pass 1, then the key is refused
    assert invoke(*judge_args(run, simulator, out, "--concurrency", 1)).exit_code == 3
    assert kept_passes(out) == {(1, 1)}
    simulator.config.fail_after = None
    simulator.reset()
    # No pick is on disk, so other settings may start this judge; its kept pass is theirs not.
    again = invoke(*judge_args(run, simulator, out, "--min-confidence", 0.5))
    assert again.exit_code == 0, again.output
    assert len(simulator.requests) == 2 * TRIALS


def test_after_the_first_401_no_new_request_starts(
    invoke: Any, simulator: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = generated_run(invoke, simulator, tmp_path / "run")
    simulator.config.api_key = "simkey-the-right-one"
    monkeypatch.setenv("SIM_KEY", "simkey-a-wrong-one-0123")
    out = run / "picks.jsonl"
    args = judge_args(run, simulator, out, "--concurrency", 2, "--judge-key-env", "SIM_KEY")
    stopped = invoke(*args)
    assert stopped.exit_code == 3
    assert stopped.stderr.count("\n") == 1
    # The judge prepares 2 x --concurrency comparisons of two passes each (8 requests) so
    # the client's slots stay full, but only --concurrency of them are sent at once. Those
    # 2 may both be out when the first 401 comes back; every other one was waiting for a
    # slot and is never sent. (Before this bound it sent all 8.)
    assert len(simulator.requests) <= 2
    assert rows(out) == []


def test_a_key_revoked_mid_run_stops_new_requests_with_answers_in_flight_kept(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = generated_run(invoke, simulator, tmp_path / "run")
    expected = reference(invoke, simulator, run)
    out = run / "picks.jsonl"
    simulator.config.fail_after = 9
    stopped = invoke(*judge_args(run, simulator, out, "--concurrency", 2))
    assert stopped.exit_code == 3
    # 9 answered; at most --concurrency requests were out when the first 401 came back
    # (the 10th and one more); none started after it.
    assert 10 <= len(simulator.requests) <= 9 + 2
    assert len(kept_passes(out)) == simulator.stats()["answered"] == 9  # none lost
    simulator.config.fail_after = None
    assert_resumed_like_a_run_never_stopped(invoke, simulator, run, out, expected)


@pytest.mark.pty  # a real SIGINT, to a child process
def test_ctrl_c_between_passes_keeps_the_answered_pass_and_the_rerun_asks_only_the_rest(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = generated_run(invoke, simulator, tmp_path / "run")
    expected = reference(invoke, simulator, run)
    out = run / "picks.jsonl"
    # Requests 1-5 are answered (trials 1, 2 and trial 3's pass 1); the 6th hangs until the
    # judge gives up on it.
    simulator.config.fail_after = 5
    simulator.config.fail_with = "hang"
    env = {k: v for k, v in os.environ.items() if k != "BLINDTEST_DEBUG"}
    command = [sys.executable, "-m", "blindtest", *map(str, judge_args(run, simulator, out))]
    child = subprocess.Popen(
        [*command, "--concurrency", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    while len(simulator.requests) < 6:  # the 6th is held by the simulator
        assert child.poll() is None, child.communicate()
        time.sleep(0.02)
    assert len(simulator.requests) == 6
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate()
    assert child.returncode == 130, stderr
    assert kept_passes(out) == {(1, 1), (1, 2), (2, 1), (2, 2), (3, 1)}
    kept = [r for r in rows(out) if r.get("failed")]
    assert "interrupted (Ctrl-C)" in kept[0]["error"]
    simulator.config.fail_after = None
    assert_resumed_like_a_run_never_stopped(invoke, simulator, run, out, expected)


def test_a_comparison_whose_other_pass_stays_malformed_keeps_the_valid_pass_for_the_rerun(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = generated_run(invoke, simulator, tmp_path / "run")
    out = run / "picks.jsonl"
    # sim-judge-malformed never answers some passes with valid JSON (asked 4 times each).
    args = ["judge", run, "--judge", "llm:sim-judge-malformed", "--judge-url",
            simulator.base_url, "--out", out]  # fmt: skip
    assert invoke(*args).exit_code == 3
    failed = [r for r in rows(out) if r.get("failed")]
    mixed = [r for r in failed if "answered_pass" in r]
    assert mixed  # some comparisons have one valid pass and one that never is
    assert all(r["attempts"] == 4 for r in mixed)  # the row counts the failing pass only
    never = sum(1 if "answered_pass" in r else 2 for r in failed)
    before = len(simulator.requests)
    assert invoke(*args).exit_code == 3
    # Only the passes that never answered are asked again (4 answers each); a kept pass
    # would have answered valid JSON at once if it had been asked.
    assert len(simulator.requests) - before == 4 * never
    assert len([r for r in rows(out) if r.get("failed")]) == 2 * len(failed)
