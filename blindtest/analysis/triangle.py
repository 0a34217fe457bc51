"""Triangle analysis: one judge (exact binomial against 1/3, or the sequential e-process),
or a panel (randomization test, beta-binomial pd). Pure; opens no file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from blindtest.analysis.common import (
    by_judge,
    interval,
    panel_noun,
    panel_void,
    prompts_by_trial,
    similarity_claim,
    subject_of,
    void_statement,
)
from blindtest.model.scoring import (
    arrangement_entry,
    triangle_correct,
)
from blindtest.reportfmt import TESTS, format_p, format_p_against, pct
from blindtest.rundir.artifacts import JsonObject, schema_tag
from blindtest.rundir.types import AnalysisFields, DesignRecord, ProtocolFields
from blindtest.stats import (
    e_process,
    judge_panel,
    triangle_test,
)

if TYPE_CHECKING:
    from blindtest.model.picks import Pick


def _triangle_rows(design: DesignRecord, picks: Sequence[Pick]) -> list[JsonObject]:
    models = design["models"]
    prompt_of = prompts_by_trial(design)
    rows = []
    for pick in picks:
        entry = arrangement_entry(design, pick.trial)
        odd = "B" if entry["doubled"] == "A" else "A"
        rows.append(
            {
                "trial": pick.trial,
                "prompt_id": prompt_of[pick.trial],
                "judge": pick.judge,
                "doubled": entry["doubled"],
                "doubled_model": models[entry["doubled"]]["model"],
                "odd_position": entry["odd_position"],
                "odd_model": models[odd]["model"],
                "pick": pick.pick,
                "correct": triangle_correct(design, pick.trial, pick.pick),
            }
        )
    return rows


def _triangle_statement(
    subject: str,
    result: Any,
    significant: bool,
    p_text: str | None = None,
    *,
    one_sided_bound: bool = False,
) -> str:
    """The sentence a person reads. ``p_text`` overrides the fixed-n p-value (sequential runs
    quote the anytime-valid one, since optional stopping invalidates the fixed-n p). With
    ``one_sided_bound`` (a pre-registered similarity claim follows) the null quotes no
    two-sided bound: the similarity sentence states the one-sided bound its test uses."""
    k, n = result.correct, result.n
    p_text = p_text or format_p(result.p_value)
    if significant:
        return (
            f"{subject} told them apart: {k} of {n} correct ({p_text}). After removing lucky "
            f"guesses, the difference was visible on about {pct(result.pd.estimate)} of these "
            f"prompts (95% interval {pct(result.pd.lo)} to {pct(result.pd.hi)})."
        )
    if one_sided_bound:
        return (
            f"{subject} could not tell them apart: {k} of {n} correct ({p_text}). This is a "
            "bound, not an equivalence: no evidence of a visible difference."
        )
    return (
        f"{subject} could not tell them apart: {k} of {n} correct ({p_text}). This is a bound, "
        f"not an equivalence: no evidence of a visible difference, and if one exists it shows "
        f"on at most {pct(result.pd.hi)} of these prompts (upper end of the two-sided 95% "
        "interval)."
    )


def _sequential(design: DesignRecord, rows: Sequence[JsonObject]) -> tuple[Any, list[JsonObject]]:
    outcomes = [bool(r["correct"]) for r in rows]
    result = e_process(outcomes, alpha=design["alpha"])
    values = [
        {
            "schema": schema_tag("e_values"),
            "trial": r["trial"],
            "correct": r["correct"],
            "log_e": log_e,
        }
        for r, log_e in zip(rows, result.log_e_values, strict=True)
    ]
    return result, values


def analyze_triangle(
    design: DesignRecord, picks: Sequence[Pick]
) -> tuple[AnalysisFields, int, list[JsonObject]]:
    judges = by_judge(picks)
    if len(judges) > 1:
        return analyze_triangle_panel(design, judges)
    ((judge, own),) = judges.items()
    rows = _triangle_rows(design, own)
    correct, n = sum(r["correct"] for r in rows), len(rows)
    subject = subject_of(own, judge)
    result = triangle_test(correct, n)
    fields: ProtocolFields = {
        "judges": [judge],
        "test": TESTS["triangle"],
        "correct": correct,
        "p_value": result.p_value,
        "pc": interval(result.pc),
        "pd": interval(result.pd),
        "dprime": interval(result.dprime),
        "per_trial": rows,
        "similarity": similarity_claim(design, correct, n),
    }
    if design["sequential"]:
        seq, values = _sequential(design, rows)
        crossed = seq.crossed_at is not None
        fields |= {
            "test": TESTS["sequential"],
            "p_value": seq.p_value,
            "sequential_result": {
                "crossed_at": seq.crossed_at,
                "e_value": seq.statistic,
                "threshold": seq.threshold,
                "anytime_valid_p": seq.p_value,
                "intervals_adjusted_for_stopping": False,
            },
        }
        return (
            {
                **fields,
                "n": n,
                "verdict": "distinguished" if crossed else "not distinguished",
                "statement": _triangle_statement(
                    subject, result, crossed, f"anytime-valid {format_p(seq.p_value)}"
                )
                + (
                    f" The sequential e-value crossed {seq.threshold:g} at trial {seq.crossed_at}."
                    if crossed
                    else f" The e-value reached {seq.statistic:.2f}, short of {seq.threshold:g}."
                )
                + " (Intervals are fixed-n intervals, not adjusted for stopping.)",
            },
            0,
            values,
        )
    if n < design["trials"]:
        return {**fields, "n": n, "verdict": "void", "statement": void_statement(design, n)}, 1, []
    significant = result.p_value <= design["alpha"]
    statement = _triangle_statement(
        subject,
        result,
        significant,
        format_p_against(result.p_value, design["alpha"]),
        one_sided_bound=fields["similarity"] is not None,
    )
    if fields["similarity"] is not None:
        statement += " " + fields["similarity"]["statement"]
    verdict = "distinguished" if significant else "not distinguished"
    return {**fields, "n": n, "verdict": verdict, "statement": statement}, 0, []


def reviewer_agreement(table: Mapping[str, Sequence[int | None]]) -> JsonObject:
    """How often two judges who saw the same trial picked the same position: every pair of
    judges on every shared trial (chance is 1/3 when both guess). Spec 001: agreement near
    chance is noise; agreement does not say whether the judges were right."""
    pairs = same = 0
    shared = 0
    rows = list(table.values())
    for t in range(len(rows[0]) if rows else 0):
        seen = [row[t] for row in rows if row[t] is not None]
        shared += len(seen) >= 2
        for i, a in enumerate(seen):
            for b in seen[i + 1 :]:
                pairs += 1
                same += a == b
    return {
        "trials_shared": shared,
        "pairs": pairs,
        "same": same,
        "rate": same / pairs if pairs else None,
        "chance": 1 / 3,
    }


def analyze_triangle_panel(
    design: DesignRecord, judges: Mapping[str, Sequence[Pick]]
) -> tuple[AnalysisFields, int, list[JsonObject]]:
    """Several judges on the same trials: randomization p-value, beta-binomial effect size."""
    short = None if design["sequential"] else panel_void(design, judges)
    if short is not None:
        void: AnalysisFields = {
            "judges": sorted(judges),
            "n": 0,
            "correct": 0,
            "p_value": None,
            "per_trial": [],
            "verdict": "void",
            "statement": short,
        }
        return void, 1, []
    odd = [e["odd_position"] for e in design["arrangement"]]
    table: dict[str, list[int | None]] = {}
    for judge, own in judges.items():
        by_trial = {p.trial: int(p.pick) for p in own}
        table[judge] = [by_trial.get(t) for t in range(1, design["trials"] + 1)]
    panel = judge_panel(table, odd)
    rows = [r for own in judges.values() for r in _triangle_rows(design, own)]
    correct, n = sum(r["correct"] for r in rows), len(rows)
    pooled = panel.beta_binomial
    significant = panel.p_value <= design["alpha"]
    noun = panel_noun(judges)
    who = f"The panel of {noun}" if noun.endswith(("judges", "people")) else f"The {noun}"
    statement = (
        f"{who} "
        + ("told them apart" if significant else "could not tell them apart")
        + f": {correct} of {n} judgements correct (exact randomization {format_p(panel.p_value)}). "
    )
    statement += (
        f"Across judges, the difference was visible on about {pct(pooled.pd.estimate)} of these "
        f"prompts (95% interval {pct(pooled.pd.lo)} to {pct(pooled.pd.hi)})."
        if significant
        else f"This is a bound, not an equivalence: if a difference exists, the average judge "
        f"sees it on at most {pct(pooled.pd.hi)} of these prompts."
    )
    fields: AnalysisFields = {
        "judges": sorted(judges),
        "test": TESTS["panel"],
        "n": n,
        "correct": correct,
        "p_value": panel.p_value,
        "pc": interval(pooled.pc),
        "pd": interval(pooled.pd),
        "dprime": {"estimate": None, "lo": None, "hi": None},
        "per_trial": sorted(rows, key=lambda r: (r["trial"], r["judge"])),
        "per_judge": {j: r.to_dict() for j, r in panel.per_judge.items()},
        "reviewer_agreement": reviewer_agreement(table),
        "pooled": {
            "method": "randomization test over trials; chance-corrected beta-binomial",
            "randomization": panel.randomization.to_dict(),
            "beta_binomial": pooled.to_dict(),
        },
        "verdict": "distinguished" if significant else "not distinguished",
        "statement": statement,
    }
    return fields, 0, []
