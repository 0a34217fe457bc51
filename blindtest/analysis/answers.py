"""The extra questions' answers, revealed after judging. Pure; opens no file.

The tests compare two candidates (the sides A and B of a two-sided design; a design of two
named candidates alike), so with three or more a question gets a sentence saying so and no
test (bt-design refuses --ask and --ask-each there).

A question asked of each option (``bt-design --ask-each``) is answered ``{"left": bool,
"right": bool}``; here, and only here, left and right become the candidates through the
arrangement. Each candidate gets its yes rate with a Wilson 95% interval, and the two answers
of one comparison are compared by the exact McNemar test: of the comparisons where exactly one
response got yes, is it the first's as often as the second's (two-sided binomial at 1/2 on
those discordant pairs).

A question asked once per comparison (``--ask``) is one boolean that belongs to no side. Its yes
rate is given, and whether it goes with the candidate the judge preferred: Fisher's exact test
on the 2x2 table (yes / no by the first preferred / the second preferred). Ties are left out of
that table and counted apart, and so are "both bad" words (an abstention: no side preferred,
and not a tie); their answers count in the yes rates, which say nothing about the preference.

The unit is one comparison by one judge. Hidden controls (one side shown twice) have no A-B
pair and no preferred side: they are left out and counted. With several judges each is also
tested alone; their comparisons are pooled only when no trial was answered by two of them,
because two judges' answers about the same two responses are not independent. A table the test
can say nothing about (no discordant pair; an empty row or column) gets no p-value, and the
statement says why in words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from blindtest.model.candidates import candidates_of, comparison_sides, shown_name
from blindtest.model.scoring import arrangement_entry, preferred_side
from blindtest.reportfmt import format_p_against, pct
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord
from blindtest.stats import fisher_exact, mcnemar_exact, wilson

if TYPE_CHECKING:
    from blindtest.model.picks import Pick

UNIT = "one comparison by one judge"
NOBODY = "no answers (the judges of these picks were not asked it)."
MCNEMAR = (
    "exact McNemar: two-sided binomial test at 1/2 on the comparisons where one side only got yes"
)
FISHER = "Fisher's exact test, two-sided: yes / no by the side the judge preferred, ties left out"


@dataclass(frozen=True, slots=True)
class _OptionAnswer:
    judge: str
    trial: int
    a: bool
    b: bool


#: The ``preferred`` of a comparison answer given with "both bad" (neither side, not a tie).
_BOTH_BAD = "both_bad"


@dataclass(frozen=True, slots=True)
class _ComparisonAnswer:
    judge: str
    trial: int
    yes: bool
    preferred: str | None  # the preferred candidate, None for a tie, or _BOTH_BAD


def answers_summary(design: DesignRecord, picks: Sequence[Pick]) -> list[JsonObject]:
    """One entry per extra question of the design: those asked of each option first, then
    those asked once per comparison, each in the order the design lists them."""
    judging = design["judging"]
    if len(candidates_of(design)) > 2:
        asked = [
            *((q, "each response") for q in judging.get("extra_questions_per_option", ())),
            *((q, "the comparison as a whole") for q in judging["extra_questions"]),
        ]
        return [_untested(design, question, about) for question, about in asked]
    out = [
        _per_option(design, question, picks)
        for question in judging.get("extra_questions_per_option", ())
    ]
    out += [_per_comparison(design, question, picks) for question in judging["extra_questions"]]
    return out


def _is_control(design: DesignRecord, trial: int) -> bool:
    return "control" in arrangement_entry(design, trial)


def _answered(design: DesignRecord, question: str, picks: Sequence[Pick]) -> tuple[list[Pick], int]:
    """The picks that answer ``question`` on an A-B comparison, and how many hidden controls
    answered it (left out)."""
    kept, controls = [], 0
    for pick in picks:
        if pick.answers is None or question not in pick.answers:
            continue
        if _is_control(design, pick.trial):
            controls += 1
        else:
            kept.append(pick)
    return kept, controls


def _pooling(units: Sequence[_OptionAnswer] | Sequence[_ComparisonAnswer]) -> JsonObject:
    """Who answered, and whether their comparisons may be pooled (no trial answered twice)."""
    judges = sorted({u.judge for u in units})
    seen: dict[int, set[str]] = {}
    for unit in units:
        seen.setdefault(unit.trial, set()).add(unit.judge)
    shared = sum(1 for names in seen.values() if len(names) > 1)
    return {"judges": judges, "shared_trials": shared, "pooled": shared == 0}


def _yes_no(yes: int, n: int) -> JsonObject:
    return {"yes": yes, "no": n - yes, "n": n, "yes_rate": wilson(yes, n).to_dict() if n else None}


# --------------------------------------------------------------------------- per option


def _untested(design: DesignRecord, question: str, about: str) -> JsonObject:
    """A question of a design of three or more candidates: no test compares them."""
    k = len(candidates_of(design))
    return {
        "question": question,
        "about": about,
        "unit": UNIT,
        "controls_left_out": 0,
        "judges": [],
        "shared_trials": 0,
        "pooled": True,
        "statement": (
            f"{question!r}, asked of {about}: not tested; its tests compare two candidates, and "
            f"this design has {k}."
        ),
    }


def _option_units(
    design: DesignRecord, picks: Sequence[Pick], question: str
) -> list[_OptionAnswer]:
    first, second = candidates_of(design)
    units = []
    for pick in picks:
        answer = (pick.answers or {})[question]
        if isinstance(answer, bool):  # the picks contract refuses this form for this question
            continue
        left, right = comparison_sides(arrangement_entry(design, pick.trial))
        by_side = {left: answer["left"], right: answer["right"]}
        units.append(_OptionAnswer(pick.judge, pick.trial, by_side[first], by_side[second]))
    return units


def _paired(names: Sequence[str], units: Sequence[_OptionAnswer]) -> JsonObject:
    """Per candidate yes rates and the exact McNemar test over ``units``."""
    only_a = sum(1 for u in units if u.a and not u.b)
    only_b = sum(1 for u in units if u.b and not u.a)
    both = sum(1 for u in units if u.a and u.b)
    test = mcnemar_exact(only_a, only_b)
    degenerate = None
    if test.discordant == 0:
        degenerate = "no comparison had yes for one response and no for the other"
    return {
        "sides": {
            names[0]: _yes_no(sum(u.a for u in units), len(units)),
            names[1]: _yes_no(sum(u.b for u in units), len(units)),
        },
        "paired": {
            "test": MCNEMAR,
            "n": len(units),
            "yes_both": both,
            "no_both": len(units) - both - only_a - only_b,
            "yes_a_no_b": only_a,
            "yes_b_no_a": only_b,
            "p_value": None if degenerate else test.p_value,
            "degenerate": degenerate,
        },
    }


def _per_option(design: DesignRecord, question: str, picks: Sequence[Pick]) -> JsonObject:
    return _question_entry(
        design, question, picks, "each response",
        _option_units, partial(_paired, candidates_of(design)), _option_figures, _option_sentence,
    )  # fmt: skip


def _question_entry(
    design: DesignRecord,
    question: str,
    picks: Sequence[Pick],
    about: str,
    units_of: Callable[[DesignRecord, Sequence[Pick], str], list[Any]],
    test: Callable[[list[Any]], JsonObject],
    figures: Callable[[DesignRecord, JsonObject], str],
    sentence: Callable[[DesignRecord, JsonObject], str],
) -> JsonObject:
    """One question's entry, either form: its units, pooled or per judge, its test and words."""
    answered, controls = _answered(design, question, picks)
    units = units_of(design, answered, question)
    entry: JsonObject = {
        "question": question,
        "about": about,
        "unit": UNIT,
        "controls_left_out": controls,
        **_pooling(units),
    }
    if len(entry["judges"]) > 1:
        entry["per_judge"] = [
            {"judge": judge, **test([u for u in units if u.judge == judge])}
            for judge in entry["judges"]
        ]
        for cell in entry["per_judge"]:
            cell["statement"] = f"{cell['judge']}: {figures(design, cell)}"
    if units and entry["pooled"]:
        entry.update(test(units))
    entry["statement"] = sentence(design, entry)
    return entry


# --------------------------------------------------------------------------- per comparison


def _comparison_units(
    design: DesignRecord, picks: Sequence[Pick], question: str
) -> list[_ComparisonAnswer]:
    units = []
    for pick in picks:
        answer = (pick.answers or {})[question]
        if not isinstance(answer, bool):  # the picks contract refuses this form for this question
            continue
        side = _BOTH_BAD if pick.both_bad else preferred_side(design, pick.trial, pick.pick)
        units.append(_ComparisonAnswer(pick.judge, pick.trial, answer, side))
    return units


def _association(names: Sequence[str], units: Sequence[_ComparisonAnswer]) -> JsonObject:
    """The yes rate, yes by the preferred candidate, and Fisher's exact test over ``units``."""
    first, second = names
    by = {
        label: {
            "yes": sum(1 for u in units if u.yes and u.preferred == side),
            "n": sum(1 for u in units if u.preferred == side),
        }
        for label, side in ((first, first), (second, second), ("tie", None))
    }
    both_bad = [u for u in units if u.preferred == _BOTH_BAD]
    if both_bad:  # only when said: a report without one keeps its shape
        by[_BOTH_BAD] = {"yes": sum(u.yes for u in both_bad), "n": len(both_bad)}
    a_yes, b_yes = by[first]["yes"], by[second]["yes"]
    a_no, b_no = by[first]["n"] - a_yes, by[second]["n"] - b_yes
    test = fisher_exact(a_yes, b_yes, a_no, b_no)
    degenerate = None
    if test.degenerate:
        degenerate = _empty_margin(
            names, a_yes + b_yes, a_no + b_no, by[first]["n"], by[second]["n"]
        )
    return {
        "comparisons": _yes_no(sum(u.yes for u in units), len(units)) | {"by_preferred": by},
        "association": {
            "test": FISHER,
            "table": {
                "yes_preferred_a": a_yes,
                "yes_preferred_b": b_yes,
                "no_preferred_a": a_no,
                "no_preferred_b": b_no,
            },
            "ties_left_out": by["tie"]["n"],
            "p_value": None if degenerate else test.p_value,
            "degenerate": degenerate,
        },
    }


def _empty_margin(names: Sequence[str], yes: int, no: int, won_a: int, won_b: int) -> str:
    if won_a + won_b == 0:
        return "every comparison was a tie"
    if yes == 0 or no == 0:
        return f"every answer in the untied comparisons was {'no' if yes == 0 else 'yes'}"
    return f"{names[0] if won_a == 0 else names[1]} was preferred in none of the untied comparisons"


def _per_comparison(design: DesignRecord, question: str, picks: Sequence[Pick]) -> JsonObject:
    return _question_entry(
        design, question, picks, "the comparison as a whole",
        _comparison_units, partial(_association, candidates_of(design)), _comparison_figures,
        _comparison_sentence,
    )  # fmt: skip


# --------------------------------------------------------------------------- sentences


def _rate(cell: Mapping[str, Any]) -> str:
    rate = cell["yes_rate"]
    if rate is None:
        return "no answers"
    return (
        f"yes {cell['yes']} of {cell['n']} ({pct(rate['estimate'])}, Wilson 95% interval "
        f"{pct(rate['lo'])} to {pct(rate['hi'])})"
    )


def _who(entry: Mapping[str, Any]) -> str:
    """How several judges' answers were used, in words ('' for one judge)."""
    judges = len(entry["judges"])
    if judges < 2:
        return ""
    if entry["pooled"]:
        return f" Pooled over {judges} judges, who answered no trial in common ({UNIT})."
    return (
        f" {judges} judges answered {entry['shared_trials']} of the same trials, and two "
        "judges' answers about the same two responses are not independent, so each judge is "
        "tested alone:"
    )


def _left_out(entry: Mapping[str, Any]) -> str:
    n = entry["controls_left_out"]
    if not n:
        return ""
    return (
        f" {n} answer{'s' if n != 1 else ''} on hidden controls (one model shown twice) left out."
    )


def _option_figures(design: DesignRecord, cell: Mapping[str, Any]) -> str:
    a, b = names = candidates_of(design)
    rates = "; ".join(f"{shown_name(design, s)} {_rate(cell['sides'][s])}" for s in names)
    paired = cell["paired"]
    counts = (
        f"yes for {a}'s response only {paired['yes_a_no_b']}, for {b}'s only "
        f"{paired['yes_b_no_a']}, both {paired['yes_both']}, neither {paired['no_both']}"
    )
    if paired["degenerate"]:
        test = (
            f"{a} and {b} never differed within a comparison ({counts}), so the paired test has "
            "nothing to compare: no p-value"
        )
    else:
        test = (
            f"within the same comparison {counts}: exact McNemar, two-sided "
            f"{format_p_against(paired['p_value'], design['alpha'])}"
        )
    return f"{rates}. {test[0].upper()}{test[1:]}."


def _option_sentence(design: DesignRecord, entry: Mapping[str, Any]) -> str:
    head = f"{entry['question']!r}, asked of each response"
    if not entry["judges"]:
        return (
            f"{head}: no answers (the judges of these picks were not asked it).{_left_out(entry)}"
        )
    if entry["pooled"]:
        return f"{head}: {_option_figures(design, entry)}{_who(entry)}{_left_out(entry)}"
    each = " ".join(cell["statement"] for cell in entry["per_judge"])
    return f"{head}.{_who(entry)} {each}{_left_out(entry)}"


def _comparison_figures(design: DesignRecord, cell: Mapping[str, Any]) -> str:
    by = cell["comparisons"]["by_preferred"]
    test = cell["association"]
    a, b = candidates_of(design)
    split = (
        f"yes in {by[a]['yes']} of {by[a]['n']} comparisons won by {a} and "
        f"{by[b]['yes']} of {by[b]['n']} won by {b}"
    )
    if test["degenerate"]:
        said = (
            f"{split}; whether the answer goes with the preferred side cannot be tested: "
            f"{test['degenerate']}"
        )
    else:
        said = (
            f"{split} (whether the answer goes with the preferred side: Fisher's exact test, "
            f"two-sided {format_p_against(test['p_value'], design['alpha'])})"
        )
    ties = by["tie"]
    if ties["n"]:
        said += f"; {ties['yes']} of {ties['n']} ties yes, ties left out of that test"
    both_bad = by.get(_BOTH_BAD)
    if both_bad:
        said += (
            f'; {both_bad["yes"]} of {both_bad["n"]} "both bad" yes, left out of that test '
            "(neither was preferred)"
        )
    return f"{_rate(cell['comparisons'])}; {said}."


def _comparison_sentence(design: DesignRecord, entry: Mapping[str, Any]) -> str:
    head = f"{entry['question']!r}, asked once per comparison (of neither response alone)"
    if not entry["judges"]:
        return (
            f"{head}: no answers (the judges of these picks were not asked it).{_left_out(entry)}"
        )
    if entry["pooled"]:
        return f"{head}: {_comparison_figures(design, entry)}{_who(entry)}{_left_out(entry)}"
    each = " ".join(cell["statement"] for cell in entry["per_judge"])
    return f"{head}.{_who(entry)} {each}{_left_out(entry)}"
