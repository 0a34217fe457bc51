"""Hidden control trials in the analysis: which trials are controls, the
design and picks the A-vs-B analysis sees without them, and each judge's control results.

A control shows two independent draws of one model, so there is nothing to find: a judge's
left share there measures position bias, and its share of non-tie verdicts the rate of
preferences where no difference exists. Controls are left out of everything about A vs B (the
preference test, its gates, agreement, the style check, the LLM diagnostics' shares, the
export, the tells); they are reported per judge here. Pure; opens no file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from blindtest.artifact_types import DesignRecord
from blindtest.artifacts import JsonObject
from blindtest.judge_diagnostics import ControlResult, control_result
from blindtest.records import Pick, PicksFile
from blindtest.reportfmt import count, format_p, pct

__all__ = [
    "control_results",
    "control_trials",
    "controls_section",
    "main_design",
    "main_files",
    "without_controls",
]


def control_trials(design: Mapping[str, Any]) -> dict[int, str]:
    """Control trial -> the side both its outputs come from (empty for a design without)."""
    return {int(e["trial"]): str(e["control"]) for e in design["arrangement"] if "control" in e}


def main_design(design: DesignRecord) -> DesignRecord:
    """The design as the A-vs-B analysis sees it: the real trials only (``trials`` counts
    them; ``controls`` stays, so a printed design command can give it again)."""
    controls = control_trials(design)
    if not controls:
        return design
    main = dict(design)
    main["arrangement"] = [e for e in design["arrangement"] if "control" not in e]
    main["trials"] = design["trials"] - len(controls)
    return cast(DesignRecord, main)


def without_controls(picks: Iterable[Pick], controls: Mapping[int, str]) -> list[Pick]:
    return [p for p in picks if p.trial not in controls]


def main_files(files: Sequence[PicksFile], controls: Mapping[int, str]) -> list[PicksFile]:
    """The picks files without their control-trial records (picks, later passes, failures)."""
    if not controls:
        return list(files)
    return [
        replace(
            file,
            picks=tuple(without_controls(file.picks, controls)),
            later_passes=tuple(without_controls(file.later_passes, controls)),
            failures=tuple(f for f in file.failures if int(f["trial"]) not in controls),
        )
        for file in files
    ]


def control_results(
    files: Sequence[PicksFile], controls: Mapping[int, str]
) -> dict[str, ControlResult]:
    """Each judge's results on the control trials, from the picks files as read."""
    records: dict[str, list[JsonObject]] = {}
    kinds: dict[str, str | None] = {}
    for file in files:
        for pick in (*file.picks, *file.later_passes):
            if pick.trial in controls:
                records.setdefault(pick.judge, []).append(dict(pick.to_record()))
                kinds.setdefault(pick.judge, pick.kind)
    return {
        judge: control_result(judge, kinds[judge], own) for judge, own in sorted(records.items())
    }


def _subject(result: ControlResult) -> str:
    if result.kind == "human":
        return "you"
    if result.kind == "llm":
        return f"the LLM judge {result.judge}"
    if result.kind == "bot":
        return f"the bot {result.judge}"
    return f"the judge {result.judge}"


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def statement(result: ControlResult, alpha: float = 0.05) -> str:
    """The plain sentence for one judge's control results."""
    found = result.to_dict()
    llm = result.kind == "llm"
    comparisons = count(result.controls, "control comparison")
    what = (
        f"{count(result.verdicts, 'verdict')} (both passes of the swap) on {comparisons}"
        if llm
        else comparisons
    )
    chose = "chose the first output shown" if llm else "picked the left output"
    text = (
        f"On {what} (the same model on both sides) {_subject(result)} {chose} "
        f"{_times(result.left)} and declared no tie {_times(result.non_tie)}"
    )
    if llm and result.confident is not None:
        text += f" ({result.confident} of them not below --min-confidence)"
    if not result.non_tie:
        return text + ": every verdict was a tie, as it should be where there is nothing to " \
            "find; position is not measured."  # fmt: skip
    interval = found["interval"]
    p_value = found["p_value"]
    text += (
        f": left in {pct(found['share_left'])} of the {result.non_tie} untied (exact 95% "
        f"interval {pct(interval['lo'])} to {pct(interval['hi'])}, two-sided "
        f"{format_p(p_value)} against 1/2), "
    )
    if p_value is not None and p_value < alpha:
        text += "a preference for a position, not for a response; "
    else:
        text += "no position preference shown at this size; "
    text += (
        f"{pct(found['share_non_tie'])} of the {'verdicts' if llm else 'picks'} preferred one "
        "of two outputs of one model, the rate of preferences where there is nothing to find."
    )
    return text


def controls_section(
    design: DesignRecord,
    files: Sequence[PicksFile],
    alpha: float = 0.05,
    shown: Mapping[int, Sequence[str]] | None = None,
) -> JsonObject | None:
    """``report["controls"]``: the control trials (after the reveal), each judge's results with
    its sentence, and the screen lines; None for a design without controls. ``shown`` (the
    options as the judge saw them, by trial) lets it count controls whose two outputs were
    identical, which a judge could spot without reading."""
    controls = control_trials(design)
    if not controls:
        return None
    judges = []
    lines = [
        f"Hidden controls: {len(controls)} of the {design['trials']} comparisons showed one model "
        "on both sides (left out of the test above; their outputs count as their side's in the "
        "census and the appendix):"
    ]
    identical = sorted(
        t for t in controls if len(set((shown or {}).get(t, ()))) == 1 and (shown or {}).get(t)
    )
    if identical:
        lines.append(
            f"  {len(identical)} control(s) showed two identical outputs (trial "
            f"{', '.join(map(str, identical))}): the endpoint answered the same twice, so a judge "
            "could tell those controls by the identical pair without reading."
        )
    for result in control_results(files, controls).values():
        sentence = statement(result, alpha)
        judges.append({**result.to_dict(), "statement": sentence})
        lines.append(f"  {sentence}")
    if not judges:
        lines.append("  no judge judged a control trial.")
    return {
        "trials": [{"trial": t, "side": side} for t, side in sorted(controls.items())],
        "judges": judges,
        "identical_outputs": identical,
        "lines": lines,
    }
