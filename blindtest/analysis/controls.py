"""Hidden control trials in the analysis: which trials are controls, the design and picks the
A-vs-B analysis sees without them, and what each judge did where nothing differs.

A control shows two independent draws of one model, so there is nothing to find. Positions are
randomised, so controls add nothing to the error control of the A-versus-B claim, and two
answers of one model cannot reveal a judge that follows length: they describe and decide
nothing. What they measure is the judge where nothing differs (`blindtest.stats.controls`):
its tie rate there and where its untied picks went by position, each a share over comparisons
(every judge and pass of a comparison together) with its interval, and the exact sign-flip
test of position. Their picks also feed the run's position gate beside the real ones
(`blindtest.analysis.gates`). The comparison of each judge's non-tie rate with its rate on the
real trials (one-sided Fisher exact, Holm across judges) stays as a descriptive figure of the
judge's calibration record and withdraws no verdict: with 5 controls, holding a significant
preference back unless it showed more non-ties on the real trials reported a real effect 12% of
the time instead of 71%, and a judge that never ties lost every directional verdict.

Controls are left out of everything else about A vs B (the preference test, agreement, style
control, the LLM diagnostics' shares, the export, the tells). Pure; opens no file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from blindtest.analysis.gates import position_of
from blindtest.analysis.llm_calibration import ControlResult, control_result, describe
from blindtest.model.picks import Pick, PicksFile
from blindtest.reportfmt import count, format_p, pct
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord
from blindtest.stats.multiple import holm

__all__ = [
    "control_records",
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
    """The picks files without their control-trial records (picks, "both bad" words, first
    words, later passes, skips, failures)."""
    if not controls:
        return list(files)
    return [
        replace(
            file,
            picks=tuple(without_controls(file.picks, controls)),
            later_passes=tuple(without_controls(file.later_passes, controls)),
            failures=tuple(f for f in file.failures if int(f["trial"]) not in controls),
            abstentions=tuple(without_controls(file.abstentions, controls)),
            first_picks=tuple(without_controls(file.first_picks, controls)),
            first_abstentions=tuple(without_controls(file.first_abstentions, controls)),
            skips=tuple(without_controls(file.skips, controls)),
        )
        for file in files
    ]


def control_records(files: Sequence[PicksFile], controls: Mapping[int, str]) -> list[Pick]:
    """Every record of the control trials in ``files`` (every pass of an LLM judge's swap):
    what the position gate reads beside the real trials."""
    return [
        pick
        for file in files
        for pick in (*file.picks, *file.later_passes)
        if pick.trial in controls
    ]


def _counted(pick: Pick) -> bool:
    """Whether a pick counts in the tally (an LLM judge's excluded comparisons do not)."""
    return not (pick.kind == "llm" and pick.extra.get("excluded"))


def control_results(
    files: Sequence[PicksFile], controls: Mapping[int, str], alpha: float = 0.05
) -> dict[str, ControlResult]:
    """Each judge's results on the control trials, from the picks files as read: what it did
    where nothing differs, and beside it its counted real comparisons with the descriptive
    one-sided Fisher p, Holm-adjusted across the judges with enough comparisons (the judge's
    calibration record; it decides nothing)."""
    records: dict[str, list[JsonObject]] = {}
    real: dict[str, list[JsonObject]] = {}
    kinds: dict[str, str | None] = {}
    for pick in control_records(files, controls):
        records.setdefault(pick.judge, []).append(dict(pick.to_record()))
        kinds.setdefault(pick.judge, pick.kind)
    for file in files:
        for pick in file.picks:  # the comparison's verdict: an LLM judge's pass-1 record
            if pick.trial not in controls and _counted(pick):
                real.setdefault(pick.judge, []).append(dict(pick.to_record()))
    found = {
        judge: control_result(judge, kinds[judge], own, real=real.get(judge, ()), alpha=alpha)
        for judge, own in sorted(records.items())
    }
    p_values = {j: r.comparison().p_value for j, r in found.items()}
    tested = {j: p for j, p in p_values.items() if p is not None}
    adjusted = dict(zip(tested, holm(list(tested.values())), strict=True)) if tested else {}
    return {j: replace(r, p_holm=adjusted.get(j)) for j, r in found.items()}


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


def _share_words(found: Mapping[str, Any]) -> str:
    """``40% (95% interval 5% to 85%)`` from a clustered share's record."""
    interval = found["interval"]
    level = f"{100 * found['confidence_level']:g}%"
    return (
        f"{pct(interval['estimate'])} ({level} interval {pct(interval['lo'])} to "
        f"{pct(interval['hi'])})"
    )


def description_words(
    found: Mapping[str, Any], alpha: float = 0.05, *, position: bool = True
) -> str:
    """What a controls description says (``ControlsDescription.to_dict``): the tie rate and,
    with ``position``, where the untied picks went, each over comparisons with its interval,
    and the sign-flip test."""
    if not found["picks"]:
        return f"made no pick on the {count(found['comparisons'], 'control comparison')}"
    text = f"tied in {_share_words(found['tie_rate'])} of its picks"
    if not found["left"] + found["right"]:
        return text + ", and position decided none"
    if not position:
        return text
    p_value = found["p_position"]
    text += (
        f"; {_share_words(found['left_share'])} of its untied picks named the output on the "
        f"left (sign-flip test over comparisons {format_p(p_value)})"
    )
    return text + (
        ": a preference for a position, not for a response"
        if p_value is not None and p_value <= alpha
        else ": no position preference shown at this size"
    )


def statement(result: ControlResult, alpha: float = 0.05) -> str:
    """The plain sentences for one judge's control results: where its comparisons went by
    position, its tie rate and left share with their intervals (the unit is the comparison),
    and, described, how often it preferred one output here and on the real trials."""
    found = result.to_dict()
    llm = result.kind == "llm"
    comparisons = count(result.controls, "control comparison")
    split = result.position
    text = f"On {comparisons} (the same model on both sides) {_subject(result)} "
    if result.excluded:
        text += f"had {result.excluded} left out (as on the real trials), "
    if llm and split.swapped:
        text += (
            f"went with the first position in {split.first} (both passes of the swap named "
            f"the output shown first) and the second in {split.second}"
        )
    else:
        text += f"picked the output shown first {_times(split.first)}, the second " \
            f"{_times(split.second)}"  # fmt: skip
    if split.first + split.second:
        interval = found["interval"]
        text += (
            f": first in {pct(found['share_left'])} of those {split.first + split.second} "
            f"comparisons (exact 95% interval {pct(interval['lo'])} to {pct(interval['hi'])})."
        )
    else:
        text += "; position did not decide any comparison."
    description = found.get("description")
    if description and description["picks"]:
        # One pick per comparison: its left share is the split's first share, said above.
        swapped = llm and split.swapped
        said = description_words(description, alpha, position=swapped)
        text += f" Counting {'every pass' if swapped else 'its picks'}, it {said}."
    if llm and result.low_confidence:
        text += f" {result.low_confidence} were below --min-confidence and count as ties."
    compared = found["real_vs_controls"]
    real = compared["real"]
    text += (
        f" It preferred one output in {result.non_tie} of the {result.counted} counted control "
        f"comparisons and in {real['non_tie']} of {count(real['comparisons'], 'real one')} (a "
        "description; it decides nothing)."
    )
    return text


def controls_section(
    design: DesignRecord,
    files: Sequence[PicksFile],
    alpha: float = 0.05,
    shown: Mapping[int, Sequence[str]] | None = None,
) -> JsonObject | None:
    """``report["controls"]``: the control trials (after the reveal), each judge's results with
    its sentences, every judge's picks together (``pooled``, with two or more judges), and the
    screen lines; None for a design without controls. ``shown`` (the options as the judge saw
    them, by trial) lets it count controls whose two outputs were identical, which a judge
    could spot without reading."""
    controls = control_trials(design)
    if not controls:
        return None
    judges = []
    lines = [
        f"Hidden controls: {len(controls)} of the {design['trials']} comparisons showed one model "
        "on both sides (left out of the test above; their picks feed the position gate beside "
        "the real ones, and their outputs count as their side's in the census and the "
        "appendix). Where nothing differs they describe the judge: how often it tied, and where "
        "its untied picks went by position (the unit is the comparison); they decide no verdict:"
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
    results = control_results(files, controls, alpha)
    for result in results.values():
        sentence = statement(result, alpha)
        judges.append({**result.to_dict(), "statement": sentence})
        lines.append(f"  {sentence}")
    if not judges:
        lines.append("  no judge judged a control trial.")
    pooled = None
    if len(results) > 1:
        together = describe((p.trial, position_of(p)) for p in control_records(files, controls))
        pooled = together.to_dict() if together is not None else None
        if pooled is not None:
            lines.append(f"  Every judge together {description_words(pooled, alpha)}.")
    return {
        "trials": [{"trial": t, "side": side} for t, side in sorted(controls.items())],
        "judges": judges,
        "pooled": pooled,
        "identical_outputs": identical,
        "lines": lines,
    }
