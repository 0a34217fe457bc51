"""The length tell of a several-candidate run, as the screen, the page and the audit's sentence
say it: per candidate (there is no side A), every candidate length separates named (the longer
and the shorter ones), each with its count of prompts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from blindtest.analysis.load import analyze_run
from blindtest.analysis.tells import audit_summary
from blindtest.present.page import render_report_page
from blindtest.present.render import format_summary
from blindtest.rundir.types import ReportRecord

from candidate_analysis_runs import candidate_design, candidate_run, candidate_schemas

NAMES = ("large", "small", "large-brief", "small-detailed")


@pytest.fixture(autouse=True)
def _schemas() -> Iterator[None]:
    with candidate_schemas():
        yield


def tell(longer: int, shorter: int, even: int, p_holm: float | None) -> dict[str, Any]:
    return {
        "prompts": longer + shorter + even,
        "longer": longer,
        "shorter": shorter,
        "even": even,
        "comparisons": 3 * (longer + shorter),
        "preferred": 3 * longer,
        "p_value": p_holm,
        "p_holm": p_holm,
    }


#: Two longer on every prompt, two shorter, as the four simulator candidates were; listed
#: in an order other than the design's (audit.json's keys are sorted).
SEPARATED = {
    "large": tell(10, 0, 0, 0.0078125),
    "large-brief": tell(0, 10, 0, 0.0078125),
    "small": tell(0, 10, 0, 0.0078125),
    "small-detailed": tell(10, 0, 0, 0.0078125),
}


def _audit(tells: dict[str, Any], trials: int) -> dict[str, Any]:
    top = min((t for t in tells.values() if t["p_holm"] is not None), key=lambda t: t["p_holm"])
    return {
        "candidates": list(NAMES),
        "census": {},
        "checks": None,
        "bots": {
            "length": {
                "picks": [{"trial": t, "pick": "left"} for t in range(1, trials + 1)],
                "n": top["longer"] + top["shorter"],
                "correct": top["longer"],
                "p_value": top["p_holm"],
                "per_candidate": tells,
            }
        },
    }


def _summary(tells: dict[str, Any]) -> dict[str, Any]:
    design = candidate_design(NAMES, prompts=10)
    trials = design["trials"]
    # The judge follows the longer answer on half the comparisons: not a length preference.
    per_trial = [{"trial": t, "pick": "left" if t % 2 else "right"} for t in range(1, trials + 1)]
    found = audit_summary(
        design, _audit(tells, trials), {"judges": ["ana"], "per_trial": per_trial}
    )
    assert found is not None
    return found


def test_the_sentence_names_every_candidate_length_separates_longer_and_shorter() -> None:
    sentence = " ".join(_summary(SEPARATED)["sentences"])
    assert sentence.startswith("Length separates 4 candidates from those they met")
    assert (
        "the longer answer came from large on 10 of 10 prompts (p = 0.0078) and small-detailed "
        "on 10 of 10 prompts (p = 0.0078); the shorter answer came from small on 10 of 10 "
        "prompts (p = 0.0078) and large-brief on 10 of 10 prompts (p = 0.0078)"
    ) in sentence  # in the design's order, not audit.json's
    assert "the judge preferred the longer response in only" in sentence


def test_only_the_candidates_length_separates_are_named_and_nouns_are_counted() -> None:
    tells = {
        "large": tell(1, 0, 9, 0.04),
        "small": tell(3, 2, 5, 1.0),
        "large-brief": tell(0, 0, 10, None),
        "small-detailed": tell(2, 3, 5, 1.0),
    }
    sentence = " ".join(_summary(tells)["sentences"])
    assert sentence.startswith(
        "Length separates 1 candidate from those it met (prompt by prompt, each candidate's "
        "answer against its opponents'; Holm-adjusted across the candidates): the longer "
        "answer came from large on 1 of 1 prompt (p = 0.040), and the judge"
    )
    assert "shorter" not in sentence.split(", and the judge")[0]
    for name in ("small", "large-brief", "small-detailed"):
        assert f"from {name} " not in sentence
        assert f"and {name} " not in sentence


def _report(tmp_path: Path) -> ReportRecord:
    """A four-candidate run's report with the audit's summary of the length tell above."""
    strengths = dict(zip(NAMES, (1.0, -1.0, -0.5, 0.5), strict=True))
    run = candidate_run(tmp_path, names=NAMES, prompts=10, strengths=strengths)
    found = cast(dict[str, Any], analyze_run(run, []).report)
    found["audit"] = {
        "bots": {"length": {"n": 10, "correct": 10, "p_value": 0.0078125}},
        "sentences": [],
        "length_by_candidate": SEPARATED,
    }
    return cast(ReportRecord, found)


def test_the_screen_gives_the_length_tell_per_candidate_not_for_a_side_a(
    tmp_path: Path,
) -> None:
    screen = format_summary(_report(tmp_path), width=80)
    assert "A's answer" not in screen
    block = screen[screen.index("What a bot can explain") :]
    assert "length, prompt by prompt: on how many prompts each candidate's answer" in block
    rows = re.findall(r"^    (\S+) +(\d+) +(\d+) +(\d+) +(\d+) +(\S+)$", block, re.MULTILINE)
    assert rows == [
        ("large", "10", "0", "0", "10", "0.0078"),
        ("small", "0", "10", "0", "10", "0.0078"),
        ("large-brief", "0", "10", "0", "10", "0.0078"),
        ("small-detailed", "10", "0", "0", "10", "0.0078"),
    ]


def test_the_page_gives_the_length_tell_per_candidate(tmp_path: Path) -> None:
    page = render_report_page(_report(tmp_path))
    bots = page[page.index('<section id="bots">') :]
    bots = bots[: bots.index("</section>")]
    assert "s answer was the longer in" not in bots
    assert "<th>longer</th><th>shorter</th><th>even</th>" in bots
    assert (
        '<td data-label="candidate">small-detailed</td><td data-label="longer">10</td>'
        '<td data-label="shorter">0</td><td data-label="even">0</td>'
        '<td data-label="prompts">10</td>'
    ) in bots
