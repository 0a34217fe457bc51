"""The several-candidate report page on a phone (390 x 844) and a laptop (1366 x 768), in
Chromium: the wide tables become one card per row with every figure named (nothing runs off
the screen), the strength and cost charts' type stays readable, and every column has a name."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from candidate_analysis_runs import candidate_run, candidate_schemas
from web_page import SIZES, chromium, page_at, screenshot

#: Smallest type, in CSS pixels on the screen, a chart's names and ticks may have.
READABLE_PX = 10.5


@pytest.fixture(autouse=True)
def _schemas() -> Iterator[None]:
    with candidate_schemas():
        yield


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def _page(tmp_path: Path, invoke: Any) -> Path:
    run = candidate_run(tmp_path, prompts=12)
    html = tmp_path / "report.html"
    result = invoke("analyze", run, "--html", html, "--quiet")
    assert result.exit_code == 0, result.output
    return html


def test_every_column_of_the_pair_table_is_named(tmp_path: Path, invoke: Any) -> None:
    text = _page(tmp_path, invoke).read_text(encoding="utf-8")
    pairs = text[text.index('id="pairs-table"') :]
    pairs = pairs[: pairs.index("</tr>")]
    assert "<th></th>" not in pairs
    assert "<th>told apart</th>" in pairs
    assert re.search(r'<td data-label="told apart">(not told apart|\w+ ahead[^<]*)</td>', text)


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_tables_fit_and_the_chart_reads_at_each_size(
    tmp_path: Path, invoke: Any, browser: Any, size: str
) -> None:
    html = _page(tmp_path, invoke)
    width = SIZES[size]["width"]
    with page_at(browser, size) as (name, page):
        page.goto(html.as_uri())
        screenshot(page, f"report-candidates-reflow-{name}")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        for table in ("#ranking-table", "#pairs-table", "#appendix-table", "#sides-table"):
            box = page.locator(table).bounding_box()
            assert box is not None, table
            assert box["x"] + box["width"] <= width + 0.5, (table, box)
        # The last column of the ranking ($ per 1,000 answers) is on the screen, named.
        last = page.locator("#ranking-table tr:nth-child(2) td:last-child")
        cell = last.bounding_box()
        assert cell is not None
        assert cell["x"] + cell["width"] <= width + 0.5
        if size == "phone":
            label = page.evaluate(
                "getComputedStyle(document.querySelector("
                "'#ranking-table tr:nth-child(2) td:last-child'), '::before').content"
            )
            assert label == '"$ per 1,000 answers: "'
        for chart in ("#chart-ranking", "#chart-cost"):
            smallest = page.evaluate(
                """(chart) => {
                  const svg = document.querySelector(chart + ' svg');
                  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
                  const sizes = [...svg.querySelectorAll('text')].map(
                    t => parseFloat(getComputedStyle(t).fontSize) * scale);
                  return Math.min(...sizes);
                }""",
                chart,
            )
            assert smallest >= READABLE_PX, (chart, smallest)
