"""What bt-generate does outside itself, as callbacks (:class:`StageIO`): the stage
(:mod:`blindtest.generation.generate`) and its batch modes
(:mod:`blindtest.generation.batch_mode`)
take one, so neither opens a file."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from blindtest.generation.fetch import Progress
from blindtest.generation.ledger import AppendRow, ReadRow
from blindtest.rundir.types import GenerationRecord

__all__ = ["StageIO"]


@dataclass(frozen=True, slots=True)
class StageIO:
    """Everything the stage does outside itself, as callbacks (the CLI gives them files and
    stderr): ``open_responses`` opens ``responses.jsonl`` for appending (opened only when
    there is something to append); ``write_generation`` writes ``generation.json`` unless it
    already holds that record, returning whether it wrote; ``read_imported(side, item,
    variant)`` reads a --from-dirs output; ``say`` prints a line; ``on_progress(progress,
    final)`` redraws a progress display."""

    open_responses: Callable[[], AbstractContextManager[AppendRow]]
    write_generation: Callable[[GenerationRecord], bool]
    read_imported: Callable[[str, str, str], str]
    say: Callable[[str], None] = field(default=lambda _: None)
    on_progress: Callable[[Progress, bool], None] | None = None
    #: Reads a row of ``responses.jsonl`` back by the byte offset its line starts at (the
    #: ``append`` of ``open_responses`` then returns each row's offset, and ``existing``
    #: comes as ``(offset, row)`` pairs); None: rows are kept in memory (small runs, tests).
    read_row: ReadRow | None = None
