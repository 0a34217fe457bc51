"""What a new user met on a first run, each said plainly: bidi control characters in a prompt
are warned about at design time, an overlong --seed is not echoed whole, --min-kappa outside
[-1, 1] is refused, a bare bt-analyze finds a panel's picks files (and one on a run it cannot
write says to use --out: tests/rundir/test_read_only_run.py), bt-verify checks a report
written outside the run, bt-judge while bt-generate holds the run says it is running, and no
help text speaks of a spec number."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from blindtest.rundir import artifacts

from conftest import Invoke, numbered_prompts
from judge_runs import make_run, write_picks

MODELS = ("--a", "model-a", "--b", "model-b")


def test_bidi_control_characters_in_a_prompt_are_warned_about_at_design_time(
    invoke: Invoke, tmp_path: Path
) -> None:
    prompts = numbered_prompts(20)
    prompts[3] = "Is this file safe? access = \u202e }\u2066 if (admin) \u2069 \u2066"
    path = tmp_path / "prompts.txt"
    path.write_text("\n".join(prompts) + "\n")
    result = invoke("design", tmp_path / "run", "--prompts", path, *MODELS, "--seed", "s")
    assert result.exit_code == 0, result.stderr
    said = " ".join(result.stderr.split())
    assert "holds bidi control characters (U+202E, U+2066, U+2069)" in said
    assert "judges see each as an escape such as \\u202e" in said


def test_an_overlong_seed_is_not_echoed_whole(invoke: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "prompts.txt"
    path.write_text("\n".join(numbered_prompts(20)) + "\n")
    seed = "x" * 5000
    result = invoke("design", tmp_path / "run", "--prompts", path, *MODELS, "--seed", seed)
    assert result.exit_code == 0, result.stderr
    assert seed not in result.stderr
    assert "seed xxxxxxxxxxxxxxxx... (5,000 characters)" in " ".join(result.stderr.split())
    design = orjson.loads((tmp_path / "run" / artifacts.DESIGN).read_bytes())
    assert design["seed"] == seed  # kept whole where it counts


@pytest.mark.parametrize("kappa", ["1.5", "-2"])
def test_a_min_kappa_outside_minus_one_to_one_is_refused(
    invoke: Invoke, tmp_path: Path, kappa: str
) -> None:
    run = make_run(tmp_path, "preference", 2)
    result = invoke("analyze", run, "--min-kappa", kappa)
    assert result.exit_code == 2
    assert "--min-kappa" in result.stderr
    assert "-1<=x<=1" in result.stderr.replace(" ", "")
    assert not (run / artifacts.REPORT).exists()


def _panel(run: Path, names: tuple[str, ...], trials: int) -> None:
    panel = {"reviewers": list(names), "per_judge": None, "order": "reviewer"}
    for name in names:
        write_picks(
            run / f"picks-{name}.jsonl",
            [
                {"schema": "blindtest/picks@1", "trial": t, "judge": name, "pick": "left",
                 "reason": "r", "judge_kind": "human", "panel": panel}
                for t in range(1, trials + 1)
            ],
        )  # fmt: skip


def test_a_bare_bt_analyze_finds_the_picks_files_of_a_panel(invoke: Invoke, tmp_path: Path) -> None:
    run = make_run(tmp_path, "preference", 4)
    _panel(run, ("ann", "ben"), 4)
    write_picks(run / "picks-bot.jsonl", [])  # not the panel's: never taken unasked
    result = invoke("analyze", run)
    assert result.exit_code in (0, 1), result.stderr
    assert "reading the panel's picks: picks-ann.jsonl, picks-ben.jsonl" in result.stderr
    report = orjson.loads((run / artifacts.REPORT).read_bytes())
    assert report["picks_files"] == ["picks-ann.jsonl", "picks-ben.jsonl"]
    assert report["judged"] == {"ann": 4, "ben": 4}


def test_bt_verify_checks_a_report_written_outside_the_run(invoke: Invoke, tmp_path: Path) -> None:
    from test_verify import build

    run = build(tmp_path / "made")
    outside = tmp_path / "reports" / "report-again.json"
    outside.parent.mkdir()
    made = invoke("analyze", run, "--out", outside, "--quiet")
    assert made.exit_code == 0, made.stderr
    checked = invoke("verify", run, "--report", outside)
    assert checked.exit_code == 0, checked.output
    assert f"checked  {outside} from its inputs" in checked.stdout
    report = orjson.loads(outside.read_bytes())
    report["n"] += 1
    outside.write_bytes(orjson.dumps(report))
    tampered = invoke("verify", run, "--report", outside)
    assert tampered.exit_code == 1
    assert f"DIFFERS  {outside}/n: " in tampered.stdout


def test_bt_judge_while_bt_generate_holds_the_run_says_it_is_running(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = make_run(tmp_path, "preference", 2)
    (run / artifacts.TRIALS).unlink()  # generation has not written the trials yet
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from pathlib import Path; from blindtest.rundir.locking import run_lock\n"
         f"with run_lock(Path({str(run)!r}), 'bt-generate'):\n"
         "    print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        result = invoke("judge", run, "--judge", "bot:length")
    finally:
        holder.communicate("")
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())
    assert f"{run} is still being written by process {holder.pid} (bt-generate)" in said
    assert "wait for it to finish, then run bt-judge again" in said
    after = invoke("judge", run, "--judge", "bot:length")
    assert "not found; run bt-generate" in after.stderr  # nobody holds it: the usual words


@pytest.mark.parametrize(
    "stage", ["design", "generate", "judge", "audit", "analyze", "verify", "plan", "run"]
)
def test_no_help_text_speaks_of_a_spec_number(invoke: Invoke, stage: str) -> None:
    result = invoke(stage, "--help")
    assert result.exit_code == 0
    assert "spec 0" not in result.output


def test_the_makefile_help_speaks_of_no_spec_number() -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    root = Path(__file__).resolve().parents[2]
    shown = subprocess.run([make, "-s", "help"], cwd=root, capture_output=True, text=True)
    assert "spec 0" not in shown.stdout
