"""bt-audit says what it did not see, and shows no score unless asked."""

from __future__ import annotations

from pathlib import Path

from blindtest.rundir import artifacts

from report_runs import cli, make_run


def test_audit_of_a_cut_responses_file_says_how_many_slots_it_left_out(
    tmp_path: Path,
) -> None:
    run = make_run(tmp_path)
    path = run / artifacts.RESPONSES
    rows = artifacts.read_jsonl(path, "responses").records
    kept = rows[: len(rows) // 2]
    path.write_bytes(b"".join(artifacts.dump_line(row) for row in kept))
    result = cli("audit", run)
    assert result.exit_code == 0, result.stderr
    document = artifacts.read_json(run / artifacts.AUDIT, "audit")
    missing = len(rows) - len(kept)
    assert (document["responses_seen"], document["responses_missing"]) == (len(kept), missing)
    assert (
        f"responses.jsonl answers {len(kept)} of {len(rows)} slots: the census and checks "
        f"leave {missing} out" in result.stderr
    )


def test_audit_of_a_whole_run_misses_nothing(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    result = cli("audit", run)
    assert result.exit_code == 0, result.stderr
    assert artifacts.read_json(run / artifacts.AUDIT, "audit")["responses_missing"] == 0
    assert "slots" not in result.stderr


def test_audit_prints_no_bot_score_or_census_unless_shown(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    quiet_about_sides = cli("audit", run)
    assert quiet_about_sides.exit_code == 0, quiet_about_sides.stderr
    assert "bot:" not in quiet_about_sides.stderr
    assert "words" not in quiet_about_sides.stderr
    assert "model-a" not in quiet_about_sides.stderr
    shown = cli("audit", run, "--show", "--force")
    assert shown.exit_code == 0, shown.stderr
    assert "length bot: " in shown.stderr
    assert "(model-a)" in shown.stderr
