"""A strength (or a chart's figure) that rounds to zero prints as 0.00 on the screen and the
page, never as -0.00: a sign on a zero says a direction the data do not have."""

from __future__ import annotations

import re

from blindtest.present.page import charts
from blindtest.present.page.ranking import _ranking_rows
from blindtest.present.render_preference import strength_text
from blindtest.reportfmt import fixed


def test_fixed_never_prints_a_negative_zero() -> None:
    assert fixed(-0.001) == "0.00"
    assert fixed(-0.001, sign=True) == "0.00"
    assert fixed(0.004, sign=True) == "0.00"
    assert fixed(-0.0) == "0.00"
    assert fixed(-0.4, 0) == "0"
    assert fixed(-0.005001, sign=True) == "-0.01"
    assert fixed(0.59, sign=True) == "+0.59"
    assert fixed(-0.2) == "-0.20"


def test_the_screen_prints_a_strength_near_zero_unsigned_and_aligned() -> None:
    near = strength_text({"estimate": -0.0012, "lo": -0.004, "hi": 0.9})
    assert near == " 0.00  (0.00 to +0.90)"
    assert strength_text({"estimate": 0.59, "lo": -0.24, "hi": 1.58}) == "+0.59  (-0.24 to +1.58)"
    assert near.index("(") == strength_text({"estimate": -0.2, "lo": -1, "hi": 0.4}).index("(")


def test_the_page_prints_no_negative_zero() -> None:
    section = {
        "ranking": [
            {
                "candidate": "large-brief",
                "rank": 2,
                "strength": {"estimate": -0.0012, "lo": -0.75, "hi": -0.001},
                "wins": 12,
                "losses": 12,
                "ties": 6,
            }
        ]
    }
    (row,) = _ranking_rows(section)
    assert row[2:4] == ["0.00", "-0.75 to 0.00"]
    chart = charts.strength_chart(
        "c", "t", [charts.Row("large-brief", -0.0012, -0.75, -0.001)], ref=0.0, ref_label="0"
    )
    shown = str([chart.rows, chart.ticks])
    assert not re.search(r"-0\.00\b|'-0'|-0%", shown), shown
    scatter = charts.cost_chart(
        "s", "t", [("a", 1.0, -0.001, -0.3, 0.3), ("b", 2.0, 0.2, 0.0, 0.4)], "x", "y"
    )
    assert all(not t.text.startswith("-0") or t.text.startswith("-0.") for t in scatter.y_ticks)
