"""The human judging session, driven for real through a pseudo-terminal with pexpect.

Each test spawns ``python -m blindtest judge RUN`` in a pty of a given size, answers the way a
person would (keys, Enter, Ctrl-C), and then reads the picks file it left behind. The run
directories come from ``judge_runs.make_run`` (a real design, synthetic trials).
"""

from __future__ import annotations

import io
import os
import re
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from blindtest.judging.terminal.layout import display_width
from blindtest.present.hints import stage_command

from judge_runs import answer_key, make_run, picks_of, strip_ansi

pytestmark = pytest.mark.pty

NARROW = (24, 80)
WIDE = (40, 200)
CLEAR = "\x1b[H\x1b[2J"

LONG_ANSWER = """## Approach

Here is a **detailed** answer that goes on for quite a while, explaining the reasoning behind \
the change in several long sentences so that it certainly needs wrapping at eighty columns \
— and then some more words.

- First bullet point that is also rather long and will need to wrap onto a second line at 80
- Second bullet
  1. nested numbered item with a longish description that wraps around the terminal edge

```python
def frobnicate(values: list[int], threshold: int = 10) -> list[int]:
    # keep    spacing    exactly   as written
    return [v for v in values if v > threshold and v % 2 == 0 and v not in (11, 13, 17, 19)]
```

| column one | column two | column three is wide | column four has even more text in it |
|---|---|---|---|
| a | b | c | d |

Closing paragraph.\x1b[2J with an escape sequence in it.
"""
CODE_LINE = (
    "    return [v for v in values if v > threshold and v % 2 == 0 and v not in (11, 13, 17, 19)]"
)


def long_texts(trial: int, entry: dict[str, object]) -> list[str]:
    count = 3 if "odd_position" in entry else 2
    return [f"{LONG_ANSWER}\nThis is option {i + 1} of trial {trial}." for i in range(count)]


class Judge:
    """One spawned bt-judge in a pty, with everything it printed kept for inspection."""

    def __init__(self, run_dir: Path, *args: str, dimensions: tuple[int, int] = NARROW) -> None:
        env = {**os.environ, "PYTHONIOENCODING": "utf-8", "LC_ALL": "C.UTF-8", "TERM": "xterm"}
        env.pop("BLINDTEST_DEBUG", None)
        self.log = io.StringIO()
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "blindtest", "judge", str(run_dir), "--judge-id", "tester", *args],
            dimensions=dimensions,
            encoding="utf-8",
            timeout=None,  # each expect waits for its text, however busy the machine
            env=env,
        )
        self.child.delaybeforesend = None  # every send waits for its prompt anyway
        self.child.logfile_read = self.log

    def expect(self, text: str) -> None:
        self.child.expect_exact(text)

    def expect_words(self, text: str) -> None:
        """``text`` with any line breaks (and indent) between its words: a wrapped sentence."""
        self.child.expect(r"\s+".join(re.escape(word) for word in text.split()))

    def send(self, text: str) -> None:
        self.child.send(text)

    def answer(self, text: str) -> None:
        self.child.send(text + "\r")

    def start(self) -> None:
        self.expect("Press Enter to start")
        self.send("\r")

    def finish(self) -> int:
        self.child.expect(pexpect.EOF)
        self.child.close()
        return int(self.child.exitstatus)

    def interrupt(self) -> int:
        """Ctrl-C once (read as a key, never lost, however soon after the last key)."""
        self.child.sendintr()
        self.expect("interrupted; ")
        return self.finish()

    @property
    def transcript(self) -> str:
        return self.log.getvalue()

    def rows(self) -> list[str]:
        """Every row that reached the screen, as a person sees it."""
        text = strip_ansi(self.transcript.replace(CLEAR, "\r\n"))
        return text.replace("\r\n", "\n").split("\n")


def judge_triangle(judge: Judge, trials: range, total: int, answers: list[int]) -> None:
    for number in trials:
        judge.expect(f"trial {number} of {total} > ")
        judge.answer(str(answers[number - 1]))


# --------------------------------------------------------------------------- triangle


def test_a_full_twenty_trial_session_shows_no_feedback_until_the_end(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    answers = [(t % 3) + 1 for t in range(1, 21)]
    judge = Judge(run_dir)
    judge.start()
    judge_triangle(judge, range(1, 21), 20, answers)
    analyze = stage_command("analyze", run_dir)
    closing = f"All 20 trials judged. Run {analyze} to see the result."
    judge.expect_words(closing)  # wrapped between words to the terminal
    assert judge.finish() == 0
    picks = picks_of(run_dir / "picks.jsonl")
    assert [(p["trial"], p["pick"], p["judge"]) for p in picks] == [
        (t, answers[t - 1], "tester") for t in range(1, 21)
    ]
    assert all(p["at"] for p in picks)
    seen = judge.transcript.lower()
    for word in ("correct", "right", "wrong", "score", "e-value", "seconds"):
        assert word not in seen
    assert "Which one is different?" in judge.transcript
    # Only the command, on a line of its own and never cut, may be longer than the terminal.
    assert all(display_width(row) <= 79 or row.strip() == analyze for row in judge.rows()), (
        judge.rows()[-6:]
    )


def test_wrong_keys_are_asked_again_with_a_hint(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, trials=2)
    judge = Judge(run_dir)
    judge.start()
    judge.expect("trial 1 of 2 > ")
    judge.answer("x")
    judge.expect("'x' is not an answer: type 1, 2 or 3; guess if unsure; ? for help")
    judge.answer("")
    judge.expect("an answer is needed: type 1, 2 or 3")
    judge.answer("4")
    judge.expect("'4' is not an answer")
    judge.answer("?")
    judge.expect("Press any key to go back to the trial.")
    judge.send("z")
    judge.expect("trial 1 of 2 > ")
    judge.answer("2")
    judge.expect("trial 2 of 2 > ")
    judge.answer(" 3 ")
    judge.expect("All 2 trials judged.")
    assert judge.finish() == 0
    assert [p["pick"] for p in picks_of(run_dir / "picks.jsonl")] == [2, 3]


def test_quit_warns_that_a_fixed_design_is_void_and_resume_continues(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    answers = [1] * 20
    judge = Judge(run_dir)
    judge.start()
    judge_triangle(judge, range(1, 6), 20, answers)
    judge.expect("trial 6 of 20 > ")
    judge.answer("q")
    judge.expect("reports the run as void")
    judge.expect("Stop now? [y/N] ")
    judge.answer("n")
    judge.expect("trial 6 of 20 > ")
    judge.answer("q")
    judge.expect("Stop now? [y/N] ")
    judge.answer("y")
    judge.expect("Stopped: 5 of 20 trials judged and saved; run the same command again")
    assert judge.finish() == 0
    assert len(picks_of(run_dir / "picks.jsonl")) == 5

    again = Judge(run_dir)
    again.expect("Resuming at trial 6: 5 of 20 already judged.")
    again.start()
    judge_triangle(again, range(6, 21), 20, answers)
    again.expect("All 20 trials judged.")
    assert again.finish() == 0
    assert [p["trial"] for p in picks_of(run_dir / "picks.jsonl")] == list(range(1, 21))
    assert "trial 5 of 20 >" not in again.transcript


@pytest.mark.parametrize("where", ["intro", "typing", "confirm"])
def test_ctrl_c_exits_130_keeps_every_pick_and_resumes(tmp_path: Path, where: str) -> None:
    run_dir = make_run(tmp_path)
    judge = Judge(run_dir)
    if where == "intro":
        judge.expect("Press Enter to start")
        kept = 0
    else:
        judge.start()
        judge_triangle(judge, range(1, 4), 20, [2] * 20)
        judge.expect("trial 4 of 20 > ")
        judge.send("2")  # typed, not yet entered: not a pick
        if where == "confirm":
            judge.answer("\x7fq")
            judge.expect("Stop now? [y/N] ")
        kept = 3
    assert judge.interrupt() == 130
    assert f"{kept} of 20 trials judged and saved" in judge.transcript
    assert len(picks_of(run_dir / "picks.jsonl")) == kept

    again = Judge(run_dir)
    again.start()
    again.expect(f"trial {kept + 1} of 20 > ")
    again.answer("1")
    again.expect(f"trial {kept + 2} of 20 > ")
    assert again.interrupt() == 130
    assert [p["trial"] for p in picks_of(run_dir / "picks.jsonl")] == list(range(1, kept + 2))


def test_sequential_design_ends_itself_without_showing_why(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, sequential=True)
    key = [entry["odd_position"] for entry in answer_key(run_dir)]
    judge = Judge(run_dir)
    judge.start()
    number = 0
    while True:
        index = judge.child.expect_exact(
            [f"trial {number + 1} of 20 > ", "The session is complete"]
        )
        if index == 1:
            break
        number += 1
        judge.answer(str(key[number - 1]))
    assert judge.finish() == 0
    assert 1 < number < 20
    assert len(picks_of(run_dir / "picks.jsonl")) == number
    assert "e-value" not in judge.transcript.lower()
    assert "correct" not in judge.transcript.lower()
    # Rerunning a finished sequential session says so at once, with nothing new to judge.
    again = Judge(run_dir)
    again.expect("The session is complete after")
    assert again.finish() == 0


# --------------------------------------------------------------------------- long answers


def test_long_markdown_is_wrapped_at_80_columns_and_paged(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, trials=2, texts=long_texts)
    judge = Judge(run_dir)
    judge.start()
    judge.expect("rows 1-23 of ")
    judge.send(" ")
    judge.expect("rows 24-46 of ")
    judge.send("b")
    judge.expect("rows 1-23 of ")
    judge.send("\r")
    judge.expect("rows 24-46 of ")
    judge.send("G")
    judge.expect("trial 1 of 2 > ")
    judge.answer("v")  # view again: back to the first page
    judge.expect("rows 1-23 of ")
    judge.send("G")
    judge.expect("trial 1 of 2 > ")
    judge.answer("3")
    judge.expect("rows 1-23 of ")
    assert judge.interrupt() == 130

    # Every screen row fits; only the one-line exit message on stderr is left to the terminal.
    rows = [row for row in judge.rows() if "interrupted;" not in row]
    assert all(display_width(row) <= 79 for row in rows), max(rows, key=display_width)
    # Markdown is drawn as the page renders it (a heading, bold, bullets: never ## or **),
    # prose is word-wrapped, lists keep their hanging indent, code is never re-flowed.
    assert "1 │ Approach" in rows
    assert not any("## Approach" in row or "**" in row for row in rows)
    assert "1 │ Here is a detailed answer that goes on for quite a while, explaining the" in rows
    assert "1 │ • First bullet point that is also rather long and will need to wrap onto a" in rows
    assert "1 │   second line at 80" in rows
    assert "1 │   1. nested numbered item with a longish description that wraps around the" in rows
    assert "1 │ ``` python" in rows
    assert "1 │     # keep    spacing    exactly   as written" in rows
    cut = "1 │ " + CODE_LINE[:75]
    assert cut.rstrip() in rows  # the cut fell on a space, which is not drawn at the edge
    assert "1 │ ↪" + CODE_LINE[75:] in rows
    # Control characters from a model cannot repaint the judge's screen.
    assert "1 │ Closing paragraph.\\x1b[2J with an escape sequence in it." in rows
    assert [p["pick"] for p in picks_of(run_dir / "picks.jsonl")] == [3]


def test_wide_terminal_keeps_code_lines_whole(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, trials=1, texts=long_texts)
    judge = Judge(run_dir, dimensions=WIDE)
    judge.start()
    while judge.child.expect_exact(["space more", "trial 1 of 1 > "]) == 0:
        judge.send(" ")
    judge.answer("1")
    judge.expect("The trial is judged.")
    assert judge.finish() == 0
    rows = judge.rows()
    assert "2 │ " + CODE_LINE in rows
    # Only the command to run next (it names the run's folder, of any length) may be wider.
    analyze = stage_command("analyze", run_dir)
    assert all(display_width(row) <= 199 or row.strip() == analyze for row in rows)
    prose = [row for row in rows if row.startswith("2 │ Here is")]
    assert prose
    assert display_width(prose[0]) <= 4 + 110


# --------------------------------------------------------------------------- preference and pair


def test_forty_trial_preference_session_with_reasons_and_a_fatigue_break(
    tmp_path: Path,
) -> None:
    run_dir = make_run(tmp_path, "preference", 40, extra_questions=("Is it correct?",))
    choices = {0: ("l", "left"), 1: ("r", "right"), 2: ("t", "tie")}
    judge = Judge(run_dir)
    judge.start()
    for number in range(1, 41):
        if number == 31:
            judge.expect_words("You have judged 30 trials in this sitting; 10 of 40 are left.")
            judge.expect("c = continue now, q = stop for now: ")
            judge.send("c")
        judge.expect(f"trial {number} of 40 > ")
        judge.answer(choices[number % 3][0])
        judge.expect("Reason, one line: ")
        if number == 1:
            judge.answer("")
            judge.expect("A one-line reason is needed (trial 1 of 40).")
            judge.expect("Reason, one line: ")
        judge.answer(f"reason {number}")
        judge.expect("Is it correct? [y/n] ")
        judge.answer("y" if number % 2 else "n")
    judge.expect("All 40 trials judged.")
    assert judge.finish() == 0
    picks = picks_of(run_dir / "picks.jsonl")
    assert [p["pick"] for p in picks] == [choices[t % 3][1] for t in range(1, 41)]
    assert [p["reason"] for p in picks] == [f"reason {t}" for t in range(1, 41)]
    assert [p["answers"] for p in picks] == [{"Is it correct?": t % 2 == 1} for t in range(1, 41)]
    assert judge.transcript.count("You have judged 30 trials") == 1
    # At 80 columns the options are stacked: "Option 1" / "Option 2", never "Left" / "Right"
    # ; 1 and 2 answer "left" and "right" as l and r do.
    assert "── Option 1 " in judge.transcript
    assert "── Option 2 " in judge.transcript
    assert "Left" not in judge.transcript
    assert "1 = option 1, 2 = option 2, t = tie" in judge.transcript


def test_pair_session_asks_nicknames_once_and_keeps_them(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "pair", 6)
    judge = Judge(run_dir)
    judge.start()
    # Nicknames are asked under the first trial, which is shown first.
    judge.expect("── Option 1 ")
    judge.expect("First nickname: ")
    judge.answer("left")
    judge.expect("'left' is a key in this session")
    judge.answer("fox")
    judge.expect("Second nickname: ")
    judge.answer("FOX")
    judge.expect("the two nicknames must differ")
    judge.answer("owl")
    judge.expect("This first choice is arbitrary")
    for number, answer in zip(range(1, 4), ["f", "owl", "Fox"], strict=True):
        judge.expect("f = option 1 is fox, o = option 1 is owl")
        judge.expect(f"trial {number} of 6 > ")
        judge.answer(answer)
    judge.expect("trial 4 of 6 > ")
    judge.answer("1")  # digits read as "option 1 / option 2" and are no answer here
    judge.expect("'1' is not an answer: type f = option 1 is fox, o = option 1 is owl")
    judge.answer("q")
    judge.answer("y")
    assert judge.finish() == 0

    again = Judge(run_dir)
    again.start()
    for number, answer in zip(range(4, 7), ["o", "fox", "f"], strict=True):
        again.expect(f"trial {number} of 6 > ")
        again.answer(answer)
    again.expect("All 6 trials judged.")
    assert again.finish() == 0
    assert "nickname:" not in again.transcript
    assert "arbitrary: either" not in again.transcript
    picks = picks_of(run_dir / "picks.jsonl")
    assert [p["pick"] for p in picks] == ["fox", "owl", "fox", "owl", "fox", "fox"]
    assert all(p["nicknames"] == ["fox", "owl"] for p in picks)
    assert re.search(r"── Option 1 ─+", judge.transcript)


# --------------------------------------------------------------------------- stopping anywhere


def reach(judge: Judge, where: str) -> None:
    """Drive a fresh session to ``where``, with one pick made (except for a nickname)."""
    judge.start()
    if where == "nickname":
        judge.expect("First nickname: ")
        judge.answer("fox")
        judge.expect("Second nickname: ")
        return
    if where == "pager":
        judge.expect("rows 1-23 of ")
        judge.send("G")
    judge.expect("trial 1 of 4 > ")
    judge.answer("l" if where in ("reason", "extra") else "1")
    if where in ("reason", "extra"):
        judge.expect("Reason, one line: ")
        judge.answer("first")
        judge.expect("[y/n] ")
        judge.answer("y")
        judge.expect("trial 2 of 4 > ")
        judge.answer("r")
        judge.expect("Reason, one line: ")
        if where == "extra":
            judge.answer("a reason")
            judge.expect("[y/n] ")
    elif where == "pager":
        judge.expect("rows 1-23 of ")


@pytest.mark.parametrize(
    ("where", "protocol", "texts_of"),
    [
        ("pager", "triangle", long_texts),
        ("reason", "preference", None),
        ("extra", "preference", None),
        ("nickname", "pair", None),
    ],
)
def test_ctrl_c_at_any_prompt_keeps_what_was_judged(
    tmp_path: Path, where: str, protocol: str, texts_of: object
) -> None:
    options: dict[str, Any] = {"texts": texts_of} if texts_of else {}
    if protocol == "preference":
        options["extra_questions"] = ("Is it correct?",)
    run_dir = make_run(tmp_path, protocol, 4, **options)
    judge = Judge(run_dir)
    reach(judge, where)
    assert judge.interrupt() == 130
    kept = 0 if where == "nickname" else 1
    assert len(picks_of(run_dir / "picks.jsonl")) == kept
    assert f"{kept} of 4 trials judged and saved" in judge.transcript


def test_end_of_input_and_a_closed_terminal_keep_every_pick(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    judge = Judge(run_dir)
    judge.start()
    judge_triangle(judge, range(1, 3), 20, [3] * 20)
    judge.expect("trial 3 of 20 > ")
    judge.child.sendeof()
    # End of input is not Ctrl-C: exit 2 with the command that continues.
    assert judge.finish() == 2
    said = " ".join(judge.transcript.split())  # the error line is wrapped to the terminal
    assert (
        "input ended (Ctrl-D) before the session finished; 2 picks kept; rerun "
        + stage_command("judge", run_dir, "--judge-id", "tester")
        + " to continue"
    ) in said

    again = Judge(run_dir)
    again.start()
    judge_triangle(again, range(3, 5), 20, [3] * 20)
    again.expect("trial 5 of 20 > ")
    again.child.close(force=True)  # the terminal window is closed
    assert [p["trial"] for p in picks_of(run_dir / "picks.jsonl")] == [1, 2, 3, 4]
