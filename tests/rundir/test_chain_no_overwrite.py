"""no stage writes over another stage's artifact, an
input, or a file that is not a blindtest artifact, --force or not; unwritable run paths are
bad input with the OS's reason and leave nothing behind; every file of a run gets one mode."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from blindtest.cli import _prose
from blindtest.errors import BadInput
from blindtest.rundir import artifacts

from report_runs import cli, load, make_run, read_report, triangle_picks, write_picks


def judged_run(tmp_path: Path, correct: int = 14, trials: list[int] | None = None) -> Path:
    run = make_run(tmp_path, "triangle", 20)
    assert cli("audit", run).exit_code == 0
    picks = triangle_picks(load(run), correct, trials=trials)
    write_picks(run / "picks-alice.jsonl", picks)
    write_picks(run / artifacts.PICKS, picks)
    return run


def snapshot(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(run.iterdir())}


# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    ["picks-alice.jsonl", "responses.jsonl", "design.json", "trials.jsonl", "audit.json"],
)
def test_analyze_out_with_force_never_overwrites_another_artifact(
    tmp_path: Path, target: str
) -> None:
    run = judged_run(tmp_path)
    before = snapshot(run)
    result = cli(
        "analyze", run, "--picks", run / "picks-alice.jsonl", "--out", run / target, "--force"
    )
    assert result.exit_code == 2, result.output
    assert str(run / target) in result.stderr
    assert "--force or not" in result.stderr
    assert result.stdout == ""
    assert snapshot(run) == before


def test_analyze_html_onto_an_input_or_a_foreign_file_is_refused(tmp_path: Path) -> None:
    run = judged_run(tmp_path)
    notes = tmp_path / "notes.html"
    notes.write_text("<!doctype html><p>my own page</p>\n")
    before = snapshot(run)
    for target in (run / "picks-alice.jsonl", notes, run / "design.sha256"):
        result = cli("analyze", run, "--html", target, "--force")
        assert result.exit_code == 2, result.output
        assert str(target) in result.stderr
    assert snapshot(run) == before
    assert notes.read_text() == "<!doctype html><p>my own page</p>\n"
    assert not (run / artifacts.REPORT).exists()


def test_a_file_that_is_not_an_artifact_is_refused_even_with_force(tmp_path: Path) -> None:
    run = judged_run(tmp_path)
    thesis = tmp_path / "thesis.json"
    thesis.write_text('{"title": "my thesis"}\n')
    result = cli("analyze", run, "--out", thesis, "--force")
    assert result.exit_code == 2
    assert f"{thesis} is not a blindtest report file" in result.stderr
    assert thesis.read_text() == '{"title": "my thesis"}\n'


def test_force_replaces_the_commands_own_kind_and_a_page_it_rendered(
    tmp_path: Path,
) -> None:
    run = judged_run(tmp_path)
    out, page = tmp_path / "report-alice.json", tmp_path / "alice.html"
    first = cli("analyze", run, "--picks", run / "picks-alice.jsonl", "--out", out, "--html", page)
    assert first.exit_code == 0, first.stderr
    # Other inputs (another picks file) into the same report: --force is needed, and enough.
    write_picks(run / "picks-bob.jsonl", triangle_picks(load(run), 7, judge="bob"))
    args = ("analyze", run, "--picks", run / "picks-bob.jsonl", "--out", out, "--html", page)
    refused = cli(*args)
    assert refused.exit_code == 2
    assert f"{out} already exists; use --force to overwrite it" in refused.stderr
    assert cli(*args, "--force").exit_code == 0
    assert artifacts.read_json(out, "report")["judges"] == ["bob"]
    assert "blindtest" in page.read_text()


def test_a_void_report_is_replaced_by_the_real_one_without_force(tmp_path: Path) -> None:
    run = make_run(tmp_path, "triangle", 20)
    design = load(run)
    write_picks(run / artifacts.PICKS, triangle_picks(design, 5, trials=list(range(1, 10))))
    void = cli("analyze", run)
    assert read_report(run)["verdict"] == "void", void.output
    write_picks(run / artifacts.PICKS, triangle_picks(design, 14))
    real = cli("analyze", run)
    assert real.exit_code == 0, real.stderr
    assert read_report(run)["n"] == 20


def test_judge_out_onto_another_artifact_is_refused(tmp_path: Path) -> None:
    run = judged_run(tmp_path)
    before = snapshot(run)
    for target in ("responses.jsonl", "design.json", "trials.jsonl", "audit.json"):
        result = cli("judge", run, "--judge", "bot:length", "--out", run / target, "--force")
        assert result.exit_code == 2, result.output
        assert str(run / target) in result.stderr
    assert snapshot(run) == before


def test_audit_design_and_generate_never_replace_another_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = judged_run(tmp_path)
    report = artifacts.dump_json({"schema": "blindtest/report@1"})
    (run / artifacts.AUDIT).write_bytes(report)
    before = snapshot(run)
    audit = cli("audit", run, "--force")
    assert audit.exit_code == 2
    assert f"{run / artifacts.AUDIT} is a report file" in audit.stderr
    assert snapshot(run) == before

    monkeypatch.setenv("OPENAI_API_KEY", "unused: every response is on disk")
    (run / artifacts.TRIALS).write_bytes(report)
    generate = cli("generate", run)
    assert generate.exit_code == 2, generate.output
    assert f"{run / artifacts.TRIALS} is a report file" in generate.stderr
    assert (run / artifacts.TRIALS).read_bytes() == report

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / artifacts.DESIGN).write_text("my notes\n")
    design = cli("design", fresh, "--demo", "--seed", "1", "--force")
    assert design.exit_code == 2
    assert f"{fresh / artifacts.DESIGN} is not a blindtest design file" in design.stderr
    assert (fresh / artifacts.DESIGN).read_text() == "my notes\n"


def test_claim_output_refuses_an_input_by_inode(tmp_path: Path) -> None:
    source = tmp_path / "report-in.json"
    source.write_bytes(artifacts.dump_json({"schema": "blindtest/report@1"}))
    link = tmp_path / "report-link.json"
    os.link(source, link)
    with pytest.raises(BadInput, match="is an input of this command"):
        artifacts.claim_output(link, "report", force=True, inputs=[source])


# ---------------------------------------------------------------------------


def test_proc_path_is_bad_input_with_the_os_reason(tmp_path: Path) -> None:
    result = cli("design", "/proc/x", "--demo", "--seed", "1")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("blindtest: error: cannot ")
    assert "/proc/x" in result.stderr
    assert "internal error" not in result.stderr
    assert not Path("/proc/x").exists()


def test_a_file_in_place_of_a_folder_is_bad_input(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder\n")
    for run in (blocker, blocker / "run"):
        result = cli("design", run, "--demo", "--seed", "1")
        assert result.exit_code == 2, result.output
        assert "internal error" not in result.stderr
    assert blocker.read_text() == "not a folder\n"


def test_a_full_disk_is_bad_input_and_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(_: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)  # the os module artifacts uses
    run = tmp_path / "run"
    result = cli("design", run, "--demo", "--seed", "1")
    assert result.exit_code == 2, result.output
    assert f"cannot write {run / artifacts.DESIGN}: No space left on device" in result.stderr
    assert not run.exists()  # no temporary file, no lock, not even the folder
    assert os.listdir(tmp_path) == []


def test_an_empty_run_argument_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for args in (("design", "", "--demo"), ("generate", ""), ("analyze", ""), ("audit", "")):
        result = cli(*args)
        assert result.exit_code == 2, result.output
        assert "is empty (an unset shell variable?)" in result.stderr
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_every_file_of_a_run_gets_the_same_mode(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        run = judged_run(tmp_path)
        assert cli("analyze", run).exit_code == 0
        with artifacts.JsonlAppender(run / "picks-new.jsonl", "picks") as out:
            out.append({"schema": "blindtest/picks@1", "trial": 1, "judge": "x", "pick": 1})
    finally:
        os.umask(old)
    written = [p for p in run.iterdir() if p.name != "picks-alice.jsonl"]
    written = [p for p in written if p.name != artifacts.PICKS]  # written by the test itself
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in written}
    assert set(modes.values()) == {0o666 & ~umask}, modes


def test_error_lines_are_wrapped_to_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(shutil, "get_terminal_size", lambda: os.terminal_size((40, 24)))
    line = "bt-analyze: error: " + "word " * 30
    wrapped = _prose._wrapped(line.strip())
    assert all(len(row) < 40 for row in wrapped.splitlines())
    assert " ".join(wrapped.split()) == " ".join(line.split())
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    assert _prose._wrapped(line) == line


def test_artifacts_are_told_apart_by_their_first_record(tmp_path: Path) -> None:
    cases = {
        "a.json": (artifacts.dump_json({"schema": "blindtest/design@1", "x": [1] * 9}), "design"),
        "b.jsonl": (artifacts.dump_line({"schema": "blindtest/picks@1", "trial": 1}), "picks"),
        "c.jsonl": (b'{"schema":"blindtest/picks@1","tri', artifacts.TORN),  # a cut append
        "d.json": (b"", ""),
        "e.html": (b'<!doctype html>\n<meta name="generator" content="blindtest 1">', "html"),
        "f.txt": (b"my notes\n", None),
        "g.json": (b'{"title": "thesis"}\n', None),
        "h.html": (b"<!doctype html><p>someone's page</p>", None),
        "design.sha256": (b"0" * 64 + b"\n", "design hash"),
    }
    for name, (data, kind) in cases.items():
        (tmp_path / name).write_bytes(data)
        assert artifacts.artifact_kind(tmp_path / name) == kind, name


def test_design_difference_names_the_first_field_and_ignores_provenance() -> None:
    recorded = {"protocol": "triangle", "trials": 20, "provenance": {"git": "abc"}}
    same = {"protocol": "triangle", "trials": 20, "provenance": {"git": "def"}}
    assert artifacts.design_difference(recorded, same) is None
    more = {"protocol": "triangle", "trials": 30, "provenance": {}}
    assert artifacts.design_difference(recorded, more) == "trials is 20, the command asks for 30"
