"""A way out of a trial that cannot be answered: bt-design warns of a prompt too large to be
asked, and ``bt-design NEW --from RUN --drop-trial N`` makes a design without that trial that
reuses every answer RUN fetched (no request made twice, counted by the simulator), records
where it came from, and whose report says which trials were dropped and why; bt-verify
accepts it. Bad input is one line, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.simulator import Simulator

from conftest import Invoke, files_in, numbered_prompts
from generate_runs import make_design, rows

HUGE = "Summarise this: " + "word " * 420_000  # 2.1 MB: the simulator answers 413 (> 1 MiB)


def stuck_run(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, *extra: str, trials: int = 10
) -> Path:
    """A preference run whose trial with prompt p003 fails with HTTP 413 on every rerun."""
    prompts = numbered_prompts(10)
    prompts[2] = HUGE
    run = tmp_path / "run"
    make_design(
        invoke,
        run,
        simulator,
        tmp_path,
        "--protocol",
        "preference",
        *extra,
        trials=trials,
        prompts=prompts,
    )
    for _ in range(2):  # a rerun meets the same 413
        assert invoke("generate", run, "--quiet").exit_code == 3
    return run


def rows_of(path: Path, key: str) -> list[Any]:
    return list(orjson.loads(path.read_bytes())[key])


def stuck_trial(run: Path) -> int:
    design = orjson.loads((run / "design.json").read_bytes())
    return int(next(e["trial"] for e in design["arrangement"] if e["prompt_id"] == "p003"))


def test_bt_design_warns_of_a_prompt_over_1_mib_and_still_writes_the_design(
    invoke: Invoke, tmp_path: Path, prompts_file: Any
) -> None:
    path = prompts_file([*numbered_prompts(5), HUGE])
    result = invoke(
        "design", tmp_path / "run", "--prompts", path, "--a", "m1", "--b", "m2",
        "--protocol", "preference", "--trials", 6, "--seed", "s",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1
    assert warning[0].startswith("warning: prompt p006 is 2.1 MB (~")
    assert "HTTP 413" in warning[0]
    assert "bt-design NEW --from RUN --drop-trial N" in warning[0]
    assert (tmp_path / "run" / "design.json").exists()
    small = invoke(
        "design", tmp_path / "small", "--prompts", prompts_file(numbered_prompts(6)),
        "--a", "m1", "--b", "m2", "--protocol", "preference", "--trials", 6, "--seed", "s",
    )  # fmt: skip
    assert "warning:" not in small.stderr


def test_dropping_the_stuck_trial_reuses_every_answer_and_the_report_says_why(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = stuck_run(invoke, tmp_path, simulator)
    stuck = stuck_trial(run)
    answered = [r for r in rows(run) if r["status"] == "ok"]
    assert len(answered) == 18  # the 9 other trials, two slots each
    new = tmp_path / "new"
    made = invoke("design", new, "--from", run, "--drop-trial", stuck)
    assert made.exit_code == 0, made.output
    assert f"dropped trial {stuck} (prompt p003): " in made.stderr
    assert "HTTP 413" in made.stderr  # the reason: the trial's last failure in RUN
    design = orjson.loads((new / "design.json").read_bytes())
    origin = design["derived_from"]
    assert origin["design_sha256"] == (run / "design.sha256").read_text().strip()
    assert origin["trials"] == 10
    assert origin["run"] == str(run.absolute())
    assert [d["trial"] for d in origin["dropped"]] == [stuck]
    assert design["trials"] == 9
    assert [e["trial"] for e in design["arrangement"]] == list(range(1, 10))

    simulator.reset()
    generated = invoke("generate", new)
    assert generated.exit_code == 0, generated.output
    assert len(simulator.requests) == 0  # none paid twice
    assert f"reused 18 answers from {run.absolute()}" in generated.stderr
    copied = rows(new)
    assert len(copied) == 18
    shas = {(r["reused_from"]["trial"], r["slot"]): r["request_sha256"] for r in copied}
    assert shas == {(r["trial"], r["slot"]): r["request_sha256"] for r in answered}
    assert {r["text"] for r in copied} == {r["text"] for r in answered}

    assert invoke("judge", new, "--judge", "bot:length", "--quiet").exit_code == 0
    analyzed = invoke("analyze", new, "--html", tmp_path / "report.html")
    assert analyzed.exit_code in (0, 1), analyzed.output
    screen = " ".join(analyzed.stdout.split())
    assert f"DROPPED TRIAL: this design is the one of {run.absolute()}" in screen
    assert f"without 1 of its 10 trials, numbered there: trial {stuck} (prompt p003): " in screen
    assert "(prompt p003): the prompt is too long for the server (HTTP 413: " in screen
    report = orjson.loads((new / "report.json").read_bytes())
    assert report["dropped_trials"] == origin["dropped"]
    assert "HTTP 413" in report["dropped_trials"][0]["reason"]
    assert "DROPPED TRIAL: this design" in (tmp_path / "report.html").read_text()
    verified = invoke("verify", new)
    assert verified.exit_code == 0, verified.output


def test_a_reason_given_is_recorded_and_a_second_derivation_still_reuses_and_verifies(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = stuck_run(invoke, tmp_path, simulator, "--controls", "2", trials=8)
    stuck = stuck_trial(run)
    first = tmp_path / "first"
    made = invoke(
        "design", first, "--from", run, "--drop-trial", stuck, "--drop-reason", "too long"
    )
    assert made.exit_code == 0, made.output
    assert invoke("generate", first, "--quiet").exit_code == 0
    # then one more trial left out, numbered as in the derived design
    second = tmp_path / "second"
    assert invoke("design", second, "--from", first, "--drop-trial", 1).exit_code == 0
    design = orjson.loads((second / "design.json").read_bytes())
    dropped = design["derived_from"]["dropped"]
    assert dropped[0] == {"trial": stuck, "prompt_id": "p003", "reason": "too long"}
    assert dropped[1]["trial"] == (1 if stuck != 1 else 2)  # numbered as in the first design
    assert design["derived_from"]["trials"] == len(rows_of(run / "design.json", "arrangement"))
    assert design["derived_from"]["controls"] == 2
    simulator.reset()
    assert invoke("generate", second, "--quiet").exit_code == 0
    assert len(simulator.requests) == 0
    assert invoke("judge", second, "--judge", "bot:length", "--quiet").exit_code == 0
    assert invoke("analyze", second, "--quiet").exit_code in (0, 1)
    verified = invoke("verify", second)
    assert verified.exit_code == 0, verified.output


def test_an_edited_derived_arrangement_does_not_verify(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = stuck_run(invoke, tmp_path, simulator)
    new = tmp_path / "new"
    assert invoke("design", new, "--from", run, "--drop-trial", stuck_trial(run)).exit_code == 0
    path = new / "design.json"
    design = orjson.loads(path.read_bytes())
    design["derived_from"]["dropped"][0]["trial"] = 1 if stuck_trial(run) != 1 else 2
    data = orjson.dumps(design, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    path.write_bytes(data)
    import hashlib

    (new / "design.sha256").write_text(hashlib.sha256(data).hexdigest() + "\n")
    result = invoke("verify", new)
    assert result.exit_code == 1
    assert "design.json/arrangement" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--drop-trial", 99), "--drop-trial 99: the design in "),
        (("--drop-trial", 2, "--drop-trial", 2), "--drop-trial 2: given twice"),
        (("--drop-trial", 1, "--trials", 4), "give only --drop-trial and --drop-reason with it, "),
        (("--drop-trial", 1, "--drop-reason", "a", "--drop-reason", "b", "--drop-reason", "c"),
         "--drop-reason: give one (for every dropped trial) or one per --drop-trial"),
        ((), "--from: give the trials to leave out with --drop-trial N"),
    ],
)  # fmt: skip
def test_bad_derivations_say_one_line_exit_2_and_write_nothing(
    invoke: Invoke, tmp_path: Path, args: tuple[Any, ...], message: str
) -> None:
    run = tmp_path / "run"
    made = invoke("design", run, "--demo", "--a", "m1", "--b", "m2", "--trials", 6, "--seed", "s")
    assert made.exit_code == 0
    before = files_in(run)
    result = invoke("design", tmp_path / "new", "--from", run, *args)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr
    assert not (tmp_path / "new").exists()
    assert files_in(run) == before


def test_from_a_directory_without_a_design_or_into_one_that_exists_is_refused(
    invoke: Invoke, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = invoke("design", tmp_path / "new", "--from", empty, "--drop-trial", 1)
    assert result.exit_code == 2
    assert (
        result.stderr
        == f"blindtest: error: --from {empty}: no design.json there; give a run directory\n"
    )
    assert not (tmp_path / "new").exists()
    run = tmp_path / "run"
    assert invoke("design", run, "--demo", "--a", "m1", "--b", "m2", "--seed", "s").exit_code == 0
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    result = invoke("design", taken, "--from", run, "--drop-trial", 1)
    assert result.exit_code == 2
    assert "already exists; give a new directory" in result.stderr
    assert files_in(taken) == ["notes.txt"]
    lone = invoke("design", tmp_path / "lone", "--drop-trial", 1, "--demo")
    assert lone.exit_code == 2
    assert "go with --from RUN" in lone.stderr
    assert not (tmp_path / "lone").exists()


def test_rerunning_the_same_derivation_changes_nothing(invoke: Invoke, tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert invoke("design", run, "--demo", "--a", "m1", "--b", "m2", "--seed", "s").exit_code == 0
    new = tmp_path / "new"
    assert invoke("design", new, "--from", run, "--drop-trial", 3).exit_code == 0
    before = (new / "design.json").read_bytes(), (new / "design.json").stat().st_mtime_ns
    again = invoke("design", new, "--from", run, "--drop-trial", 3)
    assert again.exit_code == 0, again.output
    after = (new / "design.json").read_bytes(), (new / "design.json").stat().st_mtime_ns
    assert after == before
