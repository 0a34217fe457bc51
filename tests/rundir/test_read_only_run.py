"""An archived run on a read-only mount (or without write permission) can still be analysed to
a report elsewhere: the run's lock file cannot be made there, and a command that writes nothing
into the run reads it without the lock and says so. A command that would write into it is
refused with one line, as before. The tests run as root, which ignores write bits, so the OS
refusal is simulated at the lock file's open."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from blindtest.rundir import artifacts

from conftest import Invoke, files_in

EXAMPLE = Path(__file__).parents[2] / "examples" / "run"


@pytest.fixture(params=[errno.EROFS, errno.EACCES])
def archived_run(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A copy of the example run whose directory refuses new files, as a read-only mount does."""
    run = tmp_path / "archive"
    shutil.copytree(EXAMPLE, run)
    real_open = os.open
    refusal = request.param

    def refusing_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if Path(os.fsdecode(path)).parent == run and flags & os.O_CREAT:
            raise OSError(refusal, os.strerror(refusal), os.fsdecode(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    return run


def test_a_read_only_run_is_analysed_to_a_report_elsewhere_without_its_lock(
    invoke: Invoke, archived_run: Path, tmp_path: Path
) -> None:
    before = files_in(archived_run)
    out = tmp_path / "elsewhere" / "report.json"
    result = invoke("analyze", archived_run, "--out", out, "--force")
    assert result.exit_code in (0, 1), result.stderr
    assert out.exists()
    assert artifacts.read_json(out, "report")["n"] > 0
    assert "cannot be written" in result.stderr
    assert "read without its lock" in result.stderr
    assert files_in(archived_run) == before


def test_a_read_only_run_analysed_quietly_says_nothing(
    invoke: Invoke, archived_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report.json"
    result = invoke("analyze", archived_run, "--out", out, "--force", "-q")
    assert result.exit_code in (0, 1), result.stderr
    assert result.stderr == ""
    assert out.exists()


def test_a_read_only_run_is_refused_when_the_report_would_go_into_it(
    invoke: Invoke, archived_run: Path
) -> None:
    before = {name: (archived_run / name).read_bytes() for name in files_in(archived_run)}
    result = invoke("analyze", archived_run, "--force")
    assert result.exit_code == 2
    assert f"{archived_run} cannot be written ({os.strerror(errno.EROFS)}" in result.stderr or (
        f"{archived_run} cannot be written ({os.strerror(errno.EACCES)}" in result.stderr
    )
    assert "write the report elsewhere with --out FILE" in result.stderr  # what to do
    assert "Traceback" not in result.stderr
    assert {name: (archived_run / name).read_bytes() for name in files_in(archived_run)} == before


def test_a_read_only_run_verifies(invoke: Invoke, archived_run: Path) -> None:
    assert invoke("verify", archived_run).exit_code == 0
