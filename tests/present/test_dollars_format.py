"""Dollars as every candidates screen and page writes them: cents at least, two significant
digits below ten cents, so a column reads alike ($0.40 next to $0.025) and a small cost is
never shown as a zero it is not."""

from __future__ import annotations

import pytest

from blindtest.analysis import preference_words
from blindtest.present import render_preference
from blindtest.present.page import charts, ranking
from blindtest.reportfmt import dollars


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "$0.00"),
        (0.4, "$0.40"),
        (0.1, "$0.10"),
        (0.12345, "$0.12"),
        (0.025, "$0.025"),
        (0.0996, "$0.10"),  # two significant digits round up to ten cents: cents again
        (0.099, "$0.099"),
        (0.0031, "$0.0031"),
        (0.000041, "$0.000041"),
        (0.0125, "$0.013"),  # halves rounded up
        (12.3, "$12.30"),
        (1234.5, "$1,234.50"),
    ],
)
def test_dollars_keep_cents_and_two_significant_digits_when_small(value: float, text: str) -> None:
    assert dollars(value) == text


def test_a_cost_above_zero_never_reads_as_zero() -> None:
    for value in (1e-9, 4.9e-3, 0.004999, 0.00001):
        shown = dollars(value)
        assert float(shown.removeprefix("$").replace(",", "")) > 0
        assert float(shown.removeprefix("$")) == pytest.approx(value, rel=0.05)


def test_screen_page_and_headline_write_the_same_dollars() -> None:
    for value in (0.4, 0.025, 0.0031, 2.0):
        assert render_preference.money(value) == dollars(value)
        assert ranking._money(value) == dollars(value)
        assert preference_words._money(value) == dollars(value)
    assert render_preference.money(None) == ranking._money(None) == "-"


def test_cost_axis_ticks_keep_cents_and_drop_a_round_ticks_trailing_zero() -> None:
    ticks = [charts._money_tick(v) for v in (0.0, 0.001, 0.01, 0.025, 0.1, 0.5, 1.0, 10.0)]
    assert ticks == ["$0", "$0.001", "$0.01", "$0.025", "$0.10", "$0.50", "$1.00", "$10.00"]
