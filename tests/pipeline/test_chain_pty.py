"""Through a real terminal, quitting a fixed design at trial
9 in the demo and in `blindtest run` stops the chain with nothing revealing on screen; the same
command again continues at trial 10, and the report covers all 20 picks. Ctrl-C exits 130.

The demo runs as ``python -m blindtest.cli.demo DIR``, which is what ``make demo`` runs once its
virtualenv exists.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import sys
from pathlib import Path

import pexpect
import pytest

from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from judge_runs import strip_ansi

pytestmark = pytest.mark.pty

# Tall enough that every demo trial fits on one screen, narrower than side-by-side columns.
DIMENSIONS = (400, 120)
#: What only a result may show: bot scores, a count correct, the per-trial table, a p-value.
REVEALING = re.compile(r"\bbot\b.*\d+/\d+|of 20 correct|p = |\bp=|\bTrial\b.*\bodd\b", re.I)


class Terminal:
    """One spawned command in a pty; everything it printed is kept."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        env = {**os.environ, "PYTHONIOENCODING": "utf-8", "LC_ALL": "C.UTF-8", "TERM": "xterm"}
        env.pop("BLINDTEST_DEBUG", None)
        env.pop("MAKELEVEL", None)
        env["OPENAI_API_KEY"] = "unused-by-the-simulator"
        self.log = io.StringIO()
        self.child = pexpect.spawn(
            argv[0], argv[1:], dimensions=DIMENSIONS, encoding="utf-8", timeout=None, env=env,
            cwd=str(cwd),
        )  # fmt: skip
        self.child.delaybeforesend = None
        self.child.logfile_read = self.log

    def expect(self, text: str) -> None:
        self.child.expect_exact(text)

    def answer(self, text: str) -> None:
        self.child.send(text + "\r")

    def judge(self, trials: range) -> None:
        for number in trials:
            self.expect(f"trial {number} of 20 > ")
            self.answer(str(number % 3 + 1))

    def quit(self) -> None:
        self.answer("q")
        self.expect("Stop now? [y/N] ")
        self.answer("y")

    def finish(self) -> int:
        self.child.expect(pexpect.EOF)
        self.child.close()
        return int(self.child.exitstatus if self.child.exitstatus is not None else -1)

    @property
    def text(self) -> str:
        return strip_ansi(self.log.getvalue()).replace("\r\n", "\n")


def picks(run: Path) -> list[dict[str, object]]:
    return artifacts.read_jsonl(run / artifacts.PICKS, "picks").records


def assert_nothing_revealed(text: str) -> None:
    assert not REVEALING.search(text), REVEALING.search(text)
    for word in ("length bot", "correct", "audit.json", "report.json", "verdict"):
        assert word not in text, word


def quit_at_9_then_finish(argv: list[str], cwd: Path, run: Path, resume: str) -> None:
    first = Terminal(argv, cwd)
    first.expect("Press Enter to start")
    first.answer("")
    first.judge(range(1, 10))
    first.expect("trial 10 of 20 > ")
    first.quit()
    assert first.finish() == 0
    assert_nothing_revealed(first.text)
    # The command follows on the same line, or on a line of its own when it does not fit
    # there (wrapped to the terminal, never cut).
    said = re.findall(r"^(\d+ of 20) judged; continue with:\s+(.+)$", first.text, re.M)
    assert said, first.text[-2000:]
    assert said[-1][0] == "9 of 20"
    printed = said[-1][1].strip()
    assert shlex.split(printed)[-len(shlex.split(resume)) + 1 :] == shlex.split(resume)[1:]
    assert len(picks(run)) == 9
    assert not (run / artifacts.AUDIT).exists()
    assert not (run / artifacts.REPORT).exists()

    again = Terminal(shlex.split(printed), cwd)  # the command exactly as printed
    again.expect("Press Enter to start")
    again.answer("")
    again.judge(range(10, 21))
    assert again.finish() == 0, again.text[-2000:]
    assert "trial 9 of 20 >" not in again.text
    assert "of 20 correct" in again.text
    report = artifacts.read_json(run / artifacts.REPORT, "report")
    assert report["n"] == 20
    assert [p["trial"] for p in picks(run)] == list(range(1, 21))


def test_demo_quit_at_trial_9_reveals_nothing_and_the_same_command_finishes(
    tmp_path: Path,
) -> None:
    run = tmp_path / "demo-run"
    argv = [sys.executable, "-m", "blindtest.cli.demo", str(run)]
    resume = shlex.join([sys.executable, "-m", "blindtest.cli.demo", str(run)])
    quit_at_9_then_finish(argv, tmp_path, run, resume)


def test_blindtest_run_quit_at_trial_9_reveals_nothing_and_the_same_command_finishes(
    tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    url = simulator.base_url
    args = [
        "run",
        "sim-large",
        "sim-small",
        "--judge",
        "human",
        "--demo",
        "--a-url",
        url,
        "--b-url",
        url,
        "--run-dir",
        str(run),
    ]  # fmt: skip  (the order the resume line lists them: its options' order)
    script = Path(sys.executable).parent / "blindtest"
    argv = [str(script), *args] if script.exists() else [sys.executable, "-m", "blindtest", *args]
    resume = shlex.join(argv)
    quit_at_9_then_finish(argv, tmp_path, run, resume)


def test_quitting_on_the_intro_screen_reveals_nothing(tmp_path: Path) -> None:
    run = tmp_path / "demo-run"
    term = Terminal([sys.executable, "-m", "blindtest.cli.demo", str(run)], tmp_path)
    term.expect("Press Enter to start")
    term.child.send("q")
    index = term.child.expect_exact(["Stop now? [y/N] ", "judged; continue with"])
    if index == 0:
        term.answer("y")
    assert term.finish() == 0
    assert_nothing_revealed(term.text)
    assert "0 of 20 judged; continue with:" in term.text
    assert not (run / artifacts.REPORT).exists()


def test_ctrl_c_while_judging_in_the_demo_exits_130_without_a_traceback(
    tmp_path: Path,
) -> None:
    run = tmp_path / "demo-run"
    term = Terminal([sys.executable, "-m", "blindtest.cli.demo", str(run)], tmp_path)
    term.expect("Press Enter to start")
    term.answer("")
    term.judge(range(1, 4))
    term.expect("trial 4 of 20 > ")
    term.child.sendintr()
    assert term.finish() == 130
    assert "Traceback" not in term.text
    assert "interrupted; everything done so far is kept; continue with:" in term.text
    assert_nothing_revealed(term.text)
    assert len(picks(run)) == 3
