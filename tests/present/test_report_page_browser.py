"""``bt-analyze RUN --html FILE``, one self-contained page with inline SVG
charts, opened in Chromium with the network off."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blindtest.designing.build import Normalization
from blindtest.rundir import artifacts

from judge_runs import answer_key, make_run, write_picks
from web_page import chromium, screenshot

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def _open_offline(browser: Any, path: Path, viewport: dict[str, int]) -> Any:
    context = browser.new_context(viewport=viewport, offline=True)
    page = context.new_page()
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url))
    dialogs: list[str] = []
    page.on("dialog", lambda d: _dismiss(d, dialogs))
    page.goto(path.as_uri())
    page.fetched, page.dialogs = fetched, dialogs
    return page


def test_example_report_opens_offline_and_shows_every_chart(
    tmp_path: Path, browser: Any, invoke: Any
) -> None:
    run = tmp_path / "run"
    shutil.copytree(ROOT / "examples" / "run", run)
    html = tmp_path / "report.html"
    result = invoke("analyze", run, "--html", html, "--force")
    assert result.exit_code == 0, result.output
    text = html.read_text()
    assert '<meta name="generator" content="blindtest' in text
    assert "<script" not in text
    # Nothing to fetch: no attribute names a URL (the sides' base_url is shown as text).
    assert not re.search(r"""(src|href|url)\s*[=(]\s*["']?\s*(https?:|//)""", text)
    assert artifacts.artifact_kind(html) == "html"  # the output guard still knows our page
    page = _open_offline(browser, html, {"width": 1100, "height": 900})
    screenshot(page, "report-wide")
    for chart in ("chart-pc", "chart-pd", "chart-dprime", "chart-census"):
        svg = page.locator(f"#{chart} svg")
        assert svg.count() == 1, chart
        box = svg.bounding_box()
        assert box["width"] > 200
        assert box["height"] > 40
    assert page.locator("#chart-pc text", has_text="bot: length").count() == 1  # bots beside
    assert "16 of 20 correct" in page.inner_text("#verdict")
    assert "Cost: A $0.00079" in page.inner_text("#cost")
    assert page.locator("details.trial").count() == 20
    page.locator("#trial-1 summary").click()
    assert page.locator("#trial-1 .option").count() == 3
    assert page.fetched == [html.as_uri()]  # nothing else was requested
    narrow = _open_offline(browser, html, {"width": 390, "height": 844})
    screenshot(narrow, "report-narrow")
    assert narrow.evaluate("document.documentElement.scrollWidth") <= 390
    page.emulate_media(media="print")
    assert page.locator("#chart-pc svg").is_visible()


def _pdf_pages(pdf: bytes) -> int:
    return len(re.findall(rb"/Type /Page\b", pdf))


def test_printing_the_report_prints_every_trial_as_if_opened(
    tmp_path: Path, browser: Any, invoke: Any
) -> None:
    run = tmp_path / "run"
    shutil.copytree(ROOT / "examples" / "run", run)
    html = tmp_path / "report.html"
    assert invoke("analyze", run, "--html", html, "--force").exit_code == 0
    page = _open_offline(browser, html, {"width": 1100, "height": 900})
    prompt = " ".join(page.locator("#trial-1 .prompt p").first.text_content().split())
    assert prompt == "Why do databases keep a write-ahead log?"
    # On screen each trial is a closed row: its prompt and options are not shown.
    assert not page.locator("#trial-1 .option").first.is_visible()
    assert " ".join(page.inner_text("#trial-1").split()) == page.inner_text("#trial-1 summary")
    page.emulate_media(media="print")
    assert (
        page.evaluate("[...document.querySelectorAll('details.trial')].some(d => d.open)") is False
    )
    for trial in (1, 20):
        assert page.locator(f"#trial-{trial} .option").count() == 3
        for option in page.locator(f"#trial-{trial} .option").all():
            assert option.is_visible()
            assert option.bounding_box()["height"] > 20
    printed = " ".join(page.inner_text("#trial-1").split())
    assert prompt in printed
    assert "Option 3" in printed
    assert "odd_model" in printed  # the revealed table prints too
    # The printout (Chromium's own PDF) is the one a reader gets by opening every trial.
    closed = page.pdf()
    page.evaluate("document.querySelectorAll('details.trial').forEach(d => { d.open = true; })")
    opened = page.pdf()
    page.evaluate("document.querySelectorAll('details.trial').forEach(d => { d.open = false; })")
    page.evaluate("document.getElementById('trials').remove()")
    without_trials = page.pdf()
    assert _pdf_pages(closed) == _pdf_pages(opened)
    assert _pdf_pages(closed) > _pdf_pages(without_trials) + 10  # 20 trials' texts


def test_a_panel_report_draws_a_forest_plot_and_agreement(
    tmp_path: Path, browser: Any, invoke: Any
) -> None:
    run = make_run(tmp_path)
    key = answer_key(run)
    files = []
    for name, wrong_every in (("alice", 2), ("bob", 3), ("carol", 5)):
        lines = [
            {
                "trial": e["trial"],
                "judge": name,
                "pick": e["odd_position"]
                if e["trial"] % wrong_every
                else e["odd_position"] % 3 + 1,
            }
            for e in key
        ]
        files += ["--picks", write_picks(run / f"picks-{name}.jsonl", lines)]
    html = tmp_path / "panel.html"
    result = invoke("analyze", run, *files, "--html", html)
    assert result.exit_code == 0, result.output
    page = _open_offline(browser, html, {"width": 1100, "height": 900})
    screenshot(page, "report-panel-wide")
    labels = page.locator("#chart-pc svg text.label").all_text_contents()
    assert labels == ["judge alice", "judge bob", "judge carol", "pooled"]
    assert "Reviewers agreeing" in page.inner_text("#agreement")


def test_response_payloads_in_the_report_stay_text(
    tmp_path: Path, browser: Any, invoke: Any
) -> None:
    payload = "<script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3))"
    run = make_run(
        tmp_path,
        trials=3,
        texts=lambda t, e: [f"{payload} {i}" for i in range(3)],
        normalization=Normalization(),
    )
    lines = [{"trial": e["trial"], "judge": "amy", "pick": 1} for e in answer_key(run)]
    write_picks(run / artifacts.PICKS, lines)
    html = tmp_path / "x.html"
    result = invoke("analyze", run, "--html", html)
    assert html.exists(), result.output
    page = _open_offline(browser, html, {"width": 1000, "height": 800})
    for details in page.locator("details.trial").all():
        details.evaluate("e => e.open = true")
    assert "<script>alert(1)</script>" in page.inner_text("#trial-1")
    assert page.locator("#trials img, #trials script, a[href^='javascript']").count() == 0
    assert page.dialogs == []


def test_a_sequential_report_draws_the_e_value_path_against_one_over_alpha(
    tmp_path: Path, browser: Any, invoke: Any
) -> None:
    run = make_run(tmp_path, trials=40, sequential=True)
    assert invoke("judge", run, "--judge", "bot:length").exit_code == 0
    html = tmp_path / "seq.html"
    result = invoke("analyze", run, "--picks", run / "picks.jsonl", "--html", html)
    assert result.exit_code == 0, result.output
    page = _open_offline(browser, html, {"width": 1000, "height": 800})
    screenshot(page, "report-sequential")
    assert page.locator("#chart-evalues svg polyline").count() == 1
    assert "1/alpha = 20" in page.locator("#chart-evalues svg").text_content()
    assert page.fetched == [html.as_uri()]


def test_bt_plan_html_draws_the_power_curves(tmp_path: Path, browser: Any, invoke: Any) -> None:
    html = tmp_path / "power.html"
    result = invoke(
        "plan", "--trials", "10,60", "--pc", "0.5,0.6,0.7", "--target-power", "0.8", "--html", html
    )
    assert result.exit_code == 0, result.output
    assert "reject at" in result.output  # the table still goes to the terminal
    assert artifacts.artifact_kind(html) == "html"
    page = _open_offline(browser, html, {"width": 900, "height": 800})
    screenshot(page, "plan-power")
    assert page.locator("#chart-power svg polyline").count() == 3
    labels = page.locator("#chart-power svg text").all_text_contents()
    assert {"pc 0.5", "pc 0.6", "pc 0.7", "target 80%"} <= set(labels)
    assert page.fetched == [html.as_uri()]
    other = tmp_path / "notes.html"
    other.write_text("<p>mine</p>")
    refused = invoke("plan", "--html", other)
    assert refused.exit_code == 2
    assert other.read_text() == "<p>mine</p>"


def _dismiss(dialog: Any, seen: list[str]) -> None:
    """A dialog must never open: note its message and close it, so the test can fail on it."""
    seen.append(dialog.message)
    dialog.dismiss()
