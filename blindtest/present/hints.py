"""How to tell a user which command to run next, so that it works as printed.

After the README's set-up (``make demo``, ``make test``) the stage commands live in
``.venv/bin`` and are not on PATH, so a bare ``bt-judge demo-run`` in a "continue with" line
would fail. ``stage_command`` names the command the way it can be run from here: the bare name
when that name on PATH is this installation's script, else the script's path (relative to the
working directory when it is below it), else ``python -m blindtest <stage>``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path


def _script_dir() -> Path:
    # Console scripts are installed beside the interpreter that runs them (a venv's bin/).
    return Path(sys.executable).parent


def _shown(path: Path) -> str:
    try:
        relative = path.relative_to(Path.cwd())
    except ValueError:
        return str(path)
    return str(relative) if str(relative).startswith(".") else f"./{relative}"


def _command_line(name: str, module_args: list[str], words: list[str]) -> str:
    script = _script_dir() / name
    on_path = shutil.which(name)
    if on_path is not None and script.exists() and Path(on_path).resolve() == script.resolve():
        return shlex.join([name, *words])
    if script.exists():
        return shlex.join([_shown(script), *words])
    return shlex.join([_shown(Path(sys.executable)), "-m", "blindtest", *module_args, *words])


def stage_command(stage: str, *args: str | os.PathLike[str]) -> str:
    """The shell line that runs ``bt-<stage> ARGS`` from the current directory."""
    return _command_line(f"bt-{stage}", [stage], [os.fspath(arg) for arg in args])


def blindtest_command(*args: str | os.PathLike[str]) -> str:
    """The shell line that runs ``blindtest ARGS`` from the current directory."""
    return _command_line("blindtest", [], [os.fspath(arg) for arg in args])


#: The words a suggested command holds for what the user must supply, and what each stands for
#: (in the order the legend names them).
PLACEHOLDERS = {
    "PROMPTS": "your prompts file",
    "IDENTITY-WORDS": "your --strip-identity-words file (its terms are in design.json)",
    "NEW-RUN": "a new run directory",
    "RUN": "this run's directory",
}


#: Where a suggested command sends a demo's requests: the demo's own simulator lived only
#: while the demo ran (on a port it picked), so the command names one on a fixed port, and the
#: legend says how to start it.
SIMULATOR_PORT = 8000
SIMULATOR_URL = f"http://127.0.0.1:{SIMULATOR_PORT}/v1"


def simulator_command() -> str:
    """The shell line that starts the local simulator where ``SIMULATOR_URL`` points."""
    return shlex.join(
        [_shown(Path(sys.executable)), "-m", "blindtest.simulator", "--port", str(SIMULATOR_PORT)]
    )


def placeholder_legend(args: list[str]) -> str:
    """The line under a suggested command that says what its placeholders stand for, and how
    to start the simulator it names ("" when it has neither)."""
    named = [f"{word}: {meaning}" for word, meaning in PLACEHOLDERS.items() if word in args]
    if SIMULATOR_URL in args:
        named.append(f"start the simulator first, in another terminal: {simulator_command()}")
    return f"({'; '.join(named)})" if named else ""
