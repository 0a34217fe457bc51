"""``bt-analyze RUN --html FILE`` for a several-candidate run: the ranking in words, the
strengths with interval bars, the win-rate matrix and cost against strength, one
self-contained page, opened in Chromium (network off) at a laptop's and a phone's size."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.present.page import charts

from candidate_analysis_runs import candidate_run, candidate_schemas
from web_page import SIZES, chromium, page_at, screenshot


@pytest.fixture(autouse=True)
def _schemas() -> Iterator[None]:
    with candidate_schemas():
        yield


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def _page(tmp_path: Path, invoke: Any, **options: Any) -> tuple[Path, str]:
    run = candidate_run(tmp_path, prompts=20, **options)
    html = tmp_path / "report.html"
    result = invoke("analyze", run, "--html", html, "--quiet")
    assert result.exit_code == 0, result.output
    return html, html.read_text()


def test_the_page_leads_with_the_ranking_and_draws_its_three_figures(
    tmp_path: Path, invoke: Any
) -> None:
    _, text = _page(tmp_path, invoke)
    assert "<script" not in text
    assert not re.search(r"""(src|href|url)\s*[=(]\s*["']?\s*(https?:|//)""", text)
    first = text.index('id="verdict"')
    assert "The best is one of alpha and beta" in text[first : first + 400]
    assert '<p id="best">The best set' in text
    for anchor in ("chart-ranking", "chart-cost"):
        assert f'<figure class="chart" id="{anchor}">' in text
    # The matrix: four rows of four cells, the diagonal blank, 6 pairs each shown both ways.
    matrix = text[text.index('<table class="matrix">') :]
    matrix = matrix[: matrix.index("</table>")]
    assert matrix.count('<td class="self"') == 4
    assert len(re.findall(r"<small>\d+-\d+-\d+</small>", matrix)) == 12
    assert text.index('id="ranking"') < text.index('id="matrix"') < text.index('id="cost-strength"')


def test_the_ranking_chart_marks_an_unbounded_end_in_words() -> None:
    rows = [charts.Row("alpha", 1.0, 0.5, None), charts.Row("beta", -1.0, -1.5, -0.5)]
    chart = charts.strength_chart("c", "t", rows, ref=0.0, ref_label="mean")
    assert chart.rows[0]["interval"] == "0.50 to unbounded"
    assert chart.rows[0]["x_hi"] == chart.ticks[-1].x  # the bar runs to the axis's end
    assert chart.rows[1]["interval"] == "-1.50 to -0.50"


def test_cost_runs_on_a_log_scale_when_costs_span_more_than_five_times() -> None:
    points = [("a", 0.01, 1.0, 0.5, 1.5), ("b", 1.0, -1.0, -1.5, -0.5)]
    chart = charts.cost_chart("c", "t", points, "x", "y")
    assert [t.text for t in chart.x_ticks] == ["$0.01", "$0.10", "$1.00"]
    heights = [float(str(p["y"])) for p in chart.points]
    assert heights[0] < heights[1]  # stronger is higher on the page
    linear = charts.cost_chart(
        "c", "t", [("a", 1.0, 0, None, None), ("b", 2.0, 0, None, None)], "x", "y"
    )
    assert linear.x_ticks[0].text == "$0"


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_page_reads_at_a_laptop_and_a_phone_size(
    tmp_path: Path, invoke: Any, browser: Any, size: str
) -> None:
    html, _ = _page(tmp_path, invoke, mode="reference:delta")
    with page_at(browser, size) as (name, page):
        fetched: list[str] = []
        page.on("request", lambda r: fetched.append(r.url))
        page.goto(html.as_uri())
        screenshot(page, f"report-candidates-{name}")
        width = SIZES[size]["width"]
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        for chart in ("#chart-ranking svg", "#chart-cost svg"):
            box = page.locator(chart).bounding_box()
            assert box["width"] > min(300, width - 40)
            assert box["height"] > 60
        assert page.locator("#chart-ranking circle").count() == 4  # delta too, at 0
        assert page.locator("#reference").is_visible()
        assert "Against the reference delta" in page.inner_text("#headline")
        assert page.locator("details.trial").count() == 60
        assert fetched == [html.as_uri()]


def test_the_page_says_whether_the_order_holds_with_style_held_equal(
    tmp_path: Path, invoke: Any
) -> None:
    html, text = _page(tmp_path, invoke)
    report = orjson.loads((html.parent / "run" / "report.json").read_bytes())
    lines = report["style_control"]["lines"]
    assert lines, "the analysis gives style control in words"
    section = text[text.index('id="style-control"') :]
    section = section[: section.index('<p class="meta">')]
    for line in lines:
        assert line.strip() in unescape(section)


def test_the_page_lists_an_llm_judges_leaking_verdicts_as_the_two_sided_page_does(
    tmp_path: Path, invoke: Any
) -> None:
    from blindtest.present.page import render_report_page

    html, _ = _page(tmp_path, invoke)
    report = orjson.loads((html.parent / "run" / "report.json").read_bytes())
    report["llm_judges"] = {
        "judges": [
            {
                "judge": "llm:m",
                "model": "m",
                "comparisons": 4,
                "cost": None,
                "excluded": 1,
                "failures": 0,
                "low_confidence": 0,
                "requests": 8,
                "retries": 0,
                "still_failed": 0,
                "tokens": 800,
                "leakage": [{"trial": 3, "details": "names a model"}],
            }
        ]
    }
    page = unescape(render_report_page(report))
    section = page[page.index('id="llm-judges"') :]
    section = section[: section.index("</section>")]
    assert "Verdicts with identity leakage:" in section
    assert "<td>3</td><td>names a model</td>" in section
