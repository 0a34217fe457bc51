"""When some candidates never lost to others the maximum-likelihood estimate does not exist:
Firth's penalised fit gives the strengths, and the screen and the page say so in words, with
the reason once and profile intervals (no bootstrap, so no count of resamples). Only data no
fit can put on one scale (every comparison a tie) say "not estimable", with the reason once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blindtest.rundir import artifacts

from candidate_analysis_runs import candidate_run, candidate_schemas
from report_runs import write_picks

#: alpha and beta far above gamma and delta: every meeting across the gap is a win.
APART = {"alpha": 40.0, "beta": 40.0, "gamma": -40.0, "delta": -40.0}
FIRTH = "a penalised fit (Firth), since {alpha, beta} never lost to {gamma, delta}"


@pytest.fixture(autouse=True)
def _schemas() -> Iterator[None]:
    with candidate_schemas():
        yield


@pytest.fixture
def separated(tmp_path: Path, invoke: Any) -> tuple[str, str, dict[str, Any]]:
    run = candidate_run(tmp_path, prompts=10, strengths=APART)
    html = tmp_path / "report.html"
    result = invoke("analyze", run, "--brief", "--html", html, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    report = artifacts.read_json(run / "report.json", "report")
    section = report["candidates"]
    assert section["problem"] is None
    assert section["fit"] == "firth penalised likelihood"
    assert section["fit_reason"].startswith("{alpha, beta} never lost to {gamma, delta}")
    return str(result.output), html.read_text(encoding="utf-8"), section


def test_the_screen_names_firths_fit_and_why_once(
    separated: tuple[str, str, dict[str, Any]],
) -> None:
    screen, _, section = separated
    flat = " ".join(screen.split())
    assert flat.count(FIRTH) == 1
    assert "not estimable" not in flat
    assert "resamples" not in flat
    assert "95% interval from the profile penalised likelihood (Firth's fit;" in flat
    rows = [line for line in screen.splitlines() if line[:8].strip() in ("1", "2", "3", "4")]
    assert len(rows) == 4
    assert all("unbounded" not in row for row in rows)
    assert {r["candidate"] for r in section["ranking"][:2]} == {"alpha", "beta"}
    assert set(section["best"]) == {"alpha", "beta"}


def test_the_page_names_firths_fit_and_why_once(
    separated: tuple[str, str, dict[str, Any]],
) -> None:
    _, page, _ = separated
    assert page.count(FIRTH) == 1
    assert "not estimable" not in page
    assert "resamples" not in page
    ranking = page[page.index('<section id="ranking">') :]
    ranking = ranking[: ranking.index("</section>")]
    assert "profile penalised likelihood (Firth&#39;s fit" in ranking


@pytest.fixture
def ties_only(tmp_path: Path, invoke: Any) -> tuple[str, str, str]:
    run = candidate_run(tmp_path, prompts=10)
    picks = artifacts.read_jsonl(run / artifacts.PICKS, "picks").records
    write_picks(run / artifacts.PICKS, [{**p, "pick": "tie"} for p in picks])
    html = tmp_path / "report.html"
    result = invoke("analyze", run, "--brief", "--html", html, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    report = artifacts.read_json(run / "report.json", "report")
    problem = report["candidates"]["problem"]
    assert problem is not None
    assert report["candidates"]["fit"] is None
    return str(result.output), html.read_text(encoding="utf-8"), str(problem)


def test_the_screen_says_not_estimable_and_the_reason_once(
    ties_only: tuple[str, str, str],
) -> None:
    screen, _, problem = ties_only
    flat = " ".join(screen.split())
    assert flat.count(" ".join(problem.split())) == 1
    assert "Ranking: strengths not estimable (the reason is above), so no interval and no " in flat
    assert "resamples" not in flat
    assert "unbounded" not in flat
    rows = [line for line in screen.splitlines() if line.startswith("  -     ")]
    assert len(rows) == 4
    assert all("not estimable" in row for row in rows)
    # The separations still stand without a fit: no candidate is shown ahead of another.
    assert "No candidate is shown ahead of any other: the best could be any of the 4" in flat


def test_the_page_says_not_estimable_and_the_reason_once(
    ties_only: tuple[str, str, str],
) -> None:
    _, page, problem = ties_only
    assert page.count(problem) == 1
    assert "Strengths not estimable: the reason is given above." in page
    assert "resamples" not in page
    ranking = page[page.index('<section id="ranking">') :]
    ranking = ranking[: ranking.index("</section>")]
    assert ranking.count('<td data-label="strength">not estimable</td>') == 4
