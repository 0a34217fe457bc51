"""The slot model shared by the stages: which slots a design needs, what ``responses.jsonl``
says about them, and the blinded view built from the answers. Pure: opens no file and no
socket, and imports no stage module (generate, audit, analyze and verify all import it).

Slots. Triangle trial ``t`` has slots 1..3, the display positions: the slot at the design's
``odd_position`` comes from the non-doubled side, the other two are independent draws from the
doubled side. Pair and preference trials have slot 1 (left) and slot 2 (right). Every slot is
one request; the per-slot ``seed`` is derived from the design seed so servers that honour it
give each slot its own draw.

Several candidates. A candidate answers each prompt once: only the slot that owns the answer
(:func:`blindtest.model.candidates.answer_owners`: the first comparison showing it, at its position
there) is a slot to fetch, its row's ``side`` the candidate's name; every comparison reads its
two options through the owners.

Planted comparisons (the sensitivity check, :mod:`blindtest.model.planted`). The champion
answers a planted prompt once, at the ``original`` position (with candidates, the slot its
comparison owns); the other position shows a degraded copy of that answer, made when the
blinded view is built, never fetched.

Resume. A slot counts as answered once a row with ``status: "ok"`` exists for it (stage
``generate``; with laundering also stage ``launder``); a later failure row cannot undo it.
Failure rows are explicit and the slot stays pending; the latest row for a slot wins, and of
several answers the latest. Whether an answer still answers what its slot asks (the request
each row records) is bt-generate's and bt-verify's to check: this module needs no design.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, cast

from blindtest.errors import BadInput
from blindtest.model.candidates import comparison_sides, shares_answers
from blindtest.model.normalize import truncate_match
from blindtest.model.planted import degrade, degraded_position, planted_of
from blindtest.model.protocols import protocol_of
from blindtest.rundir.artifacts import Columns, JsonObject, schema_tag
from blindtest.rundir.types import DesignRecord, ResponseRow, TrialRecord

__all__ = [
    "LAUNDER",
    "Slot",
    "SlotState",
    "Work",
    "answer_slots",
    "build_trials_view",
    "check_rows_match_design",
    "comparisons",
    "displayed_texts",
    "iter_slots",
    "iter_trials_view",
    "original_text",
    "owners_of",
    "pending_work",
    "plan_slots",
    "slot_seed",
]

#: The stage (and role) of the laundering rewrite of a slot's answer.
LAUNDER = "launder"


@dataclass(frozen=True, slots=True)
class Slot:
    trial: int
    slot: int
    side: str
    prompt_id: str


@dataclass(frozen=True, slots=True)
class Work:
    """One request to make: generate a slot, or launder its answer (``source`` is the text)."""

    slot: Slot
    stage: str
    source: str | None = None


def plan_slots(design: DesignRecord) -> list[Slot]:
    """Every slot the design needs, in trial then slot order (with candidates: the owner
    slots only, one per answer)."""
    return list(iter_slots(design))


def comparisons(design: DesignRecord) -> Iterator[tuple[int, str, str, str]]:
    """(trial, prompt_id, left, right) of each comparison of a design of candidates, in
    arrangement order (a lean design's columns are read whole, not entry by entry)."""
    arrangement: Any = design["arrangement"]
    if isinstance(arrangement, Columns):
        keys = ("trial", "prompt_id", "left", "right")
        return zip(*(arrangement.values_of(key) for key in keys), strict=True)
    return ((entry["trial"], entry["prompt_id"], *comparison_sides(entry)) for entry in arrangement)


#: The arrangement whose answer owners were last worked out, and those owners: every stage
#: asks several times per run (slots to fetch, rows that fit, the blinded view).
_OWNERS: list[tuple[Any, int, dict[tuple[str, str], tuple[int, int]]]] = []


def owners_of(design: DesignRecord) -> dict[tuple[str, str], tuple[int, int]]:
    """:func:`blindtest.model.candidates.answer_owners`, worked out once per arrangement."""
    arrangement = design["arrangement"]
    if _OWNERS and _OWNERS[0][0] is arrangement and _OWNERS[0][1] == len(arrangement):
        return _OWNERS[0][2]
    owners: dict[tuple[str, str], tuple[int, int]] = {}
    for trial, prompt_id, left, right in comparisons(design):
        owners.setdefault((str(prompt_id), left), (trial, 1))
        owners.setdefault((str(prompt_id), right), (trial, 2))
    _OWNERS[:] = [(arrangement, len(arrangement), owners)]
    return owners


def iter_slots(design: DesignRecord) -> Iterator[Slot]:
    """``plan_slots``, one trial at a time: a 90,000-slot design is never held as a list."""
    if shares_answers(design):
        owners = owners_of(design)
        for trial, prompt_id, left, right in comparisons(design):
            if owners[(prompt_id, left)] == (trial, 1):
                yield Slot(trial, 1, left, prompt_id)
            if owners[(prompt_id, right)] == (trial, 2):
                yield Slot(trial, 2, right, prompt_id)
        return
    protocol = protocol_of(design)
    for entry in design["arrangement"]:
        sides = protocol.slot_sides(entry)  # the side at each position, per protocol
        planted = planted_of(entry)
        for position, side in enumerate(sides, start=1):
            if planted is not None and position != int(planted["original"]):
                continue  # the degraded copy is made from the answer, never asked for
            yield Slot(entry["trial"], position, side, entry["prompt_id"])


def answer_slots(design: DesignRecord) -> Callable[[Mapping[str, Any]], list[tuple[int, int]]]:
    """Per arrangement entry, the (trial, slot) whose row holds each option it shows, in
    display order: its own slots, or with candidates the owners of its two answers."""
    if not shares_answers(design):
        n_slots = protocol_of(design).options

        def own(entry: Mapping[str, Any]) -> list[tuple[int, int]]:
            planted = planted_of(entry)
            if planted is not None:  # both positions read the one answer (one is degraded)
                return [(entry["trial"], int(planted["original"]))] * n_slots
            return [(entry["trial"], slot) for slot in range(1, n_slots + 1)]

        return own
    owners = owners_of(design)
    return lambda entry: [
        owners[(str(entry["prompt_id"]), side)] for side in comparison_sides(entry)
    ]


def slot_seed(design_seed: str, trial: int, slot: int) -> int:
    """Per-slot request seed: the first 31 bits of SHA-256("blindtest/slot-seed@1", seed,
    trial, slot), so it fits every server's integer type."""
    material = f"blindtest/slot-seed@1\x00{design_seed}\x00{trial}\x00{slot}".encode()
    return int.from_bytes(hashlib.sha256(material).digest()[:4], "big") & 0x7FFFFFFF


def _key(row: Mapping[str, Any]) -> tuple[int, int]:
    return row["trial"], row["slot"]


@dataclass(frozen=True, slots=True)
class SlotState:
    """The latest row per slot and stage, from ``responses.jsonl``."""

    generated: dict[tuple[int, int], ResponseRow]
    laundered: dict[tuple[int, int], ResponseRow]

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]]) -> SlotState:
        """From the rows of a validated ``responses.jsonl``."""
        state = cls({}, {})
        for row in rows:
            state.record(row)
        return state

    def record(self, row: Mapping[str, Any]) -> None:
        """Take one more row (in file order): an answered slot stays answered, so a later
        failure row cannot undo it; a later answer replaces an earlier one (a slot asked
        again after its request changed: ``bt-generate --refetch-changed``), and the
        laundering of the answer it replaces no longer counts. ``row`` is a ``ResponseRow``,
        as built or as read from a validated file (plain JSON, hence the cast)."""
        typed = cast(ResponseRow, row)
        launder = typed.get("stage") == LAUNDER
        target = self.laundered if launder else self.generated
        key = _key(typed)
        previous = target.get(key)
        if typed["status"] == "ok":
            if not launder and previous is not None and previous["status"] == "ok":
                self.laundered.pop(key, None)
            target[key] = typed
        elif previous is None or previous["status"] != "ok":
            target[key] = typed

    def answered(self, slot: Slot, stage: str) -> ResponseRow | None:
        rows = self.laundered if stage == LAUNDER else self.generated
        row = rows.get((slot.trial, slot.slot))
        return row if row is not None and row["status"] == "ok" else None


def check_rows_match_design(design: DesignRecord, rows: Iterable[JsonObject]) -> None:
    """Refuse a responses file whose rows do not fit this design's slots (with candidates:
    a row at a slot that owns no answer, or naming another candidate, does not fit)."""
    expected = {(s.trial, s.slot): s.side for s in plan_slots(design)}
    for number, row in enumerate(rows, start=1):
        side = expected.get(_key(row))
        if side is None or side != row["side"]:
            raise BadInput(
                f"responses.jsonl row {number} (trial {row['trial']}, slot {row['slot']}, "
                f"side {row['side']}) does not belong to this design; use a new run directory"
            )


def original_text(row: Mapping[str, Any]) -> str:
    """The text as the endpoint returned it, before any normalization."""
    return str(row.get("raw_text", row["text"]))


def pending_work(design: DesignRecord, state: SlotState) -> list[Work]:
    """What is still missing: slots without an answer, and answers not yet laundered."""
    launder = design["normalization"]["launder"] is not None
    work = []
    for slot in plan_slots(design):
        generated = state.answered(slot, "generate")
        if generated is None:
            work.append(Work(slot, "generate"))
        elif launder and state.answered(slot, LAUNDER) is None:
            work.append(Work(slot, LAUNDER, original_text(generated)))
    return work


class AnsweredRows(Protocol):
    """The latest row per slot, per stage: a ``SlotState``, or bt-generate's lean ledger."""

    @property
    def generated(self) -> Mapping[tuple[int, int], ResponseRow]: ...

    @property
    def laundered(self) -> Mapping[tuple[int, int], ResponseRow]: ...


def displayed_texts(
    design: DesignRecord,
    state: AnsweredRows,
    trial: int,
    n_slots: int,
    keys: Iterable[tuple[int, int]] | None = None,
) -> list[str]:
    """The options of one trial exactly as the judge sees them, in display order; ``keys``:
    the (trial, slot) whose row holds each option (default: the trial's own slots 1..n; a
    several-candidate design passes the owners, :func:`answer_slots`)."""
    launder = design["normalization"]["launder"] is not None
    rows = state.laundered if launder else state.generated
    if keys is None:
        keys = [(trial, slot) for slot in range(1, n_slots + 1)]
    # An answered slot's row is an ok row, whose text is a string.
    texts = [cast(str, rows[key]["text"]) for key in keys]
    if design["normalization"]["truncate_match"]:
        texts = truncate_match(texts)
    return texts


def _prompt_lookup(prompts: Any) -> Callable[[str], Mapping[str, Any]]:
    if isinstance(prompts, Columns):  # a lean design (bt-generate): no dict per prompt
        return lambda prompt_id: cast(
            Mapping[str, Any], prompts[prompts.position("id", prompt_id, last=True)]
        )
    index = {p["id"]: p for p in prompts}
    return index.__getitem__


def iter_trials_view(design: DesignRecord, state: AnsweredRows) -> Iterator[TrialRecord]:
    """``trials.jsonl`` one trial at a time: trial, prompt and options, with nothing that
    names a side or model. ``--truncate-match`` needs every response of a trial, so it is
    applied here; so is a planted comparison's degraded copy (``blindtest.model.planted``),
    made last from the text the judge sees of the answer."""
    prompt_of = _prompt_lookup(design["prompts"])
    n_slots = protocol_of(design).options
    keys_of = answer_slots(design)
    for entry in design["arrangement"]:
        prompt = prompt_of(entry["prompt_id"])
        options = displayed_texts(design, state, entry["trial"], n_slots, keys_of(entry))
        planted = planted_of(entry)
        if planted is not None:  # the degraded copy, made from what the judge sees
            at = degraded_position(planted) - 1
            how = str(planted["degradation"])
            options[at] = degrade(options[at], how, str(design["seed"]), int(entry["trial"]))
        row: TrialRecord = {
            "schema": schema_tag("trials"),
            "trial": entry["trial"],
            "prompt": prompt["text"],
            "options": options,
        }
        if "messages" in prompt:  # a conversation: the judge sees every turn
            row["history"] = [
                {"role": turn["role"], "content": turn["content"]}
                for turn in prompt["messages"][:-1]
            ]
        yield row


def build_trials_view(design: DesignRecord, state: AnsweredRows) -> list[TrialRecord]:
    """``trials.jsonl`` as a list (:func:`iter_trials_view`)."""
    return list(iter_trials_view(design, state))
