"""A comparison whose only word was "both bad" (an abstention: no outcome) is counted in the
header with its prompt and said there, and is listed, marked, among the trials on the screen
and on the report page, so that a reader can open the answers called bad."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from blindtest.rundir import artifacts

from report_runs import balanced_outcomes, cli, load, make_run, preference_picks, write_picks


def _both_bad_run(tmp_path: Path, said: tuple[int, ...] = (1,)) -> tuple[str, str, dict[str, Any]]:
    """20 comparisons on 20 prompts judged by alice, "both bad" on the trials ``said``: the
    screen, the page and the report."""
    run = make_run(tmp_path, "preference", 20)
    picks = preference_picks(load(run), balanced_outcomes(load(run), 11, 5))
    write_picks(
        run / artifacts.PICKS,
        [{**p, "pick": "both_bad", "reason": "both ramble"} if p["trial"] in said else p
         for p in picks],
    )  # fmt: skip
    page = tmp_path / "page.html"
    result = cli("analyze", run, "--html", page)
    assert result.exit_code == 0, result.output
    report = artifacts.read_json(run / artifacts.REPORT, "report")
    return result.stdout, page.read_text(), dict(report)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_header_counts_a_comparison_judged_only_both_bad_with_its_prompt(
    tmp_path: Path,
) -> None:
    screen, page, report = _both_bad_run(tmp_path, said=(1, 2))
    # Was "20 comparisons on 18 prompts": the two prompts with no outcome left out.
    assert "20 comparisons on 20 prompts (2 judged both bad)" in _flat(screen)
    assert "20 comparisons on 20 prompts (2 judged both bad)" in _flat(page)
    assert (report["candidates"]["prompts_planned"], report["candidates"]["prompts"]) == (20, 18)
