"""Shared fixtures: an ``invoke`` helper over the real CLI, run-directory builders, seeds."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings

from endpoint_fixtures import *  # noqa: F403  (simulator, sim_key, sim_endpoint, validators)

# No wall-clock limits in ordinary tests (these machines are noisy): Hypothesis's default
# 200 ms deadline per example failed a normalize property under a loaded 2-core machine.
settings.register_profile("blindtest", deadline=None)
settings.load_profile("blindtest")

Invoke = Callable[..., Result]

# Tests stop their child processes with SIGINT, as Ctrl-C does. A suite started as a
# background job of a script (`make test &`, nohup) inherits SIGINT ignored, and an ignored
# signal stays ignored across exec: every child would ignore its Ctrl-C and the test wait for
# ever. A handled signal is reset to the default on exec, so the children get Python's own.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _terminal_size_from_the_pty(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child on a pseudo-terminal must take the terminal's own size. pytest-xdist workers
    export COLUMNS=80 and LINES=24, which ``shutil.get_terminal_size`` reads before the
    terminal, so the pty tests drop them (they then pass under ``-n``)."""
    if request.node.get_closest_marker("pty"):
        monkeypatch.delenv("COLUMNS", raising=False)
        monkeypatch.delenv("LINES", raising=False)


@pytest.fixture
def invoke(monkeypatch: pytest.MonkeyPatch) -> Invoke:
    """Run ``blindtest <args>`` in-process; stdout and stderr are kept apart."""
    from blindtest.cli import cli

    monkeypatch.delenv("BLINDTEST_DEBUG", raising=False)

    def run(*args: Any, input: str | None = None, env: dict[str, str] | None = None) -> Result:
        runner = CliRunner()
        return runner.invoke(
            cli,
            [str(a) for a in args],
            input=input,
            env=env,
            prog_name="blindtest",
            catch_exceptions=False,
        )

    return run


@pytest.fixture
def prompts_file(tmp_path: Path) -> Callable[..., Path]:
    """Write a prompts file; ``prompts_file(["a", "b"])`` or ``prompts_file(text, name=...)``."""

    def make(content: list[str] | str | bytes, name: str = "prompts.txt") -> Path:
        path = tmp_path / name
        if isinstance(content, list):
            content = "\n".join(content) + "\n"
        if isinstance(content, str):
            content = content.encode()
        path.write_bytes(content)
        return path

    return make


def numbered_prompts(n: int) -> list[str]:
    return [f"Question number {i}: explain topic {i} briefly." for i in range(1, n + 1)]


def files_in(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []
