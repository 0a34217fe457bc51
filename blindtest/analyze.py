"""bt-analyze's library: score picks against the arrangement, call the statistics, and write
the report a person reads. Pure; opens no file and prints nothing (``render`` formats).

What a report may say is fixed here, in one place: a null is a bound, never "the same"; a
fixed design that was not finished is void; a preference run that fails its position-bias or
agreement gate has not measured anything. ``AnalysisResult.exit_code`` is 1 in those cases.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from blindtest import artifacts
from blindtest import judge as judging
from blindtest.artifacts import JsonObject, schema_tag
from blindtest.generate import is_loopback
from blindtest.stats import (
    binomial_test,
    cohen_kappa,
    e_process,
    fleiss_kappa,
    holm,
    judge_panel,
    pair_test,
    percent_agreement,
    position_bias,
    preference_test,
    similarity_test,
    triangle_test,
)
from blindtest.stats.intervals import Interval

#: The test behind each report's p-value, as the result screen names it.
TESTS = {
    "triangle": "one-sided exact binomial against chance 1/3",
    "sequential": "sequential e-process against 1/3; anytime-valid p",
    "panel": "exact randomization test over trials, several judges",
    "pair": "two-sided exact binomial against 1/2",
    "pair_panel": "per-judge two-sided exact binomial, Holm-adjusted",
    "preference": "exact two-sided binomial against 1/2, Wilson interval",
}

#: A bot whose excess over chance reaches this share of the judge's "largely explains" it.
EXPLAINS_SHARE = 0.75
#: Preference panels agreeing less than this (kappa) detected no shared signal.
MIN_KAPPA = 0.2
#: Position bias is flagged when the left share deviates from 1/2 by more than this.
POSITION_MARGIN = 0.1


@dataclass(frozen=True, slots=True)
class AnalysisOptions:
    min_kappa: float = MIN_KAPPA
    position_margin: float = POSITION_MARGIN


@dataclass(frozen=True, slots=True)
class AnalysisResult:
    report: JsonObject
    exit_code: int
    e_values: list[JsonObject] = field(default_factory=list)


def _pct(value: float | None) -> str:
    return "?" if value is None or math.isnan(value) else f"{100 * value:.0f}%"


def format_p(value: float | None) -> str:
    """``p = 0.19`` the way spec 000 prints it: two significant digits (0.19, 0.038), one
    below 0.001 (0.0009, 0.000002), halves rounded up, and ``p < 0.000001`` beyond that."""
    if value is None:
        return "p not defined"
    if value < 1e-6:
        return "p < 0.000001"
    digits = 2 if value >= 0.001 else 1
    exponent = Decimal(repr(value)).adjusted()
    rounded = Decimal(repr(value)).quantize(Decimal(1).scaleb(exponent - digits + 1), ROUND_HALF_UP)
    decimals = max(2, digits - 1 - rounded.adjusted())
    return f"p = {rounded:.{decimals}f}"


def _interval(interval: Interval) -> JsonObject:
    return interval.to_dict()


def _subject(picks: Sequence[judging.Pick], judge: str) -> str:
    if any(p.bot for p in picks):
        return f"The {judge} judge"
    return "You" if judge else "The judge"


def _prompt_of(design: Mapping[str, Any]) -> dict[int, str]:
    return {e["trial"]: e["prompt_id"] for e in design["arrangement"]}


def _by_judge(picks: Sequence[judging.Pick]) -> dict[str, list[judging.Pick]]:
    grouped: dict[str, list[judging.Pick]] = defaultdict(list)
    for pick in picks:
        grouped[pick.judge].append(pick)
    return {judge: sorted(rows, key=lambda p: p.trial) for judge, rows in grouped.items()}


# --------------------------------------------------------------------------- channels & notes


def channels(design: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(open, closed) channels, as the report states them."""
    norm = design["normalization"]
    closed = ["position (seeded, balanced)", "latency (all responses prefetched)"]
    if norm["launder"] is not None:
        return ["content as rewritten by the laundering model"], [
            *closed,
            "formatting, wording and length of the originals (laundered)",
        ]
    opened = ["content", "wording and style"]
    if norm["strip_formatting"]:
        closed.append("formatting (stripped)")
    else:
        opened.append("formatting")
    if norm["truncate_match"]:
        closed.append("length (cut to the shortest in each trial)")
    elif norm["length_band"] is not None:
        band = norm["length_band"]
        opened.append(f"length (narrowed: both asked for {band['lo']}..{band['hi']} words)")
    else:
        opened.append("length")
    return opened, closed


def notes(design: Mapping[str, Any]) -> list[str]:
    """Sentences every reader of this run must see."""
    out = []
    launder = design["normalization"]["launder"]
    if launder is not None:
        out.append(
            f"LAUNDERED RUN: a third model ({launder['model']}) rewrote every response. The "
            "result speaks to the laundered forms only: laundering may erase real differences "
            "or impose its own uniform errors, so a null result says nothing about the originals."
        )
    if design["demo"]:
        simulated = all(
            m["model"].startswith("sim-") and is_loopback(m["base_url"])
            for m in design["models"].values()
        )
        what = (
            "bundled generic prompts and simulated models"
            if simulated
            else ("bundled generic prompts")
        )
        out.append(
            f"Demo run: {what}. It shows how blindtest works and says nothing about your "
            "models on your workload."
        )
    temperatures = {m["params"]["temperature"] for m in design["models"].values() if "params" in m}
    if design["source"]["kind"] == "dirs":
        out.append(
            "Imported outputs: the responses came from files, not from endpoints; the result "
            "speaks to those files, and to the models only as far as one identical harness "
            "produced them."
        )
    if 0 in temperatures:
        out.append(
            "Generated at temperature 0: two draws from one model would be identical, so the "
            "triangle test cannot be used; pair mode asks for consistent nicknames instead."
        )
    out.append(
        "Shown to the judge: the prompt and the responses in seeded positions. Never shown "
        "before this report: model names, which side is which, timing, or any running score."
    )
    out.append(
        "This is a statement about these prompts, these judges and these model builds; it does "
        "not transfer to other workloads or to a later build behind the same name."
    )
    return out


# --------------------------------------------------------------------------- triangle


def _triangle_rows(design: Mapping[str, Any], picks: Sequence[judging.Pick]) -> list[JsonObject]:
    models = design["models"]
    prompt_of = _prompt_of(design)
    rows = []
    for pick in picks:
        entry = judging.arrangement_entry(design, pick.trial)
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
                "correct": judging.triangle_correct(design, pick),
            }
        )
    return rows


def _void(design: Mapping[str, Any], judged: int) -> str:
    return (
        f"Void: only {judged} of {design['trials']} trials were judged. A fixed design must be "
        "finished; stopping early, or deciding when to stop after seeing how it goes, would "
        "void the p-value. Finish with bt-judge (it resumes where you stopped), or pre-register "
        "--sequential next time."
    )


def _triangle_statement(
    subject: str, result: Any, significant: bool, p_text: str | None = None
) -> str:
    """The sentence a person reads. ``p_text`` overrides the fixed-n p-value (sequential runs
    quote the anytime-valid one, since optional stopping invalidates the fixed-n p)."""
    k, n = result.correct, result.n
    p_text = p_text or format_p(result.p_value)
    if significant:
        return (
            f"{subject} told them apart: {k} of {n} correct ({p_text}). After removing lucky "
            f"guesses, the difference was visible on about {_pct(result.pd.estimate)} of these "
            f"prompts (95% interval {_pct(result.pd.lo)} to {_pct(result.pd.hi)})."
        )
    return (
        f"{subject} could not tell them apart: {k} of {n} correct ({p_text}). This is a bound, "
        f"not an equivalence: no evidence of a visible difference, and if one exists it shows "
        f"on at most {_pct(result.pd.hi)} of these prompts (upper end of the two-sided 95% "
        "interval)."
    )


def _similarity(design: Mapping[str, Any], correct: int, n: int) -> JsonObject | None:
    pd0 = design["similarity_pd0"]
    if pd0 is None or n == 0:
        return None
    result = similarity_test(correct, n, pd0, protocol=design["protocol"], alpha=design["alpha"])
    level = f"{100 * (1 - design['alpha']):.0f}%"
    if result.similar:
        claim = (
            f"Indistinguishable within pd0 = {_pct(pd0)} at {level}: the data exclude a "
            f"difference visible on {_pct(pd0)} or more of these prompts "
            f"({format_p(result.p_value)})."
        )
    else:
        claim = (
            f"Similarity within pd0 = {_pct(pd0)} was not shown ({format_p(result.p_value)}): "
            f"the one-sided {level} upper bound on pd is {_pct(result.pd_upper)}, above pd0."
        )
    return {**result.to_dict(), "statement": claim}


def _sequential(
    design: Mapping[str, Any], rows: Sequence[JsonObject]
) -> tuple[Any, list[JsonObject]]:
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
    design: Mapping[str, Any], picks: Sequence[judging.Pick]
) -> tuple[JsonObject, int, list[JsonObject]]:
    judges = _by_judge(picks)
    if len(judges) > 1:
        return analyze_triangle_panel(design, judges)
    ((judge, own),) = judges.items()
    rows = _triangle_rows(design, own)
    correct, n = sum(r["correct"] for r in rows), len(rows)
    subject = _subject(own, judge)
    result = triangle_test(correct, n)
    fields: JsonObject = {
        "judges": [judge],
        "test": TESTS["triangle"],
        "n": n,
        "correct": correct,
        "p_value": result.p_value,
        "pc": _interval(result.pc),
        "pd": _interval(result.pd),
        "dprime": _interval(result.dprime),
        "per_trial": rows,
        "similarity": _similarity(design, correct, n),
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
        }
        return fields, 0, values
    if n < design["trials"]:
        fields |= {"verdict": "void", "statement": _void(design, n)}
        return fields, 1, []
    significant = result.p_value <= design["alpha"]
    fields["verdict"] = "distinguished" if significant else "not distinguished"
    fields["statement"] = _triangle_statement(subject, result, significant)
    if fields["similarity"] is not None:
        fields["statement"] += " " + fields["similarity"]["statement"]
    return fields, 0, []


def analyze_triangle_panel(
    design: Mapping[str, Any], judges: Mapping[str, Sequence[judging.Pick]]
) -> tuple[JsonObject, int, list[JsonObject]]:
    """Several judges on the same trials: randomization p-value, beta-binomial effect size."""
    incomplete = [j for j, own in judges.items() if len(own) < design["trials"]]
    if incomplete and not design["sequential"]:
        judged = min(len(judges[j]) for j in incomplete)
        fields = {
            "judges": sorted(judges),
            "n": 0,
            "correct": 0,
            "p_value": None,
            "per_trial": [],
            "verdict": "void",
            "statement": _void(design, judged) + f" (judge {incomplete[0]!r})",
        }
        return fields, 1, []
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
    statement = (
        f"The panel of {len(judges)} judges "
        + ("told them apart" if significant else "could not tell them apart")
        + f": {correct} of {n} judgements correct (exact randomization {format_p(panel.p_value)}). "
    )
    statement += (
        f"Across judges, the difference was visible on about {_pct(pooled.pd.estimate)} of these "
        f"prompts (95% interval {_pct(pooled.pd.lo)} to {_pct(pooled.pd.hi)})."
        if significant
        else f"This is a bound, not an equivalence: if a difference exists, the average judge "
        f"sees it on at most {_pct(pooled.pd.hi)} of these prompts."
    )
    fields = {
        "judges": sorted(judges),
        "test": TESTS["panel"],
        "n": n,
        "correct": correct,
        "p_value": panel.p_value,
        "pc": _interval(pooled.pc),
        "pd": _interval(pooled.pd),
        "dprime": {"estimate": None, "lo": None, "hi": None},
        "per_trial": sorted(rows, key=lambda r: (r["trial"], r["judge"])),
        "per_judge": {j: r.to_dict() for j, r in panel.per_judge.items()},
        "pooled": {
            "method": "randomization test over trials; chance-corrected beta-binomial",
            "randomization": panel.randomization.to_dict(),
            "beta_binomial": pooled.to_dict(),
        },
        "verdict": "distinguished" if significant else "not distinguished",
        "statement": statement,
    }
    return fields, 0, []


# --------------------------------------------------------------------------- pair


def _nicknames(picks: Sequence[judging.Pick]) -> tuple[str, str]:
    for pick in picks:
        if pick.nicknames:
            return pick.nicknames
    names = sorted({str(p.pick) for p in picks})
    return (names[0], names[1] if len(names) > 1 else f"not {names[0]}")


def _pair_rows(
    design: Mapping[str, Any], judge: str, own: Sequence[judging.Pick], first: str
) -> list[JsonObject]:
    prompt_of = _prompt_of(design)
    rows = []
    for pick in own:
        side = judging.option1_side(design, pick.trial)
        rows.append(
            {
                "trial": pick.trial,
                "prompt_id": prompt_of[pick.trial],
                "judge": judge,
                "option1_side": side,
                "option1_model": design["models"][side]["model"],
                "pick": pick.pick,
                "consistent": (pick.pick == first) == (side == "A"),
            }
        )
    return rows


def _pair_sentence(
    subject: str, first: str, rows: Sequence[JsonObject], result: Any, alpha: float
) -> str:
    k, n = result.consistent, result.n
    majority = max(k, n - k)
    mapping = f"'{first}' = A" if k >= n - k else f"'{first}' = B"
    if result.p_value <= alpha:
        return (
            f"{subject} told them apart: the nicknames followed the models in {majority} of "
            f"{n} trials ({mapping}; two-sided {format_p(result.p_value)})."
        )
    pd_hi = _pair_pd(result.pc)["hi"]
    return (
        f"{subject} could not tell them apart: nicknames consistent with one mapping in "
        f"{majority} of {n} trials (two-sided {format_p(result.p_value)}). This is a bound, not "
        f"an equivalence: if a difference exists, it shows on at most {_pct(pd_hi)} of these "
        "prompts (upper end of the two-sided 95% interval)."
    )


def analyze_pair(
    design: Mapping[str, Any], picks: Sequence[judging.Pick]
) -> tuple[JsonObject, int, list[JsonObject]]:
    judges = _by_judge(picks)
    if len(judges) > 1:
        return analyze_pair_panel(design, judges)
    ((judge, own),) = judges.items()
    first, second = _nicknames(own)
    rows = _pair_rows(design, judge, own, first)
    k, n = sum(r["consistent"] for r in rows), len(rows)
    result = pair_test(k, n)
    fields: JsonObject = {
        "judges": [judge],
        "test": TESTS["pair"],
        "n": n,
        "correct": k,
        "p_value": result.p_value,
        "pc": _interval(result.pc),
        "dprime": _interval(result.dprime),
        "pd": _pair_pd(result.pc),
        "nicknames": [first, second],
        "per_trial": rows,
        "similarity": _similarity(design, k, n),
    }
    if n < design["trials"]:
        return fields | {"verdict": "void", "statement": _void(design, n)}, 1, []
    significant = result.p_value <= design["alpha"]
    statement = _pair_sentence(_subject(own, judge), first, rows, result, design["alpha"])
    if fields["similarity"] is not None:
        statement += " " + fields["similarity"]["statement"]
    verdict = "distinguished" if significant else "not distinguished"
    return fields | {"verdict": verdict, "statement": statement}, 0, []


def analyze_pair_panel(
    design: Mapping[str, Any], judges: Mapping[str, Sequence[judging.Pick]]
) -> tuple[JsonObject, int, list[JsonObject]]:
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
    fields: JsonObject = {
        "judges": sorted(judges),
        "test": TESTS["pair_panel"],
        "n": len(rows),
        "correct": None,
        "p_value": min(adjusted),
        "per_judge": {
            j: r.to_dict() | {"holm_p_value": p}
            for (j, r), p in zip(results.items(), adjusted, strict=True)
        },
        "per_trial": sorted(rows, key=lambda r: (r["trial"], r["judge"])),
    }
    short = [j for j, own in judges.items() if len(own) < design["trials"]]
    if short:
        return (
            fields | {"verdict": "void", "statement": _void(design, len(judges[short[0]]))},
            1,
            [],
        )
    significant = min(adjusted) <= design["alpha"]
    lead = (
        f"At least one of {len(judges)} judges told them apart (Holm-adjusted "
        f"{format_p(min(adjusted))})."
        if significant
        else f"None of {len(judges)} judges told them apart (Holm-adjusted "
        f"{format_p(min(adjusted))})."
    )
    verdict = "distinguished" if significant else "not distinguished"
    return fields | {"verdict": verdict, "statement": " ".join([lead, *sentences])}, 0, []


def _pair_pd(pc: Interval) -> JsonObject:
    """pd = |2 Pc - 1|: the share of trials where the judge saw which model was which."""
    estimate = abs(2 * pc.estimate - 1)
    hi = max(2 * pc.hi - 1, 1 - 2 * pc.lo)
    lo = max(0.0, 2 * pc.lo - 1, 1 - 2 * pc.hi)
    return {"estimate": estimate, "lo": lo, "hi": min(1.0, hi)}


# --------------------------------------------------------------------------- preference


def _agreement(
    design: Mapping[str, Any], judges: Mapping[str, Sequence[judging.Pick]]
) -> JsonObject | None:
    if len(judges) < 2:
        return None
    names = sorted(judges)
    votes = {
        j: {p.trial: judging.preferred_side(design, p) or "tie" for p in judges[j]} for j in names
    }
    common = sorted(set.intersection(*(set(v) for v in votes.values())))
    if not common:
        return {"n_items": 0, "statement": "The judges share no trial; agreement is not measured."}
    ratings = [[votes[j][t] for j in names] for t in common]
    kappa = (
        cohen_kappa([r[0] for r in ratings], [r[1] for r in ratings])
        if len(names) == 2
        else fleiss_kappa(ratings)
    )
    percent = percent_agreement(ratings)
    return {
        "percent": percent.to_dict(),
        "kappa": kappa.to_dict(),
        "n_items": len(common),
        "caveat": kappa.caveat,
    }


def _majority(
    design: Mapping[str, Any], judges: Mapping[str, Sequence[judging.Pick]]
) -> dict[int, str]:
    """Per trial, the side most judges preferred ("tie" when split or tied)."""
    votes: dict[int, Counter[str]] = defaultdict(Counter)
    for own in judges.values():
        for pick in own:
            votes[pick.trial][judging.preferred_side(design, pick) or "tie"] += 1
    outcome = {}
    for trial, count in votes.items():
        ranked = count.most_common()
        tied = len(ranked) > 1 and ranked[0][1] == ranked[1][1]
        outcome[trial] = "tie" if tied else ranked[0][0]
    return outcome


def _by_tag(design: Mapping[str, Any], outcome: Mapping[int, str]) -> JsonObject:
    tags = {p["id"]: p.get("tags", []) for p in design["prompts"]}
    prompt_of = _prompt_of(design)
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for trial, side in outcome.items():
        for tag in tags[prompt_of[trial]]:
            table[tag][side] += 1
    return {tag: {"A": c["A"], "B": c["B"], "ties": c["tie"]} for tag, c in sorted(table.items())}


def analyze_preference(
    design: Mapping[str, Any], picks: Sequence[judging.Pick], options: AnalysisOptions
) -> tuple[JsonObject, int, list[JsonObject]]:
    judges = _by_judge(picks)
    outcome = _majority(design, judges)
    wins_a = sum(1 for s in outcome.values() if s == "A")
    wins_b = sum(1 for s in outcome.values() if s == "B")
    ties = sum(1 for s in outcome.values() if s == "tie")
    result = preference_test(wins_a, wins_b, ties, alpha=design["alpha"])
    non_tie = [p for p in picks if p.pick != "tie"]
    left = sum(1 for p in non_tie if p.pick == "left")
    bias = (
        position_bias(left, len(non_tie), alpha=design["alpha"], margin=options.position_margin)
        if non_tie
        else None
    )
    agreement = _agreement(design, judges)
    problems = _gate_problems(bias, agreement, options)
    warnings = []
    if bias is not None and bias.exceeds_margin and not bias.significant:
        warnings.append(
            f"Position: left chosen {bias.left} of {bias.n} times ({_pct(bias.statistic)}), more "
            f"than {_pct(options.position_margin)} from half but not significantly "
            f"({format_p(bias.p_value)}); worth a look, not a failure."
        )
    prompt_of = _prompt_of(design)
    rows = [
        {
            "trial": p.trial,
            "prompt_id": prompt_of[p.trial],
            "judge": p.judge,
            "left": judging.option1_side(design, p.trial),
            "pick": p.pick,
            "preferred": judging.preferred_side(design, p),
            "reason": p.reason,
        }
        for own in judges.values()
        for p in own
    ]
    fields: JsonObject = {
        "judges": sorted(judges),
        "test": TESTS["preference"],
        "n": len(outcome),
        "wins": wins_a,
        "losses": wins_b,
        "ties": ties,
        "p_value": result.p_value,
        "pc": _interval(result.win_rate),
        "preference": result.to_dict(),
        "position_bias": bias.to_dict() if bias else None,
        "agreement": agreement,
        "by_tag": _by_tag(design, outcome),
        "gates_failed": problems,
        "warnings": warnings,
        "per_trial": sorted(rows, key=lambda r: (r["trial"], r["judge"])),
    }
    incomplete = len(outcome) < design["trials"]
    if incomplete:
        return fields | {"verdict": "void", "statement": _void(design, len(outcome))}, 1, []
    if problems:
        return (
            fields | {"verdict": "unusable", "statement": "Not a result: " + " ".join(problems)},
            1,
            [],
        )
    a, b = (design["models"][s]["model"] for s in ("A", "B"))
    verdict = {"better": f"A ({a}) preferred", "worse": f"B ({b}) preferred"}.get(
        result.verdict, "inconclusive"
    )
    statement = (
        f"A ({a}) won {wins_a}, B ({b}) won {wins_b}, {ties} ties (ties excluded from the "
        f"win rate). A's win rate {_pct(result.win_rate.estimate)} (Wilson 95% "
        f"{_pct(result.win_rate.lo)} to {_pct(result.win_rate.hi)}), exact two-sided "
        f"{format_p(result.p_value)}. "
    )
    if result.verdict == "inconclusive":
        reason = (
            "the margin is smaller than two tasks"
            if not result.margin_ok
            else "the Wilson interval and the exact test do not both exclude 1/2"
        )
        statement += f"Inconclusive: {reason}. A high tie rate is itself a finding."
    else:
        statement += f"Verdict: {verdict} (interval and exact test agree, margin {result.margin})."
    return fields | {"verdict": verdict, "statement": statement}, 0, []


def _gate_problems(bias: Any, agreement: JsonObject | None, options: AnalysisOptions) -> list[str]:
    """Spec 002's gates. Position bias fails the run when the exact test finds it (a margin
    alone would fail an unbiased judge a third of the time at n = 10); agreement fails it
    when kappa is below ``min_kappa``."""
    problems = []
    if bias is not None and bias.significant:
        problems.append(
            f"position bias: judges chose left {bias.left} of {bias.n} times "
            f"({_pct(bias.statistic)}, exact two-sided {format_p(bias.p_value)}); they "
            "responded to position, so every win rate here is void."
        )
    kappa = (agreement or {}).get("kappa", {}).get("statistic")
    if kappa is not None and kappa < options.min_kappa:
        problems.append(
            f"agreement: kappa {kappa:.2f} is below {options.min_kappa:g}; the panel detected no "
            "shared signal, so the win rate is noise however decisive it looks."
        )
    return problems


# --------------------------------------------------------------------------- audit & appendix

_BOT_CHANNEL = {"length": "length", "duplicate": "near-duplicates"}
_BOT_NAME = {
    "length": "length bot, which reads nothing but word counts",
    "duplicate": "duplicate spotter, which only looks for two near-identical answers",
}


def _excess(correct: int, n: int, chance: float) -> float:
    return correct / n - chance if n else 0.0


def _matching(bot: Mapping[str, Any], fields: Mapping[str, Any]) -> int:
    bot_picks = {p["trial"]: p["pick"] for p in bot["picks"]}
    return sum(1 for r in fields["per_trial"] if bot_picks.get(r["trial"]) == r["pick"])


def _length_preference(
    design: Mapping[str, Any], bot: Mapping[str, Any], fields: Mapping[str, Any]
) -> list[str]:
    """Preference: did the judges simply prefer the longer response? (Spec 001: reviewers
    systematically prefer longer output.)"""
    longer = {p["trial"]: p["pick"] for p in bot["picks"] if p["pick"] != "tie"}
    votes = [r for r in fields["per_trial"] if r["pick"] != "tie" and r["trial"] in longer]
    if not votes:
        return []
    followed = sum(1 for r in votes if r["pick"] == longer[r["trial"]])
    p_value = binomial_test(followed, len(votes), 0.5).p_value
    share = followed / len(votes)
    if p_value <= design["alpha"] and share >= EXPLAINS_SHARE:
        return [
            f"The judges preferred the longer response in {followed} of {len(votes)} untied "
            f"comparisons ({format_p(p_value)}). Reviewers systematically prefer longer output, "
            "so this preference may be a preference for length."
        ]
    if bot["p_value"] is not None and bot["p_value"] <= design["alpha"]:
        return [
            f"Length separates the models ({bot['correct']} of {bot['n']} longer answers were "
            f"A's), but the judges preferred the longer response in only {followed} of "
            f"{len(votes)} comparisons."
        ]
    return []


def _bot_sentence(
    design: Mapping[str, Any], kind: str, bot: Mapping[str, Any], fields: Mapping[str, Any]
) -> str | None:
    """Triangle and pair: does a bot that cannot read come close to the judge?"""
    chance = 1 / 3 if design["protocol"] == "triangle" else 0.5
    if fields.get("correct") is None or not fields.get("n"):
        return None
    judge_excess = _excess(fields["correct"], fields["n"], chance)
    bot_excess = _excess(bot["correct"], bot["n"], chance)
    if design["protocol"] == "pair":
        judge_excess, bot_excess = abs(judge_excess), abs(bot_excess)
    name = _BOT_NAME[kind]
    if fields.get("verdict") == "distinguished":
        if judge_excess > 0 and bot_excess >= EXPLAINS_SHARE * judge_excess:
            return (
                f"The discrimination is largely explained by {_BOT_CHANNEL[kind]}: the {name}, "
                f"scored {bot['correct']}/{bot['n']} against the judge's "
                f"{fields['correct']}/{fields['n']}. You know what you measured."
            )
        return None
    if bot["p_value"] is not None and bot["p_value"] <= design["alpha"]:
        return (
            f"The {name}, scored {bot['correct']}/{bot['n']} ({format_p(bot['p_value'])}): "
            f"{_BOT_CHANNEL[kind]} alone separates the models on these prompts, a channel these "
            "judgements did not pick up."
        )
    return None


def audit_summary(
    design: Mapping[str, Any], audit: Mapping[str, Any] | None, fields: Mapping[str, Any]
) -> JsonObject | None:
    """The bots' scores beside the judge's, and what they explain (spec 000, "Tells")."""
    if audit is None:
        return None
    summary: JsonObject = {"bots": {}, "sentences": [], "checks": audit.get("checks")}
    single = len(fields.get("judges") or []) == 1
    for kind, bot in audit["bots"].items():
        if not bot.get("applicable", True) or not bot["n"]:
            continue
        entry = {"correct": bot["correct"], "n": bot["n"], "p_value": bot["p_value"]}
        if design["protocol"] != "preference" and single:
            entry["same_picks_as_judge"] = _matching(bot, fields)
        summary["bots"][kind] = entry
        if design["protocol"] == "preference":
            summary["sentences"] += (
                _length_preference(design, bot, fields) if kind == "length" else []
            )
            continue
        sentence = _bot_sentence(design, kind, bot, fields)
        if sentence:
            summary["sentences"].append(sentence)
    return summary


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


# --------------------------------------------------------------------------- the report


def build_report(
    design: Mapping[str, Any],
    design_sha256: str,
    picks: Sequence[judging.Pick],
    *,
    inputs: Mapping[str, str],
    missing: Sequence[str] = (),
    audit: Mapping[str, Any] | None = None,
    generation: Mapping[str, Any] | None = None,
    options: AnalysisOptions | None = None,
    e_values_path: str | None = None,
) -> AnalysisResult:
    """Everything ``report.json`` holds; ``exit_code`` 1 when the run measured nothing."""
    options = options or AnalysisOptions()
    protocol = design["protocol"]
    if not picks:
        fields: JsonObject = {
            "judges": [],
            "n": 0,
            "p_value": None,
            "per_trial": [],
            "verdict": "void",
            "statement": _void(design, 0),
        }
        code = 1
        values: list[JsonObject] = []
    elif protocol == "triangle":
        fields, code, values = analyze_triangle(design, picks)
    elif protocol == "pair":
        fields, code, values = analyze_pair(design, picks)
    else:
        fields, code, values = analyze_preference(design, picks, options)
    opened, closed = channels(design)
    report: JsonObject = {
        "schema": schema_tag("report"),
        "design_sha256": design_sha256,
        "inputs": dict(inputs),
        "missing": list(missing),
        "protocol": protocol,
        "alpha": design["alpha"],
        "sequential": design["sequential"],
        "trials_planned": design["trials"],
        "models": {side: spec["model"] for side, spec in design["models"].items()},
        "correct": None,
        **fields,
        "audit": audit_summary(design, audit, fields),
        "channels_open": opened,
        "channels_closed": closed,
        "notes": notes(design),
        "appendix": appendix(generation),
        "cost": cost_line(generation),
        "e_values": e_values_path if values else None,
        "analysis_options": {
            "min_kappa": options.min_kappa,
            "position_margin": options.position_margin,
        },
    }
    return AnalysisResult(report=report, exit_code=code, e_values=values)


# --------------------------------------------------------------------------- loading a run


def input_name(run_dir: Path, path: Path) -> str:
    """How a report names an input: relative to the run directory when inside it."""
    try:
        return path.resolve().relative_to(run_dir.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def analyze_run(
    run_dir: Path,
    picks_paths: Sequence[Path],
    options: AnalysisOptions | None = None,
    *,
    e_values_path: Path | None = None,
) -> AnalysisResult:
    """Load what the run directory holds (through ``artifacts``) and build the report.

    Needs ``design.json`` and at least one picks file; every other artifact adds to the report
    when present and is listed in ``missing`` when not.
    """
    loaded = artifacts.load_design(run_dir)
    if (run_dir / artifacts.TRIALS).exists():
        view = judging.load_judge_run(run_dir).view
    else:
        # Scoring needs only the design; the trial numbers come from its arrangement.
        blank = [judging.Trial(e["trial"], "", ()) for e in loaded.design["arrangement"]]
        view = judging.view_of(loaded.design, blank, loaded.sha256)
    paths = list(picks_paths) or [run_dir / artifacts.PICKS]
    picks: list[judging.Pick] = []
    for path in paths:
        picks.extend(judging.read_picks(path, view).picks)
    if len(paths) > 1:
        judging.check_picks(picks, view, "the picks files together")
    inputs = {artifacts.DESIGN: loaded.sha256}
    for path in paths:
        inputs[input_name(run_dir, path)] = artifacts.sha256_file(path)
    missing = []
    for name in (artifacts.RESPONSES, artifacts.TRIALS, artifacts.AUDIT, artifacts.GENERATION):
        if (run_dir / name).exists():
            inputs[name] = artifacts.sha256_file(run_dir / name)
        else:
            missing.append(name)
    audit = _optional_json(run_dir / artifacts.AUDIT, "audit")
    generation = _optional_json(run_dir / artifacts.GENERATION, "generation")
    result = build_report(
        loaded.design,
        loaded.sha256,
        picks,
        inputs=inputs,
        missing=missing,
        audit=audit,
        generation=generation,
        options=options,
        e_values_path=input_name(run_dir, e_values_path or run_dir / artifacts.E_VALUES),
    )
    result.report["picks_files"] = [input_name(run_dir, p) for p in paths]
    return result


def _optional_json(path: Path, name: str) -> JsonObject | None:
    return artifacts.read_json(path, name) if path.exists() else None
