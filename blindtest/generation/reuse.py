"""A derived design's first bt-generate (``bt-design NEW --from RUN --drop-trial N``): the
answers RUN already holds for the kept trials are copied into NEW's ``responses.jsonl``,
renumbered, each marked ``reused_from`` (RUN's design hash, the trial's number there), so
no slot is asked (or paid) twice. Only answers that answer the request the slot makes now
are copied (:class:`~blindtest.generation.ledger.Ledger` decides, by ``request_sha256``), and
the kept slots ask byte for byte what they asked in RUN (:mod:`blindtest.model.derived`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from blindtest.generation.ledger import Ledger
from blindtest.generation.requests import SlotRequests
from blindtest.model.candidates import answer_owners, shares_answers
from blindtest.model.derived import source_trials
from blindtest.model.slots import LAUNDER, iter_slots
from blindtest.rundir import artifacts
from blindtest.rundir.types import DesignRecord, ResponseRow

__all__ = ["Reused", "reuse_answers"]


@dataclass(frozen=True, slots=True)
class Reused:
    """What was copied: answers (and launderings), and from where."""

    answers: int
    laundered: int
    run: Path


def _parent_rows(
    parent: DesignRecord, rows: Sequence[Mapping[str, Any]]
) -> Iterator[tuple[int, ResponseRow]]:
    """(parent trial, row) for every current answer and laundering in the parent run."""
    ledger = Ledger(parent, rows.__getitem__, SlotRequests(parent))
    for ref, row in enumerate(rows):
        ledger.record(row, ref)
    for slot in iter_slots(parent):
        for stage in ("generate", LAUNDER):
            answer = ledger.answered(slot, stage)
            if answer is not None:
                yield slot.trial, answer


def reuse_answers(run: Path, design: DesignRecord, say: Callable[[str], None]) -> Reused | None:
    """Copy the parent run's answers for the kept trials into ``run``'s ``responses.jsonl``,
    once: when ``design`` is derived and ``run`` has no responses yet. None when there is
    nothing to do; says why when the parent run cannot be read (its slots are then asked)."""
    origin = design.get("derived_from")
    path = run / artifacts.RESPONSES
    if not isinstance(origin, Mapping) or path.exists():
        return None
    parent_dir = Path(str(origin["run"]))
    if not (parent_dir / artifacts.RESPONSES).exists():
        say(
            f"note: {parent_dir} (the run this design was made from) holds no "
            f"{artifacts.RESPONSES}: every slot is asked"
        )
        return None
    loaded = artifacts.load_design(parent_dir)
    if loaded.sha256 != origin["design_sha256"]:
        say(
            f"note: {parent_dir} now holds another design than the one this design was made "
            f"from ({loaded.sha256[:12]}, not {str(origin['design_sha256'])[:12]}): nothing is "
            "reused, every slot is asked"
        )
        return None
    parent = loaded.design
    kept = source_trials(design) or []
    parent_kept = source_trials(parent) or list(range(1, len(parent["arrangement"]) + 1))
    # parent trial number -> this design's number, through their shared first design
    number_here = {source: here for here, source in enumerate(kept, start=1)}
    mapping = {
        there: number_here[source]
        for there, source in enumerate(parent_kept, start=1)
        if source in number_here
    }
    rows = list(artifacts.read_jsonl(parent_dir / artifacts.RESPONSES, "responses").records)
    # With candidates only the slots owning an answer hold rows: an answer whose owner was
    # dropped is owned here by a later comparison (another slot, another seed), so it is
    # asked again rather than copied to a slot that does not hold it.
    owners = set(answer_owners(design).values()) if shares_answers(design) else None
    copied: list[ResponseRow] = []
    for there, row in _parent_rows(parent, rows):
        here = mapping.get(there)
        if here is None or (owners is not None and (here, row["slot"]) not in owners):
            continue
        reused = dict(row)
        reused["trial"] = here
        reused["reused_from"] = {"design_sha256": loaded.sha256, "trial": there}
        copied.append(cast(ResponseRow, reused))
    if not copied:
        return None
    with artifacts.JsonlAppender(path, "responses", grouped=True) as out:
        for row in copied:
            out.add(row)
    laundered = sum(row.get("stage") == LAUNDER for row in copied)
    return Reused(len(copied) - laundered, laundered, parent_dir)
