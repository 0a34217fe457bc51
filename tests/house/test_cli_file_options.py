"""A file option followed by another option (``--html --force``) is a forgotten file name, not a
file named ``--force``: exit 2, one line, nothing written (found by hand in session 3)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import Invoke


@pytest.mark.parametrize(
    "args",
    [
        ["analyze", "run", "--html", "--force"],
        ["analyze", "run", "--export-preferences", "--force"],
        ["plan", "--html", "--json"],
        ["design", "run", "--a", "x", "--b", "y", "--prompts", "--demo"],
    ],
)
def test_a_file_option_given_another_option_is_refused_and_nothing_written(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke(*args)
    assert result.exit_code == 2
    assert "needs a file name, but got the option" in result.stderr
    assert result.stderr.count("\n") == 1
    assert os.listdir(tmp_path) == []
