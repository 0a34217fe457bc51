"""Every report states what it read and skipped, bots are not a panel, wording follows the numbers,
refusals and truncations are counted, the similarity sentence states its one-sided bound and p
against alpha, an audit of another design is not used, and the served model is disclosed."""

from __future__ import annotations

from pathlib import Path

import orjson

from blindtest.analysis.api import format_p_against
from blindtest.present.hints import stage_command
from blindtest.rundir import artifacts

from report_runs import (
    add_responses,
    cli,
    load,
    make_design,
    make_run,
    no_tells,
    read_report,
    triangle_picks,
    write_design_run,
    write_picks,
)
from screen_text import flat


def test_a_torn_last_pick_is_reported_and_the_void_line_says_why(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    path = write_picks(run / artifacts.PICKS, triangle_picks(load(run), 15))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 20])  # the 20th pick cut short mid-write
    result = cli("analyze", run)
    assert result.exit_code == 1
    assert result.stderr == (
        "void: 19 of 20 judged (the last pick, picks.jsonl line 20, was cut short when written "
        f"and was ignored); finish with:\n{stage_command('judge', run, '--judge-id', 'alice')}\n"
    )
    report = read_report(run)
    assert report["reading"]["picks"][0]["torn_line"] == 20
    assert "picks.jsonl line 20: an incomplete final line" in report["reading"]["skipped"][0]
    assert "trial 20 must be judged again" in report["statement"]


def test_a_torn_line_after_a_finished_run_is_said_on_screen(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    path = write_picks(run / artifacts.PICKS, triangle_picks(load(run), 15))
    path.write_bytes(path.read_bytes() + b'{"schema": "blindtest/picks@1", "tri')
    result = cli("analyze", run)
    assert result.exit_code == 0
    assert "Skipped: picks.jsonl line 21: an incomplete final line" in result.stdout
    assert read_report(run)["reading"]["picks"][0] == {
        "file": "picks.jsonl",
        "picks": 20,
        "judges": ["alice"],
        "torn_line": 21,
    }


def test_responses_cut_mid_file_make_the_run_incomplete(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    write_picks(run / artifacts.PICKS, triangle_picks(load(run), 15))
    lines = (run / artifacts.RESPONSES).read_bytes().splitlines(keepends=True)
    (run / artifacts.RESPONSES).write_bytes(b"".join(lines[:36]))
    result = cli("analyze", run)
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "bt-analyze: Incomplete run: responses.jsonl holds 36 of the 60 responses the design needs"
    )
    report = read_report(run)
    assert report["verdict"] == "incomplete"
    assert report["responses"]["complete"] is False
    assert "responses.jsonl (36 of 60 answered)" in flat(result.stdout)
    assert "The picks alone: You told them apart: 15 of 20 correct." in flat(result.stdout)
    assert "How big: the difference was visible on about" in flat(result.stdout)  # not a null bound


def test_two_bots_are_never_called_a_panel(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    for kind in ("length", "random"):
        out = run / f"picks-{kind}.jsonl"
        done = cli("judge", run, "--judge", f"bot:{kind}", "--out", out)
        assert done.exit_code == 0, done.stderr
    result = cli(
        "analyze", run, "--picks", run / "picks-length.jsonl", "--picks", run / "picks-random.jsonl"
    )
    statement = read_report(run)["statement"]
    assert statement.startswith("The 2 bots ")
    assert "panel" not in statement
    assert "panel" not in result.stdout.split("Technical")[0]


def test_a_judge_who_picked_as_the_length_bot_is_not_said_to_miss_length(
    tmp_path: Path,
) -> None:
    run = make_run(tmp_path)
    assert cli("audit", run).exit_code == 0
    audit = orjson.loads((run / artifacts.AUDIT).read_bytes())
    bot = audit["bots"]["length"]["picks"][:12]
    write_picks(
        run / artifacts.PICKS,
        [{"trial": p["trial"], "judge": "al", "pick": p["pick"]} for p in bot],
    )
    result = cli("analyze", run, "--reveal-void")
    sentences = " ".join(read_report(run)["audit"]["sentences"])
    assert "did not pick up" not in sentences
    assert "did not follow" not in sentences
    assert "the judge's picks were the bot's on 12 of 12 judged trials" in sentences
    assert "followed length" in result.stdout


def _refusing(slot, entry):  # type: ignore[no-untyped-def]
    return (
        "I can't help with that." if slot.side == "B" and slot.trial <= 4 else no_tells(slot, entry)
    )


def test_refusals_and_truncations_are_counted_per_side(tmp_path: Path) -> None:
    run = write_design_run(tmp_path, make_design("preference", 20))
    rows = add_responses(
        run,
        no_tells,
        finish_reason=lambda s: "length" if s.trial == 7 and s.side == "A" else "stop",
    )
    for row in rows:
        if row["side"] == "B" and row["trial"] <= 4:
            row["kind"] = "refusal"
    artifacts.write_jsonl(run / artifacts.RESPONSES, rows, "responses", force=True)
    write_picks(
        run / artifacts.PICKS,
        [{"trial": t, "judge": "al", "pick": "left", "reason": "x"} for t in range(1, 21)],
    )
    result = cli("analyze", run)
    summary = read_report(run)["responses"]
    assert summary["per_side"]["B"]["refusals"] == 4
    assert summary["per_side"]["A"]["truncated"] == 1
    assert summary["marked_trials"] == [1, 2, 3, 4, 7]
    assert (
        "Refusals and truncations, of the responses shown: A 0 refusals and 1 cut" in result.stdout
    )
    assert "In 5 trials (1, 2, 3, 4, 7) a refusal or a cut-off answer singled one side out" in (
        result.stdout
    )


def test_p_never_reads_as_failing_alpha_when_it_passes() -> None:
    assert format_p_against(0.0497, 0.05) == "p = 0.0497 < 0.05"
    assert format_p_against(0.0503, 0.05) == "p = 0.0503 > 0.05"
    assert format_p_against(0.19, 0.05) == "p = 0.19"
    assert format_p_against(0.012, 0.05) == "p = 0.012"
    assert format_p_against(0.05, 0.05) == "p = 0.05 <= 0.05"


def test_an_audit_of_another_design_is_not_used(tmp_path: Path) -> None:
    other = make_run(tmp_path, name="other", seed="another")
    assert cli("audit", other).exit_code == 0
    run = make_run(tmp_path)
    (run / artifacts.AUDIT).write_bytes((other / artifacts.AUDIT).read_bytes())
    write_picks(run / artifacts.PICKS, triangle_picks(load(run), 15))
    result = cli("analyze", run)
    report = read_report(run)
    assert report["audit"] is None
    assert report["reading"]["audit"]["used"] is False
    assert "Skipped: audit.json was recorded against design" in result.stdout
    assert "its figures are not used" in result.stdout
    assert "length bot" not in result.stdout


def test_a_served_model_other_than_the_requested_one_is_disclosed(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    rows = [orjson.loads(x) for x in (run / artifacts.RESPONSES).read_bytes().splitlines()]
    for row in rows:
        row["served_model"] = (
            "tiny-a" if row["side"] == "A" else ("b-v1" if row["trial"] < 10 else "b-v2")
        )
    artifacts.write_jsonl(run / artifacts.RESPONSES, rows, "responses", force=True)
    write_picks(run / artifacts.PICKS, triangle_picks(load(run), 15))
    result = cli("analyze", run)
    assert "Side A asked for model-a, but the server said every answer came from tiny-a" in flat(
        result.stdout
    )
    assert (
        "Side B asked for model-b; the server said the answers came from more than one model"
        in flat(result.stdout)
    )


def test_a_tie_rate_is_called_a_finding_only_when_there_are_many_ties(
    tmp_path: Path,
) -> None:
    from report_runs import balanced_outcomes, preference_picks

    run = write_design_run(tmp_path, make_design("preference", 20))
    design = load(run)
    write_picks(run / artifacts.PICKS, preference_picks(design, balanced_outcomes(design, 11, 9)))
    cli("analyze", run)
    assert "tie rate" not in read_report(run)["statement"]
    write_picks(run / artifacts.PICKS, preference_picks(design, balanced_outcomes(design, 7, 5)))
    cli("analyze", run, "--force")
    assert "The tie rate (40%) is itself a finding." in read_report(run)["statement"]
