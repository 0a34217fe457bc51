"""``--ask`` answers: yes/no per side with Wilson intervals and the exact McNemar test, or per
comparison when the answer is not about one response. Pure; opens no file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from blindtest.artifact_types import DesignRecord
from blindtest.artifacts import JsonObject
from blindtest.reportfmt import format_p, pct
from blindtest.scoring import (
    option1_side,
    preferred_side,
)
from blindtest.sides import side_label
from blindtest.stats import (
    mcnemar_exact,
    wilson,
)

if TYPE_CHECKING:
    from blindtest.records import Pick


def _answer_sides(design: DesignRecord, pick: Pick, answer: Any) -> dict[str, bool] | None:
    """A per-option answer ({"left": bool, "right": bool}, or option numbers "1"/"2") as
    {side: bool}; None for a per-comparison answer (a bare bool)."""
    if not isinstance(answer, Mapping):
        return None
    left = option1_side(design, pick.trial)
    right = "B" if left == "A" else "A"
    by_key = {"left": left, "1": left, "right": right, "2": right}
    return {by_key[k]: bool(v) for k, v in answer.items() if k in by_key}


def _yes_no(yes: int, n: int) -> JsonObject:
    return {"yes": yes, "no": n - yes, "n": n, "yes_rate": wilson(yes, n).to_dict() if n else None}


def answers_summary(design: DesignRecord, picks: Sequence[Pick]) -> list[JsonObject]:
    """Per ``--ask`` question: yes/no per side with Wilson 95% intervals and the exact McNemar
    test between sides, when the answers say which response they are about; per comparison
    (with a breakdown by the side the judge preferred) when they do not."""
    out = []
    for question in design["judging"]["extra_questions"]:
        per_option: list[dict[str, bool]] = []
        per_comparison: list[tuple[bool, str | None]] = []
        for pick in picks:
            if pick.answers is None or question not in pick.answers:
                continue
            answer = pick.answers[question]
            sides = _answer_sides(design, pick, answer)
            if sides is not None:
                per_option.append(sides)
            else:
                per_comparison.append((bool(answer), preferred_side(design, pick.trial, pick.pick)))
        entry: JsonObject = {"question": question}
        if per_option:
            paired = [a for a in per_option if "A" in a and "B" in a]
            entry["about"] = "each response"
            entry["sides"] = {
                side: _yes_no(
                    sum(a[side] for a in per_option if side in a),
                    sum(1 for a in per_option if side in a),
                )
                for side in ("A", "B")
            }
            test = mcnemar_exact(
                sum(1 for a in paired if a["A"] and not a["B"]),
                sum(1 for a in paired if a["B"] and not a["A"]),
            )
            entry["paired"] = {
                "test": "exact McNemar (two-sided binomial on discordant pairs)",
                "n": len(paired),
                "yes_a_no_b": test.yes_no,
                "yes_b_no_a": test.no_yes,
                "p_value": test.p_value,
            }
        if per_comparison:
            yes = sum(1 for a, _ in per_comparison if a)
            entry["comparisons"] = _yes_no(yes, len(per_comparison)) | {
                "by_preferred": {
                    label: {
                        "yes": sum(1 for a, p in per_comparison if a and p == side),
                        "n": sum(1 for _, p in per_comparison if p == side),
                    }
                    for label, side in (("A", "A"), ("B", "B"), ("tie", None))
                }
            }
            entry.setdefault("about", "the comparison as a whole")
        entry["statement"] = _answer_sentence(design, entry)
        out.append(entry)
    return out


def _rate(cell: Mapping[str, Any]) -> str:
    rate = cell["yes_rate"]
    if rate is None:
        return "no answers"
    return (
        f"yes {cell['yes']} of {cell['n']} ({pct(rate['estimate'])}, Wilson 95% interval "
        f"{pct(rate['lo'])} to {pct(rate['hi'])})"
    )


def _answer_sentence(design: DesignRecord, entry: Mapping[str, Any]) -> str:
    parts = [f"{entry['question']!r}"]
    if "sides" not in entry and "comparisons" not in entry:
        # Nobody answered it (an LLM judge or a bot is not asked).
        return f"{parts[0]}: no answers (the judges of these picks were not asked it)."
    models = {s: side_label(design, s) for s in ("A", "B")}  # a label, else the model
    if "sides" in entry:
        parts.append(
            "asked of each response: "
            + "; ".join(f"{s} ({models[s]}) {_rate(entry['sides'][s])}" for s in ("A", "B"))
        )
        paired = entry["paired"]
        parts.append(
            f"paired over {paired['n']} comparisons, yes for A only {paired['yes_a_no_b']}, "
            f"for B only {paired['yes_b_no_a']} (exact McNemar, two-sided "
            f"{format_p(paired['p_value'])})"
        )
    if "comparisons" in entry:
        cell = entry["comparisons"]
        by = cell["by_preferred"]
        parts.append(
            "asked once per comparison, not of either response, so it cannot be split by "
            f"side: {_rate(cell)}; yes in {by['A']['yes']} of {by['A']['n']} comparisons won "
            f"by A, {by['B']['yes']} of {by['B']['n']} won by B, {by['tie']['yes']} of "
            f"{by['tie']['n']} ties"
        )
    return ": ".join(parts[:2]) + ("; " + "; ".join(parts[2:]) if len(parts) > 2 else "") + "."
