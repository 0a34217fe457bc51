"""Pair analysis: nickname consistency, two-sided; a panel tests each judge on their own
nicknames and Holm-adjusts. pd = |2 Pc - 1| comes from ``stats.pair``. Pure; opens no file."""

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
    option1_side,
    pair_consistent,
)
from blindtest.reportfmt import TESTS, format_p_against, pct
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import AnalysisFields, DesignRecord, ProtocolFields
from blindtest.stats import (
    holm,
    pair_test,
)

if TYPE_CHECKING:
    from blindtest.model.picks import Pick


def _nicknames(picks: Sequence[Pick]) -> tuple[str, str]:
    for pick in picks:
        if pick.nicknames:
            return pick.nicknames
    names = sorted({str(p.pick) for p in picks})
    return (names[0], names[1] if len(names) > 1 else f"not {names[0]}")


def _pair_rows(
    design: DesignRecord, judge: str, own: Sequence[Pick], first: str
) -> list[JsonObject]:
    prompt_of = prompts_by_trial(design)
    rows = []
    for pick in own:
        side = option1_side(design, pick.trial)
        rows.append(
            {
                "trial": pick.trial,
                "prompt_id": prompt_of[pick.trial],
                "judge": judge,
                "option1_side": side,
                "option1_model": design["models"][side]["model"],
                "pick": pick.pick,
                "consistent": pair_consistent(design, pick.trial, pick.pick, first),
            }
        )
    return rows


def _pair_sentence(
    subject: str,
    first: str,
    rows: Sequence[JsonObject],
    result: Any,
    alpha: float,
    *,
    one_sided_bound: bool = False,
) -> str:
    k, n = result.consistent, result.n
    majority = max(k, n - k)
    mapping = f"'{first}' = A" if k >= n - k else f"'{first}' = B"
    p_text = format_p_against(result.p_value, alpha)
    if result.p_value <= alpha:
        return (
            f"{subject} told them apart: the nicknames followed the models in {majority} of "
            f"{n} trials ({mapping}; two-sided {p_text})."
        )
    lead = (
        f"{subject} could not tell them apart: nicknames consistent with one mapping in "
        f"{majority} of {n} trials (two-sided {p_text}). This is a bound, not an equivalence"
    )
    if one_sided_bound:
        return lead + ": no evidence of a visible difference."
    pd_hi = result.pd.hi
    return (
        f"{lead}: if a difference exists, it shows on at most {pct(pd_hi)} of these "
        "prompts (upper end of the two-sided 95% interval)."
    )


def analyze_pair(
    design: DesignRecord, picks: Sequence[Pick]
) -> tuple[AnalysisFields, int, list[JsonObject]]:
    judges = by_judge(picks)
    if len(judges) > 1:
        return analyze_pair_panel(design, judges)
    ((judge, own),) = judges.items()
    first, second = _nicknames(own)
    rows = _pair_rows(design, judge, own, first)
    k, n = sum(r["consistent"] for r in rows), len(rows)
    result = pair_test(k, n)
    fields: ProtocolFields = {
        "judges": [judge],
        "test": TESTS["pair"],
        "correct": k,
        "p_value": result.p_value,
        "pc": interval(result.pc),
        "dprime": interval(result.dprime),
        "pd": interval(result.pd),
        "nicknames": [first, second],
        "per_trial": rows,
        "similarity": similarity_claim(design, k, n),
    }
    if n < design["trials"]:
        return {**fields, "n": n, "verdict": "void", "statement": void_statement(design, n)}, 1, []
    significant = result.p_value <= design["alpha"]
    statement = _pair_sentence(
        subject_of(own, judge),
        first,
        rows,
        result,
        design["alpha"],
        one_sided_bound=fields["similarity"] is not None,
    )
    if fields["similarity"] is not None:
        statement += " " + fields["similarity"]["statement"]
    verdict = "distinguished" if significant else "not distinguished"
    return {**fields, "n": n, "verdict": verdict, "statement": statement}, 0, []


def analyze_pair_panel(
    design: DesignRecord, judges: Mapping[str, Sequence[Pick]]
) -> tuple[AnalysisFields, int, list[JsonObject]]:
    """Several pair judges: each keeps their own nicknames, so each is tested on their own;
    the panel's p-value is the Holm-adjusted smallest (does any judge see a difference?)."""
    results, rows, sentences = {}, [], []
    for judge, own in sorted(judges.items()):
        first, _ = _nicknames(own)
        own_rows = _pair_rows(design, judge, own, first)
        k = sum(r["consistent"] for r in own_rows)
        results[judge] = pair_test(k, len(own_rows))
        rows += own_rows
        sentences.append(
            _pair_sentence(f"Judge {judge!r}", first, own_rows, results[judge], design["alpha"])
        )
    adjusted = holm([r.p_value for r in results.values()])
    fields: ProtocolFields = {
        "judges": sorted(judges),
        "test": TESTS["pair_panel"],
        "correct": None,
        "p_value": min(adjusted),
        "per_judge": {
            j: r.to_dict() | {"holm_p_value": p}
            for (j, r), p in zip(results.items(), adjusted, strict=True)
        },
        "per_trial": sorted(rows, key=lambda r: (r["trial"], r["judge"])),
    }
    # Each reviewer finishes their own trials: every trial, or the share --per-judge dealt.
    short = panel_void(design, judges)
    if short is not None:
        return {**fields, "n": len(rows), "verdict": "void", "statement": short}, 1, []
    significant = min(adjusted) <= design["alpha"]
    noun = panel_noun(judges)
    lead = (
        f"At least one of {noun} told them apart (Holm-adjusted "
        f"{format_p_against(min(adjusted), design['alpha'])})."
        if significant
        else f"None of {noun} told them apart (Holm-adjusted "
        f"{format_p_against(min(adjusted), design['alpha'])})."
    )
    verdict = "distinguished" if significant else "not distinguished"
    statement = " ".join([lead, *sentences])
    return {**fields, "n": len(rows), "verdict": verdict, "statement": statement}, 0, []
