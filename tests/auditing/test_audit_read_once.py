"""bt-audit reads each answer of a triangle run once for the census, the duplicate spotter and
the length bot, and gets what each of them gets reading the answers on its own."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from blindtest.auditing import build as auditing
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


@pytest.mark.parametrize("protocol", ["pair", "preference"])
def test_only_a_triangle_run_is_read_in_one_pass(
    tmp_path: Path, protocol: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = make_run(tmp_path, protocol, 12, text=markdown)
    design, trials, responses = _inputs(run)

    def refuse(*_: object) -> None:
        raise AssertionError("a two-option run has no duplicate spotter to share a reading")

    monkeypatch.setattr(auditing, "read_answers", refuse)
    document = auditing.build_audit(design, artifacts.load_design(run).sha256, trials, responses)
    assert document["bots"]["duplicate"]["applicable"] is False
