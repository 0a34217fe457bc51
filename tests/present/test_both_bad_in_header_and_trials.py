"""A comparison whose only word was "both bad" (an abstention: no outcome) is counted in the
header with its prompt and said there, and is listed, marked, among the trials on the screen
and on the report page, so that a reader can open the answers called bad."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from blindtest.rundir import artifacts

from report_runs import balanced_outcomes, cli, load, make_run, preference_picks, write_picks


def _both_bad_run(
    tmp_path: Path, said: tuple[int, ...] = (1,)
) -> tuple[str, str, dict[str, Any], dict[int, str]]:
    """20 comparisons on 20 prompts judged by alice, "both bad" on the trials ``said``: the
    screen, the page, the report and each trial's prompt."""
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
    prompts = {int(e["trial"]): str(e["prompt_id"]) for e in load(run)["arrangement"]}
    return result.stdout, page.read_text(), dict(report), prompts


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_header_counts_a_comparison_judged_only_both_bad_with_its_prompt(
    tmp_path: Path,
) -> None:
    screen, page, report, _ = _both_bad_run(tmp_path, said=(1, 2))
    # Was "20 comparisons on 18 prompts": the two prompts with no outcome left out.
    assert "20 comparisons on 20 prompts (2 judged both bad)" in _flat(screen)
    assert "20 comparisons on 20 prompts (2 judged both bad)" in _flat(page)
    assert (report["candidates"]["prompts_planned"], report["candidates"]["prompts"]) == (20, 18)


def test_a_trial_judged_both_bad_is_listed_and_marked_on_the_screen(tmp_path: Path) -> None:
    screen, _, report, prompts = _both_bad_run(tmp_path)
    (word,) = report["abstentions"]["listed"]
    assert word["prompt_id"] == prompts[1]
    listed = screen.split("Revealed, per trial:", 1)[1]
    rows = [line.split() for line in listed.splitlines() if line.strip()]
    # Was absent: the list held only picks, so trial 1 (called bad) could not be found there.
    assert [row[:8] for row in rows if row[0] == "1"] == [
        ["1", prompts[1], "alice", word["left"], word["right"], "both", "bad", "neither"]
    ]
    assert "both ramble" in listed
    assert len([row for row in rows if row[0].isdigit()]) == 20


def test_a_trial_judged_both_bad_opens_on_the_page_to_its_answers(tmp_path: Path) -> None:
    _, page, _, _ = _both_bad_run(tmp_path)
    found = re.search(r'<details class="trial" id="trial-1">(.*?)</details>', page, re.S)
    # Was absent: no trial-1 on the page, so the answers called bad could not be opened.
    assert found is not None
    opened = _flat(found.group(1))
    assert "trial 1: alice said both bad" in opened
    assert "<td>both bad</td>" in opened
    assert "Reason: both ramble" in opened
    assert 'class="prompt"' in opened
