"""Diagnostics of one machine judge (spec 003's position-bias check): where its verdicts went
by position, length and markdown, how often the two passes of its position swap agreed, its
low-confidence and leakage verdicts, failures, retries, tokens and cost, and the warnings
spec 003 asks for.

Every share counts comparisons, never passes: the two passes of a swapped comparison show the
same two outputs, so they are one observation, not two (counted as two, a judge that picks at
random per comparison is flagged for length 13% of the time at 20 comparisons, not 5%).

- ``position`` (preference). With the swap, a comparison is position-inconsistent when its
  passes chose different outputs; it went with the first position when both passes named the
  output shown first, with the second when both named the output shown second (MT-bench's
  split: Zheng et al., 2023, "Judging LLM-as-a-judge", table 2); an inconsistency involving a
  tie goes with neither. Without the swap each untied comparison named the first or the
  second output. The exact two-sided sign test of first against second (binomial, 1/2) and
  ``lean`` = (first - second) / comparisons describe the split. The judge's position gate
  (``position["gate"]``) is the run's (`blindtest.stats.position.position_gate`) over this
  judge's comparisons alone: every pass a position pick as it was shown (the output shown
  first is the left one), the hidden controls' passes beside the real ones (never the
  sensitivity check's planted comparisons, the champion's answer against its degraded copy:
  not a comparison of the candidates, and the run's gate leaves them out), the comparison as
  the unit, the margin on the left share the run's (`blindtest.stats.position.POSITION_MARGIN`
  unless the design fixes another; spec 003's 5% limit is the same figure). ``fail`` fails the
  run (:func:`position_gate`); ``warn`` with a lean shown is a warning.
- ``p_longer``, ``p_more_markdown``: a comparison counts for a direction when its passes
  agree on one output (without the swap: its one untied verdict) and one output is strictly
  the longest (has the most marks); a tie, or passes that chose different outputs, count for
  neither and are left out of ``n``. Exact two-sided binomial test against chance (1/2;
  triangle 1/3), Clopper-Pearson 95% interval. A warning, with what to do, when the test
  finds a lean at the design's alpha beyond 5 points from chance (spec 003's position limit,
  applied to length and markdown); descriptive, no gate: a better side that also writes more
  gives the same count.
- ``swap_consistency``: the comparisons whose two passes chose the same output (a tie on
  both is the same), with its exact 95% interval and no test (agreeing with itself less than
  always is the finding; there is no null to reject).
- ``p_first`` (triangle, one pass per comparison): the first position's share against 1/3.

Pure: records and texts in, a frozen result out. No file, no network, no click. Read only
after judging (it needs the options' texts and, for the warnings, the design's models).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from blindtest.model.protocols import PROTOCOLS
from blindtest.reportfmt import count, format_p
from blindtest.stats.binomial import binomial_p_value
from blindtest.stats.intervals import Interval, clopper_pearson
from blindtest.stats.position import (
    POSITION_MARGIN,
    PositionGateResult,
    tally_positions,
)
from blindtest.stats.position import (
    position_gate as gate_over_comparisons,
)

__all__ = [
    "POSITION_ALPHA",
    "POSITION_MARGIN",
    "Consistency",
    "JudgeDiagnostics",
    "PositionSplit",
    "Share",
    "diagnose",
    "first_shown",
    "markdown_marks",
    "model_family",
    "position_gate",
    "shown_position",
    "unsure_gate",
    "warning_kind",
]

# POSITION_MARGIN (stats.position's, one figure for every judge): spec 003's "If position bias
# exceeds 5%, add position randomization to your harness", read on the left share; the length
# and markdown warnings ask the same distance from chance.
#: The lean must be more than chance would make (exact two-sided p at most this, unless the
#: design's alpha is given).
POSITION_ALPHA = 0.05

_MARK = re.compile(r"^\s*(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|>\s)|\*\*|__|`|\|", re.MULTILINE)


def markdown_marks(text: str) -> int:
    """Markdown marks in ``text``: heading, bullet, numbered and quote lines, bold, code, table
    bars."""
    return len(_MARK.findall(text))


def _words(text: str) -> int:
    return len(text.split())


def model_family(model: str) -> str:
    """The family a model name belongs to: its first word, lower-cased, after any vendor path
    (``gpt-4o``: gpt; ``meta-llama/Llama-3-8B``: llama; ``claude-3-5``: claude)."""
    name = model.rsplit("/", 1)[-1].lower()
    found = re.match(r"[a-z]+", name)
    return found.group(0) if found else name


def _origin(url: str | None) -> str | None:
    if not url:
        return None
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}:{parts.port or ''}" if parts.hostname else None


def _interval(k: int, n: int) -> Interval | None:
    return clopper_pearson(k, n) if n else None


def _plain(interval: Interval | None) -> dict[str, float | None] | None:
    return interval.to_dict() if interval is not None else None


@dataclass(frozen=True, slots=True)
class Share:
    """``k`` of ``n`` comparisons, against ``chance``: the exact two-sided binomial test
    (scipy.stats.binomtest's convention) and the Clopper-Pearson 95% interval, both None when
    n is 0. ``unit`` says what ``n`` counts."""

    k: int
    n: int
    chance: float
    unit: str = "comparisons"

    @property
    def estimate(self) -> float | None:
        return self.k / self.n if self.n else None

    @property
    def p_value(self) -> float | None:
        return binomial_p_value(self.k, self.n, self.chance) if self.n else None

    @property
    def interval(self) -> Interval | None:
        return _interval(self.k, self.n)

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "n": self.n,
            "unit": self.unit,
            "chance": self.chance,
            "estimate": self.estimate,
            "interval": _plain(self.interval),
            "p_value": self.p_value,
        }


@dataclass(frozen=True, slots=True)
class Consistency:
    """``k`` of ``n`` swapped comparisons whose two passes chose the same output, with the
    Clopper-Pearson 95% interval. No p-value: there is no null to test."""

    k: int
    n: int

    @property
    def estimate(self) -> float | None:
        return self.k / self.n if self.n else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "n": self.n,
            "estimate": self.estimate,
            "interval": _plain(_interval(self.k, self.n)),
        }


@dataclass(frozen=True, slots=True)
class PositionSplit:
    """Where a preference judge's comparisons went by position (see the module docstring):
    ``first`` and ``second`` comparisons of ``comparisons``; ``inconsistent`` the
    position-inconsistent ones of a swapped run (None without the swap)."""

    swapped: bool
    comparisons: int
    inconsistent: int | None
    first: int
    second: int

    @property
    def p_value(self) -> float | None:
        """The exact two-sided sign test of first against second (None when both are 0)."""
        untied = self.first + self.second
        return binomial_p_value(self.first, untied, 0.5) if untied else None

    @property
    def share_first(self) -> Interval | None:
        """first / (first + second), with its Clopper-Pearson 95% interval."""
        return _interval(self.first, self.first + self.second)

    @property
    def lean(self) -> float | None:
        """The net share of comparisons position decided, (first - second) / comparisons."""
        return (self.first - self.second) / self.comparisons if self.comparisons else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "unit": (
                "comparisons; first/second: both passes named the output shown first/second"
                if self.swapped
                else "comparisons (one pass each); first/second: the verdict named the output "
                "shown first/second"
            ),
            "swapped": self.swapped,
            "comparisons": self.comparisons,
            "inconsistent": self.inconsistent,
            "first": self.first,
            "second": self.second,
            "p_value": self.p_value,
            "share_first": _plain(self.share_first),
            "lean": self.lean,
        }

    def sentence(self) -> str:
        """What the split says, in words (the warning and the gate start with it)."""
        p = self.p_value
        test = f"exact two-sided sign test {format_p(p)}" if p is not None else "no sign test"
        lean = self.lean or 0.0
        net = (
            f"position decided a net {abs(lean):.0%} of comparisons toward the "
            f"{'first' if lean > 0 else 'second'} output"
        )
        if self.swapped:
            return (
                f"in {self.first} of {self.comparisons} comparisons both passes of the swap "
                f"named the output shown first, in {self.second} the output shown second "
                f"({self.inconsistent} position-inconsistent; {test}); {net}"
            )
        return (
            f"of {self.comparisons} comparisons (one pass each, no swap), {self.first} named "
            f"the output shown first and {self.second} the output shown second ({test}); {net}"
        )


@dataclass(frozen=True, slots=True)
class JudgeDiagnostics:
    """One machine judge's diagnostics (see the module docstring)."""

    judge: str
    model: str | None
    protocol: str
    comparisons: int
    first: Share | None
    position: PositionSplit | None
    longer: Share | None
    markdown: Share | None
    consistent: Consistency | None
    low_confidence: int
    leakage: tuple[dict[str, Any], ...]
    excluded: int
    failures: int
    still_failed: int
    requests: int
    retries: int
    tokens: int
    cost: float | None
    alpha: float = POSITION_ALPHA
    warnings: tuple[str, ...] = field(default=())
    #: The judge's own position gate over its comparisons (preference; None when no pass
    #: named a position).
    position_gate: PositionGateResult | None = None
    #: Preference: every counted comparison's verdict fell below --min-confidence (each a tie).
    unsure: bool = False

    def to_dict(self) -> dict[str, Any]:
        def share(s: Share | Consistency | PositionSplit | None) -> dict[str, Any] | None:
            return s.to_dict() if s is not None else None

        position = share(self.position)
        if position is not None:
            gate = self.position_gate
            position["gate"] = gate.to_dict() if gate is not None else None
            position["exceeds_limit"] = gate is not None and gate.verdict == "fail"
        return {
            "judge": self.judge,
            "model": self.model,
            "comparisons": self.comparisons,
            "p_first": share(self.first),
            "position": position,
            "p_longer": share(self.longer),
            "p_more_markdown": share(self.markdown),
            "swap_consistency": share(self.consistent),
            "low_confidence": self.low_confidence,
            "every_verdict_unsure": self.unsure,
            "leakage": list(self.leakage),
            "excluded": self.excluded,
            "failures": self.failures,
            "still_failed": self.still_failed,
            "requests": self.requests,
            "retries": self.retries,
            "tokens": self.tokens,
            "cost": self.cost,
            "warnings": list(self.warnings),
        }


def _chosen(protocol: str, record: Mapping[str, Any]) -> int | None:
    """The option index (0-based, trial order) this record chose, None for a tie."""
    if PROTOCOLS[protocol].pick_kind == "position":
        pick = record.get("pick")
        return pick - 1 if isinstance(pick, int) else None
    own = record.get("pass_pick", record.get("pick"))
    return {"left": 0, "right": 1}.get(str(own))


def first_shown(protocol: str, record: Mapping[str, Any]) -> bool | None:
    """Whether this record's raw verdict named the first output shown in its pass (None: a
    tie, or no verdict recorded)."""
    verdict = record.get("verdict")
    if PROTOCOLS[protocol].pick_kind == "position":  # the verdict is a position, else A or B
        return bool(verdict == 1) if isinstance(verdict, int) else None
    if verdict in ("A", "B"):
        return bool(verdict == "A")
    return None


def shown_position(record: Mapping[str, Any], llm: bool) -> str:
    """The position a preference pick record named, ``left``, ``right`` or ``tie``: an LLM
    judge's raw verdict as it was shown in that pass (the output shown first is the left one;
    a first pass without a recorded verdict reads its pick, which is in the trial's positions);
    anyone else's pick as made. What the position gate and the hidden controls count."""
    if llm:
        shown = first_shown("preference", record)
        if shown is not None:
            return "left" if shown else "right"
        if int(record.get("pass") or 1) > 1:
            return "tie"
    pick = record.get("pick")
    return str(pick) if pick in ("left", "right") else "tie"


def _extreme(values: Sequence[int]) -> int | None:
    """The index of the largest value when it is the only largest, else None."""
    top = max(values)
    return values.index(top) if values.count(top) == 1 else None


def _comparisons(records: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """The records of each comparison (by trial), in pass order."""
    grouped: dict[int, list[Mapping[str, Any]]] = {}
    for record in records:
        grouped.setdefault(int(record["trial"]), []).append(record)
    return [
        sorted(rows, key=lambda r: int(r.get("pass") or 1)) for _, rows in sorted(grouped.items())
    ]


def _agreed(protocol: str, passes: Sequence[Mapping[str, Any]]) -> int | None:
    """The output every pass of a comparison chose, None for a tie or passes that disagree."""
    chosen = {_chosen(protocol, r) for r in passes}
    return chosen.pop() if len(chosen) == 1 else None


def _position(
    protocol: str, comparisons: Sequence[Sequence[Mapping[str, Any]]], swapped: bool
) -> PositionSplit:
    read = [c for c in comparisons if len(c) == (2 if swapped else 1)]
    shown = [tuple(first_shown(protocol, r) for r in c) for c in read]
    inconsistent = sum(len({_chosen(protocol, r) for r in c}) > 1 for c in read)
    return PositionSplit(
        swapped=swapped,
        comparisons=len(read),
        inconsistent=inconsistent if swapped else None,
        first=sum(all(s is True for s in passes) for passes in shown),
        second=sum(all(s is False for s in passes) for passes in shown),
    )


def _directions(
    protocol: str,
    comparisons: Sequence[Sequence[Mapping[str, Any]]],
    options: Mapping[int, Sequence[str]],
    unit: str,
) -> tuple[Share, Share]:
    count = PROTOCOLS[protocol].options
    longer = [0, 0]
    marked = [0, 0]
    for passes in comparisons:
        chosen = _agreed(protocol, passes)
        texts = options.get(int(passes[0]["trial"]), ())
        if chosen is None or len(texts) != count:
            continue
        for tally, measure in ((longer, _words), (marked, markdown_marks)):
            top = _extreme([measure(t) for t in texts])
            if top is not None:
                tally[0] += top == chosen
                tally[1] += 1
    return (
        Share(longer[0], longer[1], 1 / count, unit),
        Share(marked[0], marked[1], 1 / count, unit),
    )


def _same_family(model: str, spec: Mapping[str, Any]) -> bool:
    other = str(spec.get("model") or "")
    return bool(other) and model_family(model) == model_family(other)


def _position_warning(
    first: Share | None,
    position: PositionSplit | None,
    gate: PositionGateResult | None,
    alpha: float,
) -> str | None:
    """Preference: a lean shown by the judge's position gate but not beyond its margin (a
    failed gate is :func:`position_gate`'s, not a warning). Triangle: the first position's
    share beyond 5 points from 1/3, shown by the exact test."""
    if position is not None:
        if gate is None or gate.verdict != "warn" or not gate.significant:
            return None
        share = gate.share
        return (
            f"position bias: {position.sentence()}; over its comparisons it chose the output on "
            f"the left in {100 * share.estimate:.1f}% of untied picks (95% interval "
            f"{100 * share.lo:.1f}% to {100 * share.hi:.1f}%, sign-flip test "
            f"{format_p(gate.p_value)}): a lean, not shown beyond {100 * gate.margin:g} points "
            "from half"
        )
    if first is None or first.estimate is None:
        return None
    gap = first.estimate - first.chance
    p = first.p_value
    if abs(gap) > POSITION_MARGIN and p is not None and p <= alpha:
        return (
            f"position bias: chose the first output shown in {first.estimate:.0%} of "
            f"{count(first.n, 'comparison')}, {abs(gap) * 100:.0f} points from {first.chance:.0%} "
            f"(the limit: {POSITION_MARGIN * 100:.0f} points; exact two-sided "
            f"{format_p(p)})"
        )
    return None


#: What each direction is, what the output it counts has, and what it reads as.
_DIRECTIONS = {
    "length": (
        "the longer output",
        "length",
        "writes more",
        " (the judge's prompt says: do not assume that longer outputs are better)",
    ),
    "markdown": ("the output with more markdown", "formatting", "formats more", ""),
}


def _direction_warning(share: Share | None, kind: str, alpha: float) -> str | None:
    """A warning when a judge's choices follow length (or markdown) beyond what chance makes:
    the exact two-sided test at ``alpha`` and, as spec 003's position limit, more than 5 points
    from chance; what it means and what to do in the same sentence."""
    if share is None or share.estimate is None or share.p_value is None:
        return None
    gap = share.estimate - share.chance
    if abs(gap) <= POSITION_MARGIN or share.p_value > alpha:
        return None
    output, channel, more, note = _DIRECTIONS[kind]
    less = more.replace("more", "less")
    toward, rewards, better = (
        ("with", "rewards", more) if gap > 0 else ("against", "penalises", less)
    )
    return (
        f"{kind}: its verdicts go {toward} {channel} ({output} in {share.k} of {share.n} "
        f"{share.unit}, chance {share.chance:.0%}, exact two-sided {format_p(share.p_value)}). "
        f"Either it {rewards} {channel}{note if gap > 0 else ''} or the better side also "
        f"{better}; compare it with a person's picks on a sample of trials "
        "(bt-analyze --against) before trusting its win rate"
    )


def _warnings(
    leans: Sequence[str | None],
    model: str | None,
    judge_origin: str | None,
    sides: Mapping[str, Mapping[str, Any]],
) -> list[str]:
    warnings = [lean for lean in leans if lean]
    family = [s for s, spec in sides.items() if model and _same_family(model, spec)]
    if family:
        listed = _sides_named([f"{s} ({sides[s].get('model')})" for s in family], family)
        warnings.append(
            f"the judge model {model} is of the same family ({model_family(str(model))}) as "
            f"{listed}: a judge may favour its own family"
        )
    shared = [s for s, spec in sides.items() if judge_origin and _origin(spec.get("base_url"))
              == _origin(judge_origin)]  # fmt: skip
    if shared:
        warnings.append(
            f"the judge is served by the same endpoint ({_origin(judge_origin)}) as "
            f"{_sides_named(shared, shared)}"
        )
    return warnings


def warning_kind(text: str) -> str:
    """What one of this module's warnings or gates is about: ``position``, ``length``,
    ``markdown``, ``family`` (the judge's model family is a side's), ``endpoint`` (the
    judge's endpoint serves a side), ``unsure`` (every verdict below --min-confidence), or
    ``other``. Read from the words each one starts with, which this module writes."""
    for prefix, kind in (
        ("position bias:", "position"),
        ("length:", "length"),
        ("markdown:", "markdown"),
        ("unsure:", "unsure"),
        ("the judge is served by the same endpoint", "endpoint"),
    ):
        if text.startswith(prefix):
            return kind
    if text.startswith("the judge model ") and "of the same family" in text:
        return "family"
    return "other"


def _sides_named(labels: Sequence[str], names: Sequence[str]) -> str:
    """``side A (m)``, ``side A (m) and B (n)`` as two-sided reports have always said it;
    several candidates as a list: ``the sides a (m), b (n) and c (o)``."""
    if len(labels) == 1 or set(names) <= {"A", "B"}:
        return "side " + " and ".join(labels)
    return "the sides " + ", ".join(labels[:-1]) + " and " + labels[-1]


def position_gate(found: JudgeDiagnostics) -> str | None:
    """The gate a preference run fails when this LLM judge's own position gate fails (its left
    share shown beyond the margin): whatever the swap then cancels, such a judge measured
    nothing about the sides. None when it did not."""
    split, gate = found.position, found.position_gate
    if split is None or gate is None or gate.verdict != "fail":
        return None
    name = found.model or found.judge
    share = gate.share
    return (
        f"position bias: the LLM judge {name!r} answered by position: {split.sentence()}; "
        f"its left share over {count(gate.comparisons, 'comparison')}, "
        f"{100 * share.estimate:.1f}% (95% interval {100 * share.lo:.1f}% to "
        f"{100 * share.hi:.1f}%), lies beyond {100 * gate.margin:g} points from half; it "
        "measured nothing about the sides, so every win rate it gave is void"
        + (" (the swap cancels position in the tally, not in the judge)." if split.swapped else ".")
    )


def unsure_gate(found: JudgeDiagnostics, min_confidence: float | None = None) -> str | None:
    """The gate a preference run fails when every verdict this LLM judge counted fell below
    --min-confidence: each became a tie, so the judge measured nothing (its ties are not "no
    side is preferred"). None otherwise."""
    if not found.unsure:
        return None
    name = found.model or found.judge
    below = f" {min_confidence:g}" if min_confidence is not None else ""
    return (
        f"unsure: the LLM judge {name!r} gave every one of its "
        f"{count(found.comparisons - found.excluded, 'counted verdict')} a confidence below "
        f"--min-confidence{below}, so each counted as a tie: it measured nothing, and no side "
        "can be said to be preferred or not. Judge again with another judge model, or with a "
        "lower --min-confidence into a new picks file."
    )


def _gate_of(
    records: Sequence[Mapping[str, Any]],
    alpha: float,
    margin: float,
) -> PositionGateResult | None:
    """The judge's position gate over its passes (module doc), None without a position."""
    counts = tally_positions((int(r["trial"]), shown_position(r, llm=True)) for r in records)
    if not any(a + b for a, b in zip(counts.left, counts.right, strict=True)):
        return None
    level = min(alpha, math.nextafter(0.5, 0.0))
    return gate_over_comparisons(counts.left, counts.right, alpha=level, margin=margin)


def _leaks(
    passes_one: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    leaks = []
    for record in passes_one:
        trial = int(record["trial"])
        shown = [r for r in records if int(r["trial"]) == trial and r.get("identity_leakage")]
        if shown:
            leaks.append(
                {"trial": trial, "details": str(shown[0].get("identity_leakage_details") or "")}
            )
    return leaks


def diagnose(
    judge: str,
    protocol: str,
    records: Sequence[Mapping[str, Any]],
    failures: Sequence[Mapping[str, Any]],
    options: Mapping[int, Sequence[str]],
    sides: Mapping[str, Mapping[str, Any]],
    *,
    alpha: float = POSITION_ALPHA,
    margin: float = POSITION_MARGIN,
    position_records: Sequence[Mapping[str, Any]] | None = None,
) -> JudgeDiagnostics:
    """Diagnostics of one machine judge from its records (every pass), its failure rows, the
    trials' option texts by trial number and the design's sides (``models``); ``alpha`` the
    position test's level (the design's), ``margin`` the position gate's;
    ``position_records`` the records whose passes feed the judge's position gate (default
    ``records``; the analysis adds the hidden controls')."""
    records = list(records)
    passes_one = [r for r in records if r.get("pass", 1) == 1]
    model = next((str(r["judge_model"]) for r in records if r.get("judge_model")), None)
    origin = next((str(r["judge_origin"]) for r in records if r.get("judge_origin")), None)
    comparisons = _comparisons(records)
    rules = PROTOCOLS[protocol]
    # Only a preference judge may swap positions (two passes per comparison).
    swapped = rules.prefers and any(len(c) > 1 for c in comparisons)
    first = position = longer = marked = consistent = gate = None
    # The position and direction diagnostics read which option a pick chose: a position, or
    # a side; a nickname (pair) names no option.
    if rules.pick_kind == "position":
        shown = [first_shown(protocol, c[0]) for c in comparisons]
        read = [s for s in shown if s is not None]
        first = Share(sum(read), len(read), rules.chance)
        longer, marked = _directions(protocol, comparisons, options, "comparisons")
    elif rules.pick_kind == "side":
        position = _position(protocol, comparisons, swapped)
        gate = _gate_of(records if position_records is None else position_records, alpha, margin)
        unit = (
            "comparisons whose two passes chose the same output"
            if swapped
            else "untied comparisons (one pass each)"
        )
        longer, marked = _directions(protocol, comparisons, options, unit)
        if swapped:
            both = [c for c in comparisons if len(c) == 2]
            consistent = Consistency(sum(_agreed_or_tied(protocol, c) for c in both), len(both))
    flagged = [set(r.get("flagged") or ()) for r in passes_one]
    judged = {int(r["trial"]) for r in passes_one}
    attempts = sum(int(r.get("attempts") or 1) for r in records)
    failed_attempts = sum(int(f.get("attempts") or 0) for f in failures)
    # What the failure rows asked: each row's failed passes, and each kept pass no pick holds.
    kept = _kept_attempts(failures, judged)
    failed_attempts += sum(kept)
    failed_asked = sum(int(f.get("attempts") or 0) > 0 for f in failures) + len(kept)
    tokens = sum(
        int((r.get("tokens") or {}).get("prompt", 0))
        + int((r.get("tokens") or {}).get("completion", 0))
        for r in records
    )
    costs = [float(r["cost"]) for r in records if r.get("cost") is not None]
    counted = [r for r in passes_one if not r.get("excluded")]
    unsure = (
        rules.prefers
        and bool(counted)
        and all("low_confidence" in (r.get("flagged") or ()) for r in counted)
    )
    return JudgeDiagnostics(
        judge=judge,
        model=model,
        protocol=protocol,
        comparisons=len(passes_one),
        first=first,
        position=position,
        longer=longer,
        markdown=marked,
        consistent=consistent,
        low_confidence=sum("low_confidence" in f for f in flagged),
        leakage=tuple(_leaks(passes_one, records)),
        excluded=sum(bool(r.get("excluded")) for r in passes_one),
        failures=len(failures),
        still_failed=len({int(f["trial"]) for f in failures} - judged),
        requests=attempts + failed_attempts,
        retries=attempts - len(records) + max(0, failed_attempts - failed_asked),
        tokens=tokens,
        cost=sum(costs) if costs else None,
        alpha=alpha,
        position_gate=gate,
        unsure=unsure,
        warnings=tuple(
            _warnings(
                (
                    _position_warning(first, position, gate, alpha),
                    _direction_warning(longer, "length", alpha),
                    _direction_warning(marked, "markdown", alpha),
                ),
                model,
                origin,
                sides,
            )
        ),
    )


def _kept_attempts(failures: Sequence[Mapping[str, Any]], judged: set[int]) -> list[int]:
    """Requests of the passes failure rows kept (``answered_pass``: one pass of a swap whose
    other pass was not answered) that no pick record counts yet: a rerun that reuses one
    writes it into the trial's pick record, which counts it then. Once per trial and pass."""
    kept: dict[tuple[int, object, object], int] = {}
    for row in failures:
        stored = row.get("answered_pass")
        if isinstance(stored, Mapping) and int(row["trial"]) not in judged:
            key = (int(row["trial"]), stored.get("pass"), row.get("judge_settings_sha256"))
            kept[key] = int(stored.get("attempts") or 0)
    return list(kept.values())


def _agreed_or_tied(protocol: str, passes: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a swapped comparison's passes chose the same output (a tie on both: the same)."""
    return len({_chosen(protocol, r) for r in passes}) == 1
