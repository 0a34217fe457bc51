"""The batch options of bt-generate (--batch-export FILE, --batch-import FILE..., --batch) and
of bt-judge for an LLM judge (the second half): parsed here, run by the stages
(:mod:`blindtest.generation.stage`, :mod:`blindtest.judging.stage`; the files both share and
submitting are :mod:`blindtest.transport.batch_run`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from blindtest.cli._options import FilePath, grouped
from blindtest.errors import BadInput


def progress_line(quiet: bool) -> Callable[[str, bool], None] | None:
    """``--batch``'s progress line (on a terminal only; the stage refuses a format it
    cannot submit)."""
    if quiet or not sys.stderr.isatty():
        return None

    def progress(line: str, final: bool) -> None:
        click.echo(f"\r{line}   ", err=True, nl=final)

    return progress


#: The two options bt-generate and bt-judge share word for word.
_FORMAT_AND_POLL = [
    click.option(
        "--batch-format",
        type=click.Choice(["openai", "anthropic"]),
        default="openai",
        show_default=True,
        help="Format of --batch-export (imports tell the format by each line).",
    ),
    click.option(
        "--poll-interval",
        type=click.FloatRange(min=0),
        default=10.0,
        show_default=True,
        help="Seconds between polls of a submitted batch (--batch).",
    ),
]

_OPTIONS = [
    click.option(
        "--batch-export",
        "batch_export",
        metavar="FILE",
        type=FilePath(),
        help="Write every missing slot as a batch input file instead of asking "
        "(split into FILE.partN over 50,000 requests or 200 MB).",
    ),
    click.option(
        "--batch-import",
        "batch_import",
        metavar="FILE",
        multiple=True,
        type=FilePath(exists=True),
        help="Import batch output and error files (OpenAI, vLLM run-batch or Anthropic): "
        "--batch-import FILE [FILE]...",
    ),
    click.option(
        "--batch",
        "batch",
        is_flag=True,
        help="Submit the missing slots to the endpoints' Batch API (/v1/files, /v1/batches), "
        "wait, and import; a rerun picks up the recorded batches.",
    ),
    *_FORMAT_AND_POLL,
]
#: The files after the first of ``--batch-import FILE FILE...`` (an option takes one value;
#: the rest arrive as trailing arguments, refused without --batch-import).
_MORE_FILES = click.argument(
    "batch_files",
    nargs=-1,
    metavar="[FILE]...",
    type=FilePath(exists=True),
)
#: bt-generate's batch options, as one group (they arrive as ``**batch``).
options = grouped(*_OPTIONS, _MORE_FILES)


def merge_files(batch: dict[str, Any]) -> None:
    """Fold the trailing files into ``batch_import`` (``--batch-import a.jsonl b.jsonl``)."""
    more = tuple(batch.pop("batch_files", None) or ())
    if not more:
        return
    if not batch["batch_import"]:
        raise BadInput(
            f"unexpected argument {more[0]}; files to import follow --batch-import "
            "(--batch-import FILE [FILE]...)"
        )
    batch["batch_import"] = (*batch["batch_import"], *more)


# --------------------------------------------------------------------------------------------
# bt-judge --judge llm:MODEL: the same three modes for an LLM judge's comparisons

_JUDGE_OPTIONS = [
    click.option(
        "--batch-export",
        "batch_export",
        metavar="FILE",
        type=FilePath(),
        help="LLM judge: write every missing comparison (both passes; one with --no-swap) as a "
        "batch input file "
        "instead of asking (FILE.partN over 50,000 requests or 200 MB).",
    ),
    click.option(
        "--batch-import",
        "batch_import",
        metavar="FILE",
        multiple=True,
        type=FilePath(exists=True),
        help="LLM judge: import batch output and error files: --batch-import FILE [FILE]...",
    ),
    click.option(
        "--batch",
        "batch",
        is_flag=True,
        help="LLM judge: submit the missing comparisons to --judge-url's Batch API, wait, "
        "and import; a rerun picks up the recorded batches.",
    ),
    *_FORMAT_AND_POLL,
]
#: bt-judge's batch options, as one group (they arrive in ``**llm``; :func:`judge_batch_args`).
judge_options = grouped(*_JUDGE_OPTIONS, _MORE_FILES)
JUDGE_NAMES = (
    "batch_export",
    "batch_import",
    "batch",
    "batch_format",
    "poll_interval",
    "batch_files",
)


def judge_batch_args(ctx: click.Context, llm: dict[str, Any]) -> dict[str, Any]:
    """Take bt-judge's batch options out of ``llm``; refused with a judge that is no LLM."""
    batch = {name: llm.pop(name) for name in JUDGE_NAMES}
    source = click.core.ParameterSource.COMMANDLINE
    named = [
        "--" + n.replace("_", "-")
        for n in JUDGE_NAMES[:-1]  # not the trailing files: merge_files says what they are
        if ctx.get_parameter_source(n) is source
    ]
    kind = str(ctx.params.get("kind", ""))
    if named and not kind.startswith("llm:"):
        raise BadInput(f"{', '.join(named)}: only for --judge llm:MODEL")
    merge_files(batch)
    return batch


def __getattr__(name: str) -> Any:
    # part_paths moved to blindtest.transport.batch_run; read on first use (start-up).
    if name == "part_paths":
        from blindtest.transport.batch_run import part_paths

        return part_paths
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
