"""start-up. ``--help`` of every command loads neither scipy.stats, aiohttp, jsonschema nor
jsonschema_rs, and ``bt-plan``'s default table loads neither scipy.stats nor scipy.optimize (the
decision statistics' import, about 0.2 s of CPU) (an import test, not a wall-clock test;
``make bench`` times the whole processes against ``python -c pass``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("scipy.stats", "aiohttp", "jsonschema", "jsonschema_rs")

#: Runs a console script's entry point (or the umbrella group) as its own process would, then
#: prints which heavy modules it loaded: from an exit handler, because the entry points end
#: the process (``sys.exit`` with the contract's code).
_PROBE = """
import atexit, importlib, sys
entry, prog, args = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.argv = [prog, *args]
atexit.register(
    lambda: print("loaded:", *(name for name in {heavy!r} if name in sys.modules), flush=True)
)
getattr(importlib.import_module("blindtest.cli"), entry)()
"""

COMMANDS = [
    ("main", "blindtest"),
    ("design_main", "bt-design"),
    ("generate_main", "bt-generate"),
    ("judge_main", "bt-judge"),
    ("audit_main", "bt-audit"),
    ("analyze_main", "bt-analyze"),
    ("verify_main", "bt-verify"),
    ("plan_main", "bt-plan"),
]


def _loaded(entry: str, prog: str, *args: str, heavy: tuple[str, ...] = HEAVY) -> str:
    code = _PROBE.format(heavy=heavy)
    done = subprocess.run(
        [sys.executable, "-c", code, entry, prog, *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()[-1].removeprefix("loaded:").strip()


@pytest.mark.parametrize(("entry", "prog"), COMMANDS)
def test_help_loads_no_heavy_module(entry: str, prog: str) -> None:
    assert _loaded(entry, prog, "--help") == ""


@pytest.mark.parametrize("stage", [prog.removeprefix("bt-") for _, prog in COMMANDS[1:]] + ["run"])
def test_umbrella_stage_help_loads_no_heavy_module(stage: str) -> None:
    assert _loaded("main", "blindtest", stage, "--help") == ""


def test_plan_default_table_loads_neither_scipy_stats_nor_scipy_optimize() -> None:
    assert _loaded("plan_main", "bt-plan", heavy=("scipy.stats", "scipy.optimize")) == ""


@pytest.mark.parametrize("package", ["generation", "judging.llm", "transport"])
def test_the_fetching_stages_load_neither_scipy_nor_numpy(package: str) -> None:
    """bt-generate and the LLM judge spend their time waiting on the network: scipy.special
    alone costs them 0.3 s of start-up (scipy 1.17), and nothing they compute needs it. Every
    module of the package is imported, as a run reaches them."""
    code = (
        "import importlib, pkgutil, sys\n"
        f"package = importlib.import_module('blindtest.{package}')\n"
        "for found in pkgutil.walk_packages(package.__path__, package.__name__ + '.'):\n"
        "    importlib.import_module(found.name)\n"
        "print(*(n for n in ('scipy', 'numpy') if n in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
