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


def placeholder_legend(args: list[str]) -> str:
    """The line under a suggested command that says what its placeholders stand for ("" when
    it has none)."""
    named = [f"{word}: {meaning}" for word, meaning in PLACEHOLDERS.items() if word in args]
    return f"({'; '.join(named)})" if named else ""
