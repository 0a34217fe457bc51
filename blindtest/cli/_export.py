"""bt-analyze --export-preferences: the options and the write (the rows are
:func:`blindtest.analysis.judges.preference_rows`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import orjson

from blindtest import artifacts
from blindtest.cli._common import FilePath, grouped
from blindtest.errors import BadInput

_OPTIONS = [
    click.option(
        "--export-preferences",
        "export_path",
        metavar="FILE",
        type=FilePath(),
        help="Preference: write JSONL rows {prompt, chosen, rejected, judge, confidence, "
        "reason} (TRL's DPO layout) for the confident, consistent, leak-free verdicts; when "
        "the prompts are conversations, TRL's conversational layout (prompt: every turn as "
        "{role, content}; chosen, rejected: one assistant message each).",
    ),
    click.option(
        "--export-min-confidence",
        type=click.FloatRange(0, 1),
        default=0.8,
        show_default=True,
        help="Keep only verdicts more confident than this in --export-preferences.",
    ),
]
#: bt-analyze's preference-export options, as one group.
options = grouped(*_OPTIONS)


def check(path: Path | None, run_dir: Path, picks: Sequence[Path], force: bool) -> None:
    """Before anything is written: never over a run file or an input; --force to replace."""
    if path is None:
        return
    inputs = [*picks, run_dir / artifacts.DESIGN, run_dir / artifacts.TRIALS]
    if path.name in artifacts.RUN_FILE_KINDS or any(path.resolve() == p.resolve() for p in inputs):
        raise BadInput(f"--export-preferences {path}: that is a run file or an input; name another")
    if path.exists() and not force:
        raise BadInput(f"--export-preferences {path} already exists; use --force to overwrite it")


def write(path: Path, rows: Sequence[dict[str, Any]], dropped: dict[str, int]) -> None:
    artifacts.write_bytes_atomic(path, b"".join(orjson.dumps(r) + b"\n" for r in rows))
    why = ", ".join(f"{n} {reason}" for reason, n in sorted(dropped.items()))
    kept = f"{len(rows)} preference pair{'' if len(rows) == 1 else 's'}"
    click.echo(f"{path}: {kept} kept; {sum(dropped.values())} dropped ({why or 'none'})", err=True)
