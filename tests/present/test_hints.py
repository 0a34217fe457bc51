"""The "continue with" commands work as printed."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from blindtest.present import hints


def test_hint_names_the_venv_script_when_not_on_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "bt-judge").write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert hints.stage_command("judge", "demo-run") == ".venv/bin/bt-judge demo-run"


def test_hint_uses_the_bare_name_when_path_finds_this_script(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "bt-analyze"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.setenv("PATH", str(bin_dir))
    assert hints.stage_command("analyze", "my run") == "bt-analyze 'my run'"


def test_hint_falls_back_to_python_m(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "executable", "/opt/py/bin/python3")
    monkeypatch.setenv("PATH", "/nonexistent")
    assert hints.stage_command("judge", "r") == "/opt/py/bin/python3 -m blindtest judge r"


def test_printed_hint_runs_from_here() -> None:
    line = hints.stage_command("plan", "--trials", "20")
    result = subprocess.run(shlex.split(line), capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def _venv_script(root: Path, name: str) -> Path:
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / name).write_text("#!/bin/sh\n")
    return bin_dir


def test_a_script_above_the_working_directory_is_shown_relative_when_that_is_shorter(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    checkout = tmp_path / ("a-folder-with-a-long-name-" * 4)  # a checkout anywhere
    bin_dir = _venv_script(checkout, "bt-judge")
    (checkout / "runs").mkdir()
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.chdir(checkout / "runs")
    assert hints.stage_command("judge", "r") == "../.venv/bin/bt-judge r"
    assert hints.simulator_command() == "../.venv/bin/python -m blindtest.simulator --port 8000"
    monkeypatch.chdir("/")  # from the root the absolute path is the shorter
    assert hints.stage_command("judge", "r") == f"{bin_dir}/bt-judge r"


def test_a_shown_path_names_the_same_file_from_the_working_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    target = _venv_script(tmp_path / "checkout", "bt-plan") / "bt-plan"
    for where in (tmp_path, tmp_path / "checkout", tmp_path / "elsewhere" / "deeper"):
        where.mkdir(parents=True, exist_ok=True)
        monkeypatch.chdir(where)
        shown = hints.shown_path(target)
        assert len(shown) <= len(str(target))
        assert Path(shown).resolve() == target.resolve()
