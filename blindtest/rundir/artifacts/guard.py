"""The output guard: nothing is written over an input, a file of another kind, or a file
that is not a blindtest artifact, ``--force`` or not (:func:`claim_output`, and
bt-analyze's :func:`claim_report`); what an existing file holds (:func:`artifact_kind`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import orjson

from blindtest.errors import BadInput, BlindtestError, option
from blindtest.rundir.artifacts.documents import read_design_hash
from blindtest.rundir.artifacts.names import (
    AUDIT,
    DESIGN,
    DESIGN_HASH,
    GENERATION,
    HTML,
    JUNIT,
    PICKS,
    RESPONSES,
    RUN_FILE_KINDS,
    TRIALS,
)
from blindtest.rundir.artifacts.validation import (
    _TAG,
)

# --------------------------------------------------------------------------- writing


def refuse_overwrite(path: Path, force: bool) -> None:
    """The ``--force`` guard: call it for every output before writing anything."""
    if path.exists() and not force:
        raise BadInput(f"{path} already exists; use {option('force', True)} to overwrite it")


# --------------------------------------------------------------------------- the output guard

#: ``artifact_kind`` of a file whose only line is an unfinished append: it may be our own.
TORN = "torn"
_HTML_START = re.compile(rb"^\s*<!doctype html", re.IGNORECASE)
_JUNIT_START = re.compile(rb"^\s*<\?xml[^>]*>\s*<testsuites\b")


def artifact_kind(path: Path) -> str | None:
    """What an existing file holds: the schema name of its first record (``"design"``,
    ``"picks"``...), ``"html"`` for a page blindtest rendered, ``"junit"`` for its JUnit XML,
    ``"design hash"`` for a ``design.sha256``, ``""`` for an empty file, ``TORN`` for a lone
    unfinished JSONL append, and None for anything that is not a blindtest artifact."""
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 16)
            document = head.lstrip().startswith(b"{\n")  # an indented JSON document
            if document:
                head += handle.read()
            elif b"\n" not in head:
                head += handle.readline()  # a JSONL record longer than the first read
    except OSError:
        return None
    if not head.strip():
        return ""
    if _HTML_START.match(head):
        start = head[:8192]
        ours = b'name="generator"' in start and b"blindtest" in start
        return HTML if ours or b"blindtest report" in start else None
    if _JUNIT_START.match(head):
        return JUNIT if b'name="blindtest' in head[:4096] else None
    if path.name == DESIGN_HASH and re.fullmatch(rb"[0-9a-f]{64}\s*", head):
        return "design hash"
    text = head.lstrip()
    first = text if document else text.split(b"\n", 1)[0]
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError:
        lone = b"\n" not in text  # one unterminated line: an append a crash cut short
        return TORN if lone and text.startswith(b'{"') else None
    tag = record.get("schema") if isinstance(record, dict) else None
    match = _TAG.match(tag) if isinstance(tag, str) else None
    return match["name"] if match is not None else None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _kind_words(kind: str) -> str:
    words = {"design hash": "design hash", HTML: "HTML report", JUNIT: "JUnit file"}
    return words.get(kind, f"{kind} file")


def claim_output(
    path: Path,
    kind: str,
    *,
    force: bool,
    inputs: Iterable[Path] = (),
    same_inputs: bool = False,
) -> None:
    """The output guard: call it for every output before writing anything.

    Refuses (``BadInput``, exit 2, naming the file), ``--force`` or not, to write over an input
    of the command (same file by inode), a file of another kind (told by the ``schema`` tag of
    its first record, and by the run directory's own file names), or a file that is not a
    blindtest artifact at all. ``force`` replaces only a file of the command's own ``kind``;
    ``same_inputs`` replaces one made from the same inputs without ``force``.
    """
    if path.is_dir():
        raise BadInput(f"{path} is a directory; give a file name")
    for source in inputs:
        if _same_file(path, source):
            raise BadInput(
                f"{path} is an input of this command; refusing to overwrite it, "
                f"{option('force')} or not: choose another output file"
            )
    reserved = RUN_FILE_KINDS.get(path.name)
    if reserved is not None and reserved != kind:
        raise BadInput(
            f"{path}: {path.name} is the name of a run's {_kind_words(reserved)}; refusing to "
            f"write a {_kind_words(kind)} there, {option('force')} or not: choose another name"
        )
    if not path.exists():
        return
    found = artifact_kind(path)
    if found is None:
        raise BadInput(
            f"{path} is not a blindtest {_kind_words(kind)}; refusing to overwrite it, "
            f"{option('force')} or not: choose another name"
        )
    if found not in ("", TORN, kind):
        raise BadInput(
            f"{path} is a {_kind_words(found)} (another stage's artifact); refusing to "
            f"overwrite it with a {_kind_words(kind)}, {option('force')} or not: choose another "
            "name"
        )
    if force or same_inputs:
        return
    raise BadInput(f"{path} already exists; use {option('force', True)} to overwrite it")


def claim_report(
    run_dir: Path,
    picks: Sequence[Path],
    picks_names: Sequence[str],
    report_path: Path,
    e_values_path: Path,
    html_path: Path | None,
    force: bool,
) -> None:
    """bt-analyze's output guard: its report, e-values and HTML may replace only their own
    kind, never an input; a report made from the same inputs (same design, same picks file
    names: a void report before the last picks) is replaced without --force. ``picks_names``
    names the ``picks`` files as the report does."""
    if html_path is not None and os.path.abspath(html_path) == os.path.abspath(report_path):
        raise BadInput(
            f"{option('html', html_path)} is the report's own file; give the page another name"
        )
    inputs = [
        *picks,
        *(run_dir / name for name in (DESIGN, DESIGN_HASH)),
        *(run_dir / name for name in (RESPONSES, TRIALS)),
        *(run_dir / name for name in (AUDIT, GENERATION)),
    ]
    same = _same_report_inputs(report_path, run_dir, list(picks_names))
    claim_output(report_path, "report", force=force, inputs=inputs, same_inputs=same)
    claim_output(e_values_path, "e_values", force=True, inputs=inputs)
    if html_path is not None:
        claim_output(html_path, HTML, force=force, inputs=inputs, same_inputs=same)


def _same_report_inputs(report_path: Path, run_dir: Path, picks_names: list[str]) -> bool:
    try:
        recorded = orjson.loads(report_path.read_bytes())
        design_sha256 = read_design_hash(run_dir)
    except (OSError, ValueError, BlindtestError):
        return False
    if not isinstance(recorded, dict) or recorded.get("design_sha256") != design_sha256:
        return False
    names = recorded.get("picks_files")
    if isinstance(names, list):  # and the --against files read beside them
        names = [*names, *(recorded.get("against_files") or [])]
    else:
        known = set(RUN_FILE_KINDS) - {PICKS}
        names = [name for name in recorded.get("inputs") or {} if name not in known]
    return sorted(names) == sorted(picks_names)
