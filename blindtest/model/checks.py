"""Mechanical checks on responses (spec 001: "where a mechanical check exists, run it first").

A prompt may carry one check: ``{"regex": PATTERN}`` passes when the pattern is found in the
response (``re.search``, multiline); ``{"equals": TEXT}`` passes when the response equals TEXT
after trimming surrounding whitespace; ``{"command": CMD}`` runs CMD through the shell with the
response on stdin, in a fresh temporary directory, and passes on exit status 0. Commands are
run only when the user allows them (``--allow-commands``); otherwise the check is reported as
not run. Checks read the response as the endpoint returned it, before any normalization.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Callable, Mapping

CommandRunner = Callable[[str, str], bool]
DEFAULT_COMMAND_TIMEOUT = 30.0


def subprocess_runner(timeout: float = DEFAULT_COMMAND_TIMEOUT) -> CommandRunner:
    """A runner that executes a check command for real (only with --allow-commands)."""

    def run(command: str, text: str) -> bool:
        with tempfile.TemporaryDirectory(prefix="blindtest-check-") as workdir:
            try:
                done = subprocess.run(
                    command,
                    shell=True,
                    input=text.encode("utf-8"),
                    cwd=workdir,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    timeout=timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                return False
        return done.returncode == 0

    return run


def evaluate(check: Mapping[str, str], text: str, runner: CommandRunner | None) -> bool | None:
    """True or False for pass or fail; None when a command check may not be run."""
    if "regex" in check:
        return re.search(check["regex"], text, re.MULTILINE) is not None
    if "equals" in check:
        return text.strip() == check["equals"].strip()
    if runner is None:
        return None
    return runner(check["command"], text)
