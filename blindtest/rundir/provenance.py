"""Record what produced a design: blindtest, Python and key package versions, and the git
commit (with a dirty flag) when blindtest runs from a checkout.

Everything here is deterministic for a given installation, so it can live inside the hashed
design without breaking byte-identical reproduction. Untracked files do not count as dirty:
run directories kept inside a checkout must not change the flag.
"""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from blindtest.version import __version__

KEY_PACKAGES = ("aiohttp", "click", "jsonschema", "numpy", "orjson", "scipy")


def _package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def git_state(directory: Path) -> dict[str, Any] | None:
    """``{"commit", "dirty"}`` of the checkout holding ``directory``, or None outside one."""
    # An installed copy inside some other checkout (a .venv in a repo) must not claim its commit.
    tracked = _git(["ls-files", "--error-unmatch", "__init__.py"], directory)
    commit = _git(["rev-parse", "HEAD"], directory) if tracked is not None else None
    if commit is None:
        return None
    status = _git(["status", "--porcelain", "--untracked-files=no"], directory)
    return {"commit": commit.strip(), "dirty": bool(status and status.strip())}


def collect_provenance() -> dict[str, Any]:
    package_dir = Path(__file__).resolve().parent
    return {
        "blindtest": __version__,
        "python": platform.python_version(),
        "packages": {name: _package_version(name) for name in KEY_PACKAGES},
        "git": git_state(package_dir),
    }
