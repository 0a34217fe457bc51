"""A design made from another without some of its trials (``bt-design NEW --from RUN
--drop-trial N``): how it is made, and the facts every stage needs about it. Pure: no file,
no socket.

The kept trials are numbered 1..M again (every stage, the judging page and the panels count
trials so), but each asks exactly what it asked in the design it came from: the per-slot seed
is drawn from the trial's number there (its *source* trial), so a kept slot's request is byte
for byte the one already answered, and bt-generate reuses that answer (none is paid twice).
``derived_from`` records the source: the SHA-256 of the design it was made from, the trial
count and seed of the first design in the line (the arrangement is re-derived at that count,
then the dropped trials left out and the rest renumbered), where that run was, and each
dropped trial (numbered as in that first design) with its prompt and the reason given.
A design without ``derived_from`` is what bt-design always wrote, and its hash is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from blindtest.errors import BadInput, option
from blindtest.model.slots import slot_seed

__all__ = [
    "DEFAULT_REASON",
    "derive_design",
    "dropped_trials",
    "parent_trials",
    "renumbered",
    "source_trial",
    "source_trials",
    "trial_slot_seed",
]

#: The reason recorded for a dropped trial when none is given and the run it came from holds
#: no failure for it.
DEFAULT_REASON = "dropped by hand (no reason given)"


def dropped_trials(design: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The trials a derived design left out (``trial`` as numbered in the first design,
    ``prompt_id``, ``reason``), in the order they were dropped; [] for any other design."""
    origin = design.get("derived_from")
    if not isinstance(origin, Mapping):
        return []
    return list(origin.get("dropped", ()))


def parent_trials(design: Mapping[str, Any]) -> int:
    """The trial count the arrangement is derived at: the first design's for a derived one."""
    origin = design.get("derived_from")
    if isinstance(origin, Mapping):
        return int(origin["trials"])
    return int(design["trials"])


#: The derived_from record last mapped, and its kept source trials (one list per design, not
#: one per request).
_SOURCES: list[tuple[Mapping[str, Any], list[int]]] = []


def source_trials(design: Mapping[str, Any]) -> list[int] | None:
    """The source trial of each trial 1..M (a derived design), or None (trial N is itself)."""
    origin = design.get("derived_from")
    if not isinstance(origin, Mapping):
        return None
    if _SOURCES and _SOURCES[0][0] is origin:
        return _SOURCES[0][1]
    gone = {int(entry["trial"]) for entry in origin["dropped"]}
    kept = [t for t in range(1, int(origin["trials"]) + 1) if t not in gone]
    _SOURCES[:] = [(origin, kept)]
    return kept


def source_trial(design: Mapping[str, Any], trial: int) -> int:
    """The number ``trial`` had in the first design of its line (itself, for a design made
    directly by bt-design)."""
    kept = source_trials(design)
    if kept is None or not 0 < trial <= len(kept):
        return trial
    return kept[trial - 1]


def trial_slot_seed(design: Mapping[str, Any], trial: int, slot: int) -> int:
    """The seed a slot's request carries: drawn from its source trial, so a derived design
    asks what its source asked."""
    return slot_seed(str(design["seed"]), source_trial(design, trial), slot)


def renumbered(full: Sequence[Mapping[str, Any]], design: Mapping[str, Any]) -> list[Any]:
    """The arrangement a design must hold, given the ``full`` arrangement re-derived from its
    seed at :func:`parent_trials`: the dropped trials left out, the rest numbered 1..M."""
    kept = source_trials(design)
    if kept is None:
        return list(full)
    by_number = {int(entry["trial"]): entry for entry in full}
    out = []
    for number, source in enumerate(kept, start=1):
        entry = by_number.get(source)
        if entry is not None:
            out.append({**entry, "trial": number})
    return out


def _reasons(trials: Sequence[int], reasons: Sequence[str]) -> list[str]:
    if len(reasons) > 1 and len(reasons) != len(trials):
        raise BadInput(
            f"{option('reasons')}: give one (for every dropped trial) or one per "
            f"{option('drop_trials')} ({len(trials)}), got {len(reasons)}"
        )
    for reason in reasons:
        if not reason.strip():
            raise BadInput(f"{option('reasons')}: empty; say why the trial is dropped")
    return list(reasons) * len(trials) if len(reasons) == 1 else list(reasons)


def derive_design(
    parent: Mapping[str, Any],
    parent_sha256: str,
    drop: Sequence[int],
    reasons: Sequence[str],
    failures: Mapping[int, str],
    run: str,
    provenance: Mapping[str, Any],
) -> dict[str, Any]:
    """The design made from ``parent`` without the ``drop`` trials (numbered as in
    ``parent``), each with its reason: the one given, else the trial's last failure in the
    parent run (``failures``), else :data:`DEFAULT_REASON`. ``run``: where the parent run
    is (recorded, so bt-generate finds the answers to reuse)."""
    arrangement = list(parent["arrangement"])
    count = len(arrangement)
    if not drop:
        raise BadInput(
            f"{option('from_run')}: give the trials to leave out with {option('drop_trials', 'N')}"
        )
    repeated = sorted({t for t in drop if list(drop).count(t) > 1})
    if repeated:
        raise BadInput(f"{option('drop_trials', repeated[0])}: given twice")
    outside = [t for t in drop if not 1 <= t <= count]
    if outside:
        raise BadInput(
            f"{option('drop_trials', outside[0])}: the design in {run} has trials 1..{count}; "
            "give a trial number from its report or its failures"
        )
    if len(set(drop)) >= count:
        raise BadInput(
            f"{option('drop_trials')}: that leaves none of the {count} trials; nothing to judge"
        )
    given = _reasons(drop, reasons)
    sources = source_trials(parent) or list(range(1, count + 1))
    earlier = list(dropped_trials(parent))
    new = []
    for index, trial in enumerate(drop):
        reason = given[index] if given else failures.get(trial, DEFAULT_REASON)
        new.append(
            {
                "trial": sources[trial - 1],
                "prompt_id": str(arrangement[trial - 1]["prompt_id"]),
                "reason": " ".join(reason.split()),
            }
        )
    gone = set(drop)
    kept = [dict(e) for e in arrangement if int(e["trial"]) not in gone]
    for number, entry in enumerate(kept, start=1):
        entry["trial"] = number
    design = {key: value for key, value in parent.items() if key != "provenance"}
    design["arrangement"] = kept
    design["trials"] = len(kept)
    controls = sum("control" in entry for entry in kept)
    design.pop("controls", None)
    if controls:
        design["controls"] = controls
    first = parent.get("derived_from")
    first_controls = (
        int(first.get("controls", 0)) if isinstance(first, Mapping) else parent.get("controls", 0)
    )
    design["derived_from"] = {
        "design_sha256": parent_sha256,
        "trials": parent_trials(parent),
        "run": run,
        "dropped": [*earlier, *new],
    }
    if first_controls:
        design["derived_from"]["controls"] = int(first_controls)
    design["provenance"] = dict(provenance)
    return design


def dropped_sentence(design: Mapping[str, Any]) -> str | None:
    """What a report says of a derived design: which trials were dropped and why."""
    dropped = dropped_trials(design)
    if not dropped:
        return None
    origin = design["derived_from"]
    listed = "; ".join(
        f"trial {entry['trial']} (prompt {entry['prompt_id']}): {entry['reason']}"
        for entry in dropped
    )
    count = len(dropped)
    head = "DROPPED TRIAL" if count == 1 else "DROPPED TRIALS"
    return (
        f"{head}: this design is the one of {origin['run']} (design "
        f"{str(origin['design_sha256'])[:12]}) without {count} of its {origin['trials']} "
        f"trials, numbered there: {listed}. The others keep their answers and are "
        "numbered 1.." + str(design["trials"]) + " here; the result speaks to them only."
    )
