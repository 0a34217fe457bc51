"""Bt-verify passes only a whole run, checks every pick's
design hash, and lists the torn lines it skipped."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from blindtest.rundir import artifacts

from report_runs import cli, load, make_run, triangle_picks, write_picks


@pytest.fixture
def whole(tmp_path: Path) -> Path:
    run = make_run(tmp_path, "triangle", 12)
    write_picks(run / artifacts.PICKS, triangle_picks(load(run), 9))
    for stage in (("audit", run), ("analyze", run, "--quiet")):
        assert cli(*stage).exit_code == 0
    assert cli("verify", run).exit_code == 0
    return run


def test_partial_responses_and_missing_trials_are_incomplete_not_verified(
    whole: Path,
) -> None:
    rows = (whole / artifacts.RESPONSES).read_bytes().splitlines(keepends=True)
    assert len(rows) == 36
    (whole / artifacts.RESPONSES).write_bytes(b"".join(rows[:20]))
    (whole / artifacts.TRIALS).unlink()
    result = cli("verify", whole)
    assert result.exit_code == 1
    assert "verified: everything recomputes" not in result.stdout
    assert result.stdout.splitlines()[-1].startswith(
        "incomplete: 20 of 36 responses, trials.jsonl missing; a run with missing parts "
        "cannot be verified; finish with: "
    )
    assert "generate" in result.stdout.splitlines()[-1]


def test_incomplete_run_in_json_and_quiet(whole: Path) -> None:
    (whole / artifacts.TRIALS).unlink()
    document = orjson.loads(cli("verify", whole, "--json").stdout)
    assert (document["ok"], document["complete"]) == (False, False)
    assert document["missing"] == ["trials.jsonl missing"]
    quiet = cli("verify", whole, "-q")
    assert quiet.exit_code == 1
    assert quiet.stdout == ""
    assert "incomplete: trials.jsonl missing" in quiet.stderr


def test_missing_responses_file_is_incomplete(whole: Path) -> None:
    (whole / artifacts.RESPONSES).unlink()
    result = cli("verify", whole)
    assert result.exit_code == 1
    assert "incomplete: 0 of 36 responses (responses.jsonl missing)" in result.stdout


def test_torn_final_pick_is_reported_as_skipped(whole: Path) -> None:
    with (whole / artifacts.PICKS).open("ab") as picks:
        picks.write(b'{"trial": 10, "judge": "al')
    assert cli("analyze", whole, "--quiet", "--force").exit_code == 0
    result = cli("verify", whole)
    assert result.exit_code == 0, result.stdout
    assert (
        "SKIPPED  picks.jsonl line 13: torn final line (an interrupted write), skipped as "
        "every stage skips it"
    ) in result.stdout.splitlines()
    document = orjson.loads(cli("verify", whole, "--json").stdout)
    assert document["skipped"] == [
        "picks.jsonl line 13: torn final line (an interrupted write), skipped as every stage "
        "skips it"
    ]


def test_a_pick_made_against_another_design_is_a_difference(whole: Path) -> None:
    picks = [orjson.loads(line) for line in (whole / artifacts.PICKS).read_bytes().splitlines()]
    digest = artifacts.read_design_hash(whole)
    for pick in picks:
        pick["design_sha256"] = digest
    picks[3]["design_sha256"] = "0" * 64
    write_picks(whole / artifacts.PICKS, picks)
    result = cli("verify", whole)
    assert result.exit_code == 1
    assert f'DIFFERS  picks.jsonl:4/design_sha256: recorded "{"0" * 64}", recomputed' in (
        result.stdout
    )


def test_picks_carrying_this_designs_hash_verify(whole: Path) -> None:
    picks = [orjson.loads(line) for line in (whole / artifacts.PICKS).read_bytes().splitlines()]
    digest = artifacts.read_design_hash(whole)
    for pick in picks:
        pick["design_sha256"] = digest
    write_picks(whole / artifacts.PICKS, picks)
    assert cli("analyze", whole, "--quiet", "--force").exit_code == 0
    result = cli("verify", whole)
    assert result.exit_code == 0, result.stdout
    assert "checked  picks.jsonl against the design hash" in result.stdout


def test_a_report_whose_picks_file_is_gone_is_a_difference(whole: Path, tmp_path: Path) -> None:
    outside = tmp_path / "alice.jsonl"
    shutil.copy(whole / artifacts.PICKS, outside)
    out = whole / "report-alice.json"
    assert cli("analyze", whole, "--picks", outside, "--out", out, "--quiet").exit_code == 0
    assert cli("verify", whole).exit_code == 0
    outside.unlink()
    result = cli("verify", whole)
    assert result.exit_code == 1
    assert "DIFFERS  report-alice.json/picks_files" in result.stdout
    assert "missing: the report's input is gone" in result.stdout


def test_a_reports_picks_file_outside_the_glob_is_checked_too(whole: Path, tmp_path: Path) -> None:
    picks = [orjson.loads(line) for line in (whole / artifacts.PICKS).read_bytes().splitlines()]
    outside = tmp_path / "copied-from-another-run.jsonl"
    write_picks(outside, picks)
    out = whole / "report-copied.json"
    analyzed = cli("analyze", whole, "--picks", outside, "--out", out, "--quiet")
    assert analyzed.exit_code == 0, analyzed.stderr
    # Afterwards the file outside the run is replaced by picks made against another design:
    # bt-analyze would refuse them now, and bt-verify must say so for the report built on it.
    for pick in picks:
        pick["design_sha256"] = "f" * 64
    write_picks(outside, picks)
    refused = cli("analyze", whole, "--picks", outside, "--out", out, "--quiet")
    assert refused.exit_code == 2
    result = cli("verify", whole)
    assert result.exit_code == 1
    assert f"DIFFERS  {outside}:1/design_sha256" in result.stdout
    assert "report-copied.json not recomputed: its picks already differ" in result.stdout
