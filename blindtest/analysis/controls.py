"""Hidden control trials in the analysis: which trials are controls, the design and picks the
A-vs-B analysis sees without them, each judge's control results, and what they do to the verdict.

A control shows two independent draws of one model, so there is nothing to find: where
position went there measures position bias, and the share of comparisons that named an output
the rate of preferences where no difference exists. The unit is the comparison (an LLM judge's
two passes of the swap are one verdict, combined as on the real trials), so the counts are
binomial. Each judge's control rate is set against its own rate on the real trials by a
one-sided Fisher exact test (:mod:`blindtest.stats.controls`), Holm across the judges tested;
a judge that does not prefer more often on the real trials holds back a directional verdict
(:class:`ControlsCheck`, used by the preference analysis). Controls are left out of everything
about A vs B (the preference test, its gates, agreement, style control, the LLM diagnostics'
shares, the export, the tells). Pure; opens no file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from blindtest.analysis.llm_calibration import ControlResult, control_result
from blindtest.model.picks import Pick, PicksFile
from blindtest.reportfmt import count, format_p, pct
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord
from blindtest.stats.controls import MIN_COMPARISONS
from blindtest.stats.multiple import holm

__all__ = [
    "ControlsCheck",
    "comparison_sentence",
    "control_results",
    "control_trials",
    "controls_check",
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


def _counted(pick: Pick) -> bool:
    """Whether a pick counts in the tally (an LLM judge's excluded comparisons do not)."""
    return not (pick.kind == "llm" and pick.extra.get("excluded"))


def control_results(
    files: Sequence[PicksFile], controls: Mapping[int, str], alpha: float = 0.05
) -> dict[str, ControlResult]:
    """Each judge's results on the control trials, from the picks files as read, with its
    counted real comparisons beside them and the one-sided Fisher p Holm-adjusted across the
    judges with enough comparisons to test (a panel asks the question once per judge)."""
    records: dict[str, list[JsonObject]] = {}
    real: dict[str, list[JsonObject]] = {}
    kinds: dict[str, str | None] = {}
    for file in files:
        for pick in (*file.picks, *file.later_passes):
            if pick.trial in controls:
                records.setdefault(pick.judge, []).append(dict(pick.to_record()))
                kinds.setdefault(pick.judge, pick.kind)
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


def _rate(k: int, n: int, what: str, interval: Mapping[str, Any] | None, note: str = "") -> str:
    """``3 of 4 control comparisons (75%, exact 95% interval 19% to 99%)``."""
    text = f"{k} of {count(n, what)}"
    if not n:
        return text
    text += f" ({note}{pct(k / n)}"
    if interval is not None:
        text += f", exact 95% interval {pct(interval['lo'])} to {pct(interval['hi'])}"
    return text + ")"


def _fisher(result: ControlResult) -> str:
    found = result.to_dict()["real_vs_controls"]
    text = f"one-sided Fisher exact {format_p(found['p_value'])}"
    if result.p_holm is not None and result.p_holm != found["p_value"]:
        text += f", Holm-adjusted across the judges {format_p(result.p_holm)}"
    return text


def comparison_sentence(result: ControlResult) -> str:
    """What the controls say about one judge's preferences on the real trials, in words."""
    found = result.to_dict()
    who = _subject(result)
    owner, one, its = ("your", "you", "your") if who == "you" else (f"{who}'s", "it", "its")
    controls = _rate(
        result.non_tie,
        result.counted,
        "control comparison",
        found["non_tie_rate"],
        "one model on both sides; ",
    )
    real = _rate(
        result.real_non_tie,
        result.real_n,
        "real comparison",
        found["real_vs_controls"]["real_rate"],
    )
    if result.distinguishable is None:
        fewer = min(result.counted, result.real_n)
        which = "control" if result.counted == fewer else "real"
        return (
            f"{who} preferred one output in {controls} and in {real}; "
            f"{count(fewer, f'{which} comparison')} are too few (fewer than {MIN_COMPARISONS}) "
            f"to test whether {one} prefer{'' if one == 'you' else 's'} more often where the "
            "sides differ, so the controls decide nothing here"
        )
    if result.distinguishable:
        return (
            f"{who} preferred one output more often in the real trials, {real}, than where "
            f"nothing differs, {controls} ({_fisher(result)})"
        )
    return (
        f"{owner} preferences are not distinguishable from {its} behaviour where nothing "
        f"differs: {one} preferred one output in {controls} and in {real} ({_fisher(result)})"
    )


@dataclass(frozen=True, slots=True)
class ControlsCheck:
    """What the hidden controls say about the verdict: each judge's result. A directional
    verdict stands only when no judge with enough comparisons to test failed to prefer more
    often on the real trials than on the controls (see :func:`headline`)."""

    results: tuple[ControlResult, ...]

    @property
    def indistinguishable(self) -> tuple[ControlResult, ...]:
        return tuple(r for r in self.results if r.distinguishable is False)

    def headline(self, directional: str | None) -> str:
        """The sentence the headline carries; ``directional`` the side label the test
        favoured (None when it favoured none)."""
        if not self.results:
            return "Hidden controls: no judge judged a control trial."
        said = "; ".join(comparison_sentence(r) for r in self.results)
        text = f"Hidden controls: {said[0].lower()}{said[1:]}."
        if self.indistinguishable and directional is not None:
            text += (
                f" So the verdict does not name {directional}: a preference the judge shows "
                "as often where nothing differs does not show that the sides differ."
            )
        return text

    def to_dict(self, favoured: str | None, held: bool) -> JsonObject:
        """``report["controls_verdict"]``: what the controls did to the verdict, and the
        sentence the headline carries when a judge's preferences are not distinguishable."""
        shown = self.indistinguishable
        return {
            "rule": (
                "a directional verdict stands only when no judge with at least "
                f"{MIN_COMPARISONS} control and {MIN_COMPARISONS} real comparisons fails to "
                "prefer one output more often on the real trials than on the controls "
                "(one-sided Fisher exact test at the design's alpha, Holm across judges)"
            ),
            "held": held,
            "favoured": favoured,
            "tested": [r.judge for r in self.results if r.distinguishable is not None],
            "indistinguishable": [r.judge for r in shown],
            "headline": "; ".join(comparison_sentence(r) for r in shown) if shown else None,
        }


def controls_check(
    files: Sequence[PicksFile], controls: Mapping[int, str], alpha: float
) -> ControlsCheck | None:
    """The controls' say in the verdict, or None for a design without controls."""
    if not controls:
        return None
    return ControlsCheck(tuple(control_results(files, controls, alpha).values()))


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def statement(result: ControlResult, alpha: float = 0.05) -> str:
    """The plain sentences for one judge's control results."""
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
            f"comparisons (exact 95% interval {pct(interval['lo'])} to {pct(interval['hi'])}, "
            f"two-sided {format_p(found['p_value'])} against 1/2), "
        )
        p_value = found["p_value"]
        text += (
            "a preference for a position, not for a response."
            if p_value is not None and p_value < alpha
            else "no position preference shown at this size."
        )
    else:
        text += "; position did not decide any comparison."
    if llm and result.low_confidence:
        text += f" {result.low_confidence} were below --min-confidence and count as ties."
    return text + " " + comparison_sentence(result)[0].upper() + comparison_sentence(result)[1:] \
        + "."  # fmt: skip


def controls_section(
    design: DesignRecord,
    files: Sequence[PicksFile],
    alpha: float = 0.05,
    shown: Mapping[int, Sequence[str]] | None = None,
) -> JsonObject | None:
    """``report["controls"]``: the control trials (after the reveal), each judge's results with
    its sentences, and the screen lines; None for a design without controls. ``shown`` (the
    options as the judge saw them, by trial) lets it count controls whose two outputs were
    identical, which a judge could spot without reading."""
    controls = control_trials(design)
    if not controls:
        return None
    judges = []
    lines = [
        f"Hidden controls: {len(controls)} of the {design['trials']} comparisons showed one model "
        "on both sides (left out of the test above; their outputs count as their side's in the "
        "census and the appendix). Each judge's rate of preferring one output there, where "
        "nothing differs, is set against its rate on the real trials (one-sided Fisher exact "
        "test; the unit is the comparison):"
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
    for result in control_results(files, controls, alpha).values():
        sentence = statement(result, alpha)
        judges.append({**result.to_dict(), "statement": sentence})
        lines.append(f"  {sentence}")
    if not judges:
        lines.append("  no judge judged a control trial.")
    return {
        "trials": [{"trial": t, "side": side} for t, side in sorted(controls.items())],
        "judges": judges,
        "identical_outputs": identical,
        "indistinguishable": [
            j["judge"] for j in judges if j["real_vs_controls"]["distinguishable"] is False
        ],
        "lines": lines,
    }
