"""`blindtest run` and the demo resume a run
directory whose design matches, refuse one that does not (naming the first difference) or that
holds anything else, never delete anything, and end through the one error mapper."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke, files_in


def run_args(simulator: Simulator, *extra: object) -> list[object]:
    url = simulator.base_url
    return [
        "run", "sim-large", "sim-small", "--demo", "--a-url", url, "--b-url", url,
        "--trials", 6, *extra,
    ]  # fmt: skip


def snapshot(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(run.iterdir())}


def demo(run: Path | str, *, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("BLINDTEST_DEBUG", "MAKELEVEL")}
    return subprocess.run(
        [sys.executable, "-m", "blindtest.cli.demo", str(run)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=environment,
        cwd=cwd,
        check=False,
    )


# ---------------------------------------------------------------------------


def test_the_same_run_command_again_resumes_and_changes_nothing(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    args = run_args(simulator, "--judge", "bot:length", "--run-dir", run)
    first = invoke(*args)
    assert first.exit_code == 0, first.stderr
    before = {k: v for k, v in snapshot(run).items() if k != artifacts.AUDIT}
    requests = len(simulator.requests)
    again = invoke(*args)
    assert again.exit_code == 0, again.stderr
    assert "already exists" not in again.stderr
    assert "of 6 correct" in again.stdout  # the result again, from the same picks
    after = snapshot(run)
    for name in (artifacts.DESIGN, artifacts.RESPONSES, artifacts.TRIALS, artifacts.PICKS):
        assert after[name] == before[name], name
    assert len(simulator.requests) == requests  # nothing fetched twice
    assert invoke("verify", run).exit_code == 0


def test_a_different_design_is_refused_naming_the_first_difference(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    assert invoke(*run_args(simulator, "--judge", "bot:length", "--run-dir", run)).exit_code == 0
    before = snapshot(run)
    url = simulator.base_url
    other = invoke(
        "run", "sim-large", "sim-small", "--demo", "--a-url", url, "--b-url", url,
        "--trials", 9, "--judge", "bot:length", "--run-dir", run,
    )  # fmt: skip
    assert other.exit_code == 2
    assert other.stderr == (
        f"blindtest: error: {run / artifacts.DESIGN} differs: trials is 6, the command asks "
        "for 9; resume it with the options that made it, or give another --run-dir\n"
    )
    seeded = invoke(*run_args(simulator, "--judge", "bot:length", "--run-dir", run, "--seed", "x"))
    assert seeded.exit_code == 2
    assert "differs: seed is " in seeded.stderr
    assert snapshot(run) == before


def test_without_run_dir_an_unfinished_run_prints_the_command_that_resumes_it(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # A person judges two trials and stops (q, y): the chain stops and says how to go on.
    stopped = invoke(*run_args(simulator), input="\n1\n2\nq\ny\n")
    assert stopped.exit_code == 0, stopped.stderr
    folders = [p.name for p in tmp_path.iterdir()]
    assert len(folders) == 1
    assert folders[0].startswith("blindtest-run-")
    last = stopped.stderr.strip().splitlines()[-1]
    assert last.startswith("2 of 6 judged; continue with: ")
    command = last.removeprefix("2 of 6 judged; continue with: ")
    words = shlex.split(command)
    assert words[-2:] == ["--run-dir", folders[0]]
    assert Path(words[0]).name in ("blindtest", "python")
    # The printed command, run as printed (here in-process), continues the same folder.
    rest = words[words.index("run") :]
    finished = invoke(*rest, input="\n" + "1\n" * 4)
    assert finished.exit_code == 0, finished.stderr
    assert [p.name for p in tmp_path.iterdir()] == folders
    report = artifacts.read_json(tmp_path / folders[0] / artifacts.REPORT, "report")
    assert report["n"] == 6


def test_run_whose_input_ends_exits_2_with_the_resume_command(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    # End of input is not Ctrl-C (130): it is its own ending, exit 2 with the way to go on.
    run = tmp_path / "run"
    ended = invoke(*run_args(simulator, "--run-dir", run), input="\n1\n")  # input ends
    assert ended.exit_code == 2
    assert "Traceback" not in ended.stderr
    last = ended.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "blindtest: error: stdin closed before the session finished; everything done so far "
        "is kept; continue with: "
    )
    assert last.endswith(f"--run-dir {run}")
    assert len(artifacts.read_jsonl(run / artifacts.PICKS, "picks").records) == 1


# ---------------------------------------------------------------------------


def test_demo_refuses_a_folder_holding_other_files_and_deletes_nothing(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "thesis"
    folder.mkdir()
    (folder / "notes.txt").write_text("my notes\n")
    (folder / "thesis.tex").write_text("\\begin{document}\n")
    done = demo(folder)
    assert done.returncode == 2, done.stderr
    assert "holds notes.txt, which is not part of a blindtest demo run" in done.stderr
    assert files_in(folder) == ["notes.txt", "thesis.tex"]
    assert (folder / "notes.txt").read_text() == "my notes\n"


def test_demo_refuses_another_design_naming_the_difference(invoke: Invoke, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    assert invoke("design", folder, "--demo", "--seed", "mine").exit_code == 0
    before = snapshot(folder)
    done = demo(folder)
    assert done.returncode == 2, done.stderr
    assert "holds a different design (" in done.stderr
    assert snapshot(folder) == before


def test_a_judged_demo_is_never_wiped_and_a_rerun_resumes(tmp_path: Path) -> None:
    folder = tmp_path / "demo-run"
    first = demo(folder)
    assert first.returncode == 0, first.stderr
    picks = (folder / artifacts.PICKS).read_bytes()
    (folder / artifacts.REPORT).unlink()  # as if the first run had stopped before the end
    again = demo(folder)
    assert again.returncode == 0, again.stderr
    assert "resuming the demo in" in again.stderr
    assert (folder / artifacts.PICKS).read_bytes() == picks
    assert artifacts.read_json(folder / artifacts.REPORT, "report")["n"] == 20
    assert "bt-verify: every file in" in again.stderr


def test_demo_refuses_an_empty_directory_argument(tmp_path: Path) -> None:
    done = demo("", cwd=tmp_path)
    assert done.returncode == 2
    assert "empty" in done.stderr
    assert "Traceback" not in done.stderr
    assert files_in(tmp_path) == []


def test_makefile_demo_never_removes_the_demo_folder() -> None:
    makefile = (Path(__file__).parents[2] / "Makefile").read_text()
    assert "rm -rf $(DEMO_RUN)" not in makefile
    assert "$(DEMO_RUN)" not in makefile.split("clean:")[1]


def test_the_resume_command_repeats_flags_lists_and_pairs_as_given(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "my run"
    url = simulator.base_url
    given = [
        "run", "sim-large", "sim-small", "--demo", "--a-url", url, "--b-url", url,
        "--protocol", "preference", "--trials", "4", "--ask", "Is it correct?",
        "--ask", "Is it kind?", "--no-reason", "--strip-formatting", "--run-dir", str(run),
    ]  # fmt: skip
    ended = invoke(*given, input="")
    assert ended.exit_code == 2, ended.stderr  # input ended at once
    command = ended.stderr.strip().splitlines()[-1].split("continue with: ", 1)[1]
    words = shlex.split(command)
    rest = words[words.index("run") :]
    assert sorted(rest) == sorted(given)
    for flag in ("--no-reason", "--strip-formatting"):
        assert flag in rest
    assert rest[rest.index("--run-dir") + 1] == str(run)
