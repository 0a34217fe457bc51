"""The report page of a several-candidate run judged with skips, "both bad" and changes, opened
in Chromium (offline) at 1366x768 and a phone's 390x844: the result on first picks in the
header, the judges' own records, candidates called by their labels, and a cost chart whose
names, drawn by the browser, never overlap and stand level with their dots."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blindtest.rundir import artifacts

from candidate_analysis_runs import candidate_design, strength_picks, write_candidate_run
from report_runs import cli, write_picks
from web_page import chromium, screenshot

#: Two pairs of candidates close in cost and in strength, with long labels: their names
#: would sit on each other if drawn beside their dots as they were.
LABELS = {
    "alpha": "gpt-4o-mini, terse prompt",
    "beta": "gpt-4o-mini, prompt v2",
    "gamma": "</script>",
    "delta": "llama-3.1-8b",
}
PRICES = {
    "alpha": (1.0, 5.0),
    "beta": (1.0, 5.2),
    "gamma": (0.15, 0.6),
    "delta": (0.15, 0.62),
}
STRENGTHS = {"alpha": 0.5, "beta": 0.45, "gamma": -0.45, "delta": -0.5}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def report_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("raters")
    design: Any = candidate_design(prompts=12)
    for name, label in LABELS.items():
        design["models"][name]["label"] = label
    run = write_candidate_run(root, design, prices=PRICES)
    loaded = artifacts.load_design(run).design
    picks = strength_picks(loaded, STRENGTHS, judge="ana", nu=0.3)
    said = [{**p, "pick": "both_bad"} if p["trial"] in (4, 9) else p for p in picks]
    skip = {"trial": 1, "judge": "ana", "pick": "skipped", "skipped": True}
    flipped = {"left": "right", "right": "left", "tie": "left"}
    changes = [
        {**p, "pick": flipped[p["pick"]], "correction": True} for p in picks if p["trial"] in (2, 3)
    ]
    write_picks(run / artifacts.PICKS, [skip, *said, *changes])
    html = root / "report.html"
    result = cli("analyze", run, "--html", html)
    assert result.exit_code in (0, 1), result.output
    return html


def _open(browser: Any, html: Path, width: int, height: int) -> Any:
    context = browser.new_context(viewport={"width": width, "height": height}, offline=True)
    page = context.new_page()
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url))
    page.goto(html.as_uri())
    page.fetched = fetched
    return page


def _box(page: Any, selector: str, index: int) -> dict[str, float]:
    box = page.locator(selector).nth(index).bounding_box()
    assert box is not None, selector
    return dict(box)


def _overlap(a: dict[str, float], b: dict[str, float]) -> float:
    width = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
    height = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
    return width * height if width > 0 and height > 0 else 0.0


def test_the_judges_records_and_the_first_picks_on_a_laptop_screen(
    browser: Any, report_page: Path
) -> None:
    page = _open(browser, report_page, 1366, 768)
    screenshot(page, "report-raters-1366")
    first = page.locator("#first-picks")
    assert first.is_visible()
    assert "On first picks (before 2 changes by ana;" in first.inner_text()
    assert page.locator("#raters").is_visible()
    assert "ana" in page.inner_text("#judges-table")
    assert '"Both bad" was said twice, on 2 comparisons' in page.inner_text("#raters")
    assert page.locator("#ranking td", has_text="gamma (</script>)").count() >= 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    assert page.fetched == [report_page.as_uri()]


def test_the_cost_charts_names_drawn_by_the_browser_never_overlap_and_stand_level(
    browser: Any, report_page: Path
) -> None:
    page = _open(browser, report_page, 1366, 768)
    labels = "#chart-cost text.point-label"
    dots = "#chart-cost circle"
    assert page.locator(labels).count() == 4
    names = [_box(page, labels, i) for i in range(4)]
    marks = [_box(page, dots, i) for i in range(4)]
    svg = _box(page, "#chart-cost svg", 0)
    for a, b in itertools.combinations(names, 2):
        assert _overlap(a, b) == 0, (a, b)
    for i, name in enumerate(names):
        assert svg["x"] <= name["x"]
        assert name["x"] + name["width"] <= svg["x"] + svg["width"]
        for j, mark in enumerate(marks):
            if i != j:
                assert _overlap(name, mark) == 0, (i, j)
    leaders = page.locator("#chart-cost line.leader").count()
    level = [
        abs((n["y"] + n["height"] / 2) - (m["y"] + m["height"] / 2))
        for n, m in zip(names, marks, strict=True)  # both drawn in the points' order
    ]
    # Every name without a leader line stands level with its dot (within two pixels).
    assert sum(d <= 2 for d in level) >= 4 - leaders


def test_the_report_fits_a_phone(browser: Any, report_page: Path) -> None:
    page = _open(browser, report_page, 390, 844)
    screenshot(page, "report-raters-390")
    assert page.locator("#first-picks").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
