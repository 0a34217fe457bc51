"""The report's charts: an axis runs over the data's range in round steps (never to a multiple
of it), and in the cost-against-strength chart each candidate's name sits level with its dot
wherever that is free and two names never sit on each other or on another dot. And the
report's outline is its own: headings inside answers are drawn as paragraphs."""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from blindtest.model.slots import Slot
from blindtest.present.markup import render_text
from blindtest.present.page.charts import (
    DOT,
    LEVEL,
    WIDTH,
    Box,
    cost_chart,
    label_box,
    round_axis,
    strength_chart,
)
from blindtest.present.page.charts import Row as ChartRow
from blindtest.rundir import artifacts

from report_runs import balanced_outcomes, cli, load, make_run, preference_picks, write_picks

#: Boxes are compared after the chart rounds its coordinates to 0.1px: touching is not overlap.
TOUCH = 0.2


def _overlap(a: Box, b: Box) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > TOUCH and min(a[3], b[3]) - max(a[1], b[1]) > TOUCH


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (-1.2, 6.15, (-2.0, 8.0, 2.0)),  # not to +15, as five fixed steps of 5 ran
        (0.0, 0.3, (0.0, 0.3, 0.1)),
        (-0.75, 0.4, (-0.75, 0.5, 0.25)),
        (0.0, 0.93, (0.0, 1.0, 0.2)),
        (-3.54, 2.85, (-4.0, 4.0, 2.0)),
        (2.0, 2.0, (1.4, 2.6, 0.2)),  # one value: a unit around it, in round steps
    ],
)
def test_an_axis_runs_over_the_datas_range_in_round_steps(
    low: float, high: float, expected: tuple[float, float, float]
) -> None:
    assert round_axis(low, high) == pytest.approx(expected)


def test_an_axis_ends_within_one_step_of_the_data() -> None:
    rng = random.Random(1)
    for _ in range(2000):
        low = rng.uniform(-20, 5)
        high = low + 10 ** rng.uniform(-3, 2)
        start, end, step = round_axis(low, high)
        assert start <= low < start + step
        assert end - step < high <= end
        assert round((end - start) / step) <= 10
        mantissa = step / 10 ** math.floor(math.log10(step))
        assert round(mantissa, 6) in (1.0, 2.0, 2.5, 5.0)


def _chart(points: list[tuple[str, float, float, float, float]]) -> list[dict[str, object]]:
    return cost_chart("c", "title", points, "dollars", "strength").points


def _boxes(points: list[dict[str, object]]) -> list[Box]:
    return [
        label_box(str(p["label"]), float(str(p["label_x"])), float(str(p["label_y"])),
                  str(p["anchor"]))
        for p in points
    ]  # fmt: skip


def test_the_cost_chart_axes_run_to_the_datas_range() -> None:
    points = [("a", 0.93, 1.46, 0.72, 6.15), ("b", 0.26, 0.49, -0.4, 1.43)]
    chart = cost_chart("c", "title", points, "dollars", "strength")
    ticks = [float(t.text) for t in chart.y_ticks]
    assert ticks[0] == -2.0
    assert ticks[-1] == 8.0  # the highest bound is +6.15
    assert [t.text for t in chart.x_ticks] == ["$0", "$0.25", "$0.50", "$0.75", "$1.00"]


def test_each_name_sits_level_with_its_dot_where_that_is_free() -> None:
    points = [
        ("alpha (prompt v2)", 0.93, 1.46, 0.72, 2.85),
        ("beta", 0.26, 0.49, -0.40, 1.43),
        ("gamma", 0.085, -0.16, -0.75, 0.57),
        ("delta", 0.02, -1.78, -3.54, -0.88),
    ]
    for point in _chart(points):
        assert point["label_y"] == pytest.approx(float(str(point["y"])) + LEVEL)
        assert point["leader"] is None
        box = label_box(str(point["label"]), float(str(point["label_x"])),
                        float(str(point["label_y"])), str(point["anchor"]))  # fmt: skip
        # Level: the middle of the name's box is the dot's centre, give or take a pixel.
        assert abs((box[1] + box[3]) / 2 - float(str(point["y"]))) <= 1.0


def test_names_of_neighbouring_dots_never_sit_on_each_other() -> None:
    # Two candidates a hair apart in cost and strength: the second name moves, with a line.
    points = [
        ("gpt-4o-mini", 0.30, 0.50, 0.1, 0.9),
        ("gpt-4o-mini (prompt v2)", 0.31, 0.52, 0.1, 0.9),
        ("llama-3.1-8b", 0.32, 0.48, 0.1, 0.9),
    ]
    drawn = _chart(points)
    boxes = _boxes(drawn)
    assert not any(_overlap(a, b) for a, b in itertools.combinations(boxes, 2))
    moved = [p for p in drawn if p["leader"] is not None]
    assert moved  # three names cannot all sit level beside three dots this close
    for point in moved:
        leader = point["leader"]
        assert isinstance(leader, tuple)
        assert leader[0] == point["x"]  # from the dot's edge to the moved name
        assert abs(leader[1] - float(str(point["y"]))) == pytest.approx(DOT)


def test_no_name_covers_another_name_or_dot_over_many_charts() -> None:
    """Seeded charts of 2 to 12 candidates, spread or crowded, names short and long."""
    rng = random.Random(7)
    names = ("alpha", "beta (prompt v2)", "gpt-4o-mini", "c", "meta-llama/Llama-3.1-70B-Instruct")
    for _ in range(300):
        k = rng.randint(2, 12)
        crowded = rng.random() < 0.5
        points = []
        for i in range(k):
            cost = rng.choice([0.02, 0.5, 1.0]) * (1 + (0.05 if crowded else 3) * rng.random())
            strength = rng.gauss(0, 0.3 if crowded else 1.5)
            width = rng.random() * 2
            points.append((f"{rng.choice(names)}{i}", cost, strength, strength - width,
                           strength + width))  # fmt: skip
        drawn = _chart(points)
        boxes = _boxes(drawn)
        dots = [
            (float(str(p["x"])) - DOT, float(str(p["y"])) - DOT, float(str(p["x"])) + DOT,
             float(str(p["y"])) + DOT)
            for p in drawn
        ]  # fmt: skip
        assert not any(_overlap(a, b) for a, b in itertools.combinations(boxes, 2)), points
        for i, box in enumerate(boxes):
            assert box[0] >= 0, points
            assert box[2] <= WIDTH, points
            assert not any(_overlap(box, dot) for j, dot in enumerate(dots) if j != i), points


def test_the_strength_axis_runs_to_the_datas_range() -> None:
    rows = [ChartRow("a", 1.46, 0.72, 6.15), ChartRow("b", -0.16, -0.75, 0.57)]
    chart = strength_chart("s", "title", rows, ref=0.0, ref_label="the mean = 0")
    ticks = [float(t.text) for t in chart.ticks]
    assert ticks[0] == -2.0
    assert ticks[-1] == 8.0


# --------------------------------------------------------------------------- answers' headings


class _Headings(HTMLParser):
    """The text of every heading element (h1-h6) of a page, and of every answer heading."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.answer_headings: list[str] = []
        self._into: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if re.fullmatch(r"h[1-6]", tag):
            self._into = self.headings
            self.headings.append("")
        elif "answer-heading" in classes:
            self._into = self.answer_headings
            self.answer_headings.append("")

    def handle_endtag(self, tag: str) -> None:
        if re.fullmatch(r"h[1-6]|p", tag):
            self._into = None

    def handle_data(self, data: str) -> None:
        if self._into is not None:
            self._into[-1] += data


def _markdown_answer(slot: Slot, entry: Mapping[str, Any]) -> str:
    return f"# Key points {slot.side}\n\nSome words.\n\n### The script\n\nMore words {slot.trial}."


def test_headings_inside_answers_do_not_become_headings_of_the_report(tmp_path: Path) -> None:
    run = make_run(tmp_path, "preference", 20, text=_markdown_answer)
    design = load(run)
    write_picks(run / artifacts.PICKS, preference_picks(design, balanced_outcomes(design, 12, 4)))
    page = tmp_path / "page.html"
    assert cli("analyze", run, "--html", page).exit_code == 0
    found = _Headings(page.read_text())
    assert not [h for h in found.headings if "Key points" in h or "The script" in h]
    assert "Key points A" in found.answer_headings
    assert "The script" in found.answer_headings
    # The judging page draws an answer's headings as headings: it is the answer's page.
    assert str(render_text("### The script", plain=False)) == "<h3>The script</h3>\n"
    drawn = str(render_text("### The script", plain=False, headings=False))
    assert drawn == '<p class="answer-heading answer-h3">The script</p>\n'
