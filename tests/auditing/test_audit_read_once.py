"""bt-audit reads each answer of a two-sided run once for the census, the length bot and (in a
triangle run) the duplicate spotter, and gets what each of them gets reading the answers on
its own."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from blindtest.auditing import build as auditing
from blindtest.model.census import take_census
from blindtest.model.picks import trials_from_records
from blindtest.model.slots import Slot, SlotState, plan_slots
from blindtest.rundir import artifacts

from report_runs import make_run

BODIES = (
    "## Plan\n\nStart small \u2014 then check the trade-offs.\n\n- **Budget** \u2014 keep it.\n",
    "Start small, then check the trade-offs in 2024.\nKeep the budget.",
    "1. Budget\n2. Timeline -- later\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    "I can\u2019t help with that.",
    "```\ncode -- kept\n```\nAfter the code: **done** \U0001f680",
)


def markdown(slot: Slot, entry: Mapping[str, Any]) -> str:
    """Model-like answers; in every third trial the doubled side's two answers are the same,
    so the duplicate spotter fires, and the lengths differ so the length bot has a tell."""
    body = BODIES[(slot.trial + (slot.side == "A")) % len(BODIES)]
    if slot.trial % 3:
        body += f" (draw {slot.slot})"
    return body * (1 + (slot.side == "B"))


def _inputs(run: Path) -> tuple[Any, list[Any], list[Any]]:
    design = artifacts.load_design(run).design
    trials = trials_from_records(
        artifacts.read_jsonl(run / artifacts.TRIALS, "trials").records, design
    )
    return design, trials, artifacts.read_jsonl(run / artifacts.RESPONSES, "responses").records


def test_one_reading_gives_each_bot_and_the_census_what_they_get_alone(tmp_path: Path) -> None:
    run = make_run(tmp_path, "triangle", 30, text=markdown)
    design, trials, responses = _inputs(run)
    censuses, made = auditing.read_answers(design, trials)
    for kind in auditing.BOT_KINDS:
        alone = auditing.replay_bot(design, trials, kind)
        assert auditing.replay_bot(design, trials, kind, made[kind]) == alone
    assert auditing.replay_bot(design, trials, "duplicate")["fired"] >= 10
    state, slots = SlotState.from_rows(responses), plan_slots(design)
    alone = auditing.census_by_model(design, trials, state, slots)
    assert auditing.census_by_model(design, trials, state, slots, censuses) == alone
    assert alone["A"]["totals"]["bullets"] > 0


def test_build_audit_takes_the_slot_state_it_is_given(tmp_path: Path) -> None:
    run = make_run(tmp_path, "triangle", 12, text=markdown)
    design, trials, responses = _inputs(run)
    sha256 = artifacts.load_design(run).sha256
    own = auditing.build_audit(design, sha256, trials, responses)
    given = auditing.build_audit(
        design, sha256, trials, responses, state=SlotState.from_rows(responses)
    )
    assert given == own


def two_sided(slot: Slot, entry: Mapping[str, Any]) -> str:
    """Model-like answers of two sides: equal in every fourth trial (a tie the pair bot breaks
    with its generator, the preference bot calls a tie), otherwise one side's twice as long."""
    body = BODIES[slot.trial % len(BODIES)]
    if slot.trial % 4 == 0:
        return body
    longer = "B" if slot.trial % 3 else "A"
    return body * (1 + (slot.side == longer))


@pytest.mark.parametrize("protocol", ["pair", "preference"])
def test_one_reading_of_a_two_option_run_gives_the_length_bot_and_census_what_they_get_alone(
    tmp_path: Path, protocol: str
) -> None:
    run = make_run(tmp_path, protocol, 40, text=two_sided)
    design, trials, responses = _inputs(run)
    censuses, made = auditing.read_answers(design, trials)
    assert set(made) == {"length"}  # a duplicate spotter has no two-option form
    alone = auditing.replay_bot(design, trials, "length")
    assert auditing.replay_bot(design, trials, "length", made["length"]) == alone
    if protocol == "preference":  # equal answers in trials 4, 8, ..., 40
        assert [pick["pick"] for pick in alone["picks"]].count("tie") == 10
    state, slots = SlotState.from_rows(responses), plan_slots(design)
    alone = auditing.census_by_model(design, trials, state, slots)
    assert auditing.census_by_model(design, trials, state, slots, censuses) == alone


@pytest.mark.parametrize("protocol", ["pair", "preference"])
def test_a_two_option_audit_counts_each_answers_words_once(
    tmp_path: Path, protocol: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = make_run(tmp_path, protocol, 12, text=two_sided)
    design, trials, responses = _inputs(run)
    sha256 = artifacts.load_design(run).sha256
    before = auditing.build_audit(design, sha256, trials, responses)
    taken = []

    def census(text: Any) -> Any:
        taken.append(text)
        return take_census(text)

    def refuse(*_: object) -> None:
        raise AssertionError("the length bot counted the words again")

    monkeypatch.setattr(auditing, "take_census", census)
    monkeypatch.setattr(auditing, "bot_pick", refuse)
    monkeypatch.setattr(auditing, "count_words", refuse)
    document = auditing.build_audit(design, sha256, trials, responses)
    assert len(taken) == 2 * len(trials)  # each answer once, by the census
    assert document == before
    assert document["bots"]["duplicate"]["applicable"] is False
