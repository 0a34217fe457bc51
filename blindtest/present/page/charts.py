"""Inline SVG charts for the HTML report, as data a Jinja template draws (no plotting
library, no script, nothing fetched): an interval chart (estimates with 95% intervals against
a reference line: Pc / pd against chance, a forest plot of judges and the pooled estimate,
the bots beside the judge), grouped bars (the formatting census, preference by tag) and a
line chart (the sequential e-value path against 1/alpha). Pure geometry."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from blindtest.reportfmt import dollars, fixed

WIDTH = 640
LABEL_W = 150
ROW_H = 26
#: The width of a chart drawn with its labels above the bars (it reads on a phone).
NARROW = 400
PAD = 28


@dataclass(frozen=True, slots=True)
class Row:
    label: str
    estimate: float | None
    lo: float | None
    hi: float | None
    kind: str = "judge"  # judge | pooled | bot


@dataclass(frozen=True, slots=True)
class Tick:
    x: float
    text: str


@dataclass
class IntervalChart:
    """Rows of an estimate with its interval on a common axis, with a reference line."""

    id: str
    title: str
    rows: list[dict[str, object]]
    ticks: list[Tick]
    ref_x: float | None
    ref_label: str
    width: int = WIDTH
    height: int = 0
    kind: str = "interval"
    #: Each row's label above its bar (the bars then span the whole width), not beside it.
    labels_above: bool = False


def interval_chart(
    chart_id: str,
    title: str,
    rows: Sequence[Row],
    *,
    lo: float,
    hi: float,
    ref: float | None,
    ref_label: str,
    percent: bool = True,
    width: int = WIDTH,
    labels_above: bool = False,
) -> IntervalChart:
    """``labels_above``: a narrow chart (``width``) with each label over its bar, which
    reads at a phone's width without shrinking its type."""
    left, right = (24.0 if labels_above else float(LABEL_W + 10)), float(width - 24)
    row_h = ROW_H + 14 if labels_above else ROW_H

    def x(value: float) -> float:
        value = min(max(value, lo), hi)
        return round(left + (value - lo) / (hi - lo) * (right - left), 1)

    drawn: list[dict[str, object]] = []
    for i, row in enumerate(rows):
        y = PAD + i * row_h + row_h / 2 + (7 if labels_above else 0)
        drawn.append(
            {
                "label": row.label,
                "kind": row.kind,
                "y": y,
                "x": None if row.estimate is None else x(row.estimate),
                "x_lo": None if row.lo is None else x(row.lo),
                "x_hi": None if row.hi is None else x(row.hi),
                "text": _fmt(row.estimate, percent),
                "interval": f"{_fmt(row.lo, percent)} to {_fmt(row.hi, percent)}",
            }
        )
    steps = 5
    ticks = [
        Tick(x(lo + (hi - lo) * k / steps), _fmt(lo + (hi - lo) * k / steps, percent))
        for k in range(steps + 1)
    ]
    return IntervalChart(
        id=chart_id,
        title=title,
        rows=drawn,
        ticks=ticks,
        ref_x=None if ref is None else x(ref),
        ref_label=ref_label,
        width=width,
        height=PAD + len(rows) * row_h + 30,
        labels_above=labels_above,
    )


def _fmt(value: float | None, percent: bool) -> str:
    if value is None:
        return "n/a"
    return f"{fixed(value * 100, 0)}%" if percent else fixed(value)


@dataclass
class BarChart:
    """Groups of bars (one bar per series in each group), each group scaled to its largest
    value so metrics of different sizes share one chart; the value is written on the bar."""

    id: str
    title: str
    series: list[str]
    groups: list[dict[str, object]] = field(default_factory=list)
    width: int = WIDTH
    height: int = 0
    kind: str = "bars"


def bar_chart(
    chart_id: str,
    title: str,
    series: Sequence[str],
    groups: Sequence[tuple[str, Sequence[float]]],
    *,
    one_scale: bool = False,
) -> BarChart:
    """Grouped horizontal bars. Each group is scaled to its own largest value (rows of
    different units, as the census), or every group to one scale with ``one_scale`` (counts
    that are compared across rows, as the tags: 1 and 7 must not draw the same width)."""
    bar_h = 14
    group_h = bar_h * len(series) + 10
    left, right = float(LABEL_W + 10), float(WIDTH - 70)
    drawn = []
    overall = max((abs(v) for _, values in groups for v in values), default=0.0) or 1.0
    for i, (label, values) in enumerate(groups):
        top = PAD + i * group_h
        biggest = overall if one_scale else max((abs(v) for v in values), default=0.0) or 1.0
        bars = [
            {
                "series": k,
                "y": top + k * bar_h,
                "w": round((right - left) * abs(v) / biggest, 1),
                "text": f"{v:.2f}".rstrip("0").rstrip(".") if v != int(v) else str(int(v)),
            }
            for k, v in enumerate(values)
        ]
        drawn.append({"label": label, "y": top + group_h / 2 - 2, "bars": bars})
    return BarChart(
        chart_id,
        title,
        list(series),
        drawn,
        height=PAD + len(groups) * group_h + 10,
    )


@dataclass
class LineChart:
    """A path of values over trials on a log scale, with a threshold line."""

    id: str
    title: str
    points: str
    dots: list[dict[str, float]]
    ticks: list[Tick]
    threshold_y: float
    threshold_label: str
    x_ticks: list[Tick]
    width: int = WIDTH
    height: int = 260
    kind: str = "line"


def e_value_chart(chart_id: str, log_e: Sequence[float], alpha: float) -> LineChart:
    """log10 E over the trials against log10(1/alpha)."""
    values = [v / math.log(10) for v in log_e]  # natural log in e_values.jsonl
    threshold = math.log10(1 / alpha)
    lo = min(0.0, *values, -1.0)
    hi = max(threshold + 0.5, *values)
    left, right, top, bottom = 60.0, float(WIDTH - 20), 20.0, 220.0
    n = max(len(values), 1)

    def xy(i: int, v: float) -> tuple[float, float]:
        x = left + (right - left) * (i + 1) / n
        y = bottom - (bottom - top) * (v - lo) / (hi - lo)
        return round(x, 1), round(y, 1)

    pts = [xy(i, v) for i, v in enumerate(values)]
    ticks = []
    for k in range(math.floor(lo), math.ceil(hi) + 1):
        ticks.append(Tick(xy(0, k)[1], f"{10.0**k:g}"))
    x_ticks = [Tick(xy(i - 1, 0)[0], str(i)) for i in sorted({1, max(1, n // 2), n})]
    return LineChart(
        chart_id,
        "Sequential e-value path (log scale) against the stopping line 1/alpha",
        " ".join(f"{x},{y}" for x, y in pts),
        [{"x": x, "y": y} for x, y in pts],
        ticks,
        xy(0, threshold)[1],
        f"1/alpha = {1 / alpha:g}",
        x_ticks,
    )


@dataclass
class PowerChart:
    """Exact power against the number of trials, one line per alternative."""

    id: str
    title: str
    lines: list[dict[str, object]]
    y_ticks: list[Tick]
    x_ticks: list[Tick]
    target_y: float | None
    target_label: str
    width: int = WIDTH
    height: int = 300
    kind: str = "power"


def power_chart(
    chart_id: str,
    title: str,
    ns: Sequence[int],
    curves: Sequence[tuple[str, Sequence[float]]],
    target: float | None,
) -> PowerChart:
    left, right, top, bottom = 50.0, float(WIDTH - 110), 16.0, 260.0
    lo, hi = min(ns), max(ns)
    span = max(hi - lo, 1)

    def xy(n: int, p: float) -> tuple[float, float]:
        return (
            round(left + (right - left) * (n - lo) / span, 1),
            round(bottom - (bottom - top) * p, 1),
        )

    lines = []
    for k, (label, powers) in enumerate(curves):
        pts = [xy(n, p) for n, p in zip(ns, powers, strict=True)]
        lines.append(
            {
                "series": k % 3,
                "label": label,
                "points": " ".join(f"{x},{y}" for x, y in pts),
                "end_x": pts[-1][0] + 6,
                "end_y": pts[-1][1] + 4,
            }
        )
    placed: list[float] = []  # labels at the line ends, kept 12 px apart
    for line in sorted(lines, key=lambda item: float(str(item["end_y"]))):
        y = float(str(line["end_y"]))
        if placed and y < placed[-1] + 12:
            y = placed[-1] + 12
        line["end_y"] = y
        placed.append(y)
    y_ticks = [Tick(xy(lo, p / 5)[1], f"{p * 20}%") for p in range(6)]
    step = max(1, round(span / 5))
    x_ticks = [Tick(xy(n, 0)[0], str(n)) for n in range(lo, hi + 1, step)]
    return PowerChart(
        chart_id,
        title,
        lines,
        y_ticks,
        x_ticks,
        None if target is None else xy(lo, target)[1],
        "" if target is None else f"target {target:.0%}",
    )


def strength_chart(
    chart_id: str, title: str, rows: Sequence[Row], ref: float, ref_label: str
) -> IntervalChart:
    """Strengths on the log-odds scale with their intervals (a ranking), on an axis that holds
    every finite bound; an unbounded end runs to the axis's edge and is said in the table.
    Narrow, each candidate's name over its bar: a name of any length fits, and a phone shows
    the chart near its own scale rather than shrunk to half."""
    ends = [v for r in rows for v in (r.estimate, r.lo, r.hi) if v is not None]
    lo, hi = _five_steps(min([*ends, ref]), max([*ends, ref]))
    drawn = [
        Row(r.label, r.estimate, lo if r.lo is None else r.lo, hi if r.hi is None else r.hi)
        for r in rows
    ]
    chart = interval_chart(
        chart_id,
        title,
        drawn,
        lo=lo,
        hi=hi,
        ref=ref,
        ref_label=ref_label,
        percent=False,
        width=NARROW,
        labels_above=True,
    )
    for row, shown in zip(rows, chart.rows, strict=True):
        lo_text = "unbounded" if row.lo is None else fixed(row.lo)
        hi_text = "unbounded" if row.hi is None else fixed(row.hi)
        shown["interval"] = f"{lo_text} to {hi_text}"
    return chart


def _five_steps(low: float, high: float) -> tuple[float, float]:
    """An axis from ``low`` to ``high`` in five round steps (ticks at 0.25, 0.5, 1, 2, 5...)."""
    for step in (0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0, 10.0, 20.0, 50.0):
        start = math.floor(low / step) * step
        if start + 5 * step >= high:
            return start, start + 5 * step
    return low, high


@dataclass
class ScatterChart:
    """Points with vertical intervals against a horizontal measure (cost against strength),
    each point labelled."""

    id: str
    title: str
    points: list[dict[str, object]]
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    x_label: str
    y_label: str
    zero_y: float | None
    width: int = WIDTH
    height: int = 320
    kind: str = "scatter"


def cost_chart(
    chart_id: str,
    title: str,
    points: Sequence[tuple[str, float, float, float | None, float | None]],
    x_label: str,
    y_label: str,
) -> ScatterChart:
    """``(label, cost, strength, lo, hi)`` per candidate: cost across (a log scale when the
    costs span more than a factor of five), strength up with its interval."""
    left, right, top, bottom = 60.0, float(WIDTH - 90), 20.0, 270.0
    costs = [c for _, c, _, _, _ in points]
    log = min(costs) > 0 and max(costs) / min(costs) > 5
    if log:
        x_lo = float(math.floor(math.log10(min(costs))))
        x_hi = max(float(math.ceil(math.log10(max(costs)))), x_lo + 1)
    else:
        x_lo, x_hi = 0.0, max(costs) * 1.1 or 1.0
    ends = [v for _, _, s, a, b in points for v in (s, a, b) if v is not None]
    y_lo, y_hi = _five_steps(min([*ends, 0.0]), max([*ends, 0.0]))

    def x(cost: float) -> float:
        value = math.log10(cost) if log else cost
        return round(left + (value - x_lo) / (x_hi - x_lo) * (right - left), 1)

    def y(value: float) -> float:
        value = min(max(value, y_lo), y_hi)
        return round(bottom - (value - y_lo) / (y_hi - y_lo) * (bottom - top), 1)

    drawn = [
        {
            "label": label,
            "x": x(cost),
            "y": y(strength),
            "y_lo": y(y_lo if lo is None else lo),
            "y_hi": y(y_hi if hi is None else hi),
        }
        for label, cost, strength, lo, hi in points
    ]
    if log:
        x_ticks = [Tick(x(10.0**k), _money_tick(10.0**k)) for k in range(int(x_lo), int(x_hi) + 1)]
    else:
        x_ticks = [Tick(x(x_hi * k / 4), _money_tick(x_hi * k / 4)) for k in range(5)]
    y_ticks = [
        # Rounded, and + 0.0 turns a -0.0 into 0.0: a tick at zero never reads "-0".
        Tick(
            y(y_lo + (y_hi - y_lo) * k / 5), f"{round(y_lo + (y_hi - y_lo) * k / 5, 9) + 0.0:+.2g}"
        )
        for k in range(6)
    ]
    return ScatterChart(chart_id, title, drawn, x_ticks, y_ticks, x_label, y_label, zero_y=y(0.0))


def _money_tick(value: float) -> str:
    """A cost axis's tick in the dollars the tables use, cents at least ($0.10, $1.00), a
    round tick below them without a trailing zero ($0.01, $0.001)."""
    if value == 0:
        return "$0"
    text = dollars(value)
    while len(text.partition(".")[2]) > 2 and text.endswith("0"):
        text = text[:-1]
    return text
