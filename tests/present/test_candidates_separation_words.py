"""When some candidates never lost to others the strengths have no finite estimate: the screen
and the page say "not estimable" in the ranking's header and table, show no bootstrap (none
ran: no resample count), and give the reason once, in the headline."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blindtest.rundir import artifacts

from candidate_analysis_runs import candidate_run, candidate_schemas

#: alpha and beta far above gamma and delta: every meeting across the gap is a win.
APART = {"alpha": 40.0, "beta": 40.0, "gamma": -40.0, "delta": -40.0}


@pytest.fixture(autouse=True)
def _schemas() -> Iterator[None]:
    with candidate_schemas():
        yield


@pytest.fixture
def separated(tmp_path: Path, invoke: Any) -> tuple[str, str, str]:
    run = candidate_run(tmp_path, prompts=10, strengths=APART)
    html = tmp_path / "report.html"
    result = invoke("analyze", run, "--brief", "--html", html, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    report = artifacts.read_json(run / "report.json", "report")
    problem = report["candidates"]["problem"]
    assert problem is not None
    assert "no finite estimate" in problem
    return str(result.output), html.read_text(encoding="utf-8"), str(problem)


def test_the_screen_says_not_estimable_and_the_reason_once(
    separated: tuple[str, str, str],
) -> None:
    screen, _, problem = separated
    flat = " ".join(screen.split())
    assert flat.count(" ".join(problem.split())) == 1
    assert "No strengths" not in flat
    assert "Ranking: strengths not estimable (the reason is above), so no interval and no " in flat
    assert "resamples" not in flat
    assert "unbounded" not in flat
    rows = [line for line in screen.splitlines() if line.startswith("  -     ")]
    assert len(rows) == 4
    assert all("not estimable" in row for row in rows)


def test_the_page_says_not_estimable_and_the_reason_once(
    separated: tuple[str, str, str],
) -> None:
    _, page, problem = separated
    assert page.count(problem) == 1
    assert "No strengths:" not in page
    assert "Strengths not estimable: the reason is given above." in page
    assert "resamples" not in page
    ranking = page[page.index('<section id="ranking">') :]
    ranking = ranking[: ranking.index("</section>")]
    assert ranking.count('<td data-label="strength">not estimable</td>') == 4
