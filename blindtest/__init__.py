"""blindtest: can anyone actually tell these two language models apart, on my prompts?

The library behind the ``bt-*`` commands: ``blindtest.design``, ``generate``, ``judge``,
``audit``, ``analyze``, ``verify`` and ``plan`` do what the commands do and return a result
(docs/python-api.md). Everything loads lazily, so ``import blindtest`` (and every command's
``--help``) stays fast; the statistics live in ``blindtest.stats``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from blindtest import _moved
from blindtest.version import __version__

_moved.install()

_EXPORTS = {
    # The stages, each what its command does (lock, claim the outputs, write the files),
    # returning a frozen result (docs/python-api.md).
    "design": "blindtest.designing.stage",
    "generate": "blindtest.generation.stage",
    "judge": "blindtest.judging.stage",
    "audit": "blindtest.auditing.stage",
    "analyze": "blindtest.analysis.stage",
    "verify": "blindtest.pipeline.verify",
    "plan": "blindtest.planning.stage",
    "DesignResult": "blindtest.designing.stage",
    "GenerateResult": "blindtest.generation.stage",
    "JudgeResult": "blindtest.judging.stage",
    "LlmSettings": "blindtest.judging.stage",
    "AuditResult": "blindtest.auditing.stage",
    "AnalyzeResult": "blindtest.analysis.stage",
    "Verification": "blindtest.pipeline.verify",
    "Plan": "blindtest.planning.stage",
    # Errors, and the pure builders below the stages.
    "BadInput": "blindtest.errors",
    "BlindtestError": "blindtest.errors",
    "CheckFailed": "blindtest.errors",
    "EndpointFailed": "blindtest.errors",
    "analyze_run": "blindtest.analysis.api",
    "build_arrangement": "blindtest.designing.build",
    "build_audit": "blindtest.auditing.build",
    "build_design": "blindtest.designing.build",
    "build_report": "blindtest.analysis.api",
    "plan_slots": "blindtest.model.slots",
    "run_generation": "blindtest.generation.fetch",
    "verify_run": "blindtest.pipeline.recompute",
}

__all__ = [
    "AnalyzeResult",
    "AuditResult",
    "BadInput",
    "BlindtestError",
    "CheckFailed",
    "DesignResult",
    "EndpointFailed",
    "GenerateResult",
    "JudgeResult",
    "LlmSettings",
    "Plan",
    "Verification",
    "__version__",
    "analyze",
    "analyze_run",
    "audit",
    "build_arrangement",
    "build_audit",
    "build_design",
    "build_report",
    "design",
    "generate",
    "judge",
    "plan",
    "plan_slots",
    "run_generation",
    "verify",
    "verify_run",
]

if TYPE_CHECKING:  # what a type checker sees; at run time each loads on first use
    from blindtest.analysis.api import analyze_run, build_report
    from blindtest.analysis.stage import AnalyzeResult, analyze
    from blindtest.auditing.build import build_audit
    from blindtest.auditing.stage import AuditResult, audit
    from blindtest.designing.build import build_arrangement, build_design
    from blindtest.designing.stage import DesignResult, design
    from blindtest.errors import BadInput, BlindtestError, CheckFailed, EndpointFailed
    from blindtest.generation.fetch import run_generation
    from blindtest.generation.stage import GenerateResult, generate
    from blindtest.judging.stage import JudgeResult, LlmSettings, judge
    from blindtest.model.slots import plan_slots
    from blindtest.pipeline.recompute import verify_run
    from blindtest.pipeline.verify import Verification, verify
    from blindtest.planning.stage import Plan, plan


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'blindtest' has no attribute {name!r}")
    return getattr(import_module(module), name)
