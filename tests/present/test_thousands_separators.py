"""Counts of four digits and more read with thousands separators wherever they are printed
(resamples, tokens, requests) on the screen, the page and bt-judge's closing line, while the
lines report.json stores keep their bytes (the screen groups them as it prints)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from blindtest.analysis.load import analyze_run
from blindtest.present.page import render_report_page
from blindtest.present.render import format_summary
from blindtest.reportfmt import count_grouped, group_counts, grouped
from blindtest.rundir.types import ReportRecord
from blindtest.simulator import Simulator

from candidate_analysis_runs import candidate_run, candidate_schemas
from endpoint_fixtures import SIM_KEY_ENV, simulator  # noqa: F401  (the fixture)
from llm_runs import llm, make_run, records

STORED = "  120 requests (0 retries), 0 failure rows (0 trials still unjudged), 55980 tokens"


def test_counts_are_grouped_and_stored_lines_regrouped_for_the_screen() -> None:
    assert grouped(55980) == "55,980"
    assert grouped(None) == "-"
    assert count_grouped(1, "token") == "1 token"
    assert count_grouped(12000, "request") == "12,000 requests"
    assert group_counts(STORED) == (
        "  120 requests (0 retries), 0 failure rows (0 trials still unjudged), 55,980 tokens"
    )
    assert group_counts("1200 requests, 2000 resamples, $1234 tokens, 0.12345 tokens") == (
        "1,200 requests, 2,000 resamples, $1234 tokens, 0.12345 tokens"
    )
    assert group_counts("trial 12345 of 20000 trials") == "trial 12345 of 20000 trials"


@pytest.fixture
def report(tmp_path: Path) -> Iterator[ReportRecord]:
    with candidate_schemas():
        run = candidate_run(tmp_path, prompts=10)
        found = cast(dict[str, Any], analyze_run(run, []).report)
        found["llm_judges"] = {
            "lines": ["LLM judge sim-judge-fair (60 comparisons judged):", STORED],
            "judges": [],
            "gates": [],
        }
        found["appendix"] = {
            "alpha": {
                "model": "model-alpha",
                "responses": 10,
                "mean_latency_ms": 8.0,
                "prompt_tokens": 1750,
                "completion_tokens": 74700,
                "cost": None,
            }
        }
        yield cast(ReportRecord, found)


def test_the_candidates_screen_groups_resamples_and_tokens(report: ReportRecord) -> None:
    assert (report["llm_judges"] or {})["lines"][1] == STORED  # report.json keeps its bytes
    screen = format_summary(report)
    assert "(2,000 resamples;" in screen
    assert "2000 resamples" not in screen
    assert "55,980 tokens" in screen
    assert "55980" not in screen
    assert "1,750+74,700" in screen


def test_the_candidates_page_groups_resamples_and_tokens(report: ReportRecord) -> None:
    page = render_report_page(report)
    assert "Bootstrap: 2,000 resamples of the prompts" in page
    assert '<td data-label="prompt tokens">1,750</td>' in page
    assert '<td data-label="completion tokens">74,700</td>' in page


def test_bt_judge_closing_line_groups_the_tokens(
    invoke: Any,
    simulator: Simulator,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(SIM_KEY_ENV, "sk-test")
    run = make_run(invoke, simulator.base_url, tmp_path / "pref", "preference")
    result = llm(invoke, run, "sim-judge-fair", url=simulator.base_url)
    assert result.exit_code == 0, result.output
    used = sum(
        int(r["tokens"]["prompt"]) + int(r["tokens"]["completion"])
        for r in records(run / "picks.jsonl")
        if r.get("tokens")
    )
    assert used >= 1000  # otherwise there is nothing to group
    said = " ".join((result.stdout + result.stderr).split())
    assert f"{used:,} tokens" in said, said
    assert not re.search(r"\d{4} tokens", said)
