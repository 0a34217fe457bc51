"""blindtest: can anyone actually tell these two language models apart, on my prompts?

The library behind the ``bt-*`` commands. Entry points load lazily, so ``import blindtest``
(and every command's ``--help``) stays fast; the statistics live in ``blindtest.stats``.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "BadInput": "blindtest.errors",
    "BlindtestError": "blindtest.errors",
    "CheckFailed": "blindtest.errors",
    "EndpointFailed": "blindtest.errors",
    "analyze_run": "blindtest.analyzing",
    "build_arrangement": "blindtest.designing",
    "build_audit": "blindtest.auditing",
    "build_design": "blindtest.designing",
    "build_report": "blindtest.analyzing",
    "plan_slots": "blindtest.slots",
    "run_generation": "blindtest.generating",
    "verify_run": "blindtest.verifying",
}

__all__ = [
    "BadInput",
    "BlindtestError",
    "CheckFailed",
    "EndpointFailed",
    "__version__",
    "analyze_run",
    "build_arrangement",
    "build_audit",
    "build_design",
    "build_report",
    "plan_slots",
    "run_generation",
    "verify_run",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'blindtest' has no attribute {name!r}")
    return getattr(import_module(module), name)
