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
