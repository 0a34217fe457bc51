"""bt-judge as a library and through CliRunner: the blinded view, resume, the picks contract,
the mechanical judges and the hidden sequential stop."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from hypothesis import given, settings
from hypothesis import strategies as st

from blindtest.errors import BadInput
from blindtest.judging.bot_judge import BotJudge
from blindtest.judging.driver import drive
from blindtest.judging.output import plan_output
from blindtest.judging.recorder import Recorder, StoppingRule
from blindtest.judging.terminal.layout import display_width, render_text, sanitize, wrap_prose_line
from blindtest.judging.terminal.session import Console, Session
from blindtest.model.bots import check_bot
from blindtest.model.picks import (
    JudgeView,
    Pick,
    PicksFile,
    load_judge_run,
    load_picks,
    read_picks,
    remaining_trials,
)
from blindtest.model.scoring import option1_side, preferred_side, triangle_correct
from blindtest.present.hints import stage_command
from blindtest.rundir import artifacts
from blindtest.stats.sequential import e_process

from judge_runs import answer_key, make_run, picks_of, write_picks
from screen_text import flat

Invoke = Callable[..., Result]


def triangle_pick(trial: int, pick: object = 1, judge: str = "alice") -> dict[str, object]:
    return {"trial": trial, "judge": judge, "pick": pick}


# --------------------------------------------------------------------------- loading


def test_view_holds_only_what_a_judge_may_see(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path))
    fields = {f.name for f in dataclasses.fields(JudgeView)}
    assert fields == {
        "protocol",
        "trials",
        "question",
        "extra_questions",
        "extra_questions_per_option",  # the same words for every option and trial
        "require_reason",
        "sequential",
        "design_sha256",  # refuses picks made against another design; names no side
    }
    assert run.view.question == "Which one is different?"
    assert [t.number for t in run.view.trials] == list(range(1, 21))
    assert all(len(t.options) == 3 for t in run.view.trials)


def test_missing_trials_is_refused_with_the_fix(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    (run_dir / artifacts.TRIALS).unlink()
    with pytest.raises(BadInput, match=r"trials.jsonl: not found; run bt-generate .* first"):
        load_judge_run(run_dir)


def test_edited_design_is_refused(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    design = run_dir / artifacts.DESIGN
    design.write_bytes(design.read_bytes().replace(b'"alpha": 0.05', b'"alpha": 0.5'))
    with pytest.raises(BadInput, match=r"no longer matches design\.sha256"):
        load_judge_run(run_dir)


def test_trials_file_must_match_the_design(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    path = run_dir / artifacts.TRIALS
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:-1]))
    with pytest.raises(BadInput, match="holds 19 trials but the design has 20"):
        load_judge_run(run_dir)


# --------------------------------------------------------------------------- resume


def test_resume_point_is_the_first_trial_without_a_pick_by_this_judge(tmp_path: Path) -> None:
    view = load_judge_run(make_run(tmp_path, trials=6)).view
    picks = [
        Pick(trial=1, judge="alice", pick=2),
        Pick(trial=2, judge="alice", pick=1),
        Pick(trial=4, judge="alice", pick=3),
        Pick(trial=3, judge="bob", pick=3),
    ]

    def resume_point(picks: list[Pick], judge: str) -> int | None:
        remaining = remaining_trials(view, picks, judge)
        return remaining[0].number if remaining else None

    assert resume_point(picks, "alice") == 3
    assert [t.number for t in remaining_trials(view, picks, "alice")] == [3, 5, 6]
    assert resume_point(picks, "bob") == 1
    assert resume_point([], "carol") == 1
    done = [Pick(trial=t, judge="alice", pick=1) for t in range(1, 7)]
    assert resume_point(done, "alice") is None


# --------------------------------------------------------------------------- the picks contract


def test_valid_picks_are_read_with_their_line_numbers(tmp_path: Path) -> None:
    view = load_judge_run(make_run(tmp_path, trials=3)).view
    path = write_picks(tmp_path / "p.jsonl", [triangle_pick(1), "", triangle_pick(2, 3)])
    read = read_picks(path, view)
    assert [(p.trial, p.line) for p in read.picks] == [(1, 1), (2, 3)]
    assert read.judges == ("alice",)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (triangle_pick(21), r"p.jsonl:2: trial 21 is not in this run \(it has trials 1..20\)"),
        (triangle_pick(1, 2), r"p.jsonl:2: second pick by judge 'alice' for trial 1 \(the first"),
        (triangle_pick(2, "left"), r"p.jsonl:2: pick 'left' is out of range for a triangle"),
        (triangle_pick(2, "fox"), r"p.jsonl:2: pick 'fox' is out of range for a triangle"),
        (triangle_pick(2, 4), r"p.jsonl:2: /pick: 4 is not one of \[1, 2, 3\]"),
        ({"trial": 2, "pick": 1}, r"p.jsonl:2: /: 'judge' is a required property"),
        ('{"trial": 2,', r"p.jsonl:2: not valid JSON"),
    ],
)
def test_external_triangle_picks_are_rejected_with_the_line_number(
    tmp_path: Path, line: dict[str, object] | str, message: str
) -> None:
    run_dir = make_run(tmp_path)
    path = write_picks(tmp_path / "p.jsonl", [triangle_pick(1), line, triangle_pick(3)])
    with pytest.raises(BadInput, match=message):
        load_picks(run_dir, path)


def test_two_judges_may_share_a_file(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    path = write_picks(tmp_path / "p.jsonl", [triangle_pick(1), triangle_pick(1, 2, "bob")])
    _, read = load_picks(run_dir, path)
    assert read.judges == ("alice", "bob")
    assert [p.pick for p in read.by("bob")] == [2]


def test_a_torn_final_line_is_ignored_and_reported(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    path = write_picks(tmp_path / "p.jsonl", [triangle_pick(1)])
    path.write_bytes(path.read_bytes() + b'{"schema": "blindtest/pi')
    _, read = load_picks(run_dir, path)
    assert len(read.picks) == 1
    assert read.torn_line == 2


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([{"trial": 1, "judge": "a", "pick": 2}], r":1: pick 2 is out of range for a preference"),
        ([{"trial": 1, "judge": "a", "pick": "fox"}], r"pick 'fox' is out of range for a pref"),
        (
            [{"trial": 1, "judge": "a", "pick": "tie", "answers": {"Is it fast?": True}}],
            r":1: answers a question the design does not ask: 'Is it fast\?'",
        ),
    ],
)
def test_external_preference_picks_out_of_range_are_rejected(
    tmp_path: Path, lines: list[dict[str, object]], message: str
) -> None:
    run_dir = make_run(tmp_path, "preference", extra_questions=("Is it correct?",))
    with pytest.raises(BadInput, match=message):
        load_picks(run_dir, write_picks(tmp_path / "p.jsonl", lines))


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ({"pick": "left"}, r":2: pick 'left' is out of range for a pair run"),
        ({"pick": 1}, r":2: pick 1 is out of range for a pair run"),
        ({"pick": "cat"}, r":2: judge 'a' uses a third nickname \(cat, fox, owl since line 1\)"),
        ({"pick": "fox", "nicknames": ["fox", "cat"]}, r":2: judge 'a' uses a third nickname"),
        ({"pick": "cat", "nicknames": ["fox", "owl"]}, r":2: pick 'cat' is not one of its nick"),
    ],
)
def test_external_pair_picks_keep_two_nicknames(
    tmp_path: Path, second: dict[str, object], message: str
) -> None:
    run_dir = make_run(tmp_path, "pair")
    first = {"trial": 1, "judge": "a", "pick": "fox", "nicknames": ["fox", "owl"]}
    lines = [first, {"trial": 2, "judge": "a", **second}]
    with pytest.raises(BadInput, match=message):
        load_picks(run_dir, write_picks(tmp_path / "p.jsonl", lines))


def test_pick_records_round_trip_and_validate(tmp_path: Path) -> None:
    pick = Pick(
        trial=3,
        judge="alice",
        pick="left",
        reason="clearer",
        at="2025-01-01T00:00:00+00:00",
        answers={"Is it correct?": True},
    )
    record = pick.to_record()
    artifacts.validate(record, "picks", "x")
    assert Pick.from_record(record) == pick
    assert set(record) == {"schema", "trial", "judge", "pick", "reason", "at", "answers"}


# --------------------------------------------------------------------------- scoring


def test_scoring_reads_the_arrangement(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path))
    entry = run.design["arrangement"][4]
    right = Pick(trial=5, judge="a", pick=entry["odd_position"])
    wrong = Pick(trial=5, judge="a", pick=entry["odd_position"] % 3 + 1)
    assert triangle_correct(run.design, right.trial, right.pick)
    assert not triangle_correct(run.design, wrong.trial, wrong.pick)
    pref = load_judge_run(make_run(tmp_path, "preference", name="pref"))
    left = pref.design["arrangement"][0]["left"]
    assert preferred_side(pref.design, 1, "left") == left
    assert preferred_side(pref.design, 1, "right") != left
    assert preferred_side(pref.design, 1, "tie") is None
    assert option1_side(pref.design, 1) == left


# --------------------------------------------------------------------------- bots


def run_bot_into(run_dir: Path, kind: str, out: Path) -> PicksFile:
    run = load_judge_run(run_dir)
    with artifacts.JsonlAppender(out, "picks", fsync=False) as appender:
        recorder = Recorder(run, f"bot:{kind}", appender.append)
        drive(BotJudge(run, kind, recorder.judge), recorder, run.view.trials)
    return read_picks(out, run.view)


@pytest.mark.parametrize("protocol", ["triangle", "pair", "preference"])
@pytest.mark.parametrize("kind", ["length", "duplicate", "random"])
def test_bots_write_valid_picks_that_record_how(tmp_path: Path, protocol: str, kind: str) -> None:
    run_dir = make_run(tmp_path, protocol)
    if kind == "duplicate" and protocol != "triangle":
        with pytest.raises(BadInput, match="bot:duplicate needs a triangle run"):
            check_bot(kind, protocol)
        return
    read = run_bot_into(run_dir, kind, tmp_path / "bot.jsonl")
    assert [p.trial for p in read.picks] == list(range(1, 21))
    assert all(p.judge == f"bot:{kind}" and p.bot and p.bot["name"] == kind for p in read.picks)
    run_bot_into(run_dir, kind, tmp_path / "again.jsonl")
    assert (tmp_path / "bot.jsonl").read_bytes() == (tmp_path / "again.jsonl").read_bytes()


def test_length_bot_finds_the_longer_odd_response(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    read = run_bot_into(run_dir, "length", tmp_path / "bot.jsonl")
    key = answer_key(run_dir)
    assert [p.pick for p in read.picks] == [e["odd_position"] for e in key]


def test_duplicate_bot_records_whether_it_fired(tmp_path: Path) -> None:
    def texts(trial: int, entry: dict[str, Any]) -> list[str]:
        base = [f"identical words for trial {trial} " * 5] * 3
        if trial % 2:  # odd trials: every option different, so the bot must guess
            return [f"{word} reply {trial}" for word in ("alpha", "beta gamma", "delta x y z")]
        base[entry["odd_position"] - 1] = "something else entirely " * 5
        return base

    read = run_bot_into(make_run(tmp_path, texts=texts), "duplicate", tmp_path / "d.jsonl")
    fired = [bool(p.bot and p.bot["fired"]) for p in read.picks]
    assert fired == [t % 2 == 0 for t in range(1, 21)]
    assert all(0.0 <= p.bot["similarity"] <= 1.0 for p in read.picks if p.bot)


def test_pair_bot_names_option_one_by_length(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "pair")
    read = run_bot_into(run_dir, "length", tmp_path / "bot.jsonl")
    key = answer_key(run_dir)
    assert all(p.nicknames == ("longer", "shorter") for p in read.picks)
    # side A writes more in these runs, so "longer" always goes with A.
    assert [p.pick == "longer" for p in read.picks] == [e["left"] == "A" for e in key]


# --------------------------------------------------------------------------- sequential stop


def test_stopping_rule_crosses_at_one_over_alpha_and_stays_crossed() -> None:
    values = iter([0.0, 1.0, math.log(20.0), 0.0])
    rule = StoppingRule(0.05, log_e=lambda correct, n: next(values))
    assert [rule.observe(True) for _ in range(4)] == [False, False, True, True]
    assert (rule.correct, rule.n) == (4, 4)


def record_all_correct(run_dir: Path, out: Path, upto: int) -> Recorder:
    run = load_judge_run(run_dir)
    key = answer_key(run_dir)
    with artifacts.JsonlAppender(out, "picks") as appender:
        recorder = Recorder(run, "alice", appender.append)
        for entry in key[:upto]:
            if recorder.record(
                Pick(trial=entry["trial"], judge="alice", pick=entry["odd_position"])
            ):
                break
    return recorder


def test_sequential_session_stops_the_moment_e_reaches_one_over_alpha(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, sequential=True)
    out = tmp_path / "p.jsonl"
    recorder = record_all_correct(run_dir, out, 20)
    expected = e_process([True] * 20, alpha=0.05).crossed_at
    assert expected is not None
    assert expected < 20
    assert recorder.done
    assert recorder.stopped_early
    assert len(picks_of(out)) == expected


def test_sequential_resume_after_the_crossing_is_already_done(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, sequential=True)
    out = tmp_path / "p.jsonl"
    record_all_correct(run_dir, out, 20)
    run = load_judge_run(run_dir)
    earlier = read_picks(out, run.view).picks
    recorder = Recorder(run, "alice", lambda record: None, earlier=earlier)
    assert recorder.done
    assert recorder.stopped_early
    fresh = Recorder(run, "bob", lambda record: None, earlier=earlier)
    assert not fresh.done


def test_a_fixed_design_never_stops_early(tmp_path: Path) -> None:
    recorder = record_all_correct(make_run(tmp_path), tmp_path / "p.jsonl", 19)
    assert not recorder.done
    assert not recorder.stopped_early
    assert recorder.judged == 19


def test_bots_stop_where_a_person_would_in_a_sequential_design(tmp_path: Path) -> None:
    read = run_bot_into(make_run(tmp_path, sequential=True), "length", tmp_path / "b.jsonl")
    assert len(read.picks) == e_process([True] * 20, alpha=0.05).crossed_at


def test_recorder_refuses_a_second_pick_for_a_trial(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path))
    written: list[dict[str, object]] = []
    recorder = Recorder(run, "alice", written.append)
    recorder.record(Pick(trial=1, judge="alice", pick=1))
    with pytest.raises(BadInput, match="second pick by judge 'alice' for trial 1"):
        recorder.record(Pick(trial=1, judge="alice", pick=2))
    assert len(written) == 1


# --------------------------------------------------------------------------- the output file


def test_output_plan(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    none = PicksFile(path=path, picks=())
    assert plan_output(none, "alice", bot=True, force=False) is False
    path.write_text("")
    mine = PicksFile(path=path, picks=(Pick(trial=1, judge="alice", pick=1),))
    assert plan_output(mine, "alice", bot=False, force=False) is False  # a person resumes
    assert plan_output(mine, "alice", bot=False, force=True) is True
    bots = PicksFile(path=path, picks=(Pick(trial=1, judge="b", pick=1, judge_kind="bot"),))
    with pytest.raises(BadInput, match="already exists; use force=True"):
        plan_output(bots, "b", bot=True, force=False)
    with pytest.raises(BadInput, match="holds a person's picks \\(alice\\); a bot's picks never"):
        plan_output(mine, "b", bot=True, force=True)
    with pytest.raises(BadInput, match="holds a bot's picks \\(b\\); a person's picks never"):
        plan_output(bots, "alice", bot=False, force=False)
    with pytest.raises(BadInput, match="also holds picks by 'alice'; force would delete"):
        plan_output(mine, "bob", bot=False, force=True)


# --------------------------------------------------------------------------- a scripted session


def test_scripted_session_reads_answers_line_by_line(tmp_path: Path) -> None:
    import io

    run = load_judge_run(make_run(tmp_path, trials=3))
    out = tmp_path / "p.jsonl"
    stdin = io.StringIO("x\n\n2\n?\n1\n3\n")
    stdout = io.StringIO()
    with artifacts.JsonlAppender(out, "picks") as appender:
        recorder = Recorder(run, "alice", appender.append)
        session = Session(run.view, "alice", Console(stdin, stdout), clock=lambda: "t0")
        result = session.run(recorder, remaining_trials(run.view, (), "alice"))
    assert result.status == "complete"
    assert [(p["trial"], p["pick"], p["at"]) for p in picks_of(out)] == [
        (1, 2, "t0"),
        (2, 1, "t0"),
        (3, 3, "t0"),
    ]
    text = stdout.getvalue()
    assert "'x' is not an answer: type 1, 2 or 3; guess if unsure; ? for help" in text
    assert "an answer is needed" in text
    assert "\x1b" not in text  # no escape sequences when not on a terminal


# --------------------------------------------------------------------------- the command


def test_cli_bot_writes_picks_and_says_what_to_run_next(tmp_path: Path, invoke: Invoke) -> None:
    run_dir = make_run(tmp_path)
    result = invoke("judge", run_dir, "--judge", "bot:length")
    assert result.exit_code == 0, result.stderr
    assert flat(result.stdout) == (  # wrapped between words at 80 into a pipe
        f"bot:length judged 20 of 20 trials into {run_dir / 'picks.jsonl'}. "
        f"Run {stage_command('analyze', run_dir)} to see the result."
    )
    assert {p["judge"] for p in picks_of(run_dir / "picks.jsonl")} == {"bot:length"}


def test_cli_bot_refuses_an_existing_file_without_force(tmp_path: Path, invoke: Invoke) -> None:
    run_dir = make_run(tmp_path)
    assert invoke("judge", run_dir, "--judge", "bot:random", "-q").exit_code == 0
    before = (run_dir / "picks.jsonl").read_bytes()
    result = invoke("judge", run_dir, "--judge", "bot:random")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "picks.jsonl already exists; use --force to replace it" in result.stderr
    assert (run_dir / "picks.jsonl").read_bytes() == before
    assert invoke("judge", run_dir, "--judge", "bot:random", "--force", "-q").exit_code == 0
    assert (run_dir / "picks.jsonl").read_bytes() == before  # seeded: the same picks again


def test_cli_force_never_deletes_another_judges_picks(tmp_path: Path, invoke: Invoke) -> None:
    run_dir = make_run(tmp_path)
    write_picks(run_dir / "picks.jsonl", [triangle_pick(1, judge="alice")])
    result = invoke("judge", run_dir, "--judge", "bot:length", "--force")
    assert result.exit_code == 2
    # A person's file is refused to a bot before --force is weighed.
    assert "holds a person's picks (alice); a bot's picks never go" in result.stderr
    assert len(picks_of(run_dir / "picks.jsonl")) == 1


def test_cli_refuses_a_run_without_trials_and_writes_nothing(
    tmp_path: Path, invoke: Invoke
) -> None:
    run_dir = make_run(tmp_path)
    (run_dir / artifacts.TRIALS).unlink()
    result = invoke("judge", run_dir, "--judge", "bot:length")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "run bt-generate" in result.stderr
    assert not (run_dir / "picks.jsonl").exists()


def test_cli_check_validates_an_external_file(tmp_path: Path, invoke: Invoke) -> None:
    run_dir = make_run(tmp_path, trials=3)
    good = write_picks(tmp_path / "good.jsonl", [triangle_pick(t, judge="llm") for t in (1, 2)])
    result = invoke("judge", run_dir, "--check", good)
    assert result.exit_code == 0
    assert "good.jsonl: 2 picks by 1 judge (llm), valid for triangle design" in result.stdout
    bad = write_picks(tmp_path / "bad.jsonl", [triangle_pick(1), triangle_pick(7)])
    result = invoke("judge", run_dir, "--check", bad)
    assert result.exit_code == 2
    assert result.stderr.endswith(
        ": error: bad.jsonl:2: trial 7 is not in this run (it has trials 1..3)\n"
    )
    result = invoke("judge", run_dir, "--check", good, "--out", tmp_path / "x.jsonl")
    assert result.exit_code == 2
    assert "--check only validates a file; drop --out" in result.stderr


def test_cli_human_session_from_a_pipe_and_resume(tmp_path: Path, invoke: Invoke) -> None:
    run_dir = make_run(tmp_path, trials=4)
    first = invoke("judge", run_dir, "--judge-id", "alice", input="1\n2\n")
    # Input ended mid-run: exit 2 (not Ctrl-C's 130), the picks kept, resumable.
    assert first.exit_code == 2
    resume = stage_command("judge", run_dir, "--judge-id", "alice")
    assert first.stderr == (
        "blindtest: error: stdin closed before the session finished; 2 picks kept; "
        f"rerun {resume} in a terminal to continue\n"
    )
    second = invoke("judge", run_dir, "--judge-id", "alice", input="3\n1\n")
    assert second.exit_code == 0, second.stderr
    assert "Resuming at trial 3: 2 of 4 already judged." in flat(second.stdout)
    assert flat(second.stdout).endswith(
        f"All 4 trials judged. Run {stage_command('analyze', run_dir)} to see the result."
    )
    picks = picks_of(run_dir / "picks.jsonl")
    assert [(p["trial"], p["pick"], p["judge"]) for p in picks] == [
        (1, 1, "alice"),
        (2, 2, "alice"),
        (3, 3, "alice"),
        (4, 1, "alice"),
    ]
    third = invoke("judge", run_dir, "--judge-id", "alice", input="")
    assert third.exit_code == 0
    assert "All 4 trials judged" in flat(third.stdout)


# --------------------------------------------------------------------------- screen layout


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet=st.characters(codec="utf-8"), max_size=400),
    width=st.integers(min_value=10, max_value=120),
)
def test_every_rendered_row_fits_the_screen(text: str, width: int) -> None:
    rows = render_text(text, width, width, "↪")
    assert all(display_width(row) <= width for row in rows)
    assert not any("\x1b" in row or "\r" in row for row in rows)


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(st.text(alphabet="abcdefghij界", min_size=1, max_size=30), max_size=40),
    width=st.integers(min_value=10, max_value=100),
)
def test_wrapping_prose_keeps_every_word_in_order(words: list[str], width: int) -> None:
    line = " ".join(words)
    rows = wrap_prose_line(line, width)
    assert all(display_width(row) <= width for row in rows)
    assert "".join("".join(rows).split()) == "".join(words)


def test_code_is_never_reflowed_and_lists_keep_their_indent() -> None:
    text = (
        "- a list item that is long enough to wrap at twenty\n"
        "```\n"
        "x  =  1   # spaced\n"
        "```\n"
        "Then a paragraph.\n"
        "\n"
        "    indented code stays\n"
    )
    rows = render_text(text, 20, 30, ">")
    assert rows[:3] == ["- a list item that", "  is long enough to", "  wrap at twenty"]
    assert "x  =  1   # spaced" in rows
    assert "    indented code stays" in rows


def test_control_characters_are_shown_not_obeyed() -> None:
    assert sanitize("a\x1b[2Jb\u202ec\r\nd\x07") == "a\\x1b[2Jb\\u202ec\nd\\x07"
