"""What responses.jsonl and generation.json add after judging, for any design: the answers
each candidate gave (in a design that names its candidates each prompt once, at the comparison
that owns it; in a two-sided design every slot), refused, cut and failed answers, the tokens
used, the trials a refusal or a cut-off singles one side out in, the model each server said
answered, latency and cost, and each candidate's answers, tokens and cost beside the result.
Pure; opens no file."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from blindtest.model.candidates import candidates_of, has_side_options, role_words
from blindtest.model.protocols import protocol_of
from blindtest.model.slots import LAUNDER, SlotState, answer_slots, plan_slots
from blindtest.reportfmt import count
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord

__all__ = [
    "MARKED_KINDS",
    "appendix",
    "cost_line",
    "responses_sentences",
    "responses_summary",
    "spend",
]

#: Response kinds that show on the page whatever the content (a refusal, a cut-off answer).
MARKED_KINDS = ("refusal", "length")
#: Counts that are not answers.
_NOT_ANSWERED = ("missing", "failed", "prompt_tokens", "completion_tokens", "with_usage")


def _slot_kind(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return "missing"
    kind = row.get("kind") or ("ok" if row["status"] == "ok" else "failed")
    return str(kind) if row["status"] == "ok" else "failed"


def _marked_trials(design: DesignRecord, kinds: Mapping[tuple[int, int], str]) -> list[int]:
    """Trials where a refusal or cut-off singles one side out: pair and preference, the two
    answers shown differ in being refused or cut; triangle, the odd response alone differs
    from the two (alike) doubled ones. Such a trial can be told apart without reading the
    content."""
    protocol = protocol_of(design)
    holding = answer_slots(design)
    out = []
    for entry in design["arrangement"]:
        by_side: dict[str, set[str]] = defaultdict(set)
        for key, side in zip(holding(entry), protocol.slot_sides(entry), strict=True):
            by_side[side].add(kinds.get(key, "missing"))
        if any(len(own) != 1 for own in by_side.values()):
            continue
        shown = {own.pop() for own in by_side.values()}
        if len(shown) == 2 and shown & set(MARKED_KINDS):
            out.append(int(entry["trial"]))
    return out


def responses_summary(
    design: DesignRecord, rows: Sequence[JsonObject], torn_line: int | None
) -> JsonObject:
    """What responses.jsonl holds against what the design needs: answered slots, refusals and
    truncations per candidate (with the tokens used, in a preference report), trials a refusal
    gives away, and the model each server said answered."""
    state = SlotState.from_rows(rows)
    slots = plan_slots(design)
    launder = design["normalization"]["launder"] is not None
    tokens = protocol_of(design).prefers
    names = candidates_of(design)
    kinds: dict[tuple[int, int], str] = {}
    per: dict[str, Counter[str]] = {name: Counter() for name in names}
    served: dict[str, Counter[str]] = {name: Counter() for name in names}
    answered = laundered = 0
    for slot in slots:
        key = (slot.trial, slot.slot)
        row = state.generated.get(key)
        kind = _slot_kind(row)
        kinds[key] = kind
        per[slot.side][kind] += 1
        if row is not None and row["status"] == "ok":
            answered += 1
            usage = row.get("usage")
            if usage:  # an answer read from a file has none
                per[slot.side]["with_usage"] += 1
                per[slot.side]["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
                per[slot.side]["completion_tokens"] += int(usage.get("completion_tokens") or 0)
            if row.get("served_model"):
                served[slot.side][str(row["served_model"])] += 1
        laundered += state.answered(slot, LAUNDER) is not None
    summary: JsonObject = {
        "rows": len(rows),
        "slots": len(slots),
        "answered": answered,
        "laundered": laundered if launder else None,
        "complete": answered == len(slots) and (not launder or laundered == len(slots)),
        "torn_line": torn_line,
        "per_side": {name: _per_side(c, tokens) for name, c in per.items()},
        "marked_trials": _marked_trials(design, kinds),
        "served_models": {name: dict(sorted(c.items())) for name, c in served.items()},
    }
    if design["normalization"].get("identity_strip") is not None:  # absent in older designs
        summary["identity_stripped"] = _identity_stripped(design, state)
    return summary


def _per_side(c: Counter[str], tokens: bool) -> JsonObject:
    found: JsonObject = {
        "answered": sum(c[k] for k in c if k not in _NOT_ANSWERED),
        "refusals": c["refusal"],
        "truncated": c["length"],
        "failed": c["failed"],
        "missing": c["missing"],
    }
    if tokens:
        found["prompt_tokens"] = c["prompt_tokens"] if c["with_usage"] else None
        found["completion_tokens"] = c["completion_tokens"] if c["with_usage"] else None
    return found


def _identity_stripped(design: DesignRecord, state: SlotState) -> JsonObject:
    """Mentions replaced by identity stripping in what the judge saw, and responses touched,
    per candidate."""
    rows = state.laundered if design["normalization"]["launder"] is not None else state.generated
    mentions = dict.fromkeys(candidates_of(design), 0)
    touched = dict.fromkeys(candidates_of(design), 0)
    for slot in plan_slots(design):
        row = rows.get((slot.trial, slot.slot))
        counts = row.get("identity_stripped") if row is not None else None
        if counts:
            touched[slot.side] += 1
            mentions[slot.side] += sum(counts.values())
    return {"mentions": mentions, "responses": touched}


def responses_sentences(design: DesignRecord, summary: Mapping[str, Any]) -> list[str]:
    """Refusals, truncations, identity stripping and served models, in words (revealed only
    after judging). A two-sided design names its sides (side A, side B), a design that names
    its candidates each candidate by name."""
    out = []
    sides = summary["per_side"]
    names = candidates_of(design)
    two_sided = has_side_options(design)
    hit = [n for n in names if sides[n]["refusals"] or sides[n]["truncated"]]
    if hit:
        listed = names if two_sided else hit
        parts = [
            f"{n} {count(sides[n]['refusals'], 'refusal')} and "
            f"{sides[n]['truncated']} cut at the token limit"
            for n in listed
        ]
        shown = "responses" if two_sided else "answers"
        out.append(f"Refusals and truncations, of the {shown} shown: " + "; ".join(parts) + ".")
    marked = summary["marked_trials"]
    if marked:
        listed_trials = ", ".join(str(t) for t in marked[:10]) + (
            ", ..." if len(marked) > 10 else ""
        )
        what = (
            "those comparisons may have been decided by the refusal, not by quality"
            if protocol_of(design).prefers
            else "those trials can be told apart without reading the content, so they count "
            "towards the result as discrimination by refusal, not by quality"
        )
        unit, one = ("trial", "side") if two_sided else ("comparison", "answer")
        out.append(
            f"In {count(len(marked), unit)} ({listed_trials}) a refusal or a cut-off answer "
            f"singled one {one} out: {what}."
        )
    stripped = summary.get("identity_stripped")
    if stripped and sum(stripped["mentions"].values()):
        m, r = stripped["mentions"], stripped["responses"]
        each = ", ".join(
            f"{role_words(design, n)}: {count(m[n], 'mention')} in {r[n]}" for n in names
        )
        out.append(
            f"Identity stripping replaced {count(sum(m.values()), 'mention')} in "
            f"{count(sum(r.values()), 'response')} ({each}): where a model named "
            "itself, its family or its maker, the judge saw the token instead."
        )
    for name in names:
        asked = design["models"][name]["model"]
        served = summary["served_models"].get(name) or {}
        if not served:
            continue
        words = role_words(design, name)
        who = words[0].upper() + words[1:]
        listed_models = ", ".join(f"{model} ({n})" for model, n in served.items())
        if len(served) > 1:
            out.append(
                f"{who} asked for {asked}; the server said the answers came from more "
                f"than one model within this run: {listed_models}. The run mixes builds."
            )
        elif asked not in served:
            out.append(
                f"{who} asked for {asked}, but the server said every answer came from "
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


def cost_line(
    generation: Mapping[str, Any] | None, names: Sequence[str] = ("A", "B")
) -> str | None:
    """Spec 001: put cost next to the ranking (``names``: the candidates, in order)."""
    if generation is None:
        return None
    parts = []
    for side in names:
        entry = generation["roles"].get(side)
        if entry and entry.get("cost") is not None and entry["responses"]:
            parts.append(f"{side} ${entry['cost'] / entry['responses']:.5f} per response")
    return "Cost: " + ", ".join(parts) + "." if parts else None


def spend(
    names: Sequence[str],
    responses: Mapping[str, Any] | None,
    generation: Mapping[str, Any] | None,
) -> dict[str, JsonObject]:
    """Each candidate's answers, tokens (from responses.jsonl) and cost (from the prices
    bt-generate was given, in generation.json); None where the run does not say."""
    roles = (generation or {}).get("roles") or {}
    per = (responses or {}).get("per_side") or {}
    out: dict[str, JsonObject] = {}
    for name in names:
        own = per.get(name)
        role = roles.get(name) or {}
        answers = own["answered"] if own else role.get("responses")
        # Tokens as responses.jsonl records them; without it, as generation.json summed
        # them, when a request was made (an answer read from a file used none).
        source = own if own else role if role.get("requests") else {}
        tokens_in, tokens_out = source.get("prompt_tokens"), source.get("completion_tokens")
        cost = role.get("cost")
        out[name] = {
            "answers": answers,
            "tokens": None
            if tokens_in is None or tokens_out is None
            else {"prompt": tokens_in, "completion": tokens_out, "total": tokens_in + tokens_out},
            "cost": cost,
            "cost_per_answer": cost / answers if cost is not None and answers else None,
        }
    return out
