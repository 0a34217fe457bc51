"""How to tell a user which command to run next, so that it works as printed.

After the README's set-up (``make demo``, ``make test``) the stage commands live in
``.venv/bin`` and are not on PATH, so a bare ``bt-judge demo-run`` in a "continue with" line
would fail. ``stage_command`` names the command the way it can be run from here: the bare name
when that name on PATH is this installation's script, else the script's path, else
``python -m blindtest <stage>``. A path is shown relative to the working directory when that
is shorter (``.venv/bin/bt-judge``, ``../blindtest/.venv/bin/bt-judge``), else absolute: a
checkout can live in a folder of any length, and the screen prints a command whole on a line
of its own when it is wider than the line (:mod:`blindtest.present.screen`), so it can be pasted.
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


def shown_path(path: Path) -> str:
    """``path`` as typed from the working directory: relative when that is shorter (``./``
    before a path below it that starts with a name, so it reads as a path), else absolute."""
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, Path.cwd())
    except ValueError:  # another drive (Windows)
        return absolute
    if not relative.startswith("."):
        relative = f"./{relative}"
    return relative if len(relative) < len(absolute) else absolute


def _command_line(name: str, module_args: list[str], words: list[str]) -> str:
    script = _script_dir() / name
    on_path = shutil.which(name)
    if on_path is not None and script.exists() and Path(on_path).resolve() == script.resolve():
        return shlex.join([name, *words])
    if script.exists():
        return shlex.join([shown_path(script), *words])
    return shlex.join([shown_path(Path(sys.executable)), "-m", "blindtest", *module_args, *words])


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
    python = shown_path(Path(sys.executable))
    return shlex.join([python, "-m", "blindtest.simulator", "--port", str(SIMULATOR_PORT)])


def placeholder_legend(args: list[str]) -> str:
    """The line under a suggested command that says what its placeholders stand for ("" when
    it has none)."""
    named = [f"{word}: {meaning}" for word, meaning in PLACEHOLDERS.items() if word in args]
    return f"({'; '.join(named)})" if named else ""


#: The words before :func:`setup_command`'s command (which goes on a line of its own, whole:
#: it holds a path as long as the checkout's, and is copied as printed).
SETUP_LEAD = "Start the simulator first, in another terminal:"


def setup_command(args: list[str]) -> str:
    """The command to run before a suggested command with ``args`` ("" when none is needed):
    the simulator it names."""
    return simulator_command() if SIMULATOR_URL in args else ""
