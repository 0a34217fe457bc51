"""The machine judges' part of a report (issue 13 items 2, 5, 8): per LLM judge its diagnostics
(:mod:`blindtest.judge_diagnostics`), the comparisons left out of the aggregate (leakage, an
inconsistent swap under ``--inconsistent exclude``) and the lines the result screen prints.

Pure: picks files already read come in; nothing is opened here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from blindtest.judge_diagnostics import (
    ControlResult,
    JudgeDiagnostics,
    Share,
    diagnose,
    machine_vs_person,
    style_check,
)
from blindtest.records import JudgeView, Pick, PicksFile

__all__ = ["agreement_section", "kept_picks", "llm_section", "preference_rows", "style_section"]


def _excluded(pick: Pick) -> bool:
    return pick.kind == "llm" and bool(pick.extra.get("excluded"))


def kept_picks(picks: Sequence[Pick]) -> list[Pick]:
    """The picks the main test counts: an LLM judge's excluded preference comparisons count
    as ties, which the preference test leaves out of the win rate and the position check
    (the trial stays judged, so a fixed design is still finished)."""
    return [replace(p, pick="tie") if _excluded(p) else p for p in picks]


def _percent(share: Share | None) -> str:
    if share is None or share.estimate is None:
        return "n/a"
    return f"{share.estimate:.0%} of {share.n}"


def _lines(found: JudgeDiagnostics, protocol: str) -> list[str]:
    name = found.model or found.judge
    chance = "1/3" if protocol == "triangle" else "50%"
    lines = [f"LLM judge {name} ({found.comparisons} comparisons judged):"]
    if found.first is not None:
        lines.append(
            f"  chose the first position in {_percent(found.first)} verdicts, the longer output "
            f"in {_percent(found.longer)}, the one with more markdown in "
            f"{_percent(found.markdown)} (chance {chance})"
        )
    if found.consistent is not None:
        lines.append(
            f"  position swap: both passes agreed in {_percent(found.consistent)} comparisons"
        )
    counted = "counted as ties, " if protocol == "preference" else ""
    leaked = (
        f"{found.excluded} excluded from the test"
        if protocol == "preference"
        else "flagged for review, still counted (no tie to count them as)"
    )
    lines.append(
        f"  {found.low_confidence} below --min-confidence ({counted}flagged for human "
        f"review); {len(found.leakage)} with identity leakage; {leaked}"
    )
    for leak in found.leakage[:5]:
        lines.append(f"    leakage in trial {leak['trial']}: {leak['details']}")
    money = f", ${found.cost:.4f}" if found.cost is not None else ""
    lines.append(
        f"  {found.requests} requests ({found.retries} retries), {found.failures} failure rows "
        f"({found.still_failed} trials still unjudged), {found.tokens} tokens{money}"
    )
    lines += [f"  WARNING: {w}" for w in found.warnings]
    return lines


def _llm_records(
    files: Sequence[PicksFile],
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """Each LLM judge's pick records (every pass) and failure rows in ``files``."""
    records: dict[str, list[dict[str, Any]]] = {}
    failures: dict[str, list[dict[str, Any]]] = {}
    for file in files:
        for pick in (*file.picks, *file.later_passes):
            if pick.kind == "llm":
                records.setdefault(pick.judge, []).append(dict(pick.to_record()))
        for row in file.failures:
            if row.get("judge_kind") == "llm":
                failures.setdefault(str(row["judge"]), []).append(dict(row))
    return records, failures


def llm_section(
    design: Mapping[str, Any],
    view: JudgeView,
    files: Sequence[PicksFile],
    controls: Mapping[str, ControlResult] | None = None,
    *,
    spent_in: Sequence[PicksFile] | None = None,
) -> dict[str, Any] | None:
    """``report["llm_judges"]``: each LLM judge's diagnostics and screen lines, or None when
    no LLM judge is in the files. ``controls`` (hidden control trials, issue 13 item 7): each
    judge's control results, added to its diagnostics; the files then hold the real trials,
    and ``spent_in`` every trial judged, so requests, tokens and cost are what the judge spent
    (controls included), not only its share of the test."""
    records, failures = _llm_records(files)
    if not records and not failures:
        return None
    spent_records, spent_failures = _llm_records(spent_in) if spent_in is not None else ({}, {})
    options = {t.number: t.options for t in view.trials}
    judges = []
    lines: list[str] = []
    for judge in sorted({*records, *failures}):
        found = diagnose(
            judge,
            view.protocol,
            records.get(judge, []),
            failures.get(judge, []),
            options,
            design["models"],
        )
        if judge in spent_records or judge in spent_failures:
            spent = diagnose(
                judge,
                view.protocol,
                spent_records.get(judge, []),
                spent_failures.get(judge, []),
                options,
                design["models"],
            )
            found = replace(
                found,
                requests=spent.requests,
                retries=spent.retries,
                tokens=spent.tokens,
                cost=spent.cost,
            )
        diagnostics = found.to_dict()
        lines += _lines(found, view.protocol)
        control = (controls or {}).get(judge)
        if control is not None:
            diagnostics["controls"] = control.to_dict()
            lines.append(_control_line(control))
        judges.append(diagnostics)
    return {"judges": judges, "lines": lines}


def _control_line(control: ControlResult) -> str:
    shown = control.to_dict()
    interval = shown["interval"]
    where = (
        f" (exact 95% interval {interval['lo']:.0%} to {interval['hi']:.0%})"
        if interval is not None
        else ""
    )
    return (
        f"  hidden controls (one model on both sides, {control.controls} comparisons): first "
        f"position in {_percent(Share(control.left, control.non_tie, 0.5))} untied verdicts"
        f"{where}; non-tie in {_percent(Share(control.non_tie, control.verdicts, 1.0))} "
        f"verdicts, {control.confident} of them not below --min-confidence"
    )


def _by_judge(files: Sequence[PicksFile]) -> dict[str, dict[int, Any]]:
    found: dict[str, dict[int, Any]] = {}
    for file in files:
        for pick in file.picks:
            found.setdefault(pick.judge, {})[pick.trial] = pick.pick
    return found


def agreement_section(
    files: Sequence[PicksFile], others: Sequence[PicksFile], protocol: str
) -> dict[str, Any]:
    """``report["machine_vs_person"]``: each judge of ``others`` (``--against``) against each
    judge of the analysed files, on the trials both judged (same pick, Cohen's kappa with a
    95% interval); never pooled into the test. Pair picks are nicknames each judge chose, so
    they are not compared."""
    if protocol == "pair":
        return {"pairs": [], "lines": ["--against: pair picks are nicknames each judge chose; "
                                       "they are not compared"]}  # fmt: skip
    pairs = []
    lines = []
    ours, theirs = _by_judge(files), _by_judge(others)
    for machine, picks in theirs.items():
        for person, own in ours.items():
            if machine == person:
                continue
            found = machine_vs_person(machine, person, picks, own)
            if found is None:
                continue
            pairs.append(found.to_dict())
            kappa = found.to_dict()["kappa"]
            if kappa["estimate"] is None:
                shown = "kappa undefined (one label throughout)"
            elif kappa["lo"] is None:
                shown = f"kappa {kappa['estimate']:.2f} (no large-sample interval: " + (
                    "one shared trial)" if found.n == 1 else "it would have no width)"
                )
            else:
                shown = (
                    f"kappa {kappa['estimate']:.2f} (95% interval {kappa['lo']:.2f} to "
                    f"{kappa['hi']:.2f})"
                )
            lines.append(
                f"{machine} vs {person}: the same pick on {found.agreed} of {found.n} trials "
                f"both judged; {shown}"
            )
    return {"pairs": pairs, "lines": lines}


def preference_rows(
    view: JudgeView, files: Sequence[PicksFile], min_confidence: float
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Preference data for DPO-style trainers (TRL's prompt/chosen/rejected layout): one row
    per pick above ``min_confidence``, without leakage, consistent across the swap, not a tie;
    and how many were dropped, by reason (issue 13 item 11; spec 003's RLHF advice)."""
    rows: list[dict[str, Any]] = []
    dropped: dict[str, int] = {}

    def drop(reason: str) -> None:
        dropped[reason] = dropped.get(reason, 0) + 1

    trials = {t.number: t for t in view.trials}
    for file in files:
        for pick in file.picks:
            extra = pick.extra
            if pick.pick not in ("left", "right"):
                drop("tie")
            elif extra.get("identity_leakage") or extra.get("excluded") == "identity_leakage":
                drop("identity leakage")
            elif extra.get("position_consistent") is False:
                drop("inconsistent across the swap")
            elif pick.confidence is None or not pick.confidence > min_confidence:
                drop(f"confidence not above {min_confidence:g}")
            else:
                trial = trials[pick.trial]
                chosen = 0 if pick.pick == "left" else 1
                rows.append(
                    {
                        "prompt": trial.prompt,
                        "chosen": trial.options[chosen],
                        "rejected": trial.options[1 - chosen],
                        "judge": pick.judge,
                        "confidence": pick.confidence,
                        "reason": pick.reason,
                    }
                )
    return rows, dropped


def style_section(view: JudgeView, picks: Sequence[Pick]) -> dict[str, Any] | None:
    """``report["style_check"]`` for a preference run: the style model over the untied picks
    analysed (see :func:`blindtest.judge_diagnostics.style_check`), and its screen lines."""
    if view.protocol != "preference":
        return None
    options = {t.number: t.options for t in view.trials}
    choices = [
        (options[p.trial][0], options[p.trial][1], p.pick == "left")
        for p in picks
        if p.pick in ("left", "right") and len(options.get(p.trial, ())) == 2
    ]
    found = style_check(choices)
    if found is None:
        return None
    line = (
        f"Style check (secondary, descriptive): the length and markdown differences explain "
        f"{found.statistic:.0%} of the picks' log-likelihood (McFadden R^2, logistic model, "
        f"{found.n} untied picks); odds of picking an output x{math.exp(found.length):.2f} per "
        f"100 words longer, x{math.exp(found.markdown):.2f} per markdown mark more"
    )
    return {**found.to_dict(), "lines": [line]}
