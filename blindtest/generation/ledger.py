"""What bt-generate keeps of ``responses.jsonl`` while it runs (per slot and stage, a
reference to the row still current), the check that a row belongs to the design, and the
rows on disk made for another request than their slot makes now (stale), in words."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast

from blindtest import reportfmt
from blindtest.errors import BadInput, option
from blindtest.generation.guard import _arrangement_values, trial_positions
from blindtest.generation.requests import SlotRequests
from blindtest.model.candidates import candidates_of, role_words, shares_answers
from blindtest.model.protocols import protocol_of
from blindtest.model.slots import LAUNDER, Slot, Work, iter_slots, original_text, owners_of
from blindtest.rundir import artifacts
from blindtest.rundir.artifacts import Columns
from blindtest.rundir.types import DesignRecord, ResponseRow

#: What a ledger row reference reads back: a row of ``responses.jsonl`` (by byte offset, or
#: by index into rows held in memory).
ReadRow = Callable[[int], Mapping[str, Any]]
#: Append a row and return its reference for a ``ReadRow``.
AddRow = Callable[[ResponseRow], int]
AppendRow = Callable[[ResponseRow], Any]


class _StageRows(Mapping[tuple[int, int], ResponseRow]):
    """One stage's latest row per slot, read back by reference when asked for."""

    def __init__(self, ledger: Ledger, stage: str) -> None:
        self._ledger = ledger
        self._stage = stage

    def __getitem__(self, key: tuple[int, int]) -> ResponseRow:
        row = self._ledger.row(key[0], key[1], self._stage)
        if row is None:
            raise KeyError(key)
        return row

    def __iter__(self) -> Iterator[tuple[int, int]]:
        refs = self._ledger.refs[self._stage]
        for trial, slot, index in self._ledger.slot_indexes():
            if refs[index] >= 0:
                yield trial, slot

    def __len__(self) -> int:
        return sum(1 for _ in self)


class Ledger:
    """What bt-generate keeps of ``responses.jsonl`` while it runs, in a few bytes per slot
    (90,000 slots, and no row held): per slot and stage, whether it is answered
    and a reference to the row that counts (the latest ok row, else the latest failure row),
    read back by ``read_row`` when a row is needed (a launder source, the blinded view, why a
    slot failed). Answers like ``SlotState`` (``generated``, ``laundered``, ``answered``).

    With ``requests``, a slot is answered only when its latest ok row answers the request the
    slot makes now (:meth:`SlotRequests.matches`); one that answers another request (the
    design was edited) is *stale*: counted by :meth:`stale`, and pending like a missing slot.
    A newer answer of a slot makes its laundering pending again."""

    def __init__(
        self, design: DesignRecord, read_row: ReadRow, requests: SlotRequests | None = None
    ) -> None:
        self.design = design
        self.options = protocol_of(design).options
        self.position = trial_positions(design)
        size = len(design["arrangement"]) * self.options
        self.refs = {stage: array("q", [-1]) * size for stage in ("generate", LAUNDER)}
        self.ok = {stage: bytearray(size) for stage in ("generate", LAUNDER)}
        #: Per slot and stage: some ok row is held (current or stale).
        self.held = {stage: bytearray(size) for stage in ("generate", LAUNDER)}
        self.read_row = read_row
        self.requests = requests
        self.generated = _StageRows(self, "generate")
        self.laundered = _StageRows(self, LAUNDER)
        #: With candidates, the (trial, slot) that own an answer: the only slots with rows.
        self.owners = set(owners_of(design).values()) if shares_answers(design) else None

    def index(self, trial: int, slot: int) -> int | None:
        position = self.position(trial)
        if position is None or type(slot) is not int or not 0 < slot <= self.options:
            return None
        return position * self.options + slot - 1

    def slot_indexes(self) -> Iterator[tuple[int, int, int]]:
        numbers = _arrangement_values(self.design, "trial")
        for position, trial in enumerate(numbers):
            for slot in range(1, self.options + 1):
                yield trial, slot, position * self.options + slot - 1

    def record(self, row: Mapping[str, Any], ref: int, current: bool | None = None) -> bool:
        """Take one more row (in file order); True when it answers its slot, as the slot asks
        now, where it did not before (a later failure row cannot undo an answer).
        ``current``: whether it answers what its slot asks now, when the caller knows (a row
        just made for it); else it is checked."""
        stage = LAUNDER if row.get("stage") == LAUNDER else "generate"
        index = self.index(row["trial"], row["slot"])
        if index is None:
            return False
        if row["status"] != "ok":
            if not self.held[stage][index]:
                self.refs[stage][index] = ref
            return False
        if current is None:
            current = self._current(row, stage, index)
        was = self.ok[stage][index]
        self.refs[stage][index] = ref
        self.held[stage][index] = 1
        self.ok[stage][index] = current
        if stage == "generate" and self.held[LAUNDER][index]:
            # A newer answer: the laundering of the one it replaces no longer counts.
            self.refs[LAUNDER][index] = -1
            self.held[LAUNDER][index] = self.ok[LAUNDER][index] = 0
        return current and not was

    def _current(self, row: Mapping[str, Any], stage: str, index: int) -> bool:
        if self.requests is None:
            return True
        slot = Slot(row["trial"], row["slot"], row["side"], self._prompt_id(index))
        if stage != LAUNDER:
            return self.requests.matches(row, Work(slot, "generate"))
        if not self.ok["generate"][index]:
            return False  # the laundering of an answer that no longer counts
        source = original_text(self.read_row(self.refs["generate"][index]))
        return self.requests.matches(row, Work(slot, LAUNDER, source))

    def _prompt_id(self, index: int) -> str:
        arrangement: Any = self.design["arrangement"]
        position = index // self.options
        if isinstance(arrangement, Columns):
            return str(arrangement.value(position, "prompt_id"))
        return str(arrangement[position]["prompt_id"])

    def stale(self) -> dict[str, int]:
        """Slots whose latest answer answers another request than the slot makes now, per
        role (``A``, ``B``, ``launder``; the laundering of a stale answer is not counted)."""
        counts: dict[str, int] = {}
        protocol = protocol_of(self.design)
        for position, entry in enumerate(_arrangement_entries(self.design)):
            sides = protocol.slot_sides(entry)
            for number, side in enumerate(sides):
                index = position * self.options + number
                for stage, role in (("generate", side), (LAUNDER, LAUNDER)):
                    if self.held[stage][index] and not self.ok[stage][index]:
                        if stage == LAUNDER and not self.ok["generate"][index]:
                            continue
                        counts[role] = counts.get(role, 0) + 1
        return counts

    def answered(self, slot: Slot, stage: str) -> ResponseRow | None:
        index = self.index(slot.trial, slot.slot)
        stage = LAUNDER if stage == LAUNDER else "generate"
        if index is None or not self.ok[stage][index]:
            return None
        return cast(ResponseRow, self.read_row(self.refs[stage][index]))

    def is_answered(self, slot: Slot, stage: str) -> bool:
        index = self.index(slot.trial, slot.slot)
        return index is not None and bool(self.ok[stage][index])

    def row(self, trial: int, slot: int, stage: str) -> ResponseRow | None:
        index = self.index(trial, slot)
        if index is None or self.refs[stage][index] < 0:
            return None
        return cast(ResponseRow, self.read_row(self.refs[stage][index]))

    def pending(self, answered: bytes | None = None, only: str | None = None) -> Iterator[Work]:
        """What is still missing (``pending_work``, one slot at a time; ``only`` one stage).
        ``answered``: the slots answered when the run began, the only ones whose laundering
        this offers (a slot answered since has had its laundering queued by whoever
        answered it)."""
        launder = self.design["normalization"]["launder"] is not None and only != "generate"
        generated, laundered = self.ok["generate"], self.ok[LAUNDER]
        before: bytes | bytearray = generated if answered is None else answered
        for slot in iter_slots(self.design):
            index = self.index(slot.trial, slot.slot)
            if index is None:
                continue
            if not generated[index]:
                if only != LAUNDER:
                    yield Work(slot, "generate")
            elif launder and before[index] and not laundered[index]:
                source = self.read_row(self.refs["generate"][index])
                yield Work(slot, LAUNDER, original_text(source))

    def missing(self) -> int:
        return sum(1 for _ in self.pending())


def _arrangement_entries(design: DesignRecord) -> Iterator[Mapping[str, Any]]:
    arrangement: Any = design["arrangement"]
    if isinstance(arrangement, Columns):
        return (arrangement[i] for i in range(len(arrangement)))
    return iter(arrangement)


def check_row_fits(
    design: DesignRecord, ledger: Ledger, row: Mapping[str, Any], number: int
) -> None:
    """``check_rows_match_design`` for one row (the ``number``-th of the file)."""
    index = ledger.index(row["trial"], row["slot"])
    side = None
    if ledger.owners is not None and (row["trial"], row["slot"]) not in ledger.owners:
        index = None  # a comparison that reads its answer from an earlier one
    if index is not None:
        entry = design["arrangement"][index // ledger.options]
        side = protocol_of(design).slot_sides(entry)[row["slot"] - 1]
    if side is None or side != row["side"]:
        raise BadInput(
            f"responses.jsonl row {number} (trial {row['trial']}, slot {row['slot']}, "
            f"side {row['side']}) does not belong to this design; use a new run directory"
        )


def role_order(design: DesignRecord) -> tuple[str, ...]:
    """The roles in the order lines name them: the sides (A, B, or the candidates), then the
    launderer."""
    return (*candidates_of(design), LAUNDER)


def role_name(design: DesignRecord, role: str) -> str:
    """How a line names a role: ``side A``, ``candidate alpha``, ``laundering``."""
    if role == LAUNDER:
        return "laundering"
    return role_words(design, role)


def _stale_counts(design: DesignRecord, stale: Mapping[str, int]) -> tuple[int, str]:
    order = role_order(design)
    roles = sorted(stale, key=order.index)
    named = ", ".join(f"{role_name(design, role)}: {stale[role]}" for role in roles)
    return sum(stale.values()), named


def stale_rows_error(design: DesignRecord, stale: Mapping[str, int]) -> str:
    """Why answers on disk are not reused: how many, whose, and the two ways on."""
    total, named = _stale_counts(design, stale)
    dirs = design["source"]["kind"] == "dirs"
    if total == 1:
        made = "answer on disk was " + (
            "read from another file than its slot names now"
            if dirs
            else "made for another request than its slot makes now"
        )
    else:
        made = "answers on disk were " + (
            "read from other files than their slots name now"
            if dirs
            else "made for other requests than their slots make now"
        )
    return (
        f"{artifacts.RESPONSES}: {total} {made} ({named}; the design changed "
        "since they were recorded); use a new run directory, "
        f"or rerun with {option('refetch_changed')} to ask for those slots again (the old rows "
        "stay in "
        f"{artifacts.RESPONSES}, no longer counted)"
    )


def check_rows_current(design: DesignRecord, rows: Sequence[Mapping[str, Any]]) -> None:
    """Refuse rows on disk whose answers were made for another request than their slot makes
    now (the batch modes: a live ``--refetch-changed`` asks for those slots again)."""
    ledger = Ledger(design, rows.__getitem__, SlotRequests(design))
    for ref, row in enumerate(rows):
        ledger.record(row, ref)
    stale = ledger.stale()
    if stale:
        raise BadInput(stale_rows_error(design, stale))


def refetch_notice(design: DesignRecord, stale: Mapping[str, int]) -> str:
    total, named = _stale_counts(design, stale)
    return (
        f"asking again for {reportfmt.count(total, 'slot')} whose answer on disk was made for "
        "another request "
        f"({named}); the old rows stay in {artifacts.RESPONSES}, no longer counted"
    )
