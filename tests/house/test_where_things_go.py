"""docs/development.md says where a new judge kind and a new protocol go. These tests add a
made-up one of each exactly where it says and watch it reach every place a user meets it.

- A judge kind is one module (``judge_kind(value) -> JudgeKind``) and one line in the
  registry, :data:`blindtest.model.judge_kinds.REGISTRY`. ``first`` always picks the first
  option: a bot of its own that the judging stage runs, ``bt-judge --judge first`` offers and
  the analysis scores.
- A protocol (here one that keeps an existing statistical model: the triangle's, under other
  words) is one ``Protocol`` in :data:`blindtest.model.protocols.PROTOCOLS` and one line in
  the analysis's table (``analysis.report.ANALYSES``). ``triad`` reaches the design, bt-plan,
  the analysis, the result screen and the terminal. (What a protocol with statistics of its
  own adds beyond that is listed in docs/development.md; the schemas name the protocols, so
  this test builds and reads the design in memory rather than writing it to disk.)

The registry's derived tables (``KINDS``, ``JUDGE_KINDS``) are built from ``REGISTRY`` when the
module loads; the fixtures rebuild them as a module edited by hand would on its next import.
"""

from __future__ import annotations

import dataclasses
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import blindtest
from blindtest.analysis import report as analysis_report
from blindtest.errors import BadInput
from blindtest.judging.driver import judge_kind
from blindtest.judging.terminal import questions
from blindtest.model import judge_kinds
from blindtest.model.picks import Pick
from blindtest.model.protocols import PROTOCOLS, TRIANGLE, Protocol
from blindtest.planning import rows as planning
from blindtest.present import render
from blindtest.rundir import artifacts

from conftest import Invoke
from judge_runs import answer_key, make_run, picks_of
from report_runs import make_design

# --------------------------------------------------------------------------- a judge kind

#: The one module a new judge kind is (docs/development.md, "A judge kind").
FIRST_JUDGE = '''
"""A made-up judge kind: ``--judge first`` always picks the first option."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from blindtest.judging.driver import Answer, Judge, JudgeKind, JudgeSetup, JudgingResult, Turn
from blindtest.model.picks import Pick
from blindtest.model.protocols import PROTOCOLS


class FirstJudge:
    def __init__(self, setup: JudgeSetup) -> None:
        self.judge_id = setup.judge_id
        self.first = (PROTOCOLS[setup.run.view.protocol].picks or ("fox",))[0]

    @property
    def kind(self) -> JudgeKind:
        return judge_kind("first")

    @contextmanager
    def sitting(self, progress: Callable[[], JudgingResult]) -> Iterator[None]:
        yield

    def judge(self, turn: Turn) -> Answer:
        return (Pick(turn.trial.number, self.judge_id, self.first, judge_kind="bot"),)

    def end(self, result: JudgingResult) -> None:
        pass

    def closing(self, result: JudgingResult, out: Path, analyze_command: str) -> str:
        return f"first judged {result.judged_now} trials into {out}. Run {analyze_command}."


def judge_kind(value: str) -> JudgeKind:
    def make(setup: JudgeSetup) -> Judge:
        return FirstJudge(setup)

    return JudgeKind(value, "bot", make, default_id=value)
'''

#: The one registry line.
FIRST = judge_kinds.Kind("first", "bot", "made_up_first_judge", "always the first option")


@pytest.fixture
def first_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    package = tmp_path / "site"
    package.mkdir()
    (package / "made_up_first_judge.py").write_text(textwrap.dedent(FIRST_JUDGE))
    monkeypatch.syspath_prepend(str(package))
    registry = (*judge_kinds.REGISTRY[:-1], FIRST, judge_kinds.REGISTRY[-1])
    monkeypatch.setattr(judge_kinds, "REGISTRY", registry)
    monkeypatch.setitem(judge_kinds.KINDS, FIRST.name, FIRST)
    offered = tuple(value for kind in registry for value in kind.offered)
    monkeypatch.setattr(judge_kinds, "JUDGE_KINDS", offered)
    yield
    sys.modules.pop("made_up_first_judge", None)


@pytest.mark.usefixtures("first_kind")
def test_a_made_up_judge_kind_is_offered_by_name_and_in_the_help() -> None:
    assert "first (always the first option)" in judge_kinds.judge_help()
    assert "first" in judge_kinds.JUDGE_KINDS
    made = judge_kind("first")
    assert (made.name, made.records_as, made.mechanical, made.default_id) == (
        "first",
        "bot",
        True,
        "first",
    )
    with pytest.raises(BadInput, match=r"unknown judge 'last'; use one of .*\bfirst\b"):
        judge_kind("last")


@pytest.mark.usefixtures("first_kind")
def test_a_made_up_judge_kind_judges_a_run_that_the_analysis_scores(tmp_path: Path) -> None:
    run = make_run(tmp_path, trials=12)
    sat = blindtest.judge(run, "first")
    assert (sat.judged, sat.total, sat.complete, sat.kind) == (12, 12, True, "first")
    assert sat.closing.startswith(f"first judged 12 trials into {run / artifacts.PICKS}. Run ")
    written = picks_of(run / artifacts.PICKS)
    assert {(p["judge"], p["judge_kind"], p["pick"]) for p in written} == {("first", "bot", 1)}
    analysis = blindtest.analyze(run)
    odd_first = sum(entry["odd_position"] == 1 for entry in answer_key(run))
    assert (analysis.report["n"], analysis.report["correct"]) == (12, odd_first)
    assert analysis.report["judges"] == ["first"]


@pytest.mark.usefixtures("first_kind")
def test_a_made_up_judge_kind_runs_from_bt_judge(tmp_path: Path, invoke: Invoke) -> None:
    run = make_run(tmp_path, trials=6)
    out = run / "picks-first.jsonl"
    result = invoke("judge", run, "--judge", "first", "--out", out)
    assert result.exit_code == 0, result.stderr
    said = " ".join(result.stdout.split())  # wrapped to the terminal between words
    assert said.startswith(f"first judged 6 trials into {out}. Run "), said
    assert said.endswith(f"--picks {out}.")
    assert len(picks_of(out)) == 6
    again = invoke("judge", run, "--judge", "first", "--out", out)  # a bot's file: --force
    assert again.exit_code == 2
    assert again.stderr.splitlines() == [
        f"blindtest: error: {out} already exists; use --force to replace it, or --out FILE "
        "to write this judge's picks to a file of its own"
    ]


# --------------------------------------------------------------------------- a protocol


@pytest.fixture
def triad(monkeypatch: pytest.MonkeyPatch) -> Protocol:
    """The one ``Protocol`` (the triangle's model and statistics, its own words) and the one
    line of the analysis's table."""
    variant = dataclasses.replace(
        TRIANGLE,
        name="triad",
        question="Which response stands apart?",
        task="Find the response that stands apart.",
        title="triad test",
        unsure="",
        unit="hits",
        unit_words="hits",
        default_pcs=("0.55", "0.65"),
    )
    monkeypatch.setitem(PROTOCOLS, variant.name, variant)
    analyses = analysis_report.ANALYSES
    monkeypatch.setitem(analyses, variant.name, analyses["triangle"])
    return variant


def test_a_made_up_protocol_reaches_design_plan_analysis_screen_and_terminal(
    triad: Protocol,
) -> None:
    design = make_design(triad.name, 12)
    assert str(design["protocol"]) == "triad"  # a name the schemas do not know yet
    assert design["judging"]["question"] == "Which response stands apart?"
    assert [triad.slot_sides(e) for e in design["arrangement"]] == [
        TRIANGLE.slot_sides(e) for e in design["arrangement"]
    ]

    plan = planning.build_plan(triad.name, [12], alpha=0.05)
    assert [v.text for v in plan.values] == ["0.55", "0.65"]
    assert planning.format_plan(plan).startswith("triad design, exact binomial against chance")

    odd = [entry["odd_position"] for entry in design["arrangement"]]
    picks = [
        Pick(t, "ann", odd[t - 1] if t <= 10 else odd[t - 1] % 3 + 1, judge_kind="human")
        for t in range(1, 13)
    ]
    built = analysis_report.build_report(design, "ab" * 32, picks, inputs={})
    report = built.report
    assert (report["protocol"], report["n"], report["correct"]) == ("triad", 12, 10)
    screen = render.format_summary(report, width=80)
    assert "10 of 12 hits" in screen

    assert questions.help_text(triad.name, sequential=False)[0] == triad.task
    assert questions.parse_answer(triad.name, "2", None) == 2
    assert questions.answer_keys(triad.name, None) == "1, 2 or 3"
    assert triad.pick_problem(4) == "pick 4 is out of range for a triad run (1, 2 or 3)"
