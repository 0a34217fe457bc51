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
from blindtest.design import DEFAULT_BASE_URL
from blindtest.endpoints import is_loopback
from blindtest.stats import (
    binomial_test,
    cohen_kappa,
    e_process,
    fleiss_kappa,
    holm,
    judge_panel,
    mcnemar_exact,
    pair_test,
    percent_agreement,
    position_bias,
    preference_test,
    similarity_test,
    triangle_test,
    wilson,
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
    #: Show the full analysis of an unfinished fixed design (``--reveal-void``).
    reveal_void: bool = False


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


def format_p_against(value: float | None, alpha: float) -> str:
    """``format_p``, unless its rounding would put p on the wrong side of alpha (0.0497 as
    0.050 next to alpha 0.05): then as many digits as it takes and the comparison spelt out,
    ``p = 0.0497 < 0.05``."""
    text = format_p(value)
    if value is None or value < 1e-6:
        return text
    shown = float(text.removeprefix("p = "))
    if (shown <= alpha) == (value <= alpha) and shown != alpha:
        return text
    if value == alpha:
        return f"p = {alpha:g} <= {alpha:g}"
    for digits in range(3, 12):
        exponent = Decimal(repr(value)).adjusted()
        rounded = Decimal(repr(value)).quantize(
            Decimal(1).scaleb(exponent - digits + 1), ROUND_HALF_UP
        )
        if (float(rounded) <= alpha) == (value <= alpha) and float(rounded) != alpha:
            break
    relation = "<=" if value <= alpha else ">"
    if value < alpha:
        relation = "<"
    return f"p = {rounded:f} {relation} {alpha:g}"


def _interval(interval: Interval) -> JsonObject:
    return interval.to_dict()


def judge_kind(pick: judging.Pick) -> str | None:
    """``human``, ``bot``, ``llm`` or ``external`` as the pick records it; old files without
    ``judge_kind`` are ``bot`` when the pick says how a bot made it, else unknown (None)."""
    kind = getattr(pick, "judge_kind", None)
    if kind:
        return str(kind)
    return "bot" if pick.bot else None


def _kinds(picks: Sequence[judging.Pick]) -> set[str | None]:
    return {judge_kind(p) for p in picks}


def _subject(picks: Sequence[judging.Pick], judge: str) -> str:
    kinds = _kinds(picks)
    if kinds == {"bot"}:
        name = judge.removeprefix("bot:")
        return f"The {name} bot" if name in judging.BOT_KINDS else f"The bot {judge!r}"
    if kinds == {"llm"}:
        return f"The LLM judge {judge!r}"
    if kinds == {"external"}:
        return f"The judge {judge!r}"
    return "You" if judge else "The judge"


def _panel_noun(judges: Mapping[str, Sequence[judging.Pick]]) -> str:
    """ "2 people", "2 bots", "2 LLM judges": a bot is never called a panel member."""
    kinds = _kinds([p for own in judges.values() for p in own])
    count = len(judges)
    nouns = {
        "human": ("person", "people"),
        "bot": ("bot", "bots"),
        "llm": ("LLM judge", "LLM judges"),
    }
    if len(kinds) == 1 and (kind := next(iter(kinds))) in nouns:
        singular, plural = nouns[kind]
        return f"{count} {singular if count == 1 else plural}"
    return f"{count} judges"


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
    """The void statement: how many trials were judged, and nothing else about the picks."""
    return (
        f"Void: only {judged} of {design['trials']} trials were judged. A fixed design must "
        "be finished; stopping early, or deciding when to stop after seeing how it goes, would "
        "void the p-value. Finish with bt-judge (it resumes where you stopped), or pre-register "
        "--sequential next time."
    )


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
            f"guesses, the difference was visible on about {_pct(result.pd.estimate)} of these "
            f"prompts (95% interval {_pct(result.pd.lo)} to {_pct(result.pd.hi)})."
        )
    if one_sided_bound:
        return (
            f"{subject} could not tell them apart: {k} of {n} correct ({p_text}). This is a "
            "bound, not an equivalence: no evidence of a visible difference."
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
    alpha = design["alpha"]
    result = similarity_test(correct, n, pd0, protocol=design["protocol"], alpha=alpha)
    level = f"{100 * (1 - alpha):.0f}%"
    bound = f"the one-sided {level} upper bound on pd is {_pct(result.pd_upper)}"
    test = f"exact test of pd >= {_pct(pd0)}, {format_p_against(result.p_value, alpha)}"
    if result.similar:
        claim = (
            f"Similar within pd0 = {_pct(pd0)} at {level}: {bound}, below pd0, so the data "
            f"exclude a difference visible on {_pct(pd0)} or more of these prompts ({test})."
        )
    else:
        claim = (
            f"Similarity within pd0 = {_pct(pd0)} was not shown: {bound}, not below pd0 ({test})."
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
    fields["statement"] = _triangle_statement(
        subject,
        result,
        significant,
        format_p_against(result.p_value, design["alpha"]),
        one_sided_bound=fields["similarity"] is not None,
    )
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
    noun = _panel_noun(judges)
    who = f"The panel of {noun}" if noun.endswith(("judges", "people")) else f"The {noun}"
    statement = (
        f"{who} "
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
    pd_hi = _pair_pd(result.pc)["hi"]
    return (
        f"{lead}: if a difference exists, it shows on at most {_pct(pd_hi)} of these "
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
    statement = _pair_sentence(
        _subject(own, judge),
        first,
        rows,
        result,
        design["alpha"],
        one_sided_bound=fields["similarity"] is not None,
    )
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
    noun = _panel_noun(judges)
    lead = (
        f"At least one of {noun} told them apart (Holm-adjusted "
        f"{format_p_against(min(adjusted), design['alpha'])})."
        if significant
        else f"None of {noun} told them apart (Holm-adjusted "
        f"{format_p_against(min(adjusted), design['alpha'])})."
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
        statement += f"Inconclusive: {reason}."
        if ties and ties >= len(outcome) / 4:
            # Said only when the ties are many: wording follows the numbers (issue 10.14).
            statement += f" The tie rate ({_pct(ties / len(outcome))}) is itself a finding."
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
        how = (
            f"in {followed} of {len(votes)} untied comparisons ({format_p(p_value)}), not "
            "clearly more than half"
            if share > 0.5
            else f"in only {followed} of {len(votes)} untied comparisons"
        )
        return [
            f"Length separates the models (the longer answer was A's in {bot['correct']} of "
            f"{bot['n']} trials), and the judges preferred the longer response {how}."
        ]
    return []


def _whose(fields: Mapping[str, Any]) -> str:
    return "judge's" if len(fields.get("judges") or []) == 1 else "judges'"


def _bot_sentence(
    design: Mapping[str, Any], kind: str, bot: Mapping[str, Any], fields: Mapping[str, Any]
) -> str | None:
    """Triangle and pair: does a bot that cannot read come close to the judge? Every clause
    follows the numbers: a judge whose picks match the bot's is never said to have missed the
    bot's channel."""
    chance = 1 / 3 if design["protocol"] == "triangle" else 0.5
    if fields.get("correct") is None or not fields.get("n"):
        return None
    judge_excess = _excess(fields["correct"], fields["n"], chance)
    bot_excess = _excess(bot["correct"], bot["n"], chance)
    if design["protocol"] == "pair":
        judge_excess, bot_excess = abs(judge_excess), abs(bot_excess)
    name = _BOT_NAME[kind]
    channel = _BOT_CHANNEL[kind]
    if fields.get("verdict") == "distinguished":
        if judge_excess > 0 and bot_excess >= EXPLAINS_SHARE * judge_excess:
            return (
                f"The discrimination is largely explained by {channel}: the {name}, "
                f"scored {bot['correct']}/{bot['n']} against the {_whose(fields)} "
                f"{fields['correct']}/{fields['n']}. You know what you measured."
            )
        return None
    if bot["p_value"] is None or bot["p_value"] > design["alpha"]:
        return None
    lead = (
        f"The {name}, scored {bot['correct']}/{bot['n']} ({format_p(bot['p_value'])}): "
        f"{channel} alone separates the models on these prompts"
    )
    single = len(fields.get("judges") or []) == 1
    if single and fields.get("per_trial"):
        same = _matching(bot, fields)
        judged = len(fields["per_trial"])
        if same >= EXPLAINS_SHARE * judged:
            return (
                f"{lead}, and the judge's picks were the bot's on {same} of {judged} judged "
                f"trials: these judgements followed {channel}."
            )
        return (
            f"{lead}; the judge's picks were the bot's on only {same} of {judged} judged "
            f"trials, so these judgements did not follow {channel}."
        )
    return (
        f"{lead}; the judgements, at {fields['correct']}/{fields['n']}, did not reach "
        "significance, so they did not pick it up as reliably as the bot."
    )


#: Census figures the result screen shows, per response (spec 000's "Tells").
CENSUS_FIGURES = ("em_dashes", "bold", "bullets")


def census_summary(audit: Mapping[str, Any]) -> JsonObject | None:
    """Mean words and the formatting counts that matter, per side, from ``audit.json``."""
    census = audit.get("census") or {}
    if not all(side in census for side in ("A", "B")):
        return None
    return {
        side: {
            "model": census[side].get("model"),
            "responses": census[side].get("responses"),
            "mean_words": census[side].get("mean_words"),
            **{f: (census[side].get("per_response") or {}).get(f) for f in CENSUS_FIGURES},
        }
        for side in ("A", "B")
    }


def audit_summary(
    design: Mapping[str, Any], audit: Mapping[str, Any] | None, fields: Mapping[str, Any]
) -> JsonObject | None:
    """The bots' scores beside the judge's, and what they explain (spec 000, "Tells")."""
    if audit is None:
        return None
    summary: JsonObject = {
        "bots": {},
        "sentences": [],
        "checks": audit.get("checks"),
        "census": census_summary(audit),
    }
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


# --------------------------------------------------------------------------- responses


#: Response kinds that show on the page whatever the content (a refusal, a cut-off answer).
MARKED_KINDS = ("refusal", "length")


def _slot_kind(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return "missing"
    kind = row.get("kind") or ("ok" if row["status"] == "ok" else "failed")
    return str(kind) if row["status"] == "ok" else "failed"


def _marked_trials(design: Mapping[str, Any], kinds: Mapping[tuple[int, int], str]) -> list[int]:
    """Trials where a refusal or cut-off singles one side out: pair and preference, the two
    sides differ in being refused or cut; triangle, the odd response alone differs from the
    two (alike) doubled ones. Such a trial can be told apart without reading the content."""
    out = []
    for entry in design["arrangement"]:
        trial = entry["trial"]
        if design["protocol"] == "triangle":
            odd = kinds.get((trial, entry["odd_position"]), "missing")
            twins = [
                kinds.get((trial, p), "missing") for p in (1, 2, 3) if p != entry["odd_position"]
            ]
            marked = twins[0] == twins[1] and odd != twins[0]
            if marked and {odd, twins[0]} & set(MARKED_KINDS):
                out.append(trial)
        else:
            pair = {kinds.get((trial, 1), "missing"), kinds.get((trial, 2), "missing")}
            if len(pair) == 2 and pair & set(MARKED_KINDS):
                out.append(trial)
    return out


def responses_summary(
    design: Mapping[str, Any], rows: Sequence[JsonObject], torn_line: int | None
) -> JsonObject:
    """What responses.jsonl holds against what the design needs: answered slots, refusals and
    truncations per side, trials a refusal gives away, and the model each server said answered."""
    from blindtest.slots import LAUNDER, SlotState, plan_slots

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
    return {
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


def responses_sentences(design: Mapping[str, Any], summary: Mapping[str, Any]) -> list[str]:
    """Refusals, truncations and served models, in words (revealed only after judging)."""
    out = []
    sides = summary["per_side"]
    if any(sides[s]["refusals"] or sides[s]["truncated"] for s in ("A", "B")):
        parts = [
            f"{s} {_count(sides[s]['refusals'], 'refusal')} and "
            f"{sides[s]['truncated']} cut at the token limit"
            for s in ("A", "B")
        ]
        out.append("Refusals and truncations, of the responses shown: " + "; ".join(parts) + ".")
    marked = summary["marked_trials"]
    if marked:
        listed = ", ".join(str(t) for t in marked[:10]) + (", ..." if len(marked) > 10 else "")
        what = (
            "those comparisons may have been decided by the refusal, not by quality"
            if design["protocol"] == "preference"
            else "those trials can be told apart without reading the content, so they count "
            "towards the result as discrimination by refusal, not by quality"
        )
        out.append(
            f"In {_count(len(marked), 'trial')} ({listed}) a refusal or a cut-off answer singled "
            f"one side out: {what}."
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


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


# --------------------------------------------------------------------------- --ask answers


def _answer_sides(
    design: Mapping[str, Any], pick: judging.Pick, answer: Any
) -> dict[str, bool] | None:
    """A per-option answer ({"left": bool, "right": bool}, or option numbers "1"/"2") as
    {side: bool}; None for a per-comparison answer (a bare bool)."""
    if not isinstance(answer, Mapping):
        return None
    left = judging.option1_side(design, pick.trial)
    right = "B" if left == "A" else "A"
    by_key = {"left": left, "1": left, "right": right, "2": right}
    return {by_key[k]: bool(v) for k, v in answer.items() if k in by_key}


def _yes_no(yes: int, n: int) -> JsonObject:
    return {"yes": yes, "no": n - yes, "n": n, "yes_rate": _interval(wilson(yes, n)) if n else None}


def answers_summary(design: Mapping[str, Any], picks: Sequence[judging.Pick]) -> list[JsonObject]:
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
                per_comparison.append((bool(answer), judging.preferred_side(design, pick)))
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
        f"yes {cell['yes']} of {cell['n']} ({_pct(rate['estimate'])}, Wilson 95% interval "
        f"{_pct(rate['lo'])} to {_pct(rate['hi'])})"
    )


def _answer_sentence(design: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    models = {s: design["models"][s]["model"] for s in ("A", "B")}
    parts = [f"{entry['question']!r}"]
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


# --------------------------------------------------------------------------- the screen


def _size_sentence(fields: Mapping[str, Any]) -> str | None:
    pd = fields.get("pd")
    if not pd or pd.get("hi") is None or not fields.get("n"):
        return None
    verdict = fields.get("picks_verdict", fields["verdict"])
    if fields.get("similarity") is not None and verdict != "distinguished":
        return str(fields["similarity"]["statement"])
    if verdict == "distinguished":
        return (
            f"the difference was visible on about {_pct(pd['estimate'])} of these prompts "
            f"(95% interval {_pct(pd['lo'])} to {_pct(pd['hi'])}), after discounting lucky "
            "guesses."
        )
    return (
        f"if a difference exists, it shows on at most {_pct(pd['hi'])} of these prompts (upper "
        "end of the 95% interval): a bound, not an equivalence."
    )


def _preference_lead(design: Mapping[str, Any], fields: Mapping[str, Any]) -> tuple[str, str]:
    """(headline, size): the winner's (or the leader's) rate first."""
    wins, losses, ties = fields["wins"], fields["losses"], fields["ties"]
    untied = wins + losses
    models = design["models"]
    rate = fields["pc"]
    if untied == 0:
        return f"Every comparison was a tie ({ties}): no side is preferred.", ""
    lead, won = ("A", wins) if wins >= losses else ("B", losses)
    lo, hi = (rate["lo"], rate["hi"]) if lead == "A" else (1 - rate["hi"], 1 - rate["lo"])
    who = f"{lead} ({models[lead]['model']})"
    share = won / untied
    size = (
        f"{who} won {_pct(share)} of untied comparisons (Wilson 95% interval {_pct(lo)} to "
        f"{_pct(hi)}); {_count(ties, 'tie')}, excluded from the rate."
    )
    verdict = str(fields.get("picks_verdict", fields["verdict"]))
    if verdict.endswith("preferred"):
        return f"{who} is preferred: it won {won} of {untied} untied comparisons.", size
    return (
        f"No side is preferred yet: {who} won {won} of {untied} untied comparisons, which is "
        "not enough to call.",
        size,
    )


def _revealed_void_summary(design: Mapping[str, Any], fields: Mapping[str, Any]) -> JsonObject:
    """A void run shown with --reveal-void: the figures so far, each said not to be valid."""
    judged = min((fields.get("judged") or {}).values(), default=fields.get("n") or 0)
    headline = (
        f"Void: only {judged} of {design['trials']} trials were judged, so this is not a "
        "result; the picks so far are shown because --reveal-void asked for them."
    )
    p_value, test = fields.get("p_value"), fields.get("test")
    sure = (
        f"none: {format_p(p_value)} ({test}) is not valid for an unfinished fixed design."
        if p_value is not None and test
        else None
    )
    pd = fields.get("pd")
    size = (
        f"none yet: so far pd {_pct(pd['estimate'])} (95% interval {_pct(pd['lo'])} to "
        f"{_pct(pd['hi'])}), an interval that is not valid either."
        if pd and pd.get("hi") is not None and fields.get("n")
        else None
    )
    return {"verdict": headline, "sure": sure, "size": size}


def screen_summary(design: Mapping[str, Any], fields: Mapping[str, Any]) -> JsonObject:
    """The result screen's first three lines, in order: the verdict in one sentence, how sure,
    how big. Wording lives here with the statement, so the two never disagree."""
    verdict = fields["verdict"]
    alpha = design["alpha"]
    statement = str(fields["statement"])
    test = fields.get("test")
    p_value = fields.get("p_value")
    sure = (
        f"{format_p_against(p_value, alpha)}, {test}; alpha {alpha:g}."
        if p_value is not None and test
        else None
    )
    if verdict == "unusable":
        return {"verdict": statement, "sure": None, "size": None}
    if verdict == "void":
        return _revealed_void_summary(design, fields)
    prefix = ""
    if verdict == "incomplete":
        prefix = statement.split("; ", 1)[0] + ". The picks alone: "
        statement = statement.split("The picks alone say: ", 1)[1]
    if design["protocol"] == "preference":
        headline, size = _preference_lead(design, fields)
        return {"verdict": prefix + headline, "sure": sure, "size": size or None}
    headline = prefix + statement.split(" (", 1)[0].rstrip(":")
    if design["sequential"] and fields.get("sequential_result"):
        seq = fields["sequential_result"]
        crossed = seq["crossed_at"]
        sure = (
            f"anytime-valid {format_p(p_value)}, from the sequential e-process against chance "
            "1/3 (a running measure of evidence, valid however early the run stops); "
        ) + (
            f"the evidence (e-value) crossed {seq['threshold']:g} = 1/alpha at trial {crossed}."
            if crossed is not None
            else f"the evidence (e-value) reached {seq['e_value']:.2f}, short of "
            f"{seq['threshold']:g} = 1/alpha."
        )
    size_text = _size_sentence(fields)
    if design["sequential"] and size_text:
        size_text += " (A fixed-n interval: it is not adjusted for stopping early.)"
    return {"verdict": headline + ".", "sure": sure, "size": size_text}


def _same_design_args(design: Mapping[str, Any]) -> list[str]:
    """bt-design arguments that rebuild this design's sides, protocol, size and seed."""
    protocol = design["protocol"]
    args = ["NEW-RUN", *(["--demo"] if design["demo"] else ["--prompts", "PROMPTS"])]
    for side in ("A", "B"):
        spec = design["models"][side]
        args += [f"--{side.lower()}", spec["model"]]
        # A demo's simulator lives only while the demo runs: its port would not work.
        local_demo = design["demo"] and is_loopback(spec["base_url"])
        if spec["base_url"] != DEFAULT_BASE_URL and not local_demo:
            args += [f"--{side.lower()}-url", spec["base_url"]]
    if protocol != "triangle":
        args += ["--protocol", protocol]
    params = design["models"]["A"].get("params") or {}
    if params.get("temperature") not in (None, 1.0):
        args += ["--temperature", f"{params['temperature']:g}"]
    if params.get("max_tokens") is not None:
        args += ["--max-tokens", str(params["max_tokens"])]
    if design["alpha"] != 0.05:
        args += ["--alpha", f"{design['alpha']:g}"]
    if design["sequential"]:
        args.append("--sequential")
    if design["similarity_pd0"] is not None:
        args += ["--similarity", f"{design['similarity_pd0']:g}"]
    return [*args, "--trials", str(design["trials"]), "--seed", str(design["seed"])]


def next_step(design: Mapping[str, Any], fields: Mapping[str, Any]) -> JsonObject | None:
    """What to run next, as a stage and its arguments (the screen turns it into a command that
    works from where it is run): close the channel a bot explains, or plan a bigger design
    when a null is wide."""
    audit = fields.get("audit") or {}
    census = audit.get("census")
    norm = design["normalization"]
    protocol = design["protocol"]
    explained = " ".join(audit.get("sentences") or [])
    add: list[str] = []
    why: list[str] = []
    if census and fields["verdict"] != "not distinguished":
        words = sorted(c["mean_words"] for c in census.values() if c["mean_words"] is not None)
        length_open = norm["length_band"] is None and not norm["truncate_match"]
        if length_open and words and "length" in explained:
            lo = max(1, int(round(words[0] * 0.8, -1)) or 10)
            hi = max(lo + 10, int(round(words[0] * 1.2, -1)))
            add += ["--length-band", f"{lo}..{hi}"]
            why.append("length")
        gaps = [abs((census["A"][f] or 0) - (census["B"][f] or 0)) for f in CENSUS_FIGURES]
        if not norm["strip_formatting"] and norm["launder"] is None and max(gaps) >= 1:
            add.append("--strip-formatting")
            why.append("formatting")
    if add:
        args = [*_same_design_args(design), *add]
        return {
            "why": (
                f"{' and '.join(why)} can explain this result; to learn whether "
                "anything else tells the models apart, run the same design with "
                f"{' and '.join(why)} closed"
            ),
            "stage": "design",
            "args": args,
        }
    pd = fields.get("pd") or {}
    if fields["verdict"] == "not distinguished" and (pd.get("hi") or 0) > 0.3:
        return {
            "why": (
                f"the null is wide (a difference on up to {_pct(pd['hi'])} of prompts is not "
                "excluded); plan a bigger design that would catch one on 30%"
            ),
            "stage": "plan",
            "args": ["--protocol", protocol, "--pd", "0.3", "--target-power", "0.8"],
        }
    if protocol == "preference" and fields["verdict"] == "inconclusive":
        return {
            "why": "no side is preferred yet; plan how many comparisons a 65% win rate needs",
            "stage": "plan",
            "args": ["--protocol", "preference", "--pc", "0.65", "--target-power", "0.8"],
        }
    return None


# --------------------------------------------------------------------------- the report

#: What a void report keeps: nothing about the picks beyond how many there are.
VOID_KEYS = (
    "schema",
    "design_sha256",
    "inputs",
    "missing",
    "protocol",
    "alpha",
    "sequential",
    "trials_planned",
    "judges",
    "n",
    "judged",
    "verdict",
    "statement",
    "reading",
    "analysis_options",
)


def _judged(design: Mapping[str, Any], picks: Sequence[judging.Pick]) -> dict[str, int]:
    return {judge: len(own) for judge, own in sorted(_by_judge(picks).items())}


def void_line(report: Mapping[str, Any], run_dir: Path, finish: Any) -> str:
    """The one line a void analysis prints: k of n judged, why when a pick was torn, and the
    command that finishes the run (``finish(*args)`` makes it, e.g. ``hints.stage_command``)."""
    judged = report.get("judged") or {}
    files = (report.get("reading") or {}).get("picks") or []
    short = min(judged, key=lambda j: judged[j]) if judged else None
    k = judged.get(short, 0) if short is not None else 0
    total = report["trials_planned"]
    who = f"judge {short!r} " if len(judged) > 1 else ""
    args: list[str] = ["judge", str(run_dir)]
    held = next((f for f in files if short in f.get("judges", [])), files[0] if files else None)
    if held is not None and held["file"] != artifacts.PICKS:
        path = Path(held["file"])
        args += ["--out", str(path if path.is_absolute() else run_dir / path)]
    if short is not None and short.startswith("bot:"):
        # A bot does not resume a file: it rewrites its own picks, the same ones, in full.
        args += ["--judge", short, "--force"]
    elif len(judged) > 1 and short is not None:
        args += ["--judge-id", short]
    torn = next((f for f in files if f.get("torn_line")), None)
    why = (
        f" (the last pick, {torn['file']} line {torn['torn_line']}, was cut short when written "
        "and was ignored)"
        if torn
        else ""
    )
    return f"void: {who}{k} of {total} judged{why}; finish with: {finish(*args)}"


def _torn_why(reading: Mapping[str, Any] | None, judged: int) -> str:
    torn = [f for f in (reading or {}).get("picks", []) if f.get("torn_line")]
    if not torn:
        return ""
    first = torn[0]
    return (
        f" The pick on {first['file']} line {first['torn_line']} was cut short when it was "
        f"written (an incomplete final line) and was ignored, so trial {judged + 1} must be "
        "judged again."
    )


REVEALED_VOID = (
    "REVEALED BEFORE THE END (--reveal-void): this fixed design is unfinished, and whoever "
    "sees this analysis can no longer judge this run blind. Finish it with another judge, or "
    "start a new design."
)


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
    reading: Mapping[str, Any] | None = None,
    responses: Mapping[str, Any] | None = None,
) -> AnalysisResult:
    """Everything ``report.json`` holds; ``exit_code`` 1 when the run measured nothing.

    An unfinished fixed design (verdict ``void``) keeps only ``VOID_KEYS`` unless
    ``options.reveal_void``: no bots, census, per-trial sides, p-value or intervals.
    ``responses`` is ``responses_summary``'s; an incomplete one makes the run incomplete.
    """
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
    judged = _judged(design, picks)
    void = fields["verdict"] == "void"
    if void:
        least = min(judged.values(), default=0)
        why = _torn_why(reading, least)
        if why:
            fields["statement"] = fields["statement"].replace(
                " trials were judged.", " trials were judged." + why, 1
            )
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
        "judged": judged,
        "audit": audit_summary(design, audit, fields),
        "channels_open": opened,
        "channels_closed": closed,
        "notes": notes(design),
        "appendix": appendix(generation),
        "cost": cost_line(generation),
        "e_values": e_values_path if values else None,
        "reading": dict(reading) if reading is not None else None,
        "responses": dict(responses) if responses is not None else None,
        "answers": answers_summary(design, picks) if design["judging"]["extra_questions"] else [],
        "analysis_options": {
            "min_kappa": options.min_kappa,
            "position_margin": options.position_margin,
            "reveal_void": options.reveal_void,
        },
    }
    if void and not options.reveal_void:
        report = {key: report[key] for key in VOID_KEYS if key in report}
        report["n"] = min(judged.values(), default=0)
        return AnalysisResult(report=report, exit_code=1, e_values=[])
    report["responses_sentences"] = (
        responses_sentences(design, responses) if responses is not None else []
    )
    if void:
        report["notes"] = [REVEALED_VOID, *report["notes"]]
    incomplete = responses is not None and not responses["complete"] and not void
    if incomplete and responses is not None:
        report["picks_verdict"] = report["verdict"]
        report["verdict"] = "incomplete"
        report["statement"] = (
            f"Incomplete run: {artifacts.RESPONSES} holds {responses['answered']} of the "
            f"{responses['slots']} responses the design needs, so what the judge saw cannot be "
            "checked against what the models answered; rerun bt-generate on this run to fetch "
            "the rest, then analyse again. The picks alone say: " + report["statement"]
        )
        code = 1
    report["summary"] = screen_summary(design, report)
    # A void run's next step is to finish it, an incomplete one's to fetch the rest: the line
    # on stderr names it.
    report["next"] = None if void or incomplete else next_step(design, report)
    return AnalysisResult(report=report, exit_code=code, e_values=values)


# --------------------------------------------------------------------------- loading a run


def input_name(run_dir: Path, path: Path) -> str:
    """How a report names an input: relative to the run directory when inside it."""
    try:
        return path.resolve().relative_to(run_dir.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())


def _read_picks_files(
    run_dir: Path, paths: Sequence[Path], view: judging.JudgeView, skipped: list[str]
) -> tuple[list[judging.Pick], list[JsonObject]]:
    picks: list[judging.Pick] = []
    read_files: list[JsonObject] = []
    for path in paths:
        read = judging.read_picks(path, view)
        picks.extend(read.picks)
        name = input_name(run_dir, path)
        read_files.append(
            {
                "file": name,
                "picks": len(read.picks),
                "judges": sorted({p.judge for p in read.picks}),
                "torn_line": read.torn_line,
            }
        )
        if read.torn_line is not None:
            skipped.append(
                f"{name} line {read.torn_line}: an incomplete final line (a pick cut short "
                "while it was written) was ignored"
            )
    if len(paths) > 1:
        judging.check_picks(picks, view, "the picks files together")
    return picks, read_files


def _read_responses(
    run_dir: Path, design: Mapping[str, Any], skipped: list[str]
) -> JsonObject | None:
    path = run_dir / artifacts.RESPONSES
    if not path.exists():
        return None
    contents = artifacts.read_jsonl(path, "responses")
    responses = responses_summary(design, contents.records, contents.torn_line)
    if contents.torn_line is not None:
        skipped.append(
            f"{artifacts.RESPONSES} line {contents.torn_line}: an incomplete final line was ignored"
        )
    if not responses["complete"]:
        skipped.append(
            f"{artifacts.RESPONSES}: {responses['answered']} of {responses['slots']} responses "
            "the design needs; the run is incomplete"
        )
    return responses


def _read_audit(
    run_dir: Path, sha256: str, skipped: list[str]
) -> tuple[JsonObject | None, JsonObject | None]:
    """(audit, how it was used): an audit recorded against another design is not used."""
    audit = _optional_json(run_dir / artifacts.AUDIT, "audit")
    if audit is None:
        return None, None
    recorded = audit.get("design_sha256")
    if recorded is not None and recorded != sha256:
        skipped.append(
            f"{artifacts.AUDIT} was recorded against design {recorded[:12]}, not this design "
            f"({sha256[:12]}); its figures are not used: rerun bt-audit on this run"
        )
        return None, {"used": False, "design_sha256": recorded}
    return audit, {"used": True, "design_sha256": recorded}


def analyze_run(
    run_dir: Path,
    picks_paths: Sequence[Path],
    options: AnalysisOptions | None = None,
    *,
    e_values_path: Path | None = None,
) -> AnalysisResult:
    """Load what the run directory holds (through ``artifacts``) and build the report.

    Needs ``design.json`` and at least one picks file; every other artifact adds to the report
    when present and is listed in ``missing`` when not. ``report["reading"]`` says what was
    read and what was skipped (a torn final line, an audit of another design).
    """
    loaded = artifacts.load_design(run_dir)
    if (run_dir / artifacts.TRIALS).exists():
        view = judging.load_judge_run(run_dir).view
    else:
        # Scoring needs only the design; the trial numbers come from its arrangement.
        blank = [judging.Trial(e["trial"], "", ()) for e in loaded.design["arrangement"]]
        view = judging.view_of(loaded.design, blank, loaded.sha256)
    paths = list(picks_paths) or [run_dir / artifacts.PICKS]
    skipped: list[str] = []
    picks, read_files = _read_picks_files(run_dir, paths, view, skipped)
    inputs = {artifacts.DESIGN: loaded.sha256}
    for path in paths:
        inputs[input_name(run_dir, path)] = artifacts.sha256_file(path)
    missing = []
    for name in (artifacts.RESPONSES, artifacts.TRIALS, artifacts.AUDIT, artifacts.GENERATION):
        if (run_dir / name).exists():
            inputs[name] = artifacts.sha256_file(run_dir / name)
        else:
            missing.append(name)
    responses = _read_responses(run_dir, loaded.design, skipped)
    audit, audit_state = _read_audit(run_dir, loaded.sha256, skipped)
    result = build_report(
        loaded.design,
        loaded.sha256,
        picks,
        inputs=inputs,
        missing=missing,
        audit=audit,
        generation=_optional_json(run_dir / artifacts.GENERATION, "generation"),
        options=options,
        e_values_path=input_name(run_dir, e_values_path or run_dir / artifacts.E_VALUES),
        reading={"picks": read_files, "audit": audit_state, "skipped": skipped},
        responses=responses,
    )
    result.report["picks_files"] = [input_name(run_dir, p) for p in paths]
    return result


def _optional_json(path: Path, name: str) -> JsonObject | None:
    return artifacts.read_json(path, name) if path.exists() else None
