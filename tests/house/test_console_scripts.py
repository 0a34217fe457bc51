"""The console scripts end the way Python ends: a file a command wrote and never closed still
has its bytes, the exit handlers run, every byte written to a piped stdout arrives, and the exit
code is the contract's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: Runs bt-plan's entry point with its command replaced by one that leaves a file open.
_LEAKY = """
import atexit, sys
import click
from blindtest.cli import _command, plan

kept = []

@click.command(cls=_command.BlindtestCommand)
@click.argument("path")
@click.option("--code", type=int, default=0)
def leaky(path: str, code: int) -> None:
    handle = open(path, "w")  # written, never closed, alive until the interpreter ends
    handle.write("x" * 40)
    kept.append(handle)
    sys.stdout.write("y" * 200_000 + "\\n")  # more than a pipe holds, not flushed
    atexit.register(lambda: print("exit handler ran"))
    if code:
        raise SystemExit(code)

plan.plan = leaky
sys.argv = ["bt-plan", *sys.argv[1:]]
from blindtest.cli import plan_main
plan_main()
"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "ignore::ResourceWarning", "-c", _LEAKY, *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_file_written_and_never_closed_keeps_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "left-open.txt"
    done = _run(str(path))
    assert done.returncode == 0, done.stderr
    assert path.read_text() == "x" * 40
    assert done.stdout.splitlines() == ["y" * 200_000, "exit handler ran"]


def test_the_exit_code_is_kept_and_nothing_written_is_lost(tmp_path: Path) -> None:
    path = tmp_path / "left-open.txt"
    done = _run(str(path), "--code", "3")
    assert done.returncode == 3
    assert path.read_text() == "x" * 40
    assert done.stdout.splitlines() == ["y" * 200_000, "exit handler ran"]


def test_a_stage_command_prints_its_whole_table_through_a_pipe() -> None:
    script = Path(sys.executable).parent / "bt-plan"
    done = subprocess.run(
        [str(script), "--trials", "30"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    inline = subprocess.run(
        [sys.executable, "-m", "blindtest", "plan", "--trials", "30"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout == inline.stdout != ""
