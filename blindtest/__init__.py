"""blindtest: can anyone actually tell these two language models apart, on my prompts?

The library behind the ``bt-*`` commands: ``blindtest.design``, ``generate``, ``judge``,
``audit``, ``analyze``, ``verify`` and ``plan`` do what the commands do and return a result
(docs/python-api.md). Everything loads lazily, so ``import blindtest`` (and every command's
``--help``) stays fast; the statistics live in ``blindtest.stats``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from blindtest.version import __version__

_EXPORTS = {
    # The stages, each what its command does (lock, claim the outputs, write the files),
    # returning a frozen result (docs/python-api.md).
    "design": "blindtest.stages.design",
    "generate": "blindtest.stages.generate",
    "judge": "blindtest.stages.judge",
    "audit": "blindtest.stages.audit",
    "analyze": "blindtest.stages.analyze",
    "verify": "blindtest.stages.verify",
    "plan": "blindtest.stages.plan",
    "DesignResult": "blindtest.stages.design",
    "GenerateResult": "blindtest.stages.generate",
    "JudgeResult": "blindtest.stages.judge",
    "LlmSettings": "blindtest.stages.judge",
    "AuditResult": "blindtest.stages.audit",
    "AnalyzeResult": "blindtest.stages.analyze",
    "Verification": "blindtest.stages.verify",
    "Plan": "blindtest.stages.plan",
    # Errors, and the pure builders below the stages.
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
    "run_generation": "blindtest.generation.fetch",
    "verify_run": "blindtest.verifying",
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
    from blindtest.analyzing import analyze_run, build_report
    from blindtest.auditing import build_audit
    from blindtest.designing import build_arrangement, build_design
    from blindtest.errors import BadInput, BlindtestError, CheckFailed, EndpointFailed
    from blindtest.generation.fetch import run_generation
    from blindtest.slots import plan_slots
    from blindtest.stages.analyze import AnalyzeResult, analyze
    from blindtest.stages.audit import AuditResult, audit
    from blindtest.stages.design import DesignResult, design
    from blindtest.stages.generate import GenerateResult, generate
    from blindtest.stages.judge import JudgeResult, LlmSettings, judge
    from blindtest.stages.plan import Plan, plan
    from blindtest.stages.verify import Verification, verify
    from blindtest.verifying import verify_run


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'blindtest' has no attribute {name!r}")
    return getattr(import_module(module), name)
