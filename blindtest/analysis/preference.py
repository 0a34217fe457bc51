"""Preference analysis: majority per trial, Wilson win rate and exact test, and spec 002's
gates (position bias, agreement) that make a run say nothing. Pure; opens no file."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from blindtest.analysis.common import (
    MIN_SHARED_TRIALS,
    AnalysisOptions,
    by_judge,
    excluded_reason,
    interval,
    prompts_by_trial,
    void_statement,
)
from blindtest.model.rng import IndexStream
from blindtest.model.scoring import (
    option1_side,
    preferred_side,
)
from blindtest.model.sides import side_label
from blindtest.reportfmt import TESTS, format_p, pct
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import AnalysisFields, DesignRecord, ProtocolFields
from blindtest.stats import (
    AGREEMENT_CAVEAT,
    holm,
    kappa_with_se,
    krippendorff_alpha,
    percent_agreement,
    position_bias,
    preference_test,
)

if TYPE_CHECKING:
    from blindtest.analysis.controls import ControlsCheck
    from blindtest.model.picks import Pick


def _per_judge_needed(judges: int, trials: int, shared: int) -> int:
    """The ``--per-judge`` under which ``judges`` reviewers dealt round the ring of ``trials``
    (blindtest.model.assignment) give ``shared`` trials two or more reviewers: N x judges places
    cover the ring once and then min(trials, N x judges - trials) trials a second time."""
    return min(trials, -(-(trials + shared) // judges))


def _agreement(design: DesignRecord, judges: Mapping[str, Sequence[Pick]]) -> JsonObject | None:
    """Panel agreement over every trial two or more judges saw: Krippendorff's alpha (nominal;
    a trial one judge saw drops out) with a bootstrap interval over those trials from the
    design's ``"agreement"`` stream, percent agreement, and Cohen's kappa for each pair of
    judges who share trials. ``measurable`` is False when fewer than ``MIN_SHARED_TRIALS``
    trials (every trial, in a smaller design) were seen by two judges."""
    if len(judges) < 2:
        return None
    names = sorted(judges)
    votes = {
        j: {p.trial: preferred_side(design, p.trial, p.pick) or "tie" for p in judges[j]}
        for j in names
    }
    trials = sorted({t for v in votes.values() for t in v})
    units = [[votes[j][t] for j in names if t in votes[j]] for t in trials]
    shared = [u for u in units if len(u) >= 2]
    need = min(MIN_SHARED_TRIALS, design["trials"])
    alpha = krippendorff_alpha(units, rng=IndexStream(design["seed"], "agreement"))
    pairs = []
    for index, first in enumerate(names):
        for second in names[index + 1 :]:
            both = sorted(set(votes[first]) & set(votes[second]))
            if not both:
                continue
            kappa = kappa_with_se([votes[first][t] for t in both], [votes[second][t] for t in both])
            pairs.append({"judges": [first, second], **kappa.to_dict()})
    found: JsonObject = {
        "method": "Krippendorff's alpha, nominal (A, B, tie); trials one judge saw drop out",
        "n_items": len(shared),
        "n_judges": len(names),
        "min_shared": need,
        "measurable": len(shared) >= need,
        "alpha": alpha.to_dict(),
        "percent": percent_agreement(shared).to_dict() if shared else None,
        "pairs": pairs,
        "caveat": AGREEMENT_CAVEAT,
    }
    if len(shared) < need:
        per_judge = _per_judge_needed(len(names), design["trials"], need)
        found["per_judge_needed"] = per_judge
        found["statement"] = (
            f"{_trials(len(shared))} seen by two or more judges; agreement needs {need}. "
            f"Deal the {len(names)} judges --per-judge {per_judge} (of {design['trials']} "
            "trials) so that it can be measured."
        )
    elif math.isnan(alpha.statistic):
        found["statement"] = (
            "Every judge gave the same answer on every shared trial: the panel is unanimous, "
            "so agreement by chance is already total and alpha is undefined."
        )
    return found


def _trials(n: int) -> str:
    return {0: "No trial was", 1: "Only 1 trial was"}.get(n, f"Only {n} trials were")


def _majority(design: DesignRecord, judges: Mapping[str, Sequence[Pick]]) -> dict[int, str]:
    """Per trial, the side most judges preferred ("tie" when split or tied)."""
    votes: dict[int, Counter[str]] = defaultdict(Counter)
    for own in judges.values():
        for pick in own:
            votes[pick.trial][preferred_side(design, pick.trial, pick.pick) or "tie"] += 1
    outcome = {}
    for trial, count in votes.items():
        ranked = count.most_common()
        tied = len(ranked) > 1 and ranked[0][1] == ranked[1][1]
        outcome[trial] = "tie" if tied else ranked[0][0]
    return outcome


def _by_tag(design: DesignRecord, outcome: Mapping[int, str]) -> JsonObject:
    """Per prompt tag: wins, losses, ties (the trial's outcome, as overall), A's win rate
    among the untied with its Wilson interval, the exact two-sided binomial p, and that p
    Holm-adjusted across the tags that have an untied comparison (seed 001: break the result
    down by task type before concluding; a prompt with several tags counts in each)."""
    tags = {p["id"]: p.get("tags", []) for p in design["prompts"]}
    prompt_of = prompts_by_trial(design)
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for trial, side in outcome.items():
        for tag in tags[prompt_of[trial]]:
            table[tag][side] += 1
    alpha = design["alpha"]
    tests = {
        tag: preference_test(c["A"], c["B"], c["tie"], alpha=alpha)
        for tag, c in sorted(table.items())
    }
    tested = [tag for tag, t in tests.items() if t.n]
    adjusted = dict(zip(tested, holm([tests[t].p_value for t in tested]), strict=True))
    return {
        tag: {
            "A": t.wins,
            "B": t.losses,
            "ties": t.ties,
            "n": t.n,
            "win_rate": interval(t.win_rate),
            "p_value": t.p_value,
            "p_holm": adjusted.get(tag, 1.0),
            "ahead": "A" if t.wins > t.losses else "B" if t.losses > t.wins else None,
        }
        for tag, t in tests.items()
    }


def _excluded_section(excluded: Sequence[Pick], outcome: Mapping[int, str]) -> JsonObject:
    """``report["excluded"]``: the comparisons an LLM judge left out (never ties), by reason,
    and the trials no judge's verdict was left for."""
    reasons = Counter(str(excluded_reason(p)) for p in excluded)
    listed = [
        {"trial": p.trial, "judge": p.judge, "reason": excluded_reason(p)}
        for p in sorted(excluded, key=lambda p: (p.trial, p.judge))
    ]
    return {
        "n": len(excluded),
        "by_reason": dict(sorted(reasons.items())),
        "trials_left_out": sorted({p.trial for p in excluded} - set(outcome)),
        "comparisons": listed,
    }


def _excluded_words(section: JsonObject) -> str:
    reasons = {
        "identity_leakage": "identity leakage",
        "position_inconsistent": "position-inconsistent",
    }
    parts = [f"{k} {reasons.get(r, r)}" for r, k in section["by_reason"].items()]
    return f"{section['n']} excluded ({', '.join(parts)}; neither wins nor ties)"


def analyze_preference(
    design: DesignRecord,
    picks: Sequence[Pick],
    options: AnalysisOptions,
    *,
    judge_gates: Sequence[str] = (),
    controls: ControlsCheck | None = None,
) -> tuple[AnalysisFields, int, list[JsonObject]]:
    """The preference report's fields. An LLM judge's excluded comparisons are judged (they
    finish a fixed design) but count neither as wins nor as ties; ``judge_gates`` are the
    gates the judges' own diagnostics failed (an LLM judge's position gate).

    ``controls`` (hidden control trials): when a judge with enough comparisons to test does
    not prefer one output more often on the real trials than on the controls (one-sided
    Fisher, :mod:`blindtest.stats.controls`), a directional result is reported as
    inconclusive, exit 0, and the headline says why. Not a gate: the run measured something
    (the preferences split as the test says), it did not show that the split comes from a
    difference the judge can tell; "inconclusive" is the claim that holds."""
    excluded = [p for p in picks if excluded_reason(p) is not None]
    counted = [p for p in picks if excluded_reason(p) is None]
    judges = by_judge(counted)
    outcome = _majority(design, judges)
    wins_a = sum(1 for s in outcome.values() if s == "A")
    wins_b = sum(1 for s in outcome.values() if s == "B")
    ties = sum(1 for s in outcome.values() if s == "tie")
    result = preference_test(wins_a, wins_b, ties, alpha=design["alpha"])
    non_tie = [p for p in counted if p.pick != "tie"]
    left = sum(1 for p in non_tie if p.pick == "left")
    bias = (
        position_bias(left, len(non_tie), alpha=design["alpha"], margin=options.position_margin)
        if non_tie
        else None
    )
    agreement = _agreement(design, judges)
    problems = _gate_problems(bias, agreement, options, judges=len(by_judge(picks)))
    if judge_gates:
        # A judge's own position gate names it and counts its comparisons (both passes of a
        # swap read together); it replaces the pooled left-share sentence, which says less.
        problems = [*judge_gates, *(g for g in problems if not g.startswith("position bias"))]
    dropped = _excluded_section(excluded, outcome) if excluded else None
    if dropped is not None and not outcome:
        problems.append(
            f"excluded: every comparison was left out of the test ({_excluded_words(dropped)}); "
            "nothing was measured."
        )
    warnings = []
    if bias is not None and bias.exceeds_margin and not bias.significant:
        warnings.append(
            f"Position: left chosen {bias.left} of {bias.n} times ({pct(bias.statistic)}), more "
            f"than {pct(options.position_margin)} from half but not significantly "
            f"({format_p(bias.p_value)}); worth a look, not a failure."
        )
    prompt_of = prompts_by_trial(design)
    rows = [
        {
            "trial": p.trial,
            "prompt_id": prompt_of[p.trial],
            "judge": p.judge,
            "left": option1_side(design, p.trial),
            "pick": p.pick,
            "preferred": preferred_side(design, p.trial, p.pick),
            "reason": p.reason,
        }
        for own in judges.values()
        for p in own
    ]
    rows += [
        {
            "trial": p.trial,
            "prompt_id": prompt_of[p.trial],
            "judge": p.judge,
            "left": option1_side(design, p.trial),
            "pick": p.pick,
            "preferred": None,
            "excluded": excluded_reason(p),
            "reason": p.reason,
        }
        for p in excluded
    ]
    fields: ProtocolFields = {
        "judges": sorted(judges),
        "test": TESTS["preference"],
        "wins": wins_a,
        "losses": wins_b,
        "ties": ties,
        "excluded": dropped,
        "p_value": result.p_value,
        "pc": interval(result.win_rate),
        "preference": result.to_dict(),
        "position_bias": bias.to_dict() if bias else None,
        "agreement": agreement,
        "by_tag": _by_tag(design, outcome),
        "gates_failed": problems,
        "warnings": warnings,
        "per_trial": sorted(rows, key=lambda r: (r["trial"], r["judge"])),
    }
    judged = len(set(outcome) | {p.trial for p in excluded})
    if judged < design["trials"]:
        return (
            {
                **fields,
                "n": len(outcome),
                "verdict": "void",
                "statement": void_statement(design, judged),
            },
            1,
            [],
        )
    if problems:
        return (
            {
                **fields,
                "n": len(outcome),
                "verdict": "unusable",
                "statement": "Not a result: " + " ".join(problems),
            },
            1,
            [],
        )
    a, b = (side_label(design, s) for s in ("A", "B"))  # a label, else the model
    verdict = {"better": f"A ({a}) preferred", "worse": f"B ({b}) preferred"}.get(
        result.verdict, "inconclusive"
    )
    rate = (
        f"A's win rate {pct(result.win_rate.estimate)} (Wilson 95% "
        f"{pct(result.win_rate.lo)} to {pct(result.win_rate.hi)})"
        if wins_a + wins_b
        else "A's win rate undefined: no untied comparison"
    )
    left_out = f"; {_excluded_words(dropped)}" if dropped is not None else ""
    statement = (
        f"A ({a}) won {wins_a}, B ({b}) won {wins_b}, {ties} ties (ties excluded from the "
        f"win rate){left_out}. {rate}, exact two-sided {format_p(result.p_value)}. "
    )
    favoured = {"better": f"A ({a})", "worse": f"B ({b})"}.get(result.verdict)
    tie_rate = ties / len(outcome) if outcome else 0.0
    said, words = _conclusion(result, verdict, favoured, tie_rate, controls)
    statement += words
    if controls is not None:
        fields["controls_verdict"] = controls.to_dict(favoured, said != verdict)
    return {**fields, "n": len(outcome), "verdict": said, "statement": statement}, 0, []


def _conclusion(
    result: Any,
    verdict: str,
    favoured: str | None,
    tie_rate: float,
    controls: ControlsCheck | None,
) -> tuple[str, str]:
    """The verdict and the headline's closing words: the test's conclusion, then what the
    hidden controls say, which hold back a directional verdict from a judge that prefers as
    often where nothing differs."""
    held = favoured is not None and controls is not None and bool(controls.indistinguishable)
    if result.verdict == "inconclusive":
        reason = (
            "the margin is smaller than two tasks"
            if not result.margin_ok
            else "the Wilson interval and the exact test do not both exclude 1/2"
        )
        words = f"Inconclusive: {reason}."
        if tie_rate >= 1 / 4:
            # Said only when the ties are many: wording follows the numbers.
            words += f" The tie rate ({pct(tie_rate)}) is itself a finding."
    elif held:
        words = (
            f"Inconclusive: the interval and the exact test favour {favoured} (margin "
            f"{result.margin}), but the hidden controls do not back it."
        )
        verdict = "inconclusive"
    else:
        words = f"Verdict: {verdict} (interval and exact test agree, margin {result.margin})."
    if controls is not None:
        words += " " + controls.headline(favoured if held else None)
    return verdict, words


def _gate_problems(
    bias: Any, agreement: JsonObject | None, options: AnalysisOptions, *, judges: int = 2
) -> list[str]:
    """Spec 002's gates. Position bias fails the run when the exact test finds it (a margin
    alone would fail an unbiased judge a third of the time at n = 10); agreement fails it
    when Krippendorff's alpha is below ``min_kappa`` (``--min-kappa``, the rule the gate had
    for kappa) or too few trials were shared to measure it; a unanimous panel (alpha undefined,
    one answer throughout) passes."""
    problems = []
    who, pronoun = ("the judge", "it") if judges == 1 else ("judges", "they")
    if bias is not None and bias.significant:
        problems.append(
            f"position bias: {who} chose left {bias.left} of {bias.n} times "
            f"({pct(bias.statistic)}, exact two-sided {format_p(bias.p_value)}); {pronoun} "
            "responded to position, so every win rate here is void."
        )
    if agreement is not None and not agreement["measurable"]:
        problems.append(f"agreement is not measured: {agreement['statement']}")
        return problems
    alpha = (agreement or {}).get("alpha", {}).get("statistic")
    if alpha is not None and alpha < options.min_kappa:
        problems.append(
            f"agreement: Krippendorff's alpha {alpha:.2f} is below {options.min_kappa:g}; the "
            "panel detected no shared signal, so the win rate is noise however decisive it looks."
        )
    return problems
