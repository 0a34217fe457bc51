"""What responses.jsonl and generation.json add after judging: answered slots, refusals and
truncations per side, trials a refusal singles out, served models, latency and cost.
Pure; opens no file."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from blindtest.model.protocols import protocol_of
from blindtest.model.slots import LAUNDER, SlotState, plan_slots
from blindtest.reportfmt import count
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord

#: Response kinds that show on the page whatever the content (a refusal, a cut-off answer).
MARKED_KINDS = ("refusal", "length")


def _slot_kind(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return "missing"
    kind = row.get("kind") or ("ok" if row["status"] == "ok" else "failed")
    return str(kind) if row["status"] == "ok" else "failed"


def _marked_trials(design: DesignRecord, kinds: Mapping[tuple[int, int], str]) -> list[int]:
    """Trials where a refusal or cut-off singles one side out: pair and preference, the two
    sides differ in being refused or cut; triangle, the odd response alone differs from the
    two (alike) doubled ones. Such a trial can be told apart without reading the content."""
    protocol = protocol_of(design)
    out = []
    for entry in design["arrangement"]:
        trial = entry["trial"]
        by_side: dict[str, set[str]] = defaultdict(set)
        for position, side in enumerate(protocol.slot_sides(entry), start=1):
            by_side[side].add(kinds.get((trial, position), "missing"))
        if any(len(own) != 1 for own in by_side.values()):
            continue
        shown = {own.pop() for own in by_side.values()}
        if len(shown) == 2 and shown & set(MARKED_KINDS):
            out.append(trial)
    return out


def responses_summary(
    design: DesignRecord, rows: Sequence[JsonObject], torn_line: int | None
) -> JsonObject:
    """What responses.jsonl holds against what the design needs: answered slots, refusals and
    truncations per side, trials a refusal gives away, and the model each server said answered."""
    state = SlotState.from_rows(rows)
    slots = plan_slots(design)
    launder = design["normalization"]["launder"] is not None
    answered = sum(1 for slot in slots if state.answered(slot, "generate") is not None)
    laundered = sum(1 for slot in slots if state.answered(slot, LAUNDER) is not None)
    kinds: dict[tuple[int, int], str] = {}
    per_side: dict[str, Counter[str]] = {"A": Counter(), "B": Counter()}
    served: dict[str, Counter[str]] = {"A": Counter(), "B": Counter()}
    for slot in slots:
        row = state.generated.get((slot.trial, slot.slot))
        kind = _slot_kind(row)
        kinds[(slot.trial, slot.slot)] = kind
        per_side[slot.side][kind] += 1
        if row is not None and row["status"] == "ok" and row.get("served_model"):
            served[slot.side][str(row["served_model"])] += 1
    complete = answered == len(slots) and (not launder or laundered == len(slots))
    summary: JsonObject = {
        "rows": len(rows),
        "slots": len(slots),
        "answered": answered,
        "laundered": laundered if launder else None,
        "complete": complete,
        "torn_line": torn_line,
        "per_side": {
            side: {
                "answered": sum(c[k] for k in c if k not in ("missing", "failed")),
                "refusals": c["refusal"],
                "truncated": c["length"],
                "failed": c["failed"],
                "missing": c["missing"],
            }
            for side, c in per_side.items()
        },
        "marked_trials": _marked_trials(design, kinds),
        "served_models": {side: dict(sorted(c.items())) for side, c in served.items()},
    }
    if design["normalization"].get("identity_strip") is not None:  # absent in older designs
        summary["identity_stripped"] = _identity_stripped(design, state)
    return summary


def _identity_stripped(design: DesignRecord, state: SlotState) -> JsonObject:
    """Mentions replaced by identity stripping in what the judge saw, and responses touched,
    per side."""
    rows = state.laundered if design["normalization"]["launder"] is not None else state.generated
    mentions = {"A": 0, "B": 0}
    touched = {"A": 0, "B": 0}
    for slot in plan_slots(design):
        row = rows.get((slot.trial, slot.slot))
        counts = row.get("identity_stripped") if row is not None else None
        if counts:
            touched[slot.side] += 1
            mentions[slot.side] += sum(counts.values())
    return {"mentions": mentions, "responses": touched}


def responses_sentences(design: DesignRecord, summary: Mapping[str, Any]) -> list[str]:
    """Refusals, truncations and served models, in words (revealed only after judging)."""
    out = []
    sides = summary["per_side"]
    if any(sides[s]["refusals"] or sides[s]["truncated"] for s in ("A", "B")):
        parts = [
            f"{s} {count(sides[s]['refusals'], 'refusal')} and "
            f"{sides[s]['truncated']} cut at the token limit"
            for s in ("A", "B")
        ]
        out.append("Refusals and truncations, of the responses shown: " + "; ".join(parts) + ".")
    marked = summary["marked_trials"]
    if marked:
        listed = ", ".join(str(t) for t in marked[:10]) + (", ..." if len(marked) > 10 else "")
        what = (
            "those comparisons may have been decided by the refusal, not by quality"
            if protocol_of(design).prefers
            else "those trials can be told apart without reading the content, so they count "
            "towards the result as discrimination by refusal, not by quality"
        )
        out.append(
            f"In {count(len(marked), 'trial')} ({listed}) a refusal or a cut-off answer singled "
            f"one side out: {what}."
        )
    stripped = summary.get("identity_stripped")
    if stripped and sum(stripped["mentions"].values()):
        m, r = stripped["mentions"], stripped["responses"]
        out.append(
            f"Identity stripping replaced {count(sum(m.values()), 'mention')} in "
            f"{count(sum(r.values()), 'response')} (side A: {count(m['A'], 'mention')} in "
            f"{r['A']}, side B: {count(m['B'], 'mention')} in {r['B']}): where a model named "
            "itself, its family or its maker, the judge saw the token instead."
        )
    for side in ("A", "B"):
        asked = design["models"][side]["model"]
        served = summary["served_models"].get(side) or {}
        if not served:
            continue
        names = ", ".join(f"{name} ({count})" for name, count in served.items())
        if len(served) > 1:
            out.append(
                f"Side {side} asked for {asked}; the server said the answers came from more "
                f"than one model within this run: {names}. The run mixes builds."
            )
        elif asked not in served:
            out.append(
                f"Side {side} asked for {asked}, but the server said every answer came from "
                f"{next(iter(served))}: the result speaks to the model that answered."
            )
    return out


def appendix(generation: Mapping[str, Any] | None) -> JsonObject | None:
    """Latency, tokens and cost per role, revealed only after judging."""
    if generation is None:
        return None
    return {
        role: {
            key: entry.get(key)
            for key in (
                "model",
                "responses",
                "failures",
                "mean_latency_ms",
                "prompt_tokens",
                "completion_tokens",
                "truncated",
                "refusals",
                "outside_length_band",
                "cost",
            )
        }
        for role, entry in generation["roles"].items()
    }


def cost_line(generation: Mapping[str, Any] | None) -> str | None:
    """Spec 001: put cost next to the ranking."""
    if generation is None:
        return None
    parts = []
    for side in ("A", "B"):
        entry = generation["roles"].get(side)
        if entry and entry.get("cost") is not None and entry["responses"]:
            parts.append(f"{side} ${entry['cost'] / entry['responses']:.5f} per response")
    return "Cost: " + ", ".join(parts) + "." if parts else None
