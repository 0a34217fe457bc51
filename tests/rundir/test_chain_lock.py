"""one writer per run directory, and one judge per picks file, told apart by an OS
lock (flock) the kernel releases when its holder dies. Real processes against the simulator."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from blindtest.rundir import artifacts, locking
from blindtest.simulator import Simulator

from conftest import Invoke

BT = [sys.executable, "-m", "blindtest"]
TRIALS = 10
SLOTS = 3 * TRIALS  # a triangle trial needs three responses


def env() -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k != "BLINDTEST_DEBUG"}
    return {**environment, "OPENAI_API_KEY": "unused-by-the-simulator"}


def designed(invoke: Invoke, tmp_path: Path, simulator: Simulator) -> Path:
    run = tmp_path / "run"
    url = simulator.base_url
    result = invoke(
        "design", run, "--demo", "--a", "sim-large", "--b", "sim-small",
        "--a-url", url, "--b-url", url, "--trials", TRIALS, "--seed", "lock",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return run


def start(*args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*BT, *map(str, args)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )


def wait_for_lock(lock: Path, child: subprocess.Popen[str]) -> None:
    """Until ``child`` has written its PID into the lock file."""
    while not (lock.exists() and lock.read_text().startswith(f"{child.pid} ")):
        assert child.poll() is None, child.communicate()
        time.sleep(0.02)


def rows(run: Path) -> list[dict[str, object]]:
    return artifacts.read_jsonl(run / artifacts.RESPONSES, "responses").records


def test_two_generates_at_once_the_second_exits_2_naming_the_holder(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = designed(invoke, tmp_path, simulator)
    simulator.config.hold = True  # the first is mid-run until the second has been refused
    first = start("generate", run, "--concurrency", "2")
    wait_for_lock(run / artifacts.LOCK, first)
    second = start("generate", run)
    _, err = second.communicate()
    assert second.returncode == 2, err
    assert err.strip() == (
        f"blindtest: error: {run} is in use by process {first.pid} (bt-generate); "
        "wait for it or stop it"
    )
    simulator.config.hold = False
    _, first_err = first.communicate()
    assert first.returncode == 0, first_err
    assert len(rows(run)) == SLOTS  # every slot fetched once
    assert len(simulator.requests) == SLOTS  # and paid for once
    assert not (run / artifacts.LOCK).exists()


def test_a_killed_holder_leaves_no_stale_lock(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = designed(invoke, tmp_path, simulator)
    simulator.config.hold = True  # the holder cannot finish before it is killed
    holder = start("generate", run, "--concurrency", "1")
    wait_for_lock(run / artifacts.LOCK, holder)
    holder.send_signal(signal.SIGKILL)
    holder.communicate()
    assert (run / artifacts.LOCK).exists()  # the file stays, the lock went with the process
    simulator.config.hold = False
    again = start("generate", run)
    _, err = again.communicate()
    assert again.returncode == 0, err
    assert len(rows(run)) == SLOTS  # the rerun fetched what the killed one had not
    assert not (run / artifacts.LOCK).exists()


def test_one_picks_file_one_judge_a_panel_judges_at_once(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = designed(invoke, tmp_path, simulator)
    assert invoke("generate", run).exit_code == 0
    alice = run / "picks-alice.jsonl"
    # Someone is judging into alice's file (a process holding its lock, as bt-judge does).
    holder = subprocess.Popen(
        [
            sys.executable, "-c",
            "import sys, time\n"
            "from pathlib import Path\n"
            "from blindtest.rundir import locking\n"
            "with locking.file_lock(Path(sys.argv[1]), 'bt-judge'):\n"
            "    print('held', flush=True)\n"
            "    time.sleep(60)\n",
            str(alice),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        same = invoke("judge", run, "--judge", "bot:length", "--out", alice)
        assert same.exit_code == 2
        assert f"{alice} is in use by process {holder.pid} (bt-judge)" in same.stderr
        assert not alice.exists()
        # Another judge with a file of their own is not held up, nor is the run directory.
        bob = invoke("judge", run, "--judge", "bot:length", "--out", run / "picks-bob.jsonl")
        assert bob.exit_code == 0, bob.stderr
    finally:
        holder.kill()
        holder.communicate()
    assert invoke("judge", run, "--judge", "bot:length", "--out", alice).exit_code == 0


def test_the_lock_is_reentrant_in_one_process_and_refused_across(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with locking.run_lock(run, "blindtest run"), locking.run_lock(run, "bt-design"):
        assert (run / artifacts.LOCK).read_text() == f"{os.getpid()} blindtest run\n"
        other = subprocess.run(
            [
                sys.executable, "-c",
                "import sys\nfrom pathlib import Path\nfrom blindtest.rundir import locking\n"
                "with locking.run_lock(Path(sys.argv[1]), 'bt-audit'):\n    pass\n",
                str(run),
            ],
            capture_output=True,
            text=True,
            check=False,
        )  # fmt: skip
        assert other.returncode != 0
        assert f"{run} is in use by process {os.getpid()} (blindtest run)" in other.stderr
    assert not run.exists()  # the lock made the folder, and nothing was written in it
