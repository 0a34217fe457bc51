"""The formatting census heads its columns by the sides' labels, so a run of one model against
itself (two temperatures, two system prompts) shows which column is which, on the screen and
on the report page."""

from __future__ import annotations

from typing import Any

from blindtest.present import page as reportpage
from blindtest.present.render import _census_lines

FIGURES = {"mean_words": 30.0, "em_dashes": 0.1, "bold": 0.0, "bullets": 1.0}


def _report(labels: dict[str, str | None]) -> Any:
    census = {side: {"model": "sim-small", **FIGURES} for side in ("A", "B")}
    sides = {side: {"model": "sim-small", "label": label} for side, label in labels.items()}
    return {"audit": {"census": census}, "sides": sides}


def test_census_columns_are_headed_by_label_when_both_sides_are_one_model() -> None:
    report = _report({"A": "cold", "B": "hot"})
    head = _census_lines(report, report["audit"]["census"])[1].split()
    assert head == ["per", "response", "A", "cold", "B", "hot"]
    header = reportpage._census(report)[0]
    assert header == ["", "A: cold", "B: hot"]


def test_census_columns_fall_back_to_the_model_without_a_label() -> None:
    report = _report({"A": None, "B": None})
    head = _census_lines(report, report["audit"]["census"])[1].split()
    assert head == ["per", "response", "A", "sim-small", "B", "sim-small"]
    assert reportpage._census(report)[0] == ["", "A: sim-small", "B: sim-small"]
