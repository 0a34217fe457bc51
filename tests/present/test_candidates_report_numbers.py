"""How the several-candidate screen and page write their numbers: counts of resamples with
thousands separators, the reference as the anchor rather than a zero-width interval, a p-value
never rounded onto alpha, the pairs table within 80 columns, and the reveal's candidates in
the design's order."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from blindtest.analysis.preference_words import _pair_result
from blindtest.analysis.tells import _separated
from blindtest.present import render_preference
from blindtest.present.page import render_report_page
from blindtest.present.render import format_summary
from blindtest.rundir.types import DesignRecord, ReportRecord
from blindtest.stats.pairwise import Tally, pair_table
from blindtest.stats.ranking import _failed_words

from candidate_analysis_runs import candidate_run, candidate_schemas
from report_runs import read_report


@pytest.fixture(autouse=True)
def _schemas() -> Iterator[None]:
    with candidate_schemas():
        yield


def _report(tmp_path: Path, invoke: Any, **options: Any) -> ReportRecord:
    run = candidate_run(tmp_path, prompts=20, **options)
    result = invoke("analyze", run, "--quiet")
    assert result.exit_code == 0, result.output
    return cast(ReportRecord, read_report(run))


def test_the_count_of_resamples_is_grouped_on_screen_and_page(tmp_path: Path, invoke: Any) -> None:
    report = _report(tmp_path, invoke)
    stored = _failed_words(21, 2000, 0.95)
    assert stored is not None
    assert "of 2000 resamples" in stored  # report.json keeps it ungrouped
    report = copy.deepcopy(report)
    report["candidates"]["interval_problem"] = stored
    screen = "\n".join(render_preference.ranking_lines(report))
    assert "Intervals: in 21 of 2,000 resamples of prompts" in screen
    page = render_report_page(report)
    assert "in 21 of 2,000 resamples of prompts" in page
    assert "2000" not in screen


def test_the_appendix_after_the_reveal_follows_the_designs_order(
    tmp_path: Path, invoke: Any
) -> None:
    names = ("zeta", "alpha", "mid", "beta")
    strengths = {"zeta": 0.5, "alpha": 0.0, "mid": -0.3, "beta": 0.2}
    report = _report(tmp_path, invoke, names=names, strengths=strengths)
    assert list(report.get("appendix") or {}) == sorted(names)  # report.json sorts its keys
    lines = format_summary(report, per_trial=False, width=80).splitlines()
    start = lines.index("Appendix, after the reveal (latency was never shown to the judge):")
    assert [line.split()[0] for line in lines[start + 2 : start + 6]] == list(names)
    # Costs in the dollars the ranking uses: $0.00026, not $0.0003 (four decimals).
    report = copy.deepcopy(report)
    (report.get("appendix") or {})["zeta"]["cost"] = 0.000255
    (report.get("appendix") or {})["alpha"]["cost"] = 0.0107
    lines = format_summary(report, per_trial=False, width=80).splitlines()
    assert lines[start + 2].endswith(" $0.00026")
    assert lines[start + 3].endswith(" $0.011")
    page = render_report_page(report)
    appendix = page.split("Appendix, after the reveal")[1]
    assert re.search(r"<td[^>]*>\$0\.00026</td>", appendix)
    places = [re.search(rf"<td[^>]*>{name}</td>", appendix) for name in names]
    assert all(places)
    starts = [place.start() for place in places if place]
    assert starts == sorted(starts)


def test_the_reference_row_says_it_is_the_zero_not_a_zero_width_interval(
    tmp_path: Path, invoke: Any
) -> None:
    report = _report(tmp_path, invoke, mode="reference:alpha")
    section = report["candidates"]
    assert section["anchor"] == "alpha"
    alpha = next(r for r in section["ranking"] if r["candidate"] == "alpha")
    assert alpha["strength"] == {"estimate": 0.0, "lo": 0.0, "hi": 0.0}  # as stored
    lines = render_preference.ranking_lines(report)
    row = next(line for line in lines if re.match(r"\s*\d+\s+alpha\s", line))
    assert "(reference)" in row
    assert "0.00 to 0.00" not in row
    others = [line for line in lines if re.match(r"\s*\d+\s+(beta|gamma|delta)\s", line)]
    assert len(others) == 3
    assert all(" to " in line for line in others)  # the others keep their intervals
    page = render_report_page(report)
    assert "reference (0 by definition)" in page
    assert "+0.00 to +0.00" not in page
    assert "0.00 to 0.00" not in page
    assert "<td>alpha</td><td>0</td><td>the reference, 0 by definition</td>" in page


def test_a_p_below_alpha_is_never_printed_as_alpha_in_words_or_tables(
    tmp_path: Path, invoke: Any
) -> None:
    pairs = pair_table([Tally("a", "b", 42, 25, 0)])  # exact two-sided p = 0.04980...
    record = pairs.pairs[0]
    assert record.p_holm == pytest.approx(0.0498, abs=1e-4)
    assert record.significant
    assert _pair_result(record, "a", 0.05).endswith("adjusted p = 0.0498 < 0.05")
    # The tables on the screen and the page: a pair stored with such a p.
    report = _report(tmp_path, invoke)
    report = copy.deepcopy(report)
    row = report["candidates"]["pairs"]["pairs"][0]
    row.update(p_value=0.0166, p_holm=0.04980011429472864, significant=True, ahead=row["first"])
    lines = render_preference.ranking_lines(report)
    first = f"{row['first']} > {row['second']}"
    shown = next(line for line in lines if line.strip().startswith(first))
    assert shown.split()[-1] == "0.0498"
    page = render_report_page(report)
    assert re.search(r"<td[^>]*>0\.0498</td>", page)
    assert not re.search(r"<td[^>]*>0\.050</td>", page)


def test_the_pairs_table_fits_80_columns_with_long_names_and_every_pair_told_apart(
    tmp_path: Path, invoke: Any
) -> None:
    names = ("large", "small", "large-brief", "small-detailed")
    strengths = {"large": 1.5, "small": -1.0, "large-brief": -1.2, "small-detailed": 0.4}
    report = _report(tmp_path, invoke, names=names, strengths=strengths)
    report = copy.deepcopy(report)
    for row in report["candidates"]["pairs"]["pairs"]:  # the widest cells each column takes
        row.update(p_value=0.000001, p_holm=0.000008, significant=True, ahead=row["second"])
    screen = format_summary(report, per_trial=False, width=80)
    lines = screen.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("  first v second"))
    table = lines[start : start + 7]
    assert table[0].split() == ["first", "v", "second", "W-L-T", "win", "rate", "p", "adj.", "p"]
    assert len(table) == 7  # the head and six pairs
    assert any("large-brief < small-detailed" in line for line in table)
    assert all(" < " in line and line.endswith("0.000008") for line in table[1:])
    assert max(len(line) for line in table) <= 80


def test_the_length_tell_never_prints_a_separating_p_as_alpha() -> None:
    design = cast(DesignRecord, {"candidates": ["a", "b"], "alpha": 0.05})
    tells = {
        "a": {"longer": 20, "shorter": 5, "even": 0, "prompts": 25, "p_holm": 0.0498},
        "b": {"longer": 5, "shorter": 20, "even": 0, "prompts": 25, "p_holm": 0.0498},
    }
    words = _separated(design, tells)
    assert "a on 20 of 25 prompts (p = 0.0498 < 0.05)" in words
    assert "0.050" not in words
