"""What a several-candidate design asks for, before anything is sent: bt-design prints it.

Cost grows with candidates x prompts, not with the comparisons: a candidate answers each prompt
once and that answer serves every comparison of the prompt it appears in
(:func:`blindtest.model.candidates.answer_owners`). So the plan counts comparisons (what the judge
does), answers per candidate (what is paid for), how often each pair meets, and a rough token
estimate per candidate by the rule ``bt-generate --check`` uses (input: words x 4/3 of what
the candidate is sent; output: its token limit, or ``ASSUMED_OUTPUT_TOKENS`` without one).
Prices are given to bt-generate (``--price-*``), never to the design, so no dollar figure is
made here.

Pure: reads the design record only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from blindtest.model.candidates import candidates_of, shares_answers
from blindtest.model.pairing import Comparison, parse_mode, schedule_size
from blindtest.model.prompt_size import estimated_tokens
from blindtest.model.sides import fill_template, side_system
from blindtest.reportfmt import count as _count
from blindtest.reportfmt import seed_shown
from blindtest.rundir.types import DesignRecord
from blindtest.stats.separation import SeparableDesign, separable_after

__all__ = [
    "ASSUMED_OUTPUT_TOKENS",
    "CandidateCost",
    "CandidatePlan",
    "plan_candidates",
    "summary_lines",
]

#: The output length assumed for an answer without a token limit: bt-generate's figure
#: (``blindtest.generation.cost.ASSUMED_OUTPUT_TOKENS``; a test holds the two equal, as the
#: design stage does not import the generate stage).
ASSUMED_OUTPUT_TOKENS = 600


@dataclass(frozen=True, slots=True)
class CandidateCost:
    """One candidate's share: the answers it gives and their estimated tokens."""

    name: str
    model: str
    answers: int
    input_tokens: int
    output_tokens: int
    #: Whether the output figure assumes ASSUMED_OUTPUT_TOKENS (no token limit set).
    assumed_output: bool


@dataclass(frozen=True, slots=True)
class CandidatePlan:
    """The facts bt-design prints for a several-candidate design."""

    candidates: tuple[CandidateCost, ...]
    mode: str
    comparisons: int
    prompts: int
    #: Distinct (prompt, candidate) answers: what is generated (and laundered, if asked).
    answers: int
    #: Pairs that meet, and the fewest and most meetings of any of them.
    pairs: int
    fewest_meetings: int
    most_meetings: int
    #: Whether the answers come from directories (nothing is asked of a model).
    imported: bool
    launders: bool
    #: When the exact per-pair tests (Holm over every ordered pair) can first tell two
    #: candidates apart, and whether this design's prompts are enough.
    separable: SeparableDesign


def _meetings(arrangement: list[Any]) -> Counter[frozenset[str]]:
    return Counter(frozenset((str(e["left"]), str(e["right"]))) for e in arrangement)


def _sent_tokens(design: DesignRecord, name: str, prompt: Mapping[str, Any]) -> int:
    """Estimated tokens of what ``name`` is sent for ``prompt``: its system prompt (and the
    length-band instruction), a conversation's earlier turns, the prompt through its
    template; as bt-generate builds the request."""
    parts = [side_system(design, name) or ""]
    band = design["normalization"]["length_band"]
    if band is not None:
        parts.append(band["instruction"])
    parts += [str(turn["content"]) for turn in prompt.get("messages", [])[:-1]]
    parts.append(fill_template(design["models"][name].get("template"), str(prompt["text"])))
    return estimated_tokens("\n".join(part for part in parts if part))


def plan_candidates(design: DesignRecord) -> CandidatePlan:
    """The plan of a several-candidate design (ValueError for a two-sided one)."""
    if not shares_answers(design):
        raise ValueError("a two-sided design has no candidates to plan")
    names = candidates_of(design)
    index = {str(p["id"]): n for n, p in enumerate(design["prompts"])}
    comparisons = [
        Comparison(index[str(e["prompt_id"])], str(e["left"]), str(e["right"]))
        for e in design["arrangement"]
    ]
    size = schedule_size(comparisons, names)
    imported = design["source"]["kind"] == "dirs"
    asked: dict[str, set[int]] = {name: set() for name in names}
    for comparison in comparisons:
        asked[comparison.left].add(comparison.prompt)
        asked[comparison.right].add(comparison.prompt)
    costs = []
    for name, answers in size.answers_per_candidate:
        model: Mapping[str, Any] = design["models"][name]
        limit = model.get("params", {}).get("max_tokens")
        tokens_in = 0
        if not imported:
            for number in sorted(asked[name]):
                tokens_in += _sent_tokens(design, name, design["prompts"][number])
        costs.append(
            CandidateCost(
                name=name,
                model=str(model["model"]),
                answers=answers,
                input_tokens=tokens_in,
                output_tokens=0 if imported else answers * (limit or ASSUMED_OUTPUT_TOKENS),
                assumed_output=not imported and limit is None,
            )
        )
    meetings = _meetings(list(design["arrangement"]))
    return CandidatePlan(
        candidates=tuple(costs),
        mode=str(design["pairing"]["mode"]),
        comparisons=size.comparisons,
        prompts=size.prompts,
        answers=size.answers,
        pairs=len(meetings),
        fewest_meetings=min(meetings.values(), default=0),
        most_meetings=max(meetings.values(), default=0),
        imported=imported,
        launders=design["normalization"]["launder"] is not None,
        separable=separable_after(
            len(names), pairing=str(design["pairing"]["mode"]), alpha=float(design["alpha"]),
            prompts=size.prompts,
        ),
    )  # fmt: skip


def count(n: int, noun: str) -> str:
    """``reportfmt.count`` with thousands grouped: ``190,000 comparisons``."""
    return f"{n:,}{_count(n, noun)[len(str(n)) :]}"


_PAIRS_SAID = {
    "all": "every pair of candidates on every prompt",
    "reference": "every other candidate against {name} on every prompt",
    "sample": "{m} pairs on each prompt, every pair as often as the others",
}


def summary_lines(plan: CandidatePlan, seed: str, alpha: float) -> list[tuple[str, bool]]:
    """What bt-design prints for a several-candidate design: (line, is a table row), prose
    lines to be wrapped, table rows kept whole."""
    shown = ", ".join(
        c.name if c.model == c.name else f"{c.name} ({c.model})" for c in plan.candidates
    )
    lines = [(f"preference design, {count(len(plan.candidates), 'candidate')}: {shown}", False)]
    mode = parse_mode(plan.mode)
    said = _PAIRS_SAID[mode.kind].format(name=mode.reference, m=mode.per_prompt)
    met = (
        f"each met {count(plan.most_meetings, 'time')}"
        if plan.fewest_meetings == plan.most_meetings
        else f"each met {plan.fewest_meetings:,} to {plan.most_meetings:,} times"
    )
    lines.append((f"pairs {plan.mode}: {said}; {count(plan.pairs, 'pair')}, {met}", False))
    lines.append(
        (
            f"{count(plan.comparisons, 'comparison')} from {count(plan.prompts, 'prompt')}, "
            f"seed {seed_shown(seed)}, alpha {alpha}",
            False,
        )
    )
    said_separable = plan.separable.note
    if plan.separable.separable is False:
        said_separable = f"warning: {said_separable}; add prompts"
    lines.append((said_separable, False))
    per = {c.answers for c in plan.candidates}
    each = f"{per.pop():,} per candidate" if len(per) == 1 else "per candidate as the table shows"
    if plan.imported:
        lines.append(
            (
                f"answers: {plan.answers} read from the directories ({each}); no model is called",
                False,
            )
        )
        return lines
    lines.append(
        (
            f"answers to generate: {plan.answers:,} ({each}), one per prompt and candidate, each "
            "shown in every comparison of its prompt: the cost grows with candidates x "
            "prompts, not with comparisons",
            False,
        )
    )
    return lines + [(row, True) for row in _token_table(plan)] + [(_cost_note(plan), False)]


def _token_table(plan: CandidatePlan) -> list[str]:
    width = max(len("candidate"), *(len(c.name) for c in plan.candidates))
    rows = [
        f"  {'candidate':<{width}}  {'answers':>7}  {'input tokens':>12}  {'output tokens':>13}"
    ]
    for c in plan.candidates:
        rows.append(
            f"  {c.name:<{width}}  {c.answers:>7,}  {'~' + format(c.input_tokens, ','):>12}  "
            f"{'~' + format(c.output_tokens, ','):>13}"
        )
    return rows


def _cost_note(plan: CandidatePlan) -> str:
    notes = []
    if any(c.assumed_output for c in plan.candidates):
        notes.append(
            f"output assumes {ASSUMED_OUTPUT_TOKENS} tokens an answer where no --max-tokens is set"
        )
    if plan.launders:
        notes.append(f"the launderer rewrites all {plan.answers:,} answers")
    notes.append("prices go to bt-generate, whose --check shows the cost before anything is sent")
    return "; ".join(notes)
