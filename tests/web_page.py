"""Helpers for the judging-page tests: bt-judge --web in a subprocess (as a person runs it),
and Chromium through Playwright, Debian's package driven by its path (no browser download).

Without Chromium the browser tests skip with the install command; in CI (CI=true) they fail.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Screenshots the tests take; the folder is in .gitignore.
OUTPUT = ROOT / "test-output"
INSTALL = "apt-get install -y chromium"


def chromium_path() -> str:
    """Debian's Chromium, or skip (fail in CI) naming the install command."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    message = f"Chromium is not installed: install it with `{INSTALL}` to run the browser tests"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


def playwright_sync() -> Any:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        message = "playwright is not installed: pip install -e '.[test]'"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    return sync_playwright


class JudgeServer:
    """``bt-judge RUN --web --no-browser ...`` running; ``url`` is the link it printed."""

    def __init__(self, run_dir: Path, *args: str) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "blindtest", "judge", str(run_dir), "--web", "--no-browser",
             *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )  # fmt: skip
        self.lines: list[str] = []
        self.url = ""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if " open http" in line:
                self.url = line.split(" open ", 1)[1].strip()
                break
        if not self.url:
            self.proc.wait()
            raise AssertionError(f"no link printed: {self.lines} {self.proc.stderr.read()}")  # type: ignore[union-attr]

    @property
    def origin(self) -> str:
        return "/".join(self.url.split("/", 3)[:3])

    @property
    def token(self) -> str:
        return self.url.rstrip("/").rsplit("/", 1)[1]

    def close_page(self) -> None:
        """Press Enter on bt-judge's terminal: after the last pick, the page closes."""
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.write("\n")
            self.proc.stdin.flush()

    def finish(self) -> tuple[int, str, str]:
        """Wait for bt-judge to end, its stdin closed (as a script runs it: once the last
        reviewer's end screen has been served, the page closes by itself)."""
        # Read through the same buffered files the link was read from (communicate() reads
        # the raw descriptors and would miss what those buffers already hold).
        assert self.proc.stdout is not None
        assert self.proc.stderr is not None
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        self.proc.wait()
        out, err = self.proc.stdout.read(), self.proc.stderr.read()
        return self.proc.returncode, "\n".join(self.lines) + "\n" + out, err

    def interrupt(self) -> tuple[int, str, str]:
        self.proc.send_signal(signal.SIGINT)
        return self.finish()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None and not pipe.closed:
                with suppress(BrokenPipeError):
                    pipe.close()


@contextmanager
def judge_server(run_dir: Path, *args: str) -> Iterator[JudgeServer]:
    server = JudgeServer(run_dir, *args)
    try:
        yield server
    finally:
        server.kill()


#: The screens the judging page is tried at: a common laptop and a phone.
LAPTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
SIZES = {"laptop": LAPTOP, "phone": PHONE}


@contextmanager
def page_at(browser: Any, size: str) -> Iterator[tuple[str, Any]]:
    """A fresh page at one of :data:`SIZES`, named, in a context closed afterwards."""
    context = browser.new_context(viewport=SIZES[size])
    try:
        yield size, context.new_page()
    finally:
        context.close()


@contextmanager
def chromium() -> Iterator[Any]:
    path = chromium_path()
    sync_playwright = playwright_sync()
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        # No clock on a wait: the suite shares two cores; a wait is for an event.
        launched.new_context = _patient(launched.new_context)
        launched.new_page = _patient(launched.new_page)
        try:
            yield launched
        finally:
            launched.close()


def _patient(make: Any) -> Any:
    def made(*args: Any, **kwargs: Any) -> Any:
        thing = make(*args, **kwargs)
        thing.set_default_timeout(300_000)  # a bound for a lost event, never a speed limit
        return thing

    return made


def wait_for_keys(page: Any) -> None:
    """Until the page's keys.js is listening: it is deferred, and on a loaded machine the page's
    text can be there while a key press would still do nothing."""
    page.wait_for_selector("html[data-keys='ready']", state="attached")


def screenshot(page: Any, name: str) -> Path:
    OUTPUT.mkdir(exist_ok=True)
    path = OUTPUT / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
