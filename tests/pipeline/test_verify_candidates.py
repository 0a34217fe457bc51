"""bt-verify recomputes a several-candidate report: the ranking's bootstrap over prompts is
seeded from the design, so the recomputed report.json is the same, byte for byte, and a pick
changed after the analysis shows up as a difference."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blindtest.analysis.api import analyze_run
from blindtest.pipeline.recompute import verify_reports, verify_run
from blindtest.rundir import artifacts

from candidate_analysis_runs import SCHEMAS_KNOW_CANDIDATES, candidate_run, candidate_schemas


@pytest.fixture(autouse=True)
def _schemas() -> Iterator[None]:
    with candidate_schemas():
        yield


def _analysed(root: Path, invoke: Any, **options: Any) -> Path:
    run = candidate_run(root, prompts=12, **options)
    result = invoke("analyze", run, "--quiet")
    assert result.exit_code == 0, result.output
    return run


def test_the_report_recomputes_byte_for_byte(tmp_path: Path, invoke: Any) -> None:
    run = _analysed(tmp_path, invoke)
    recomputed = analyze_run(run, [])
    assert artifacts.dump_json(recomputed.report) == (run / "report.json").read_bytes()
    found = verify_reports(run)
    assert found.differences == []
    assert "report.json from its inputs" in found.checked


def test_a_reference_run_recomputes_too(tmp_path: Path, invoke: Any) -> None:
    run = _analysed(tmp_path, invoke, mode="reference:alpha")
    assert verify_reports(run).differences == []


def test_a_tampered_pick_is_a_difference_in_the_ranking(tmp_path: Path, invoke: Any) -> None:
    run = _analysed(tmp_path, invoke)
    path = run / "picks.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    record = artifacts.read_jsonl(path, "picks").records[0]
    flipped = {"left": "right", "right": "left", "tie": "left"}[record["pick"]]
    lines[0] = artifacts.dump_line({**record, "pick": flipped})
    path.write_bytes(b"".join(lines))
    found = verify_reports(run)
    where = [d.where for d in found.differences]
    # The first differences (named in sorted order, up to 20) are the ranking's own figures.
    assert "report.json/candidates/differences/0/difference/estimate" in where
    assert not found.ok


def test_an_edited_strength_is_a_difference(tmp_path: Path, invoke: Any) -> None:
    run = _analysed(tmp_path, invoke)
    report = artifacts.read_json(run / "report.json", "report")
    report["candidates"]["ranking"][0]["strength"]["hi"] += 0.01
    artifacts.write_json(run / "report.json", report, "report", force=True)
    found = verify_reports(run)
    assert [d.where for d in found.differences] == ["report.json/candidates/ranking/0/strength/hi"]


@pytest.mark.skipif(
    not SCHEMAS_KNOW_CANDIDATES,
    reason="the whole-run check needs the design and generation parts for candidates",
)
def test_bt_verify_passes_a_whole_candidate_run(tmp_path: Path, invoke: Any) -> None:
    run = _analysed(tmp_path, invoke)
    found = verify_run(run)
    assert found.differences == []
    assert "report.json from its inputs" in found.checked
