"""Help text is the documentation: every command has it, and the README renders it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from blindtest.cli import STAGES, cli
from blindtest.cli.run import run

from conftest import Invoke

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = [*STAGES, run]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_every_command_has_help_with_an_example(invoke: Invoke, command: object) -> None:
    name = command.name  # type: ignore[attr-defined]
    result = invoke(name, "-h")
    assert result.exit_code == 0
    assert "Example" in result.stdout
    assert f"### blindtest {name}" in README


def test_umbrella_group_lists_every_stage(invoke: Invoke) -> None:
    result = invoke("--help")
    for command in COMMANDS:
        assert str(command.name) in result.stdout
    assert set(cli.commands) == {c.name for c in COMMANDS}


def test_readme_first_screen_gives_the_two_commands() -> None:
    first_screen = "\n".join(README.splitlines()[:25])
    assert "make demo" in first_screen
    assert "make test" in first_screen


def test_readme_cli_reference_is_current() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cogapp", "--check", "README.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, "README.md CLI reference is stale; run `make docs`"


def test_every_exit_code_is_documented() -> None:
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 130 |"):
        assert code in README
