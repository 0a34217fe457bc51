"""The click layer: ``blindtest <stage>`` and ``bt-<stage>`` register the same command objects.

Each ``bt-<stage>`` script imports only its own command module; the umbrella group
(`_group`), which imports them all, loads on first use of ``cli`` (start-up).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from blindtest.cli._group import PIPELINE_ORDER, STAGES, PipelineGroup, cli

_GROUP_NAMES = ("PIPELINE_ORDER", "STAGES", "PipelineGroup", "cli")


def __getattr__(name: str) -> Any:
    if name not in _GROUP_NAMES:
        raise AttributeError(f"module 'blindtest.cli' has no attribute {name!r}")
    return getattr(importlib.import_module("blindtest.cli._group"), name)


def _run(stage: str) -> None:
    module = importlib.import_module(f"blindtest.cli.{stage}")
    getattr(module, stage).main(prog_name=f"bt-{stage}")  # exits with the contract's code


def main() -> None:
    from blindtest.cli._group import cli

    cli.main()


def design_main() -> None:
    _run("design")


def generate_main() -> None:
    _run("generate")


def judge_main() -> None:
    _run("judge")


def audit_main() -> None:
    _run("audit")


def analyze_main() -> None:
    _run("analyze")


def verify_main() -> None:
    _run("verify")


def plan_main() -> None:
    _run("plan")


__all__ = [
    "PIPELINE_ORDER",
    "STAGES",
    "PipelineGroup",
    "analyze_main",
    "audit_main",
    "cli",
    "design_main",
    "generate_main",
    "judge_main",
    "main",
    "plan_main",
    "verify_main",
]
