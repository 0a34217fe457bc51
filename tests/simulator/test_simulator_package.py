"""the simulator is a package (faults, text, server, command line) whose
public face and command line are unchanged."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import blindtest.simulator as simulator

PACKAGE = Path(simulator.__file__).parent


def test_the_simulator_is_a_package_of_faults_text_server_and_command_line() -> None:
    modules = {path.stem for path in PACKAGE.glob("*.py")}
    assert modules == {
        "__init__",
        "__main__",
        "batches",
        "command",
        "faults",
        "judging",
        "server",
        "text",
    }


def test_the_public_names_are_still_importable_from_blindtest_simulator() -> None:
    from blindtest.simulator import (  # noqa: F401
        CONTEXT_BODIES,
        FAULTS,
        MODELS,
        QUOTA_BODY,
        Fault,
        FaultMix,
        ReceivedRequest,
        Simulator,
        SimulatorConfig,
        SlotCount,
        compose,
        main,
        running,
    )

    assert set(simulator.__all__) <= set(dir(simulator))


def test_python_m_blindtest_simulator_keeps_its_options() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "blindtest.simulator", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert shown.startswith("usage: python -m blindtest.simulator")
    for option in (
        "--port",
        "--latency-ms",
        "--require-key-env",
        "--capacity",
        "--faults",
        "--fault-seed",
        "--serve-as",
        "--deterministic",
    ):
        assert option in shown


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_only_the_server_module_touches_sockets_and_text_and_faults_are_pure() -> None:
    network = {"socket", "aiohttp", "aiohttp.web", "asyncio"}
    for name in ("faults", "text"):
        assert not _imports(PACKAGE / f"{name}.py") & network, name
    assert {"socket", "aiohttp"} & _imports(PACKAGE / "server.py")
    assert "socket" not in _imports(PACKAGE / "command.py")
