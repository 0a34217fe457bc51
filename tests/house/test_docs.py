"""Help text is the documentation: every command has it, and the README renders it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from blindtest.cli import STAGES, cli
from blindtest.cli.run import run

from conftest import Invoke

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CLI_REFERENCE = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
COMMANDS = [*STAGES, run]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_every_command_has_help_with_an_example(invoke: Invoke, command: object) -> None:
    name = command.name  # type: ignore[attr-defined]
    result = invoke(name, "-h")
    assert result.exit_code == 0
    assert "Example" in result.stdout
    assert f"## blindtest {name}" in CLI_REFERENCE


def test_umbrella_group_lists_every_stage(invoke: Invoke) -> None:
    result = invoke("--help")
    for command in COMMANDS:
        assert str(command.name) in result.stdout
    assert set(cli.commands) == {c.name for c in COMMANDS}


def test_readme_first_screen_gives_the_two_commands() -> None:
    first_screen = "\n".join(README.splitlines()[:25])
    assert "make demo" in first_screen
    assert "make test" in first_screen


def test_cli_reference_is_current() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cogapp", "--check", "docs/cli.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, "docs/cli.md is stale; run `make docs`"


def test_every_exit_code_is_documented() -> None:
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 130 |"):
        assert code in README


def test_readme_is_a_guide_a_newcomer_reads_to_the_end() -> None:
    assert len(README.splitlines()) <= 420


def test_every_local_link_in_the_docs_resolves() -> None:
    pages = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)", page.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), (
                f"{page.name} links to {target}, which is missing"
            )


def test_no_cli_heading_names_a_command_that_does_not_exist() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    scripts = set(re.findall(r"^(bt-\w+)\s*=", pyproject, flags=re.M))
    assert "bt-design" in scripts
    for alias in re.findall(r"^## blindtest \w+ \((bt-\w+)\)", CLI_REFERENCE, flags=re.M):
        assert alias in scripts


#: Pages that describe the layout: every path and module they name must exist.
LAYOUT_PAGES = ("development.md", "python-api.md")


def _named_in(page: str) -> tuple[list[str], list[str]]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    quoted = re.findall(r"`([^`\s]+)`", text)
    paths = [q.rstrip("/") for q in quoted if q.startswith(("blindtest/", "tests/", "schemas/"))]
    names = [q for q in quoted if re.fullmatch(r"blindtest(\.\w+)+", q)]
    return paths, names


def _resolves(dotted: str) -> bool:
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


@pytest.mark.parametrize("page", LAYOUT_PAGES)
def test_the_layout_pages_name_only_what_exists(page: str) -> None:
    paths, names = _named_in(page)
    assert "blindtest/model/protocols.py" in paths or page != "development.md"
    placeholder = re.compile(r"<|[A-Z]{3,}")  # judge_NAME.txt, analysis/<protocol>.py
    missing = [p for p in paths if not placeholder.search(p) and not (ROOT / p).exists()]
    assert missing == [], f"{page} names {missing}"
    unresolved = [n for n in names if not _resolves(n)]
    assert unresolved == [], f"{page} names {unresolved}"
