"""The run directory's own file names, and the kind of artifact each one holds (no stage
writes another kind there). File names are constants here only.
"""

from __future__ import annotations

DESIGN = "design.json"
DESIGN_HASH = "design.sha256"
RESPONSES = "responses.jsonl"
TRIALS = "trials.jsonl"
PICKS = "picks.jsonl"
AUDIT = "audit.json"
REPORT = "report.json"
E_VALUES = "e_values.jsonl"
GENERATION = "generation.json"
#: bt-generate --batch: the batches submitted for this run (their ids are the resume state).
BATCHES = "batches.json"
#: bt-judge --web: the SHA-256 of each link the judging page gave, so a restart accepts them.
WEB_LINKS = "web-links.jsonl"

#: Files made from a design: once one exists the design may not be replaced.
DOWNSTREAM_OF_DESIGN = (RESPONSES, TRIALS, PICKS, AUDIT, REPORT, GENERATION, BATCHES)

#: The lock file of a run directory (``run_lock``); it exists only while a stage holds it.
LOCK = ".lock"

#: What each of the run directory's own file names holds: no stage writes another kind there.
RUN_FILE_KINDS = {
    DESIGN: "design",
    DESIGN_HASH: "design hash",
    RESPONSES: "responses",
    TRIALS: "trials",
    PICKS: "picks",
    AUDIT: "audit",
    REPORT: "report",
    E_VALUES: "e_values",
    GENERATION: "generation",
    BATCHES: "batches",
    WEB_LINKS: "web_links",
}

#: The ``kind`` of the standalone HTML page bt-analyze writes (see ``claim_output``).
HTML = "html"
#: The ``kind`` of the JUnit XML bt-analyze --junit writes (one test case per decision).
JUNIT = "junit"


def e_values_name(report_name: str) -> str:
    """The e-values file that goes with a report: ``report.json`` -> ``e_values.jsonl``,
    ``report-bob.json`` -> ``e_values-bob.jsonl``."""
    stem = report_name.removesuffix(".json")
    suffix = stem.removeprefix("report")
    return f"e_values{suffix}.jsonl" if suffix != stem else f"{stem}.e_values.jsonl"
