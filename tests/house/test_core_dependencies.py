"""A plain `pip install blindtest` (no extras) runs every command: the HTML report and the
judging page included. Every third-party module the package imports must come from a core
dependency (pyproject.toml's [project] dependencies, as the installed metadata has them)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "blindtest"


def imported_top_level_modules() -> dict[str, str]:
    """Each third-party top-level module the package imports, with one file that imports it."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top == "blindtest":
                    continue
                found.setdefault(top, str(path.relative_to(ROOT)))
    return found


def core_distributions() -> set[str]:
    """What a plain `pip install blindtest` brings: the installed metadata's requirements
    that carry no extra marker."""
    requirements = importlib.metadata.requires("blindtest") or []
    core = [spec for spec in requirements if "extra ==" not in spec]
    names = {re.split(r"[<>=!~ \[;(]", spec, maxsplit=1)[0] for spec in core}
    return {name.lower().replace("_", "-") for name in names}


def test_every_module_the_package_imports_comes_from_a_core_dependency() -> None:
    providers = importlib.metadata.packages_distributions()
    core = core_distributions()
    missing = {}
    for module, where in imported_top_level_modules().items():
        distributions = {d.lower().replace("_", "-") for d in providers.get(module, [module])}
        if not distributions & core:
            missing[module] = where
    assert not missing, f"imported but not a core dependency: {missing}"


def test_the_report_and_the_judging_page_need_no_extra() -> None:
    core = core_distributions()
    assert {"jinja2", "markdown-it-py"} <= core
