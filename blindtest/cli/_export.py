"""bt-analyze --export-preferences: the options and the summary line (the stage writes the
file, :func:`blindtest.analysis.stage.analyze`; the rows are
:func:`blindtest.analysis.judges.preference_rows`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import click

from blindtest.cli._options import FilePath, grouped

_OPTIONS = [
    click.option(
        "--export-preferences",
        "export_path",
        metavar="FILE",
        type=FilePath(),
        help="Preference: write JSONL rows {prompt, chosen, rejected, judge, confidence, "
        "reason, text, judge_saw} (TRL's DPO layout) for the confident, consistent, leak-free "
        "verdicts; when "
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
    click.option(
        "--export-text",
        type=click.Choice(["original", "judged"]),
        default="original",
        show_default=True,
        help="What --export-preferences writes as chosen and rejected: the models' own texts "
        "(original), or the texts the judge saw after --launder, --strip-formatting, "
        "--strip-identity and --truncate-match (judged). Each row names the "
        "transformations and the SHA-256 of the text the judge saw.",
    ),
]
#: bt-analyze's preference-export options, as one group.
options = grouped(*_OPTIONS)


def summary(path: Path, kept: int, dropped: Mapping[str, int]) -> None:
    """What the export kept and why the rest was dropped, on stderr."""
    why = ", ".join(f"{n} {reason}" for reason, n in sorted(dropped.items()))
    pairs = f"{kept} preference pair{'' if kept == 1 else 's'}"
    click.echo(f"{path}: {pairs} kept; {sum(dropped.values())} dropped ({why or 'none'})", err=True)
