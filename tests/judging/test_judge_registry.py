"""One ``Judge`` protocol and one
driver for any judge, kinds from a registry, ``Pick`` keeping every field the schema allows,
several records per trial where the judge kind says what they mean (an LLM judge's position
swap), the terminal session split into layout / console / pager, and the dead code gone."""

from __future__ import annotations

import ast
import importlib.util
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import blindtest
from blindtest.errors import BadInput
from blindtest.judging import driver
from blindtest.judging.driver import (
    Answer,
    JudgeKind,
    JudgingResult,
    Stop,
    TakeBack,
    Turn,
    drive,
    judge_kind,
)
from blindtest.judging.recorder import Recorder
from blindtest.judging.terminal import session
from blindtest.model import judge_kinds as kinds
from blindtest.model import picks
from blindtest.model.judge_kinds import JUDGE_KINDS, PICK_KINDS
from blindtest.model.picks import JudgeRun, Pick, load_judge_run, read_picks, remaining_trials
from blindtest.model.scoring import triangle_correct
from blindtest.rundir import artifacts

from judge_runs import answer_key, make_run, picks_of, write_picks

SCHEMA = Path(__file__).parents[2] / "schemas" / "picks.schema.json"


# --------------------------------------------------------------------------- Pick


def _example(name: str, spec: dict[str, Any]) -> Any:
    examples: dict[str, Any] = {
        "schema": "blindtest/picks@1",
        "trial": 2,
        "judge": "alice",
        "pick": 3,
        "reason": "shorter",
        "confidence": 0.75,
        "at": "2026-11-30T12:00:00+00:00",
        "nicknames": ["fox", "owl"],
        "answers": {"Is it polite?": True},
        "bot": {"name": "duplicate", "fired": False, "similarity": 0.5},
        "judge_kind": "llm",
        "design_sha256": "ab" * 32,
        "correction": True,
        "pass": 2,
        "pick_id": "p-3f9a1c2e7b",
        "skipped": False,
        # the LLM judge's optional fields
        "failed": False,
        "error": "no valid verdict after 4 answers",
        "answered_pass": {"pass": 1, "raw_response": "{}", "attempts": 1, "tokens": {}},
        "comparison_id": "abababababab-2",
        "judge_model": "gpt-x",
        "judge_origin": "https://api.example.com",
        "excluded": "identity_leakage",
        "position_mapping": {"A": "right", "B": "left"},
        "verdict": "A",
        "pass_pick": "right",
        "key_differentiators": ["accuracy"],
        "identity_leakage": True,
        "identity_leakage_details": "names a model",
        "tie_reason": None,
        "position_consistent": False,
        "flagged": ["identity_leakage"],
        "raw_response": "{}",
        "attempts": 2,
        "tokens": {"prompt": 10, "completion": 5},
        "cost": 0.001,
        "panel": {"reviewers": ["alice", "bob"], "per_judge": 14, "order": "reviewer"},
        "judge_settings": {"model": "gpt-x", "temperature": 0.0},
        "judge_settings_sha256": "cd" * 32,
    }
    assert name in examples, f"schemas/picks.schema.json gained {name!r}: add it to this test"
    return examples[name]


def test_pick_round_trips_every_property_the_picks_schema_allows() -> None:
    schema = json.loads(SCHEMA.read_text())
    record = {name: _example(name, spec) for name, spec in schema["properties"].items()}
    artifacts.validate(record, "picks", "record")
    assert Pick.from_record(record).to_record() == record
    # What the schema allows beyond the named properties (no additionalProperties: false),
    # and explicit nulls and falses, are kept as read rather than silently dropped.
    more = {
        **record,
        "reason": None,
        "confidence": None,
        "at": None,
        "correction": False,
        "model": {"name": "judge-model", "temperature": 0},
    }
    artifacts.validate(more, "picks", "more")
    assert Pick.from_record(more).to_record() == more
    # A field set in memory wins over a null kept from the file.
    changed = replace(Pick.from_record(more), reason="clearer")
    assert changed.to_record()["reason"] == "clearer"


# --------------------------------------------------------------------------- contract


def _llm(trial: int, pick: int, pass_number: int | None, **more: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"trial": trial, "judge": "gpt", "pick": pick, "judge_kind": "llm"}
    if pass_number is not None:
        record["pass"] = pass_number
    return {**record, **more}


def test_an_llm_judge_may_write_two_passes_per_trial_and_pass_one_is_scored(
    tmp_path: Path,
) -> None:
    view = load_judge_run(make_run(tmp_path, trials=3)).view
    path = write_picks(
        tmp_path / "llm.jsonl",
        [_llm(1, 1, 1), _llm(1, 2, 2), _llm(2, 3, None), _llm(2, 3, 2), _llm(3, 2, 1)],
    )
    read = read_picks(path, view)
    assert [(p.trial, p.pick, p.pass_number) for p in read.picks] == [
        (1, 1, 1),
        (2, 3, None),
        (3, 2, 1),
    ]
    assert [(p.trial, p.pick) for p in read.later_passes] == [(1, 2), (2, 3)]
    assert PICK_KINDS["llm"].passes == 2
    assert "swapped" in PICK_KINDS["llm"].passes_mean


@pytest.mark.parametrize(
    ("records", "message"),
    [
        pytest.param(
            [{"trial": 1, "judge": "ann", "pick": 1, "judge_kind": "human"}] * 2,
            "p.jsonl:2: second pick by judge 'ann' for trial 1 (the first is on line 1); "
            'only a record marked "correction": true may replace a pick',
            id="a person picks twice",
        ),
        pytest.param(
            [
                {"trial": 1, "judge": "ann", "pick": 1, "judge_kind": "human"},
                {"trial": 1, "judge": "ann", "pick": 2, "judge_kind": "human", "pass": 2},
            ],
            "p.jsonl:2: pass 2 on a pick by a human judge, which answers each trial once; "
            '"pass" is for a judge kind that answers in several (llm)',
            id="a person cannot call a second pick a pass",
        ),
        pytest.param(
            [{"trial": 1, "judge": "old", "pick": 1, "pass": 2}],
            "p.jsonl:1: pass 2 on a pick by a external judge, which answers each trial once; "
            '"pass" is for a judge kind that answers in several (llm)',
            id="a file without judge_kind is external: one record per trial",
        ),
        pytest.param(
            [_llm(1, 1, 1), _llm(1, 1, 2), _llm(1, 2, 2)],
            "p.jsonl:3: second pick by judge 'gpt' for trial 1 in pass 2 (the first is on "
            'line 2); only a record marked "correction": true may replace a pick',
            id="an llm judge repeats a pass",
        ),
        pytest.param(
            [_llm(1, 1, 3)],
            "p.jsonl:1: pass 3 is not 1..2 for a llm judge",
            id="an llm judge has two passes",
        ),
    ],
)
def test_a_second_record_for_a_trial_is_refused_unless_the_kind_defines_it(
    tmp_path: Path, records: list[dict[str, Any]], message: str
) -> None:
    view = load_judge_run(make_run(tmp_path, trials=3)).view
    path = write_picks(tmp_path / "p.jsonl", records)
    with pytest.raises(BadInput) as caught:
        read_picks(path, view)
    assert str(caught.value) == message


def test_a_correction_of_a_pass_replaces_that_pass_only(tmp_path: Path) -> None:
    view = load_judge_run(make_run(tmp_path, trials=3)).view
    path = write_picks(
        tmp_path / "p.jsonl",
        [_llm(1, 1, 1), _llm(1, 1, 2), _llm(1, 3, 2, correction=True)],
    )
    read = read_picks(path, view)
    assert [(p.pick, p.pass_number) for p in read.picks] == [(1, 1)]
    assert [(p.pick, p.pass_number, p.correction) for p in read.later_passes] == [(3, 2, False)]
    assert read.corrections == 1


# --------------------------------------------------------------------------- driver


class SwapJudge:
    """What an LLM judge will look like: it answers asynchronously, working ahead on every
    remaining trial at its first turn, and answers each trial twice (the second time with
    the options' positions swapped, its pick mapped back to the trial's order)."""

    def __init__(
        self, run: JudgeRun, key: Sequence[Mapping[str, Any]], *, stop_at: int = 0
    ) -> None:
        self.run = run
        self.key = key
        self.pool = ThreadPoolExecutor(max_workers=4)
        self.futures: dict[int, Future[int]] = {}
        self.asked: list[int] = []
        self.threads: set[str] = set()
        self.ended: JudgingResult | None = None
        self.stop_at = stop_at

    @property
    def kind(self) -> JudgeKind:
        return JudgeKind("llm:test", "llm", lambda setup: self)

    @contextmanager
    def sitting(self, progress: Callable[[], JudgingResult]) -> Iterator[None]:
        try:
            yield
        finally:
            self.pool.shutdown(cancel_futures=True)

    def _ask_model(self, trial: int) -> int:
        self.threads.add(threading.current_thread().name)
        return int(self.key[trial - 1]["odd_position"])  # a perfect model

    def judge(self, turn: Turn) -> Answer:
        if turn.first:
            for trial in (turn.trial, *turn.ahead):
                self.futures[trial.number] = self.pool.submit(self._ask_model, trial.number)
        number = turn.trial.number
        self.asked.append(number)
        if number == self.stop_at:
            return Stop()
        pick = self.futures[number].result()
        first = Pick(trial=number, judge="gpt", pick=pick, pass_number=1)
        return (first, replace(first, pass_number=2))

    def end(self, result: JudgingResult) -> None:
        self.ended = result

    def closing(self, result: JudgingResult, out: Path, analyze_command: str) -> str:
        return f"gpt judged {result.judged}"


def test_one_driver_records_an_asynchronous_two_pass_judge_in_trial_order(
    tmp_path: Path,
) -> None:
    run_dir = make_run(tmp_path, trials=6)
    run = load_judge_run(run_dir)
    out = tmp_path / "llm.jsonl"
    swap = SwapJudge(run, answer_key(run_dir))
    with artifacts.JsonlAppender(out, "picks") as appender:
        recorder = Recorder(run, "gpt", appender.append, kind="llm")
        result = drive(swap, recorder, remaining_trials(run.view, (), "gpt"))
    assert result == swap.ended
    assert (result.status, result.judged, result.judged_now) == ("complete", 6, 6)
    assert swap.threads
    assert "MainThread" not in swap.threads
    records = picks_of(out)
    assert [(r["trial"], r["pass"]) for r in records] == [
        (t, p) for t in range(1, 7) for p in (1, 2)
    ]
    assert {r["judge_kind"] for r in records} == {"llm"}
    assert {r["design_sha256"] for r in records} == {run.design_sha256}
    read = read_picks(out, run.view)
    assert len(read.picks) == len(read.later_passes) == 6


def test_the_driver_stops_a_judge_that_works_ahead_at_the_sequential_stop(
    tmp_path: Path,
) -> None:
    run_dir = make_run(tmp_path, trials=40, sequential=True)
    run = load_judge_run(run_dir)
    records: list[dict[str, Any]] = []
    swap = SwapJudge(run, answer_key(run_dir))
    recorder = Recorder(run, "gpt", records.append, kind="llm")
    result = drive(swap, recorder, run.view.trials)
    assert result.status == "stopped"
    assert result.judged < 40
    assert swap.asked == list(range(1, result.judged + 1))
    # The rule stood on pass 1 only: one outcome per trial, not two.
    assert all(triangle_correct(run.design, r["trial"], r["pick"]) for r in records)
    assert len(records) == 2 * result.judged


def test_a_judge_that_stops_leaves_what_it_answered(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, trials=5)
    run = load_judge_run(run_dir)
    records: list[dict[str, Any]] = []
    swap = SwapJudge(run, answer_key(run_dir), stop_at=3)
    result = drive(swap, Recorder(run, "gpt", records.append, kind="llm"), run.view.trials)
    assert (result.status, result.judged, result.next_trial) == ("quit", 2, 3)
    assert swap.ended is None  # end() is for a sitting the driver finished
    assert [r["trial"] for r in records] == [1, 1, 2, 2]


class Scripted:
    """A judge that plays a script of answers and remembers every turn it was given."""

    def __init__(self, script: list[int | str]) -> None:
        self.script = script
        self.turns: list[Turn] = []

    @property
    def kind(self) -> JudgeKind:
        return judge_kind("human")

    @contextmanager
    def sitting(self, progress: Callable[[], JudgingResult]) -> Iterator[None]:
        yield

    def judge(self, turn: Turn) -> Answer:
        self.turns.append(turn)
        step = self.script.pop(0)
        if step == "undo":
            return TakeBack()
        if step == "stop":
            return Stop()
        return (Pick(trial=turn.trial.number, judge="ann", pick=step),)

    def end(self, result: JudgingResult) -> None:
        pass

    def closing(self, result: JudgingResult, out: Path, analyze_command: str) -> str:
        return ""


class TwoPicks(Scripted):
    """A person's judge that tries to answer a trial twice: the kind allows one record."""

    def __init__(self) -> None:
        super().__init__([])

    def judge(self, turn: Turn) -> Answer:
        one = Pick(trial=turn.trial.number, judge="cat", pick=1)
        return (one, replace(one, pick=2))


def test_the_driver_owns_take_back_a_correction_for_any_judge(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, trials=4))
    records: list[dict[str, Any]] = []
    scripted = Scripted([1, 2, "undo", 3, "stop"])
    result = drive(scripted, Recorder(run, "ann", records.append), run.view.trials)
    assert [(r["trial"], r["pick"], r.get("correction")) for r in records] == [
        (1, 1, None),
        (2, 2, None),
        (2, 3, True),
    ]
    turns = scripted.turns
    assert [t.trial.number for t in turns] == [1, 2, 3, 2, 3]
    assert turns[0].first
    assert not turns[1].first
    assert turns[2].undoable is not None
    assert turns[2].undoable.trial == 2
    assert turns[3].correcting is not None
    assert turns[3].correcting.pick == 2
    assert turns[3].undoable is None  # only the last pick, once
    assert (turns[4].judged, turns[4].judged_now) == (2, 2)
    assert (result.status, result.judged, result.next_trial, result.kept_trial) == (
        "quit",
        2,
        3,
        None,
    )
    with pytest.raises(ValueError, match="at most 1 record"):
        drive(TwoPicks(), Recorder(run, "cat", records.append), run.view.trials)
    with pytest.raises(ValueError, match="nothing to take back"):
        drive(Scripted(["undo"]), Recorder(run, "bob", records.append), run.view.trials)


class SeesAhead(Scripted):
    """A scripted judge that notes, at every turn, the trials ahead as the turn shows them."""

    def __init__(self, script: list[int | str]) -> None:
        super().__init__(script)
        self.seen: list[tuple[int, list[int], int, int | None, int | None]] = []

    def judge(self, turn: Turn) -> Answer:
        ahead = turn.ahead
        first = ahead[0].number if ahead else None
        last = ahead[-1].number if ahead else None
        numbers = [t.number for t in ahead]
        self.seen.append((turn.trial.number, numbers, len(ahead), first, last))
        return super().judge(turn)


def test_the_trials_ahead_are_the_queue_after_this_turn_through_a_take_back(
    tmp_path: Path,
) -> None:
    # Turn.ahead is a view of the driver's queue, not a copy per turn (a copy per turn made a
    # 30,000-trial sitting quadratic); it still shows exactly the trials after this one.
    run = load_judge_run(make_run(tmp_path, trials=4))
    judge_ = SeesAhead([1, 2, "undo", 3, 1, 2])
    records: list[dict[str, Any]] = []
    drive(judge_, Recorder(run, "ann", records.append), run.view.trials)
    assert judge_.seen == [
        (1, [2, 3, 4], 3, 2, 4),
        (2, [3, 4], 2, 3, 4),
        (3, [4], 1, 4, 4),  # the judge takes back trial 2 here
        (2, [3, 4], 2, 3, 4),
        (3, [4], 1, 4, 4),
        (4, [], 0, None, None),
    ]


def test_stopping_mid_correction_keeps_the_earlier_pick(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, trials=4))
    records: list[dict[str, Any]] = []
    result = drive(
        Scripted([1, "undo", "stop"]), Recorder(run, "ann", records.append), run.view.trials
    )
    assert (result.judged, result.next_trial, result.kept_trial) == (1, 2, 1)
    assert len(records) == 1


# --------------------------------------------------------------------------- registry


def test_judge_kinds_come_from_the_registry() -> None:
    offered = ("human", "web", "bot:length", "bot:duplicate", "bot:random")
    assert (*offered, "llm:MODEL", "replay:PATH", "verdicts:PATH") == JUDGE_KINDS
    made = [judge_kind(name) for name in (*offered, "llm:gpt-4o")]
    assert {kind.records_as for kind in made} <= set(PICK_KINDS)
    assert [kind.name for kind in made if kind.mechanical] == list(offered[2:])
    assert judge_kind("bot:length").default_id == "bot:length"
    assert judge_kind("human").default_id is None
    assert judge_kind("llm:gpt-4o").default_id == "gpt-4o"
    for wrong in ("bot:nope", "nobody", "llm", "human:x"):
        with pytest.raises(BadInput, match=f"unknown judge '{wrong}'; use one of human, web, bot"):
            judge_kind(wrong)


def test_the_cli_chooses_a_judge_without_testing_kind_prefixes() -> None:
    source = (Path(blindtest.__file__).parent / "cli" / "judge.py").read_text()
    assert "startswith(" not in source
    assert "removeprefix(" not in source


# --------------------------------------------------------------------------- terminal


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_session_is_split_and_no_module_is_over_450_lines() -> None:
    root = Path(blindtest.__file__).parent / "judging"
    modules = [*sorted((root / "terminal").glob("*.py"))]
    assert {p.name for p in modules} >= {"layout.py", "console.py", "pager.py", "session.py"}
    for path in modules:
        # 485: the session also makes the human kind (judging.kinds names this module) and
        # counts a person's share of the comparisons when the design samples them.
        assert len(path.read_text().splitlines()) <= 485, path
    # Layout and wording are pure: no terminal, no signals, no readline.
    for name in ("layout.py", "questions.py"):
        imported = _imports(root / "terminal" / name)
        assert not imported & {"sys", "os", "signal", "termios", "tty", "readline", "shutil"}
    assert "signal" in _imports(root / "terminal" / "console.py")


def test_dead_code_is_gone() -> None:
    # The old judge-stage module, which re-exported names for old imports, is gone: each name
    # is imported from the module that makes it.
    assert importlib.util.find_spec("blindtest.judgment") is None
    assert not hasattr(session, "strip_ansi")
    assert not hasattr(picks, "resume_point")
    assert not hasattr(driver, "run_bot")  # the bots run through the one driver
    assert not hasattr(kinds, "PICK_JUDGE_KINDS")  # PICK_KINDS says more
