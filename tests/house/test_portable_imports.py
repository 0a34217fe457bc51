"""blindtest imports and answers --help where POSIX-only modules do not exist (Windows): every
module of the package is imported with ``fcntl``, ``termios`` and ``tty`` made unimportable,
and the run lock is taken through :mod:`blindtest.rundir.oslock`, the one module that chooses the
platform's call."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from blindtest.errors import BadInput
from blindtest.rundir import artifacts, locking

_POSIX_ONLY = ("fcntl", "termios", "tty")

_IMPORT_ALL = f"""
import importlib, pkgutil, sys
for name in {_POSIX_ONLY!r}:
    sys.modules[name] = None  # import raises ImportError, as on Windows
import blindtest
names = sorted(
    m.name for m in pkgutil.walk_packages(blindtest.__path__, "blindtest.")
    if not m.name.endswith(".__main__")  # runs a command when imported
)
for name in names:
    importlib.import_module(name)
print(len(names))
"""


def test_every_module_imports_without_posix_only_modules() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 60  # the whole package, not an empty walk


@pytest.mark.parametrize("stage", ["design", "generate", "judge", "audit", "analyze", "verify"])
def test_every_stage_answers_help_without_posix_only_modules(stage: str) -> None:
    code = (
        f"import sys\nfor name in {_POSIX_ONLY!r}:\n    sys.modules[name] = None\n"
        f"sys.argv = ['bt-{stage}', '--help']\n"
        f"from blindtest.cli import {stage}_main\n{stage}_main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Usage: bt-{stage} ")


_HOLD = """
import sys, time
from pathlib import Path
from types import SimpleNamespace
from blindtest.rundir import locking
with locking.run_lock(Path(sys.argv[1]), "holder"):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_run_held_by_another_process_is_refused_naming_it(tmp_path: Path) -> None:
    run = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(run)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(BadInput) as refused, locking.run_lock(run, "second"):
            pass
        assert str(refused.value) == (
            f"{run} is in use by process {holder.pid} (holder); wait for it or stop it"
        )
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait()
        holder.stdout.close()  # type: ignore[union-attr]
    with locking.run_lock(run, "second"):  # released when the holder ended
        assert (run / artifacts.LOCK).read_text().startswith(f"{os.getpid()} ")


@pytest.mark.parametrize(
    ("typed", "key"),
    [(["\xe0", "H"], "up"), (["\x00", "P"], "down"), (["\xe0", "Q"], "pgdn"), ([" "], "space"),
     (["\r"], "enter"), (["a"], "a"), (["\x1b"], "escape")],
)  # fmt: skip
def test_a_key_on_windows_console_is_read_with_msvcrt(
    monkeypatch: pytest.MonkeyPatch, typed: list[str], key: str
) -> None:
    from blindtest.judging.terminal import console

    keys = iter(typed)
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setitem(sys.modules, "msvcrt", SimpleNamespace(getwch=lambda: next(keys)))
    monkeypatch.setitem(sys.modules, "termios", None)  # never asked for on Windows
    assert console._read_tty_key(0) == key
    assert next(keys, None) is None  # each code read, no more


def test_ctrl_c_and_ctrl_z_on_windows_console(monkeypatch: pytest.MonkeyPatch) -> None:
    from blindtest.judging.terminal import console

    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setitem(sys.modules, "msvcrt", SimpleNamespace(getwch=lambda: "\x03"))
    with pytest.raises(KeyboardInterrupt):
        console._read_tty_key(0)
    monkeypatch.setitem(sys.modules, "msvcrt", SimpleNamespace(getwch=lambda: "\x1a"))
    with pytest.raises(EOFError):
        console._read_tty_key(0)
