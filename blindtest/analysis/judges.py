"""The machine judges' part of a report: per LLM judge its diagnostics
(:mod:`blindtest.analysis.llm_diagnostics`), the position gate each one can fail, and the lines the
result screen prints. (The comparisons left out of the aggregate, leakage or an inconsistent
swap under ``--inconsistent exclude``, are counted by the preference analysis as excluded.)

Pure: picks files already read come in; nothing is opened here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from blindtest import reportfmt
from blindtest.analysis.export import ShownAnswer
from blindtest.analysis.llm_calibration import ControlResult, machine_vs_person
from blindtest.analysis.llm_diagnostics import (
    POSITION_ALPHA,
    Consistency,
    JudgeDiagnostics,
    PositionSplit,
    Share,
    diagnose,
    position_gate,
    unsure_gate,
)
from blindtest.model.picks import JudgeView, PicksFile, Trial
from blindtest.model.protocols import PROTOCOLS
from blindtest.reportfmt import format_p
from blindtest.stats.position import POSITION_MARGIN, PositionGateResult

__all__ = ["agreement_section", "llm_section", "preference_rows"]


def _percent(share: Share | Consistency | None) -> str:
    if share is None or share.estimate is None:
        return "n/a"
    return f"{share.estimate:.0%} of {share.n}"


def _interval_text(share: Share | Consistency | None) -> str:
    interval = share.to_dict().get("interval") if share is not None else None
    if not interval:
        return ""
    return f" (exact 95% interval {interval['lo']:.0%} to {interval['hi']:.0%})"


def _position_line(split: PositionSplit) -> str:
    share = split.share_first
    between = (
        f"; first's share of the two {share.estimate:.0%} (exact 95% interval "
        f"{share.lo:.0%} to {share.hi:.0%})"
        if share is not None
        else ""
    )
    p = split.p_value
    test = (
        f", exact two-sided sign test {format_p(p)}"
        if p is not None
        else "; position decided none of them, so there is no sign test"
    )
    if split.swapped:
        return (
            f"  position: {split.inconsistent} of "
            f"{reportfmt.count(split.comparisons, 'comparison')} "
            f"position-inconsistent; both passes named the output shown first in "
            f"{split.first}, the one shown second in {split.second}{between}{test}"
        )
    return (
        "  position (no swap, one pass per comparison): of "
        f"{reportfmt.count(split.comparisons, 'comparison')} "
        f"{split.first} named the output shown first, {split.second} the one shown second"
        f"{between}{test}"
    )


def _gate_line(gate: PositionGateResult) -> str:
    """The judge's own position gate: its left share over its comparisons and the verdict."""
    share = gate.share
    said = {
        "pass": "passes: within the margin",
        "fail": "fails: beyond the margin",
        "warn": "a lean shown, not beyond the margin"
        if gate.significant
        else "no lean shown, too few comparisons to bound it within the margin",
    }[gate.verdict]
    return (
        f"  position gate over {reportfmt.count(gate.comparisons, 'comparison')} (every pass as "
        f"shown): left share {100 * share.estimate:.1f}% (95% interval {100 * share.lo:.1f}% to "
        f"{100 * share.hi:.1f}%), sign-flip test {format_p(gate.p_value)}; margin "
        f"{100 * gate.margin:g} points: {said}"
    )


def _direction_line(share: Share, what: str, chance: str) -> str:
    """What share of the comparisons that count went to ``what``, its interval and test; a
    count of none said in words."""
    if not share.n:
        return f"  chose {what}: not measured, no comparison counts (only {share.unit} do)"
    return (
        f"  chose {what} in {_percent(share)} {share.unit}{_interval_text(share)}; chance "
        f"{chance}, exact two-sided {format_p(share.p_value)}"
    )


def _lines(found: JudgeDiagnostics, protocol: str) -> list[str]:
    name = found.model or found.judge
    rules = PROTOCOLS[protocol]
    chance = rules.chance_words
    lines = [f"LLM judge {name} ({reportfmt.count(found.comparisons, 'comparison')} judged):"]
    if found.position is not None:
        lines.append(_position_line(found.position))
    if found.position_gate is not None:
        lines.append(_gate_line(found.position_gate))
    if found.first is not None:
        lines.append(
            f"  chose the first position in {_percent(found.first)} comparisons"
            f"{_interval_text(found.first)} (chance {chance})"
        )
    if found.longer is not None:
        lines.append(_direction_line(found.longer, "the longer output", chance))
    if found.markdown is not None:
        lines.append(_direction_line(found.markdown, "the output with more markdown", chance))
    if found.consistent is not None:
        lines.append(
            f"  position swap: both passes agreed in {_percent(found.consistent)} comparisons"
            f"{_interval_text(found.consistent)}"
        )
    counted = "counted as ties, " if rules.prefers else ""
    leaked = (
        f"{found.excluded} excluded from the test (neither counted nor ties)"
        if rules.prefers
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
        f"  {reportfmt.count(found.requests, 'request')} ("
        f"{reportfmt.count(found.retries, 'retry', 'retries')}), "
        f"{reportfmt.count(found.failures, 'failure row')} "
        f"({reportfmt.count(found.still_failed, 'trial')} still unjudged), "
        f"{reportfmt.count(found.tokens, 'token')}{money}"
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
    margin: float = POSITION_MARGIN,
    planted: Collection[int] = (),
) -> dict[str, Any] | None:
    """``report["llm_judges"]``: each LLM judge's diagnostics and screen lines, and ``gates``
    (the gates each judge failed: its position gate over its comparisons at the design's alpha
    and ``margin``, :func:`blindtest.analysis.llm_diagnostics.position_gate`; every verdict
    below --min-confidence, :func:`blindtest.analysis.llm_diagnostics.unsure_gate`), or None
    when no LLM judge is in the files. ``controls`` (hidden control trials): each judge's
    control results, added to its diagnostics; the files then hold the real trials, and
    ``spent_in`` every trial judged, so requests, tokens and cost are what the judge spent
    (controls included), not only its share of the test, and the controls' passes feed the
    judge's position gate beside the real ones. ``planted``: the sensitivity check's planted
    comparisons (the champion's answer against its degraded copy, a known-answer test of the
    judge, not a comparison of the candidates), left out of each judge's position gate as the
    run's gate leaves them out, so that both count the same comparisons."""
    records, failures = _llm_records(files)
    if not records and not failures:
        return None
    spent_records, spent_failures = _llm_records(spent_in) if spent_in is not None else ({}, {})
    options = {t.number: t.options for t in view.trials}
    alpha = float(design.get("alpha", POSITION_ALPHA))
    judges = []
    lines: list[str] = []
    gates: list[str] = []
    for judge in sorted({*records, *failures}):
        found = diagnose(
            judge,
            view.protocol,
            records.get(judge, []),
            failures.get(judge, []),
            options,
            design["models"],
            alpha=alpha,
            margin=margin,
            position_records=_gate_records(
                spent_records.get(judge) if spent_in is not None else None,
                records.get(judge, []),
                planted,
            ),
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
        for gate in (position_gate(found), unsure_gate(found, _min_confidence(records.get(judge)))):
            if gate is not None:
                gates.append(gate)
        control = (controls or {}).get(judge)
        if control is not None:
            diagnostics["controls"] = control.to_dict()
            lines.append(_control_line(control))
        judges.append(diagnostics)
    return {"judges": judges, "lines": lines, "gates": gates}


def _gate_records(
    spent: Sequence[Mapping[str, Any]] | None,
    own: Sequence[Mapping[str, Any]],
    planted: Collection[int],
) -> list[Mapping[str, Any]]:
    """What a judge's position gate reads: every pass it spent (the hidden controls' among
    them) or, without those, its records; never a planted comparison's."""
    return [r for r in (spent if spent is not None else own) if int(r["trial"]) not in planted]


def _min_confidence(records: Sequence[Mapping[str, Any]] | None) -> float | None:
    """The --min-confidence a judge's picks were made with (their recorded settings)."""
    for record in records or ():
        value = (record.get("judge_settings") or {}).get("min_confidence")
        if isinstance(value, (int, float)):
            return float(value)
    return None


def _control_line(control: ControlResult) -> str:
    from blindtest.reportfmt import control_line

    return "  " + control_line(control.to_dict())


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
    if PROTOCOLS[protocol].pick_kind == "nickname":
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
    view: JudgeView,
    files: Sequence[PicksFile],
    min_confidence: float,
    answers: Mapping[int, Sequence[ShownAnswer]] | None = None,
    text: str = "original",
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Preference data for DPO-style trainers (TRL's prompt/chosen/rejected layout): one row
    per pick above ``min_confidence``, without leakage, consistent across the swap, not a tie;
    and how many were dropped, by reason (spec 003's RLHF advice).

    ``chosen`` and ``rejected`` hold what the models wrote (``text="original"``, from
    ``answers``: :func:`blindtest.analysis.export.shown_answers`) or what the judge saw
    (``"judged"``, trials.jsonl's options); every row says which (``text``) and, under
    ``judge_saw``, per answer the SHA-256 of the text the judge saw and the transformations
    that made it (:mod:`blindtest.analysis.export`). A trial ``answers`` lacks is exported as
    the judge saw it, and its row says so.

    Prompts given as single texts give TRL's standard layout (``prompt``, ``chosen`` and
    ``rejected`` strings). When any prompt of the run is a conversation every row takes TRL's
    conversational layout: ``prompt`` the list of turns (``{"role", "content"}``, the last the
    user's), ``chosen`` and ``rejected`` each one assistant message; one layout per file, since
    a column mixing strings and lists cannot be loaded as one dataset."""
    rows: list[dict[str, Any]] = []
    dropped: dict[str, int] = {}

    def drop(reason: str) -> None:
        dropped[reason] = dropped.get(reason, 0) + 1

    trials = {t.number: t for t in view.trials}
    conversational = any(t.history for t in view.trials)
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
                known = (answers or {}).get(trial.number)
                kept = text if known is not None else "judged"
                texts = [a.original for a in known] if known and kept == "original" else None
                shown = texts or list(trial.options)
                pair = {
                    "prompt": trial.prompt,
                    "chosen": shown[chosen],
                    "rejected": shown[1 - chosen],
                }
                rows.append(
                    {
                        **(_conversational(trial, pair) if conversational else pair),
                        "judge": pick.judge,
                        "confidence": pick.confidence,
                        "reason": pick.reason,
                        "text": kept,
                        "judge_saw": {
                            "chosen": _judge_saw(trial.options[chosen], known, chosen),
                            "rejected": _judge_saw(trial.options[1 - chosen], known, 1 - chosen),
                        },
                    }
                )
    return rows, dropped


def _judge_saw(shown: str, known: Sequence[ShownAnswer] | None, index: int) -> dict[str, Any]:
    """The SHA-256 of the text the judge saw (UTF-8) and the transformations that made it
    (unknown without responses.jsonl: null)."""
    return {
        "sha256": hashlib.sha256(shown.encode("utf-8")).hexdigest(),
        "transformations": list(known[index].transformations) if known else None,
    }


def _conversational(trial: Trial, pair: Mapping[str, str]) -> dict[str, Any]:
    """One preference pair in TRL's conversational layout: the prompt as every turn of the
    conversation, the outputs as assistant messages."""
    turns = [*trial.history, ("user", pair["prompt"])]
    return {
        "prompt": [{"role": role, "content": content} for role, content in turns],
        "chosen": [{"role": "assistant", "content": pair["chosen"]}],
        "rejected": [{"role": "assistant", "content": pair["rejected"]}],
    }
