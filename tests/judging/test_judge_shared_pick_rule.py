"""The terminal and the judging page build a pick through one shared rule per protocol
(``blindtest.judging.answers``): the same answers give the same record on either screen, and
an answer the rule refuses is refused in the same words whichever screen sent it."""

from __future__ import annotations

import io
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from blindtest.judging.answers import Answered, Refusal, pick_from_answer
from blindtest.judging.driver import Turn
from blindtest.judging.terminal.session import Console, Session
from blindtest.judging.web.reviewer import Refused, Reviewer
from blindtest.model.picks import JudgeRun, Pick, load_judge_run
from blindtest.model.protocols import PROTOCOLS

from judge_runs import make_run

AT = "2026-12-03T10:00:00+00:00"
REVIEW = "Would you ship it?"
ERROR = "Does it contain an error?"


def _run(tmp_path: Path, protocol: str, **options: Any) -> JudgeRun:
    return load_judge_run(make_run(tmp_path, protocol, trials=3, **options))


def _turns(run: JudgeRun) -> list[Turn]:
    trials = run.view.trials
    return [
        Turn(trial, trials[n + 1 :], judged=n, judged_now=n, first=n == 0)
        for n, trial in enumerate(trials)
    ]


def _terminal(run: JudgeRun, typed: Sequence[str]) -> list[Pick]:
    """The picks a scripted terminal session hands the driver, trial by trial."""
    stdin = io.StringIO("".join(f"{line}\n" for line in typed))
    session = Session(
        run.view, "ann", Console(stdin, io.StringIO(), interactive=False), clock=lambda: AT
    )
    picks: list[Pick] = []
    for turn in _turns(run):
        answer = session.judge(turn)
        assert isinstance(answer, tuple), answer
        picks.extend(answer)
    assert stdin.read() == "", "the script typed more than the session asked"
    return picks


def _web(run: JudgeRun, forms: Sequence[Mapping[str, str]]) -> list[object]:
    """What the page's reviewer makes of each form: the pick it hands the driver, or the
    ``Refused`` the page shows before the same trial is answered again. As the server's
    threads do it: the driver waits in ``ask``, the page submits."""
    reviewer = Reviewer(run.view, "ann", "token", clock=lambda: AT)
    turns = iter(_turns(run))
    results: list[object] = []
    asking: threading.Thread | None = None
    handed: list[object] = []
    turn: Turn | None = None
    for form in forms:
        if asking is None:
            turn = next(turns)
            asking = threading.Thread(target=lambda t=turn: handed.append(reviewer.ask(t)))
            asking.start()
            mark = reviewer.screen().mark  # the trial is drawn
        assert turn is not None
        made = reviewer.submit({"trial": str(turn.trial.number), "mark": mark, **form})
        if isinstance(made, Refused):
            results.append(made)
            continue
        asking.join()
        asking = None
        results.append(handed.pop())
    if asking is not None:
        reviewer.stop()
        asking.join()
    return results


CASES = {
    "triangle": (
        {},
        ["2", "3", "1"],
        [{"pick": "2"}, {"pick": "3"}, {"pick": "1"}],
    ),
    "pair": (
        {},
        # nicknames first, then option 1's nickname: whole, by its key, whole in capitals
        ["fox", "owl", "fox", "o", "OWL"],
        [{"pick": "1", "nick1": "fox", "nick2": "owl"}, {"pick": "2"}, {"pick": "2"}],
    ),
    "preference": (
        {
            "extra_questions": (REVIEW,),
            "extra_questions_per_option": (ERROR,),
            "require_reason": False,
        },
        # pick, reason (Enter skips), the per-option question for option 1 and 2, then --ask
        ["l", "clearer", "y", "n", "yes", "2", "", "n", "n", "no", "t", "same", "y", "y", "y"],
        [
            {"pick": "left", "reason": "clearer", "e1-left": "yes", "e1-right": "no"}
            | {"q1": "yes"},
            {"pick": "right", "e1-left": "no", "e1-right": "no", "q1": "no"},
            {"pick": "tie", "reason": "same", "e1-left": "yes", "e1-right": "yes", "q1": "yes"},
        ],
    ),
}


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_the_same_answers_make_the_same_record_in_the_terminal_and_on_the_page(
    tmp_path: Path, protocol: str
) -> None:
    options, typed, forms = CASES[protocol]
    run = _run(tmp_path, protocol, **options)
    terminal = _terminal(run, typed)
    web = _web(run, forms)
    assert [p.to_record() for p in terminal] == [p.to_record() for p in web if isinstance(p, Pick)]
    assert len(terminal) == run.view.total
    # and the record says what was answered
    if protocol == "pair":
        assert [p.pick for p in terminal] == ["fox", "owl", "owl"]
        assert {p.nicknames for p in terminal} == {("fox", "owl")}
    if protocol == "preference":
        first = terminal[0]
        assert (first.pick, first.reason) == ("left", "clearer")
        assert first.answers == {ERROR: {"left": True, "right": False}, REVIEW: True}
        assert terminal[1].reason is None


def test_every_protocol_has_a_case_here() -> None:
    assert set(CASES) == set(PROTOCOLS)


@pytest.mark.parametrize(
    ("protocol", "form", "message"),
    [
        ("triangle", {"pick": "4"}, "Pick option 1, 2 or 3."),
        ("pair", {"pick": "3", "nick1": "fox", "nick2": "owl"},
         "Say which nickname option 1 carries."),
        ("pair", {"pick": "1", "nick1": "fox", "nick2": "Fox"},
         "Nicknames: the two nicknames must differ."),
        ("pair", {"pick": "1", "nick1": "q", "nick2": "owl"},
         "Nicknames: 'q' is a key in this session; choose a word such as fox or owl."),
        ("preference", {"pick": "up"}, "Choose left, right, tie or both bad."),
        ("preference", {"pick": "left", "e1-left": "yes", "q1": "yes"},
         f"Answer yes or no for the left and the right: {ERROR}"),
        ("preference", {"pick": "left", "e1-left": "yes", "e1-right": "no"},
         f"Answer yes or no: {REVIEW}"),
    ],
)  # fmt: skip
def test_the_page_refuses_in_the_words_of_the_shared_rule(
    tmp_path: Path, protocol: str, form: dict[str, str], message: str
) -> None:
    options = CASES[protocol][0]
    run = _run(tmp_path, protocol, **options)
    (refused,) = _web(run, [form])
    assert isinstance(refused, Refused)
    assert refused.message == message
    said = Answered(
        choice=form["pick"],
        extras={
            REVIEW: form.get("q1", ""),
            ERROR: {k: form.get(f"e1-{k}", "") for k in ("left", "right")},
        },
        nicknames=(form["nick1"], form["nick2"]) if "nick1" in form else None,
        naming="nick1" in form,
    )
    assert pick_from_answer(run.view, 1, "ann", said, at=AT) == Refusal(message)


def test_a_required_reason_is_refused_alike_and_the_terminal_asks_until_it_is_given(
    tmp_path: Path,
) -> None:
    run = _run(tmp_path, "preference", require_reason=True)
    (refused,) = _web(run, [{"pick": "left", "reason": "  "}])
    assert isinstance(refused, Refused)
    said = Answered("left", reason=" \t")
    assert pick_from_answer(run.view, 1, "ann", said, at=AT) == Refusal(refused.message)
    assert refused.message == "Give a one-line reason for your choice."
    # The terminal asks again at its prompt (its own words, as before) until a reason comes.
    stdin = io.StringIO("l\n\nterse\n")
    out = io.StringIO()
    session = Session(run.view, "ann", Console(stdin, out, interactive=False), clock=lambda: AT)
    (pick,) = session.judge(_turns(run)[0])  # type: ignore[misc]
    assert "A one-line reason is needed (trial 1 of 3)." in out.getvalue()
    assert pick == pick_from_answer(run.view, 1, "ann", Answered("left", "terse"), at=AT)


def test_a_pair_answer_names_the_nickname_by_name_or_by_its_place(tmp_path: Path) -> None:
    run = _run(tmp_path, "pair")
    names = ("fox", "owl")
    by_place = pick_from_answer(run.view, 2, "ann", Answered("2", nicknames=names), at=AT)
    by_name = pick_from_answer(run.view, 2, "ann", Answered("owl", nicknames=names), at=AT)
    assert by_place == by_name == Pick(trial=2, judge="ann", pick="owl", at=AT, nicknames=names)
    unnamed = pick_from_answer(run.view, 2, "ann", Answered("1"), at=AT)
    assert isinstance(unnamed, Refusal)
    assert unnamed.message.startswith("Nicknames:")


def test_a_reason_or_extra_answer_is_no_part_of_a_pick_that_prefers_nothing(
    tmp_path: Path,
) -> None:
    run = _run(tmp_path, "triangle")
    said = Answered("3", reason="the odd one", extras={REVIEW: True})
    assert pick_from_answer(run.view, 1, "ann", said, at=None) == Pick(trial=1, judge="ann", pick=3)


def test_nicknames_are_checked_when_chosen_and_kept_as_recorded_after(tmp_path: Path) -> None:
    # A judge resuming keeps the nicknames its earlier picks carry, even ones a new choice
    # could not make now; a choice made with this answer is checked.
    run = _run(tmp_path, "pair")
    kept = ("Fox", "fox")
    resumed = pick_from_answer(run.view, 2, "ann", Answered("fox", nicknames=kept), at=AT)
    assert isinstance(resumed, Pick)
    assert (resumed.pick, resumed.nicknames) == ("fox", kept)
    chosen = Answered("fox", nicknames=kept, naming=True)
    assert pick_from_answer(run.view, 2, "ann", chosen, at=AT) == Refusal(
        "Nicknames: the two nicknames must differ."
    )
