"""Float trial numbers, end of input, bots never
pooled with people, picks from another design, and the small things of 10.24
(a BOM, judge ids with control characters, pick 4, plurals)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from blindtest.errors import BadInput
from blindtest.model.picks import load_judge_run, read_picks
from blindtest.present.hints import stage_command
from blindtest.rundir import artifacts
from blindtest.rundir.artifacts.validation import _registry

from judge_runs import make_run, picks_of, write_picks

Invoke = Callable[..., Result]


def pick(trial: Any, value: Any = 1, judge: str = "alice", **extra: Any) -> dict[str, Any]:
    return {"trial": trial, "judge": judge, "pick": value, **extra}


def one_line_error(result: Result, code: int = 2) -> str:
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "internal error" not in result.stderr
    return result.stderr


# ---------------------------------------------------------------------------


def test_float_trial_number_refused_by_check_and_schema(tmp_path: Path, invoke: Invoke) -> None:
    run_dir = make_run(tmp_path, trials=3)
    path = write_picks(tmp_path / "p.jsonl", [pick(1), pick(2)])
    path.write_bytes(
        path.read_bytes() + b'{"schema":"blindtest/picks@1","trial":3.0,"judge":"alice","pick":1}\n'
    )
    error = one_line_error(invoke("judge", run_dir, "--check", path))
    assert "p.jsonl:3: trial 3.0 must be a whole number written without a decimal point" in error
    # The schema says integer, and says how it must be written.
    trial_number: Any = artifacts.validator("picks").schema  # loaded through the registry
    assert trial_number["properties"]["trial"]["$ref"].endswith("/$defs/trialNumber")
    common = _registry().contents("https://blindtest.invalid/schemas/common.schema.json")
    assert common["$defs"]["trialNumber"]["type"] == "integer"
    assert "3.0" in common["$defs"]["trialNumber"]["description"]
    # A pick of 2.0 is no position either (true and 2.5 are refused by the schema).
    other = write_picks(tmp_path / "q.jsonl", [pick(1, 2.0)])
    error = one_line_error(invoke("judge", run_dir, "--check", other))
    assert "pick 2.0 is out of range for a triangle run (1, 2 or 3)" in error


def test_analyze_and_verify_refuse_a_float_trial_without_crashing(
    tmp_path: Path, invoke: Invoke
) -> None:
    run_dir = make_run(tmp_path, trials=3)
    assert invoke("judge", run_dir, "--judge", "bot:length", "-q").exit_code == 0
    assert invoke("analyze", run_dir).exit_code in (0, 1)
    picks = run_dir / "picks.jsonl"
    picks.write_bytes(picks.read_bytes().replace(b'"trial":3', b'"trial":3.0'))
    for command in ("analyze", "verify"):
        result = invoke(command, run_dir)
        assert result.exit_code in (1, 2), result.stderr
        assert "internal error" not in result.stderr
        assert "Traceback" not in result.stderr


# ---------------------------------------------------------------------------


def test_end_of_stdin_exits_2_with_one_line_naming_the_command(
    tmp_path: Path, invoke: Invoke
) -> None:
    run_dir = make_run(tmp_path, trials=4)
    out = tmp_path / "alice.jsonl"
    result = invoke("judge", run_dir, "--judge-id", "alice", "--out", out, input="1\n")
    error = one_line_error(result)
    resume = stage_command("judge", run_dir, "--judge-id", "alice", "--out", out)
    assert error == (
        "blindtest: error: stdin closed before the session finished; 1 pick kept; "
        f"rerun {resume} in a terminal to continue\n"
    )
    assert len(picks_of(out)) == 1
    guide = (Path(__file__).parents[2] / "docs" / "judging.md").read_text()
    assert "stdin closed before the session finished" in guide


# ---------------------------------------------------------------------------


def test_every_pick_blindtest_writes_names_its_judge_kind_and_design(
    tmp_path: Path, invoke: Invoke
) -> None:
    run_dir = make_run(tmp_path, trials=2)
    digest = load_judge_run(run_dir).design_sha256
    assert invoke("judge", run_dir, "--judge", "bot:random", "-q").exit_code == 0
    assert (
        invoke(
            "judge", run_dir, "--judge-id", "al", "--out", tmp_path / "h.jsonl", input="1\n2\n"
        ).exit_code
        == 0
    )
    bots = picks_of(run_dir / "picks.jsonl")
    people = picks_of(tmp_path / "h.jsonl")
    assert {(p["judge_kind"], p["design_sha256"]) for p in bots} == {("bot", digest)}
    assert {(p["judge_kind"], p["design_sha256"]) for p in people} == {("human", digest)}


def test_a_persons_picks_never_go_into_a_file_holding_a_bots(
    tmp_path: Path, invoke: Invoke
) -> None:
    run_dir = make_run(tmp_path, trials=3)
    assert invoke("judge", run_dir, "--judge", "bot:length", "-q").exit_code == 0
    before = (run_dir / "picks.jsonl").read_bytes()
    error = one_line_error(invoke("judge", run_dir, "--judge-id", "alice", input="1\n"))
    assert f"{run_dir / 'picks.jsonl'} holds a bot's picks (bot:length)" in error
    assert "use --out FILE for judge 'alice'" in error
    assert (run_dir / "picks.jsonl").read_bytes() == before

    human = tmp_path / "alice.jsonl"
    write_picks(human, [pick(1)])
    error = one_line_error(
        invoke("judge", run_dir, "--judge", "bot:random", "--out", human, "--force")
    )
    assert "holds a person's picks (alice); a bot's picks never go into the same file" in error


def test_analysis_refuses_bots_pooled_with_people(tmp_path: Path, invoke: Invoke) -> None:
    run_dir = make_run(tmp_path, trials=3)
    mixed = write_picks(
        run_dir / "picks.jsonl",
        [pick(1, judge="bot:length", judge_kind="bot"), pick(1, judge="alice")],
    )
    error = one_line_error(invoke("analyze", run_dir))
    assert (
        "picks.jsonl mixes a bot (bot:length) with a person (alice); bots are never pooled "
        "with people: analyze them separately with --picks"
    ) in error
    assert not (run_dir / "report.json").exists()
    # An old file without judge_kind: a bot field marks a bot, the rest are external judges.
    write_picks(mixed, [pick(1, judge="length", bot={"name": "length"}), pick(1, judge="x")])
    assert "mixes a bot (length) with a person (x)" in one_line_error(invoke("analyze", run_dir))
    # Two files together are one analysis too.
    bots = write_picks(
        tmp_path / "b.jsonl", [pick(t, judge="bot:length", judge_kind="bot") for t in (1, 2, 3)]
    )
    people = write_picks(tmp_path / "h.jsonl", [pick(t, judge="bob") for t in (1, 2, 3)])
    error = one_line_error(invoke("analyze", run_dir, "--picks", bots, "--picks", people))
    assert "the picks files together mix a bot (bot:length) with a person (bob)" in error


def test_several_bots_or_several_people_remain_allowed(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, trials=2)
    view = load_judge_run(run_dir).view
    bots = write_picks(
        tmp_path / "b.jsonl",
        [pick(1, judge="bot:length", judge_kind="bot"), pick(1, judge="old", bot={})],
    )
    assert read_picks(bots, view).judges == ("bot:length", "old")
    people = write_picks(
        tmp_path / "p.jsonl",
        [
            pick(1, judge="alice", judge_kind="human"),
            pick(1, judge="ext"),
            pick(2, judge="c", judge_kind="external"),
        ],
    )
    assert read_picks(people, view).judges == ("alice", "ext", "c")
    assert {p.kind for p in read_picks(people, view).picks} == {"human", "external"}


# --------------------------------------------------------------------------- corrections


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([pick(1, correction=True)], "a correction by judge 'alice' for trial 1, which that"),
        ([pick(1), pick(1, 2)], "second pick by judge 'alice' for trial 1 .*correction"),
    ],
)
def test_a_correction_needs_an_earlier_pick_and_a_second_pick_needs_a_correction(
    tmp_path: Path, lines: list[dict[str, Any]], message: str
) -> None:
    view = load_judge_run(make_run(tmp_path, trials=2)).view
    with pytest.raises(BadInput, match=message):
        read_picks(write_picks(tmp_path / "p.jsonl", lines), view)


def test_reading_picks_uses_the_judges_last_word(tmp_path: Path, invoke: Invoke) -> None:
    run_dir = make_run(tmp_path, trials=2)
    path = write_picks(
        tmp_path / "p.jsonl",
        [pick(1, 1), pick(2, 2), pick(1, 3, correction=True), pick(1, 2, correction=True)],
    )
    read = read_picks(path, load_judge_run(run_dir).view)
    assert [(p.trial, p.pick, p.line) for p in read.picks] == [(1, 2, 4), (2, 2, 2)]
    assert read.corrections == 2
    result = invoke("judge", run_dir, "--check", path)
    assert result.exit_code == 0
    assert "2 picks by 1 judge (alice), 2 corrections applied, valid" in result.stdout


# ---------------------------------------------------------------------------


def test_picks_made_against_another_design_are_refused(tmp_path: Path, invoke: Invoke) -> None:
    first = make_run(tmp_path, trials=2, name="first")
    other = make_run(tmp_path, trials=2, name="other", question="Which differs?")
    assert invoke("judge", first, "--judge", "bot:length", "-q").exit_code == 0
    copied = other / "picks.jsonl"
    copied.write_bytes((first / "picks.jsonl").read_bytes())
    ours = load_judge_run(other).design_sha256
    theirs = load_judge_run(first).design_sha256
    assert ours != theirs
    for args in (("judge", other, "--check", copied), ("analyze", other)):
        error = one_line_error(invoke(*args))
        assert f"made against design {theirs[:12]}, not this run's design {ours[:12]}" in error
    # External files without the field remain accepted.
    write_picks(copied, [pick(1), pick(2)])
    assert invoke("judge", other, "--check", copied).exit_code == 0


# ---------------------------------------------------------------------------


def test_a_picks_file_with_a_bom_is_accepted(tmp_path: Path, invoke: Invoke) -> None:
    run_dir = make_run(tmp_path, trials=2)
    path = write_picks(tmp_path / "p.jsonl", [pick(1), pick(2)])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    result = invoke("judge", run_dir, "--check", path)
    assert result.exit_code == 0, result.stderr
    assert "2 picks by 1 judge (alice)" in result.stdout


@pytest.mark.parametrize("name", ["ali\nce", "bob\x1b[31m", "tab\there", "zw\u200bj", " "])
def test_a_judge_id_with_control_characters_is_refused(
    tmp_path: Path, invoke: Invoke, name: str
) -> None:
    run_dir = make_run(tmp_path, trials=2)
    path = write_picks(tmp_path / "p.jsonl", [pick(1, judge=name)])
    error = one_line_error(invoke("judge", run_dir, "--check", path))
    assert "p.jsonl:1: " in error
    assert "judge id" in error
    result = invoke(
        "judge", run_dir, "--judge-id", name, "--out", tmp_path / "o.jsonl", input="1\n2\n"
    )
    if name.strip():
        assert "--judge-id: judge id" in one_line_error(result)
        assert not (tmp_path / "o.jsonl").exists()


def test_pick_4_in_a_triangle_gets_the_clear_message(tmp_path: Path, invoke: Invoke) -> None:
    run_dir = make_run(tmp_path, trials=2)
    error = one_line_error(
        invoke("judge", run_dir, "--check", write_picks(tmp_path / "p.jsonl", [pick(1, 4)]))
    )
    assert error.endswith("p.jsonl:1: /pick: 4 is not one of [1, 2, 3]\n")
    assert "valid under any of the given schemas" not in error
    pref = make_run(tmp_path, "preference", 2, name="pref")
    error = one_line_error(
        invoke("judge", pref, "--check", write_picks(tmp_path / "q.jsonl", [pick(1, "2")]))
    )
    assert error.endswith(
        "q.jsonl:1: pick '2' is out of range for a preference run (left, right, tie or both_bad)\n"
    )


def test_check_counts_read_in_plain_english(tmp_path: Path, invoke: Invoke) -> None:
    run_dir = make_run(tmp_path, trials=2)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    result = invoke("judge", run_dir, "--check", empty)
    assert result.exit_code == 0
    assert f"{empty}: 0 picks, valid for triangle design" in result.stdout
    assert "judge(s)" not in result.stdout
    one = write_picks(tmp_path / "one.jsonl", [pick(1)])
    assert (
        "one.jsonl: 1 pick by 1 judge (alice), valid"
        in invoke("judge", run_dir, "--check", one).stdout
    )
    two = write_picks(tmp_path / "two.jsonl", [pick(1), pick(1, judge="bob")])
    assert (
        "two.jsonl: 2 picks by 2 judges (alice, bob), valid"
        in invoke("judge", run_dir, "--check", two).stdout
    )
