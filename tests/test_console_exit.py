"""the console scripts end without the interpreter's teardown
(``_common.console_script``), and lose nothing by it: the exit code, every byte written to a
piped stdout or stderr, the exit handlers; with another thread still running, or an exit
code that is a message, they end the ordinary way."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_SCRIPT = """
import atexit, sys, threading, time
from blindtest.cli._common import console_script
case = sys.argv[1]

def main():
    atexit.register(lambda: print("exit handler ran", flush=False))
    sys.stdout.write("x" * 200_000 + "\\n")  # more than a pipe's buffer, left unflushed
    sys.stderr.write("said on stderr\\n")
    if case == "thread":
        def late():
            time.sleep(0.3)
            print("thread finished", flush=False)
        threading.Thread(target=late).start()
    if case == "message":
        sys.exit("ended with a message")
    if case == "returns":
        return
    sys.exit(3)

console_script(main)
"""


def _run(case: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT, case], capture_output=True, text=True, check=False
    )


def test_console_script_keeps_exit_code_output_and_exit_handlers() -> None:
    done = _run("code")
    assert done.returncode == 3
    assert done.stdout.splitlines() == ["x" * 200_000, "exit handler ran"]
    assert done.stderr == "said on stderr\n"


def test_console_script_whose_main_returns_exits_0() -> None:
    done = _run("returns")
    assert done.returncode == 0
    assert done.stdout.endswith("exit handler ran\n")


def test_console_script_waits_for_a_thread_still_running() -> None:
    done = _run("thread")
    assert done.returncode == 3
    assert done.stdout.splitlines()[1:] == ["thread finished", "exit handler ran"]


def test_console_script_with_a_message_exits_as_python_does() -> None:
    done = _run("message")
    assert done.returncode == 1
    assert done.stderr.endswith("ended with a message\n")
    assert done.stdout.endswith("exit handler ran\n")


def test_a_stage_command_prints_its_whole_table_through_a_pipe() -> None:
    # bt-plan as a process, its table through a pipe: every line there, exit 0, the same as
    # the ordinary ending prints (`python -m blindtest` does not end through console_script).
    done = subprocess.run(
        [str(Path(sys.executable).parent / "bt-plan"), "--trials", "30"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    inline = subprocess.run(
        [sys.executable, "-m", "blindtest", "plan", "--trials", "30"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout == inline.stdout != ""
