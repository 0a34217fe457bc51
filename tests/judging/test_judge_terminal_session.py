"""Line editing, pair keys,
options side by side, undo and resize. Driven through a real terminal with
pexpect, as tests/judging/test_judge_session.py does."""

from __future__ import annotations

import io
from pathlib import Path

import pexpect
import pytest
from test_judge_session import Judge, long_texts

from blindtest.judging.recorder import Recorder, StoppingRule
from blindtest.judging.terminal.layout import display_width, side_by_side, trial_layout
from blindtest.judging.terminal.questions import answer_keys, nickname_keys, parse_answer
from blindtest.judging.terminal.session import Console, Session
from blindtest.model.picks import Pick, clean_text, load_judge_run, read_picks
from blindtest.rundir import artifacts

from judge_runs import answer_key, make_run, picks_of, strip_ansi

LEFT = "\x1b[D"
HOME = "\x1b[H"
END = "\x1b[F"
BACKSPACE = "\x7f"


# --------------------------------------------------------------------------- line editing


@pytest.mark.pty
def test_reason_edited_with_arrow_keys_and_backspace_is_stored_as_edited(
    tmp_path: Path,
) -> None:
    run_dir = make_run(tmp_path, "preference", 2)
    judge = Judge(run_dir)
    judge.start()
    judge.expect("trial 1 of 2 > ")
    judge.answer("1")
    judge.expect("Reason, one line: ")
    # "good rason" -> left x4, "e" -> "good reason"; Home, "a " -> "a good reason";
    # End, backspace, "n!" -> "a good reason!"
    judge.send("good rason" + LEFT * 4 + "e" + HOME + "a " + END + BACKSPACE + "n!\r")
    judge.expect("trial 2 of 2 > ")
    judge.answer("2")
    judge.expect("Reason, one line: ")
    judge.send("x" + "\x1b[15~" + "y\tz\r")  # F5 and a tab: never stored
    judge.expect("All 2 trials judged.")
    assert judge.finish() == 0
    picks = picks_of(run_dir / "picks.jsonl")
    assert [p["reason"] for p in picks] == ["a good reason!", picks[1]["reason"]]
    assert [p["pick"] for p in picks] == ["left", "right"]
    second = picks[1]["reason"]
    assert not any(ch < " " or ch == "\x7f" for ch in second), second
    assert second.startswith("x")
    assert second.endswith("y z")


def test_typed_escape_sequences_and_control_characters_are_never_stored(
    tmp_path: Path,
) -> None:
    assert clean_text("fast\x1b[D\x1b[D\x1b[Cer") == "faster"
    assert clean_text("a\x1bOAb\x1b]0;title\x07c\x9b2Jd") == "abcd"
    assert clean_text("tab\there\r\nnext\u200b\u202eline\x00") == "tab here nextline"
    # A scripted session (stdin not a terminal) cleans its lines the same way.
    run = load_judge_run(make_run(tmp_path, "preference", 1))
    out = tmp_path / "p.jsonl"
    stdin = io.StringIO("l\nsho\x1b[Drt\x1b[2K and\u202e clear\n")
    with artifacts.JsonlAppender(out, "picks") as appender:
        recorder = Recorder(run, "alice", appender.append)
        Session(run.view, "alice", Console(stdin, io.StringIO())).run(recorder, run.view.trials)
    assert picks_of(out)[0]["reason"] == "short and clear"


# --------------------------------------------------------------------------- pair keys


def test_pair_keys_cannot_be_misread_and_collisions_are_resolved() -> None:
    assert nickname_keys(("fox", "owl")) == ("f", "o")
    assert nickname_keys(("fox", "fern")) == ("f", "e")
    assert nickname_keys(("quail", "bee")) == ("a", "e")  # q and b are command keys
    assert nickname_keys(("o", "owl")) == ("o", "w")
    assert answer_keys("pair", ("fox", "owl")) == "f = option 1 is fox, o = option 1 is owl"
    assert parse_answer("pair", "e", ("fox", "fern")) == "fern"
    assert parse_answer("pair", "OWL", ("fox", "owl")) == "owl"
    assert parse_answer("pair", "1", ("fox", "owl")) is None  # digits read as positions
    assert parse_answer("pair", "o", ("o", "owl")) == "o"  # a whole nickname wins over a key


# --------------------------------------------------------------------------- side by side


@pytest.mark.parametrize(
    ("protocol", "columns", "beside"),
    [
        ("pair", 159, False),
        ("pair", 160, True),
        ("preference", 160, True),
        ("preference", 80, False),
        ("triangle", 209, False),
        ("triangle", 210, True),
    ],
)
def test_options_side_by_side_from_160_columns_or_210_for_a_triangle(
    tmp_path: Path, protocol: str, columns: int, beside: bool
) -> None:
    assert side_by_side(protocol, columns - 1) is beside
    run = load_judge_run(make_run(tmp_path, protocol, 2, texts=long_texts))
    console = Console(io.StringIO(), io.StringIO(), interactive=False)
    rows, anchors = trial_layout(run.view, run.view.trials[0], columns - 1, console)
    assert all(display_width(row) <= columns - 1 for row in rows)
    headers = [row for row in rows if row.startswith("── ")]
    if beside:
        assert len(headers) == 1  # one row holds every option's header
        assert len(set(anchors)) == 1
        # Each column wrapped on its own: the options' last lines share one row.
        assert any(r.count("This is option") == len(run.view.trials[0].options) for r in rows)
    else:
        assert len(headers) == len(run.view.trials[0].options)
        assert len(set(anchors)) == len(anchors)
    words = " ".join(headers)
    if protocol == "preference":
        # "Left" / "Right" only when the options really stand left and right.
        assert ("Left" in words) is beside
        assert ("Option 1" in words) is not beside
        assert answer_keys(protocol, None, beside).startswith("l = left" if beside else "1 = ")
        # Either way option 1 is the pick "left".
        assert parse_answer(protocol, "1", None) == parse_answer(protocol, "l", None) == "left"


@pytest.mark.pty
def test_side_by_side_at_200_columns_and_keys_jump_to_an_option_when_paged(
    tmp_path: Path,
) -> None:
    run_dir = make_run(tmp_path, "preference", 1, texts=long_texts)
    wide = Judge(run_dir, dimensions=(50, 200))
    wide.start()
    wide.expect("l = left, r = right, t = tie")
    wide.expect("trial 1 of 1 > ")
    assert any("── Left " in row and "── Right " in row for row in wide.rows())
    assert wide.interrupt() == 130

    narrow = Judge(make_run(tmp_path, "triangle", 1, texts=long_texts, name="tri"))
    narrow.start()
    narrow.expect("rows 1-23 of ")
    narrow.send("3")
    narrow.expect("rows ")
    narrow.child.expect(r"(\d+)-\d+ of ")
    top = int(narrow.child.match.group(1))
    narrow.send("2")
    narrow.child.expect(r"rows (\d+)-\d+ of ")
    assert int(narrow.child.match.group(1)) < top
    narrow.send("G")
    narrow.expect("trial 1 of 1 > ")
    narrow.answer("v3")  # at the question: view from option 3
    narrow.child.expect(r"rows (\d+)-\d+ of ")
    assert int(narrow.child.match.group(1)) == top
    rows = narrow.rows()
    assert any(row.startswith("── 3 ──") for row in rows)
    assert narrow.interrupt() == 130


# --------------------------------------------------------------------------- undo


@pytest.mark.pty
def test_u_takes_back_the_last_pick_and_the_file_records_the_correction(
    tmp_path: Path,
) -> None:
    run_dir = make_run(tmp_path, "triangle", 3)
    judge = Judge(run_dir)
    judge.start()
    judge.expect("trial 1 of 3 > ")
    judge.answer("1")
    judge.expect("u take back trial 1")
    judge.expect("trial 2 of 3 > ")
    judge.answer("u")
    judge.expect("Taking back your pick for trial 1 (1): pick again (s keeps it).")
    judge.expect("trial 1 of 3 > ")
    judge.answer("u")  # only the last pick, once taken back, is open
    judge.expect("there is no pick to take back")
    judge.answer("3")
    judge.expect("trial 2 of 3 > ")
    judge.answer("2")
    judge.expect("trial 3 of 3 > ")
    judge.answer("1")
    judge.expect("All 3 trials judged.")
    assert judge.finish() == 0
    records = picks_of(run_dir / "picks.jsonl")
    assert [(r["trial"], r["pick"], r.get("correction", False)) for r in records] == [
        (1, 1, False),
        (1, 3, True),
        (2, 2, False),
        (3, 1, False),
    ]
    read = read_picks(run_dir / "picks.jsonl", load_judge_run(run_dir).view)
    assert [(p.trial, p.pick) for p in read.picks] == [(1, 3), (2, 2), (3, 1)]
    assert read.corrections == 1


@pytest.mark.pty
def test_undo_then_quit_says_plainly_that_the_earlier_pick_stands(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "triangle", 4)
    judge = Judge(run_dir)
    judge.start()
    judge.expect("trial 1 of 4 > ")
    judge.answer("2")
    judge.expect("trial 2 of 4 > ")
    judge.answer("u")
    judge.expect("Taking back your pick for trial 1 (2): pick again (s keeps it).")
    judge.expect("trial 1 of 4 > ")
    judge.answer("q")
    judge.expect("Stop now? [y/N] ")
    judge.answer("y")
    assert judge.finish() == 0
    screen = " ".join(" ".join(judge.rows()).split())
    assert "If you stop now, the earlier pick stands." in screen
    assert "Your pick for trial 1 was not changed: the earlier pick stands." in screen
    assert "(your pick for trial 1 was not changed: the earlier pick stands)" in screen
    assert "continue at trial 2" in screen
    assert [(r["trial"], r["pick"]) for r in picks_of(run_dir / "picks.jsonl")] == [(1, 2)]


def test_sequential_stop_uses_the_judges_last_word(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, sequential=True))
    key = [entry["odd_position"] for entry in answer_key(run.run_dir)]
    wrong = [(k % 3) + 1 for k in key]
    seen: list[tuple[int, int]] = []

    def log_e(correct: int, n: int) -> float:
        seen.append((correct, n))
        return 0.0

    written: list[dict[str, object]] = []
    recorder = Recorder(run, "alice", written.append, log_e=log_e)
    recorder.record(Pick(trial=1, judge="alice", pick=key[0]))
    recorder.record(Pick(trial=2, judge="alice", pick=wrong[1]))
    assert recorder.can_take_back(2)
    assert not recorder.can_take_back(1)  # an undo takes back the last pick only
    assert recorder.can_correct(1)  # the history changes any
    recorder.record(Pick(trial=2, judge="alice", pick=key[1], correction=True))
    assert seen == [(1, 1), (1, 2), (2, 2)]  # the wrong pick replaced, n unchanged
    assert written[-1]["correction"] is True

    rule = StoppingRule(0.05, log_e=lambda correct, n: 10.0 if correct == n == 2 else 0.0)
    assert rule.observe(True) is False
    assert rule.observe(False) is False
    assert rule.revise(False, True) is True


def test_no_undo_once_a_sequential_session_has_stopped(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, sequential=True))
    key = [entry["odd_position"] for entry in answer_key(run.run_dir)]
    recorder = Recorder(run, "alice", lambda record: None)
    trial = 0
    while not recorder.done:
        trial += 1
        recorder.record(Pick(trial=trial, judge="alice", pick=key[trial - 1]))
    assert recorder.stopped_early
    assert not recorder.can_correct(trial)
    with pytest.raises(Exception, match="can no longer be changed"):
        recorder.record(Pick(trial=trial, judge="alice", pick=key[trial - 1], correction=True))


# --------------------------------------------------------------------------- resize


@pytest.mark.pty
def test_a_resize_redraws_the_screen_at_once_keeping_what_was_typed(
    tmp_path: Path,
) -> None:
    run_dir = make_run(tmp_path, "preference", 1)
    judge = Judge(run_dir)
    judge.start()
    judge.expect("1 = option 1, 2 = option 2, t = tie")
    judge.expect("trial 1 of 1 > ")
    judge.send("r")  # typed, not entered
    judge.expect("r")  # its echo: readline has it
    # The kernel sends SIGWINCH when the size changes. readline looks at signals while it
    # waits for a key; one that lands while it is busy echoing a key waits for the next
    # signal, so the test resizes again (as a dragged window does) until the screen follows.
    for attempt in range(5):
        judge.child.setwinsize(40, 170 + attempt)
        if judge.child.expect_exact(["l = left, r = right, t = tie", pexpect.TIMEOUT], 2) == 0:
            break
    else:
        pytest.fail("the screen was not redrawn after a resize")
    judge.expect("trial 1 of 1 > ")
    judge.send("\r")  # the "r" typed before the resize is still on the line
    judge.expect("Reason, one line: ")
    judge.send("because\r")
    judge.expect("The trial is judged.")
    assert judge.finish() == 0
    assert [(p["pick"], p["reason"]) for p in picks_of(run_dir / "picks.jsonl")] == [
        ("right", "because")
    ]
    screen = strip_ansi(judge.transcript)
    assert "── Left " in screen
