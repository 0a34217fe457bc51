"""The picks contract for a rater's history, skips and "both bad": every change is an appended
correction (the latest word counts, the first stays readable, changes are counted per judge),
a skip is a record of its own that is never a pick, "both bad" is an abstention kept apart from
what is tallied, a pick id is recorded once, and a panel reviewer's own order re-derives from
the design seed and the name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from blindtest.errors import BadInput
from blindtest.judging.driver import Revise, Skip, Stop, TakeBack, Turn, drive
from blindtest.judging.recorder import Recorder
from blindtest.model.assignment import order_of, reviewer_order
from blindtest.model.picks import Pick, load_judge_run, read_picks
from blindtest.model.protocols import PROTOCOLS
from blindtest.model.scoring import preferred_side
from blindtest.rundir import artifacts

from judge_runs import make_run, picks_of, write_picks

SHA = "ab" * 32


def _pick(trial: int, pick: str, **more: Any) -> dict[str, Any]:
    return {"schema": "blindtest/picks@1", "trial": trial, "judge": "ana", "pick": pick, **more}


def test_the_latest_word_counts_and_the_first_stays_readable(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", trials=4))
    path = write_picks(
        tmp_path / "picks.jsonl",
        [
            _pick(1, "left", reason="clearer"),
            _pick(2, "right"),
            _pick(1, "right", correction=True, reason="on reflection"),
            _pick(1, "tie", correction=True),
            _pick(3, "left"),
        ],
    )
    read = read_picks(path, run.view)
    assert [(p.trial, p.pick) for p in read.picks] == [(1, "tie"), (2, "right"), (3, "left")]
    assert [(p.trial, p.pick) for p in read.first_picks] == [
        (1, "left"), (2, "right"), (3, "left")
    ]  # fmt: skip
    assert read.first_picks[0].reason == "clearer"
    assert read.changes == {"ana": 2}
    first = read.first_words()
    assert first.picks == read.first_picks
    assert first.changes == {}
    assert first.corrections == 0
    assert read.counts()["ana"].changed == 2
    assert read.counts()["ana"].judged == 3


def test_both_bad_is_an_abstention_kept_out_of_the_tally_and_counted(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", trials=4))
    path = write_picks(
        tmp_path / "picks.jsonl",
        [_pick(1, "left"), _pick(2, "both_bad"), _pick(3, "tie"), _pick(4, "both_bad")],
    )
    read = read_picks(path, run.view)
    assert [p.trial for p in read.picks] == [1, 3]  # what a tally reads: no both_bad
    assert [p.trial for p in read.abstentions] == [2, 4]
    assert [p.trial for p in read.answered] == [1, 2, 3, 4]  # every trial has a word
    counts = read.counts()["ana"]
    assert (counts.judged, counts.abstained) == (4, 2)
    with pytest.raises(ValueError, match="abstention"):
        preferred_side(run.design, 2, "both_bad")
    with pytest.raises(ValueError, match="abstention"):
        PROTOCOLS["preference"].tally(run.design["arrangement"][1], "both_bad")


def test_a_both_bad_changed_to_a_pick_counts_as_that_pick(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", trials=2))
    path = write_picks(
        tmp_path / "picks.jsonl",
        [_pick(1, "both_bad"), _pick(2, "left"), _pick(1, "right", correction=True)],
    )
    read = read_picks(path, run.view)
    assert [(p.trial, p.pick) for p in read.picks] == [(1, "right"), (2, "left")]
    assert read.abstentions == ()
    assert [p.trial for p in read.first_abstentions] == [1]
    assert [p.trial for p in read.first_words().answered] == [1, 2]


def test_both_bad_is_refused_where_the_judge_does_not_prefer(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, "triangle", trials=2))
    path = write_picks(tmp_path / "picks.jsonl", [_pick(1, "both_bad")])
    with pytest.raises(BadInput, match="out of range for a triangle run"):
        read_picks(path, run.view)


def test_a_skip_is_never_a_pick_and_an_unresolved_one_leaves_the_trial_unjudged(
    tmp_path: Path,
) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", trials=4))
    path = write_picks(
        tmp_path / "picks.jsonl",
        [
            _pick(1, "skipped", skipped=True),
            _pick(2, "left"),
            _pick(1, "right"),
            _pick(3, "skipped", skipped=True),
            _pick(3, "skipped", skipped=True),
        ],
    )
    read = read_picks(path, run.view)
    assert [p.trial for p in read.answered] == [2, 1]
    assert [s.trial for s in read.skips] == [1, 3, 3]
    counts = read.counts()["ana"]
    assert (counts.judged, counts.skipped, counts.skipped_trials, counts.unresolved) == (
        2, 3, 2, 1
    )  # fmt: skip
    assert counts.skip_rate() == pytest.approx(2 / 3)


def test_a_skip_naming_no_trial_of_the_run_is_refused(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", trials=2))
    path = write_picks(tmp_path / "picks.jsonl", [_pick(9, "skipped", skipped=True)])
    with pytest.raises(BadInput, match=r"picks.jsonl:1: trial 9 is not in this run"):
        read_picks(path, run.view)


def test_a_pick_id_is_recorded_once(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", trials=3))
    written: list[dict[str, Any]] = []
    recorder = Recorder(run, "ana", written.append)
    recorder.record(Pick(1, "ana", "left", pick_id="page-0001abcd"))
    recorder.record(Pick(1, "ana", "left", pick_id="page-0001abcd"))  # its reply was lost
    assert [w["pick_id"] for w in written] == ["page-0001abcd"]
    path = write_picks(
        tmp_path / "picks.jsonl",
        [_pick(1, "left", pick_id="page-0001abcd"), _pick(2, "left", pick_id="page-0001abcd")],
    )
    with pytest.raises(BadInput, match=r"picks.jsonl:2: pick id 'page-0001abcd'.*on line 1"):
        read_picks(path, run.view)


class _Scripted:
    """A judge that answers each turn from a list, and keeps the turns it was given."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers
        self.turns: list[Turn] = []

    @property
    def kind(self) -> Any:
        from blindtest.judging.terminal.session import HUMAN

        return HUMAN

    def sitting(self, progress: Any) -> Any:
        from contextlib import nullcontext

        return nullcontext()

    def judge(self, turn: Turn) -> Any:
        self.turns.append(turn)
        answer = self.answers.pop(0)
        return answer(turn) if callable(answer) else answer

    def end(self, result: Any) -> None:
        pass

    def closing(self, result: Any, out: Path, analyze_command: str) -> str:
        return ""


def _word(trial: int, pick: str, **more: Any) -> tuple[Pick, ...]:
    return (Pick(trial, "ana", pick, **more),)


def test_the_driver_puts_a_skipped_trial_after_the_others(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", trials=3))
    written: list[dict[str, Any]] = []
    judge = _Scripted([Skip(at="t0"), _word(2, "left"), _word(3, "right"), _word(1, "both_bad")])
    result = drive(judge, Recorder(run, "ana", written.append), run.view.trials)
    assert result.status == "complete"
    assert [t.trial.number for t in judge.turns] == [1, 2, 3, 1]
    assert [t.skipped for t in judge.turns] == [False, False, False, True]
    assert [t.left for t in judge.turns] == [3, 3, 2, 1]
    assert [(w["trial"], w["pick"], w.get("skipped")) for w in written] == [
        (1, "skipped", True), (2, "left", None), (3, "right", None), (1, "both_bad", None)
    ]  # fmt: skip


def test_a_skip_never_resolved_leaves_the_trial_to_judge(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", trials=2))
    written: list[dict[str, Any]] = []
    judge = _Scripted([Skip(), _word(2, "left"), Stop()])
    result = drive(judge, Recorder(run, "ana", written.append), run.view.trials)
    assert (result.status, result.judged, result.next_trial) == ("quit", 1, 1)


def test_any_earlier_pick_can_be_changed_from_the_history(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", trials=3))
    written: list[dict[str, Any]] = []
    judge = _Scripted(
        [
            _word(1, "left", reason="shorter"),
            _word(2, "right"),
            Revise(_word(1, "tie", reason="the same really")),  # while trial 3 is shown
            _word(3, "left"),
        ]
    )
    drive(judge, Recorder(run, "ana", written.append), run.view.trials)
    assert [t.trial.number for t in judge.turns] == [1, 2, 3, 3]
    assert [(w.trial, w.pick) for w in judge.turns[3].words] == [
        (1, "tie"), (2, "right")
    ]  # fmt: skip
    assert [(w["trial"], w["pick"], w.get("correction")) for w in written] == [
        (1, "left", None), (2, "right", None), (1, "tie", True), (3, "left", None)
    ]  # fmt: skip


def test_an_undo_after_a_change_from_the_history_no_longer_names_the_changed_pick(
    tmp_path: Path,
) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", trials=3))
    judge = _Scripted([_word(1, "left"), Revise(_word(1, "right")), _word(2, "left"), Stop()])
    drive(judge, Recorder(run, "ana", lambda record: None), run.view.trials)
    undoable = [t.undoable.trial if t.undoable is not None else None for t in judge.turns]
    assert undoable == [None, 1, None, 2]


def test_a_skip_on_a_trial_shown_again_keeps_the_earlier_pick(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", trials=2))
    written: list[dict[str, Any]] = []
    judge = _Scripted([_word(1, "left"), TakeBack(), Skip(), _word(2, "right")])
    result = drive(judge, Recorder(run, "ana", written.append), run.view.trials)
    assert result.status == "complete"
    assert [t.trial.number for t in judge.turns] == [1, 2, 1, 2]
    assert [(w["trial"], w["pick"]) for w in written] == [(1, "left"), (2, "right")]


def test_skips_and_changes_replay_from_the_file(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "preference", trials=3)
    run = load_judge_run(run_dir)
    path = run_dir / artifacts.PICKS
    with artifacts.JsonlAppender(path, "picks") as appender:
        judge = _Scripted(
            [Skip(), _word(2, "left"), Revise(_word(2, "both_bad")), _word(3, "tie"), Stop()]
        )
        drive(judge, Recorder(run, "ana", appender.append), run.view.trials)
    lines = picks_of(path)
    assert [line.get("skipped", False) for line in lines] == [True, False, False, False]
    read = read_picks(path, run.view)
    assert [p.trial for p in read.picks] == [3]
    assert [p.trial for p in read.abstentions] == [2]
    assert read.counts()["ana"].unresolved == 1


def test_each_reviewer_has_an_order_of_their_own_from_the_seed_and_the_name() -> None:
    share = tuple(range(1, 25))
    alice = reviewer_order("seed-1", "alice", share)
    assert sorted(alice) == list(share)
    assert alice == reviewer_order("seed-1", "alice", share)  # re-derivable
    assert alice != reviewer_order("seed-1", "bob", share)
    assert alice != reviewer_order("seed-2", "alice", share)
    panel = {"reviewers": ["alice", "bob"], "per_judge": None, "order": "reviewer"}
    assert order_of("seed-1", 24, "alice", panel) == alice
    before = {"reviewers": ["alice", "bob"], "per_judge": None}  # a panel made before
    assert order_of("seed-1", 24, "alice", before) == share


def test_a_rerun_resumes_at_a_skipped_trial_and_the_sitting_says_so(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", 4))
    judge = _Scripted([_word(1, "left"), Skip(), _word(3, "right"), Stop()])
    result = drive(judge, Recorder(run, "ana", lambda record: None), run.view.trials)
    assert result.next_trial == 2  # what a rerun asks first (design order), not trial 4
