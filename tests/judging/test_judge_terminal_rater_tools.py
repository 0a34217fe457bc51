"""A rater's tools in the terminal, driven for real through a pseudo-terminal at 80x24 (and a
wide 200x40): responses drawn from their markdown as the judging page renders them, escape
sequences inside a response shown inert, the history of picks with any of them changed, skip
and "both bad", and an undo that offers the reason given before."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_judge_session import WIDE, Judge

from blindtest.judging.terminal.console import Console
from blindtest.judging.terminal.layout import display_width, trial_layout
from blindtest.model.picks import load_judge_run, read_picks

from judge_runs import make_run, picks_of, strip_ansi

pytestmark = pytest.mark.pty

ANSWER = """### Key points

**The script** is *short*, `fast` and ~~slow~~.

1. first step
2. second step

| Name | Value |
|------|------:|
| alpha | 1 |
| beta | 22 |

> a quoted line

```sh
echo   "kept   as   written"
```
"""

HOSTILE = (
    "Red \x1b[31mtext\x1b[0m, a title \x1b]0;pwned\x07, the cursor moved \x1b[5;5H, "
    "a C1 clear \x9b2J, an entity &#x1b;[32m and a bidi \u202eoverride."
)


def _texts(answer: str) -> Callable[[int, Any], list[str]]:
    def texts(trial: int, entry: Any) -> list[str]:
        return [f"{answer}\n\nOption {i} of trial {trial}." for i in (1, 2)]

    return texts


def test_a_response_is_drawn_from_its_markdown_as_the_page_renders_it(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "preference", 1, texts=_texts(ANSWER), require_reason=False)
    judge = Judge(run_dir)
    judge.start()
    while judge.child.expect_exact(["space more", "trial 1 of 1 > "]) == 0:
        judge.send(" ")
    judge.answer("l")
    judge.expect("Reason, one line (Enter to skip): ")
    judge.answer("")
    judge.expect("The trial is judged.")
    assert judge.finish() == 0
    rows = judge.rows()
    closing = next(i for i, row in enumerate(rows) if row.startswith("The trial is judged."))
    screen = rows[:closing]
    assert all(display_width(row) <= 79 for row in screen)  # the closing names the run's path
    assert "1 │ Key points" in rows
    assert "1 │ The script is short, fast and slow." in rows
    assert "1 │ 1. first step" in rows
    assert "1 │ Name  │ Value" in rows
    assert "1 │ beta  │    22" in rows
    assert "1 │ ▌ a quoted line" in rows
    assert '1 │ echo   "kept   as   written"' in rows  # code kept verbatim, fenced
    assert "1 │ ``` sh" in rows
    assert not any(mark in row for row in rows for mark in ("###", "**", "~~", "> a quoted"))
    raw = judge.transcript
    assert "\x1b[1mThe script\x1b[0m" in raw  # bold, as on the page
    assert "\x1b[3mshort\x1b[0m" in raw


def test_the_markdown_of_a_wide_screen_stands_side_by_side(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "preference", 1, texts=_texts(ANSWER), require_reason=False)
    run = load_judge_run(run_dir)
    console = Console(io.StringIO(), io.StringIO(), interactive=True)
    rows, _ = trial_layout(run.view, run.view.trials[0], 199, console)
    seen = [strip_ansi(row) for row in rows]
    assert all(display_width(row) <= 199 for row in rows)
    keys = [row for row in seen if row.count("Key points") == 2]
    assert keys  # each column drawn on its own, side by side
    assert not any("###" in row for row in seen)
    judge = Judge(run_dir, dimensions=WIDE)
    judge.start()
    judge.expect("trial 1 of 1 > ")
    judge.answer("r")
    judge.expect("Reason, one line (Enter to skip): ")
    judge.answer("")
    judge.expect("The trial is judged.")
    assert judge.finish() == 0


def test_escape_sequences_inside_a_response_never_reach_the_terminal(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "preference", 1, texts=_texts(HOSTILE), require_reason=False)
    judge = Judge(run_dir)
    judge.start()
    judge.expect("trial 1 of 1 > ")
    judge.answer("l")
    judge.expect("Reason, one line (Enter to skip): ")
    judge.answer("")
    judge.expect("The trial is judged.")
    assert judge.finish() == 0
    raw = judge.transcript
    for sequence in ("\x1b[31m", "\x1b]0;", "\x1b[5;5H", "\x9b", "\x1b[32m", "\u202e"):
        assert sequence not in raw, repr(sequence)
    shown = " ".join(judge.rows())
    assert "\\x1b[31mtext" in shown  # shown, inert
    assert "\\u202eoverride" in shown


def test_the_history_changes_any_earlier_pick_in_the_terminal(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "preference", 3, require_reason=False)
    judge = Judge(run_dir)
    judge.start()
    judge.expect("trial 1 of 3 > ")
    judge.answer("l")
    judge.answer("clearer")
    judge.expect("trial 2 of 3 > ")
    judge.answer("r")
    judge.answer("")
    judge.expect("trial 3 of 3 > ")
    judge.answer("h")
    judge.expect("Your picks so far: 2 of 3")
    judge.expect("Change which trial? (its number; Enter goes back) ")
    judge.answer("7")
    judge.expect("is not a trial you have judged")
    judge.answer("1")
    judge.expect_words("Changing your pick for trial 1 (now: option 1): answer again,")
    judge.expect("changing trial 1 > ")
    judge.answer("t")
    judge.expect("clearer")  # the reason given before, typed in again to keep or edit
    judge.send(" really\r")
    judge.expect("trial 3 of 3 > ")  # back where the judge was
    judge.answer("h")
    judge.expect("Change which trial?")
    judge.answer("")  # back
    judge.expect("trial 3 of 3 > ")
    judge.answer("l")
    judge.answer("")
    judge.expect("All 3 trials judged.")
    assert judge.finish() == 0
    lines = picks_of(run_dir / "picks.jsonl")
    assert [(p["trial"], p["pick"], p.get("correction", False)) for p in lines] == [
        (1, "left", False), (2, "right", False), (1, "tie", True), (3, "left", False)
    ]  # fmt: skip
    assert lines[2]["reason"] == "clearer really"
    read = read_picks(run_dir / "picks.jsonl", load_judge_run(run_dir).view)
    assert read.changes == {"tester": 1}
    assert [p.pick for p in read.first_picks] == ["left", "right", "left"]


def test_skip_and_both_bad_in_the_terminal(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "preference", 2, require_reason=False)
    judge = Judge(run_dir)
    judge.start()
    judge.expect("2 left")
    judge.expect("trial 1 of 2 > ")
    judge.answer("s")
    judge.expect("trial 2 of 2 > ")
    judge.answer("x")
    judge.expect("Reason, one line (Enter to skip): ")
    judge.answer("both miss the point")
    judge.expect("You skipped this comparison earlier")
    judge.expect("1 left")
    judge.expect("trial 1 of 2 > ")
    judge.answer("l")
    judge.answer("")
    judge.expect("All 2 trials judged.")
    assert judge.finish() == 0
    lines = picks_of(run_dir / "picks.jsonl")
    assert [(p["trial"], p["pick"], p.get("skipped", False)) for p in lines] == [
        (1, "skipped", True), (2, "both_bad", False), (1, "left", False)
    ]  # fmt: skip
    read = read_picks(run_dir / "picks.jsonl", load_judge_run(run_dir).view)
    assert [p.trial for p in read.picks] == [1]
    assert [p.trial for p in read.abstentions] == [2]
    assert read.counts()["tester"].skipped == 1


def test_an_undo_in_the_terminal_offers_the_reason_given_before(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "preference", 2, require_reason=False)
    judge = Judge(run_dir)
    judge.start()
    judge.expect("trial 1 of 2 > ")
    judge.answer("r")
    judge.answer("shorter")
    judge.expect("trial 2 of 2 > ")
    judge.answer("u")
    judge.expect("trial 1 of 2 > ")
    judge.answer("l")
    judge.expect("shorter")
    judge.send("\r")
    judge.expect("trial 2 of 2 > ")
    assert judge.interrupt() == 130
    lines = picks_of(run_dir / "picks.jsonl")
    assert [(p["pick"], p.get("reason")) for p in lines] == [
        ("right", "shorter"), ("left", "shorter")
    ]  # fmt: skip
