"""The audit stage: the mechanical tell bots and the formatting census -> RUN/audit.json."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from blindtest.errors import BadInput
from blindtest.rundir import artifacts
from blindtest.rundir.locking import holding_run
from blindtest.rundir.types import AuditRecord

__all__ = ["AuditResult", "audit"]


@dataclass(frozen=True, slots=True)
class AuditResult:
    """What :func:`audit` wrote: ``path`` (RUN/audit.json) and its ``document`` (the bots'
    scores reveal which side is which: not for a judge still judging). ``responses_missing``:
    slots responses.jsonl does not answer, left out of the census; ``has_responses``: False
    when there is no responses.jsonl (a census without refusals or cut responses)."""

    run_dir: Path
    path: Path
    document: AuditRecord
    responses_missing: int
    has_responses: bool


def audit(
    run_dir: str | os.PathLike[str],
    *,
    allow_commands: bool = False,
    command_timeout: float = 30.0,
    force: bool = False,
    holder: str | None = None,
) -> AuditResult:
    """Replay every trial of RUN with the mechanical bots and count formatting tells per
    model (``bt-audit``). ``allow_commands`` runs the prompts' ``{"command": ...}`` checks, a
    shell command per response, each for at most ``command_timeout`` seconds. An audit of the
    same design is replaced without ``force``. Holds RUN's lock."""
    from blindtest.auditing.build import build_audit
    from blindtest.model.checks import subprocess_runner
    from blindtest.model.picks import trials_from_records

    run = Path(run_dir)
    with holding_run(run, holder):
        loaded = artifacts.load_design(run)
        names = (artifacts.DESIGN, artifacts.TRIALS, artifacts.RESPONSES)
        inputs = [run / name for name in names]
        path = run / artifacts.AUDIT
        same = _same_design(path, loaded.sha256)
        artifacts.claim_output(path, "audit", force=force, inputs=inputs, same_inputs=same)
        records = artifacts.read_jsonl(run / artifacts.TRIALS, "trials").records
        trials = trials_from_records(records, loaded.design)
        responses_path = run / artifacts.RESPONSES
        responses = (
            artifacts.read_jsonl(responses_path, "responses").records
            if responses_path.exists()
            else None
        )
        runner = subprocess_runner(command_timeout) if allow_commands else None
        document = build_audit(loaded.design, loaded.sha256, trials, responses, runner)
        artifacts.write_json(path, document, "audit", force=True)
    return AuditResult(
        run, path, document, int(document["responses_missing"] or 0), responses is not None
    )


def _same_design(path: Path, design_sha256: str) -> bool:
    """An audit of the same design is this stage's own output for the same inputs: a rerun
    replaces it without --force (it is recomputed from the same files)."""
    if artifacts.artifact_kind(path) != "audit":
        return False
    try:
        return bool(artifacts.read_json(path, "audit")["design_sha256"] == design_sha256)
    except BadInput:
        return False
