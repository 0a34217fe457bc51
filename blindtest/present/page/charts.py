"""Inline SVG charts for the HTML report, as data a Jinja template draws (no plotting
library, no script, nothing fetched): an interval chart (estimates with 95% intervals against
a reference line: Pc / pd against chance, a forest plot of judges and the pooled estimate,
the bots beside the judge), grouped bars (the formatting census, preference by tag) and a
line chart (the sequential e-value path against 1/alpha). Pure geometry."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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
    steps: int = 5,
) -> IntervalChart:
    """``labels_above``: a narrow chart (``width``) with each label over its bar, which
    reads at a phone's width without shrinking its type. ``steps``: the ticks divide the axis
    into this many equal steps."""
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
    lo, hi, step = round_axis(min([*ends, ref]), max([*ends, ref]))
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
        steps=round((hi - lo) / step),
    )
    for row, shown in zip(rows, chart.rows, strict=True):
        lo_text = "unbounded" if row.lo is None else fixed(row.lo)
        hi_text = "unbounded" if row.hi is None else fixed(row.hi)
        shown["interval"] = f"{lo_text} to {hi_text}"
    return chart


#: The round steps of an axis, times a power of ten.
_ROUND_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)


def round_axis(low: float, high: float, steps: int = 5) -> tuple[float, float, float]:
    """``(start, end, step)``: an axis over the data's range, ``low`` to ``high``, from the
    round value at or below ``low`` to the one at or above ``high``, in the round step (1, 2,
    2.5 or 5 times a power of ten) that divides the range into at most about ``steps`` parts.
    The axis ends a step beyond the data at most: never at a multiple of its range (an axis of
    five fixed steps ran to +15 for a highest bound of +6.15)."""
    if not high > low:  # one value: a unit around it
        low, high = low - 0.5, high + 0.5
    raw = (high - low) / steps
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in _ROUND_STEPS if m * power >= raw * (1 - 1e-9))
    # Rounded: a start of -7.500000001 or an end of 0.30000000000000004 reads badly.
    start = round(math.floor(low / step + 1e-9) * step, 9) + 0.0
    end = round(math.ceil(high / step - 1e-9) * step, 9) + 0.0
    return start, end, step


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
    costs span more than a factor of five), strength up with its interval. Both axes run over
    the data's range in round steps (`round_axis`); each name is placed by `place_labels`,
    level with its dot wherever that is free."""
    left, right, top, bottom = PLOT_LEFT, float(WIDTH - 90), PLOT_TOP, PLOT_BOTTOM
    costs = [c for _, c, _, _, _ in points]
    log = min(costs) > 0 and max(costs) / min(costs) > 5
    if log:
        x_lo = float(math.floor(math.log10(min(costs))))
        x_hi = max(float(math.ceil(math.log10(max(costs)))), x_lo + 1)
        x_step = 1.0
    else:
        x_lo, x_hi, x_step = round_axis(0.0, max(costs) or 1.0, steps=4)
    ends = [v for _, _, s, a, b in points for v in (s, a, b) if v is not None]
    y_lo, y_hi, y_step = round_axis(min([*ends, 0.0]), max([*ends, 0.0]))

    def x(cost: float) -> float:
        value = math.log10(cost) if log else cost
        return round(left + (value - x_lo) / (x_hi - x_lo) * (right - left), 1)

    def y(value: float) -> float:
        value = min(max(value, y_lo), y_hi)
        return round(bottom - (value - y_lo) / (y_hi - y_lo) * (bottom - top), 1)

    drawn: list[dict[str, object]] = [
        {
            "label": label,
            "x": x(cost),
            "y": y(strength),
            "y_lo": y(y_lo if lo is None else lo),
            "y_hi": y(y_hi if hi is None else hi),
        }
        for label, cost, strength, lo, hi in points
    ]
    place_labels(drawn, (left + 2, float(WIDTH - 4)), (top - 8, bottom + 2))
    if log:
        x_ticks = [Tick(x(10.0**k), _money_tick(10.0**k)) for k in range(int(x_lo), int(x_hi) + 1)]
    else:
        count = round((x_hi - x_lo) / x_step)
        x_ticks = [
            Tick(x(x_lo + x_step * k), _money_tick(x_lo + x_step * k)) for k in range(count + 1)
        ]
    y_ticks = [
        # Rounded, and + 0.0 turns a -0.0 into 0.0: a tick at zero never reads "-0".
        Tick(y(y_lo + y_step * k), f"{round(y_lo + y_step * k, 9) + 0.0:+.3g}")
        for k in range(round((y_hi - y_lo) / y_step) + 1)
    ]
    return ScatterChart(chart_id, title, drawn, x_ticks, y_ticks, x_label, y_label, zero_y=y(0.0))


#: The plot area of the cost chart (the template draws its grid and axis labels around it).
PLOT_LEFT, PLOT_TOP, PLOT_BOTTOM = 60.0, 20.0, 270.0
#: A label's type, as the stylesheet sets ``.label`` (12px), and the space its characters
#: take, estimated on the wide side (an average glyph of a sans-serif face is nearer 6.5px).
LABEL_SIZE = 12.0
CHAR_WIDTH = 7.4
#: Where a label's baseline sits against its dot's centre to stand level with it.
LEVEL = 4.0
#: The gap between a dot and its label, and how far a label moves per try off its level.
GAP = 8.0
STEP = LABEL_SIZE + 3.0
DOT = 6.0

Box = tuple[float, float, float, float]


def label_box(text: str, x: float, baseline: float, anchor: str) -> Box:
    """The space a label takes: ``(left, top, right, bottom)``, by the estimate above."""
    width = len(text) * CHAR_WIDTH
    left = x - width if anchor == "end" else x
    return (left, baseline - LABEL_SIZE + 2, left + width, baseline + 3)


def _overlap(a: Box, b: Box) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return width * height if width > 0 and height > 0 else 0.0


def _tries(down: tuple[float, float]) -> list[tuple[str, float]]:
    """Where a label may go, in order: level on the right, level on the left, then a step
    above or below (right, then left), nearer first."""
    tries = [("start", 0.0), ("end", 0.0)]
    for k in range(1, int((down[1] - down[0]) // STEP) + 1):
        tries += [(anchor, s * k * STEP) for s in (-1, 1) for anchor in ("start", "end")]
    return tries


def _number(point: Mapping[str, object], key: str) -> float:
    return float(str(point[key]))


def _best_place(
    text: str,
    at: tuple[float, float],
    tries: Sequence[tuple[str, float]],
    area: Box,
    taken: Sequence[Box],
    lines: Sequence[Box],
) -> tuple[str, float, Box]:
    """The first free try for a label (``anchor``, its shift off the level, its box): level
    and clear of every interval first, then any, then the one that overlaps least."""
    best: tuple[float, str, float, Box] | None = None
    for strict in (True, False):
        for anchor, shift in tries:
            if strict and shift:
                continue  # off its level only when no level place is free
            box = label_box(text, at[0] + (GAP if anchor == "start" else -GAP),
                            at[1] + LEVEL + shift, anchor)  # fmt: skip
            inside = area[0] <= box[0] and box[2] <= area[2] and area[1] <= box[1]
            if not (inside and box[3] <= area[3]):
                continue
            cost = sum(_overlap(box, b) for b in (*taken, *(lines if strict else ())))
            if cost == 0:
                return anchor, shift, box
            if best is None or cost < best[0]:
                best = (cost, anchor, shift, box)
    if best is None:  # wider than the chart: on the right, level, where it falls
        return "start", 0.0, label_box(text, at[0] + GAP, at[1] + LEVEL, "start")
    return best[1], best[2], best[3]


def place_labels(
    points: list[dict[str, object]], across: tuple[float, float], down: tuple[float, float]
) -> None:
    """Give each point (``x``, ``y``, ``label``; ``y_lo``/``y_hi`` its interval) a place for
    its name that no other name or dot covers, inside ``across`` x ``down``: level with its
    dot on its right, else on its left (across no interval if it can, then across one), else
    a step above or below with a leader line to the dot, nearer first. Placed greedily from
    the top of the chart down; where nothing is free, the place that overlaps least.
    Sets ``label_x``, ``label_y``, ``anchor`` and ``leader`` (None, or ``(x1, y1, x2, y2)``)."""
    at = [(_number(p, "x"), _number(p, "y")) for p in points]
    dots = [(x - DOT, y - DOT, x + DOT, y + DOT) for x, y in at]
    lines = [(_number(p, "x") - 1.5, _number(p, "y_hi"), _number(p, "x") + 1.5,
              _number(p, "y_lo")) for p in points]  # fmt: skip
    area = (across[0], down[0], across[1], down[1])
    tries = _tries(down)
    placed: list[Box] = []
    for i in sorted(range(len(points)), key=lambda i: (at[i][1], i)):
        point = points[i]
        px, py = at[i]
        taken = [*placed, *(b for j, b in enumerate(dots) if j != i)]
        others = [b for j, b in enumerate(lines) if j != i]
        anchor, shift, box = _best_place(str(point["label"]), (px, py), tries, area, taken, others)
        placed.append(box)
        point["anchor"] = anchor
        point["label_x"] = round(px + GAP if anchor == "start" else px - GAP, 1)
        point["label_y"] = round(py + LEVEL + shift, 1)
        point["leader"] = None
        if shift:
            edge = box[0] if anchor == "start" else box[2]
            dot_edge = round(py + (DOT if shift > 0 else -DOT), 1)
            point["leader"] = (px, dot_edge, round(edge, 1), round(py + shift, 1))


def _money_tick(value: float) -> str:
    """A cost axis's tick in the dollars the tables use, cents at least ($0.10, $1.00), a
    round tick below them without a trailing zero ($0.01, $0.001)."""
    if value == 0:
        return "$0"
    text = dollars(value)
    while len(text.partition(".")[2]) > 2 and text.endswith("0"):
        text = text[:-1]
    return text
