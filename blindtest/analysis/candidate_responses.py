"""responses.jsonl of a several-candidate run, per candidate: the answers each candidate gave
(each prompt once, at the comparison that owns it), refused, cut and failed answers, the
tokens used, the comparisons a refusal or a cut-off singles one answer out in, the model each
server said answered, and each candidate's answers, tokens and cost beside the ranking
(`blindtest.analysis.candidates` puts them in report.json). Pure; opens no file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from blindtest.analysis.responses import MARKED_KINDS
from blindtest.model.candidates import answer_owners, candidates_of, comparison_sides
from blindtest.reportfmt import count
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord

__all__ = ["candidate_responses", "responses_sentences", "spend"]


def _kind(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return "missing"
    if row["status"] != "ok":
        return "failed"
    return str(row.get("kind") or "ok")


def candidate_responses(
    design: DesignRecord, rows: Sequence[JsonObject], torn_line: int | None
) -> JsonObject:
    """responses.jsonl against a several-candidate design: each candidate answers each of its
    prompts once (the row at its owner slot, ``candidates.answer_owners``); answered, refused,
    cut and failed answers and the tokens used per candidate, the comparisons a refusal or a
    cut-off singles one answer out in, and the model each server said answered."""
    from blindtest.model.slots import SlotState

    state = SlotState.from_rows(rows)
    owners = answer_owners(design)
    names = candidates_of(design) or ()
    launder = design["normalization"]["launder"] is not None
    per: dict[str, Counter[str]] = {name: Counter() for name in names}
    served: dict[str, Counter[str]] = {name: Counter() for name in names}
    kinds: dict[tuple[str, str], str] = {}
    answered = laundered = 0
    for (prompt_id, name), key in owners.items():
        row = state.generated.get(key)
        kind = _kind(row)
        kinds[(prompt_id, name)] = kind
        per[name][kind] += 1
        if row is not None and row["status"] == "ok":
            answered += 1
            usage = row.get("usage")
            if usage:  # an answer read from a file has none
                per[name]["with_usage"] += 1
                per[name]["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
                per[name]["completion_tokens"] += int(usage.get("completion_tokens") or 0)
            if row.get("served_model"):
                served[name][str(row["served_model"])] += 1
        wash = state.laundered.get(key)
        laundered += wash is not None and wash["status"] == "ok"
    marked = []
    for entry in design["arrangement"]:
        shown = {
            kinds.get((entry["prompt_id"], side), "missing") for side in comparison_sides(entry)
        }
        if len(shown) == 2 and shown & set(MARKED_KINDS):
            marked.append(int(entry["trial"]))
    summary: JsonObject = {
        "rows": len(rows),
        "slots": len(owners),
        "answered": answered,
        "laundered": laundered if launder else None,
        "complete": answered == len(owners) and (not launder or laundered == len(owners)),
        "torn_line": torn_line,
        "per_side": {
            name: {
                "answered": sum(c[k] for k in c if k not in _NOT_ANSWERED),
                "refusals": c["refusal"],
                "truncated": c["length"],
                "failed": c["failed"],
                "missing": c["missing"],
                "prompt_tokens": c["prompt_tokens"] if c["with_usage"] else None,
                "completion_tokens": c["completion_tokens"] if c["with_usage"] else None,
            }
            for name, c in per.items()
        },
        "marked_trials": marked,
        "served_models": {name: dict(sorted(c.items())) for name, c in served.items()},
    }
    return summary


_NOT_ANSWERED = ("missing", "failed", "prompt_tokens", "completion_tokens", "with_usage")


def responses_sentences(design: DesignRecord, summary: Mapping[str, Any]) -> list[str]:
    out = []
    per = summary["per_side"]
    hit = [n for n in per if per[n]["refusals"] or per[n]["truncated"]]
    if hit:
        parts = [
            f"{n} {count(per[n]['refusals'], 'refusal')} and {per[n]['truncated']} cut at the "
            "token limit"
            for n in hit
        ]
        out.append("Refusals and truncations, of the answers shown: " + "; ".join(parts) + ".")
    marked = summary["marked_trials"]
    if marked:
        listed = ", ".join(str(t) for t in marked[:10]) + (", ..." if len(marked) > 10 else "")
        out.append(
            f"In {count(len(marked), 'comparison')} ({listed}) a refusal or a cut-off answer "
            "singled one answer out: those comparisons may have been decided by the refusal, "
            "not by quality."
        )
    for name, found in summary["served_models"].items():
        asked = design["models"][name]["model"]
        if len(found) > 1:
            names = ", ".join(f"{model} ({n})" for model, n in found.items())
            out.append(
                f"Candidate {name} asked for {asked}; the server said the answers came from "
                f"more than one model within this run: {names}. The run mixes builds."
            )
        elif found and asked not in found:
            out.append(
                f"Candidate {name} asked for {asked}, but the server said every answer came "
                f"from {next(iter(found))}: the result speaks to the model that answered."
            )
    return out


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
