"""The generation stage: fetch every response the design needs (or import them), record the
session in RUN/generation.json and write the blinded view, RUN/trials.jsonl."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from blindtest import reportfmt
from blindtest.errors import BadInput, option
from blindtest.present.hints import stage_command
from blindtest.rundir import artifacts
from blindtest.rundir.locking import holding_run
from blindtest.rundir.types import GenerationRecord
from blindtest.transport.client import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT
from blindtest.transport.retry import DEFAULT_POLICY

if TYPE_CHECKING:
    from blindtest.generation.fetch import Progress
    from blindtest.transport.preflight import CheckResult

__all__ = ["GenerateResult", "check", "generate"]

Say = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class GenerateResult:
    """What :func:`generate` left in RUN: ``mode`` is ``live`` (asked the endpoints or
    imported --from-dirs outputs), ``batch-export``, ``batch-import`` or ``batch``;
    ``trials`` is the number of blinded trials in ``trials_path`` once every slot is answered
    (None while slots are missing: a batch still out, or only exported)."""

    run_dir: Path
    mode: str
    responses_path: Path
    generation_path: Path
    trials_path: Path | None
    trials: int | None

    @property
    def complete(self) -> bool:
        return self.trials is not None


def _check_numbers(timeout: float, rpm: float | None) -> None:
    """Every numeric option, before anything is read or written (nan and inf pass click)."""
    if not (math.isfinite(timeout) and timeout > 0):
        raise BadInput(
            f"{option('timeout')}: expected a finite number of seconds > 0, got {timeout}"
        )
    if rpm is not None and not (math.isfinite(rpm) and rpm > 0):
        raise BadInput(
            f"{option('rpm')}: expected a finite number of requests per minute > 0, got {rpm}"
        )


def batch_mode(
    batch_export: Path | None, batch_import: Sequence[Path], batch: bool, refetch_changed: bool
) -> str | None:
    """The batch mode asked for, or None (refusing two at once, and ``refetch_changed`` with
    any: it asks live)."""
    modes = (batch_export is not None, bool(batch_import), batch)
    if sum(modes) > 1:
        raise BadInput(
            f"give one of {option('batch_export')}, {option('batch_import')} and {option('batch')}"
        )
    if any(modes) and refetch_changed:
        raise BadInput(
            f"{option('refetch_changed')} asks live: give it without {option('batch_export')}, "
            f"{option('batch_import')} and {option('batch')}"
        )
    if batch_export is not None:
        return "batch-export"
    if batch_import:
        return "batch-import"
    return "batch" if batch else None


def generate(
    run_dir: str | os.PathLike[str],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float = DEFAULT_TIMEOUT,
    rpm: float | None = None,
    max_retries: int = DEFAULT_POLICY.max_retries,
    prices: Mapping[str, str | None] | None = None,
    a_concurrency: int | None = None,
    b_concurrency: int | None = None,
    a_rpm: float | None = None,
    b_rpm: float | None = None,
    a_header_env: Sequence[str] = (),
    b_header_env: Sequence[str] = (),
    refetch_changed: bool = False,
    batch_export: str | os.PathLike[str] | None = None,
    batch_import: Sequence[str | os.PathLike[str]] = (),
    batch: bool = False,
    batch_format: str = "openai",
    poll_interval: float = 10.0,
    say: Say | None = None,
    on_progress: Callable[[Progress, bool], None] | None = None,
    batch_progress: Callable[[str, bool], None] | None = None,
    holder: str | None = None,
) -> GenerateResult:
    """Fetch every response RUN's design needs (``bt-generate``); a rerun fetches only what
    is missing. ``prices``: ``{"A": "IN,OUT", "B": ..., "launder": ...}`` in dollars per
    million tokens (a design of candidates: ``{NAME: "IN,OUT", ...}``). Per side:
    ``a_concurrency``, ``b_rpm``, ``a_header_env`` (``NAME:ENVVAR`` headers; refused for a
    design of candidates). One of ``batch_export`` (a file to write), ``batch_import``
    (result files) or ``batch`` (submit, wait, import) instead of asking live.

    Holds RUN's lock. ``say`` gets the lines the command prints on stderr; ``on_progress``
    and ``batch_progress`` redraw a progress display. Raises ``EndpointFailed`` (what was
    fetched is kept and recorded) and ``CheckFailed`` (the deterministic guard) as the
    command exits 3 and 1."""
    run = Path(run_dir)
    tell: Say = say if say is not None else (lambda _: None)
    export = Path(batch_export) if batch_export is not None else None
    imports = [Path(p) for p in batch_import]
    with holding_run(run, holder):
        from blindtest.generation import generate as lib
        from blindtest.generation.cost import parse_prices

        _check_numbers(timeout, rpm)
        sides = lib.side_transport(
            {
                "a_concurrency": a_concurrency,
                "b_concurrency": b_concurrency,
                "a_rpm": a_rpm,
                "b_rpm": b_rpm,
                "a_header_env": tuple(a_header_env),
                "b_header_env": tuple(b_header_env),
                "refetch_changed": refetch_changed,
            }
        )
        given = parse_prices(dict(prices or {}))
        _reuse_parent_answers(run, tell)
        mode = batch_mode(export, imports, batch, sides["refetch_changed"])
        if mode is not None:
            work = _BatchWork(run, mode, export, imports, batch_format, poll_interval, timeout)
            work.run_with(given, tell, batch_progress)
            return _result(run, mode)
        count = _live(
            run,
            given,
            lib.FetchOptions(concurrency, timeout, rpm, max_retries, **sides),
            tell,
            on_progress,
        )
    tell(
        f"wrote {run / artifacts.TRIALS}: {reportfmt.count(count, 'blinded trial')}; next: "
        f"{stage_command('judge', run)}"
    )
    return GenerateResult(
        run,
        "live",
        run / artifacts.RESPONSES,
        run / artifacts.GENERATION,
        run / artifacts.TRIALS,
        count,
    )


def _live(
    run: Path,
    given: Mapping[str, tuple[float, float]],
    options: Any,
    say: Say,
    on_progress: Callable[[Progress, bool], None] | None,
) -> int:
    from blindtest.generation import generate as lib
    from blindtest.generation.stage_io import StageIO
    from blindtest.model.outputs import imported_text

    # Checked before anything is written or sent; the prompts' digests are checked, not kept.
    loaded = artifacts.load_design_lean(run, prompt_digests=False)
    path = run / artifacts.RESPONSES
    existing = artifacts.iter_jsonl(path, "responses", missing_ok=True)  # (offset, row)

    @contextmanager
    def open_responses() -> Iterator[Callable[[Mapping[str, Any]], int]]:
        with artifacts.JsonlAppender(path, "responses", grouped=True) as out:
            yield out.add  # returns each row's offset

    def read_imported(side: str, item: str, variant: str) -> str:
        return imported_text(loaded.design["source"], side, item, variant)

    with artifacts.LineReader(path) as read_row:
        io = StageIO(
            open_responses=open_responses,
            write_generation=lambda record: _write_generation(run, record),
            read_imported=read_imported,
            say=say,
            on_progress=on_progress,
            read_row=read_row,
        )
        trials = lib.generate_stage(
            loaded.design, loaded.sha256, existing, _previous(run), given, options, io
        )
        return artifacts.write_jsonl(run / artifacts.TRIALS, trials, "trials", force=True)


@dataclass(frozen=True, slots=True)
class _BatchWork:
    """The batch mode asked for, run by :mod:`blindtest.generation.batch_mode`."""

    run: Path
    mode: str
    export: Path | None
    imports: list[Path]
    fmt: str
    poll_interval: float
    timeout: float

    def run_with(
        self,
        prices: dict[str, tuple[float, float]],
        say: Say,
        progress: Callable[[str, bool], None] | None,
    ) -> None:
        from blindtest.generation import batch_mode as core

        if self.mode == "batch-export":
            assert self.export is not None
            core.export(self.run, self.export, self.fmt, say)
        elif self.mode == "batch-import":
            core.import_files(self.run, self.imports, prices, say)
        else:
            from blindtest.transport.batch_run import check_submittable

            check_submittable(self.fmt)
            core.submit(self.run, prices, self.timeout, self.poll_interval, progress, say)


def _result(run: Path, mode: str) -> GenerateResult:
    """A batch mode's result: the blinded view when the batch answered every slot."""
    trials_path = run / artifacts.TRIALS
    complete = trials_path.exists() and not _missing_slots(run)
    count = trials_path.read_bytes().count(b"\n") if complete else None
    return GenerateResult(
        run,
        mode,
        run / artifacts.RESPONSES,
        run / artifacts.GENERATION,
        trials_path if complete else None,
        count,
    )


def _missing_slots(run: Path) -> bool:
    from blindtest.model.slots import SlotState, pending_work

    loaded = artifacts.load_design(run)
    rows = artifacts.read_jsonl(run / artifacts.RESPONSES, "responses", missing_ok=True)
    return bool(pending_work(loaded.design, SlotState.from_rows(rows.records)))


def check(
    run_dir: str | os.PathLike[str],
    *,
    prices: Mapping[str, str | None] | None = None,
    a_header_env: Sequence[str] = (),
    b_header_env: Sequence[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
) -> CheckResult:
    """``bt-generate RUN --check``: one small request per endpoint of RUN's design (each side,
    the launderer) and what each says (:mod:`blindtest.transport.preflight`). Writes nothing
    to RUN, takes no lock; the result's ``ok`` is False when any line failed."""
    from blindtest.generation.check_run import run_targets
    from blindtest.generation.cost import parse_prices
    from blindtest.model.sides import parse_header_env
    from blindtest.transport.preflight import CheckResult, check_targets

    run = Path(run_dir)
    _check_numbers(timeout, None)
    given = parse_prices(dict(prices or {}))
    headers = {
        side: tuple(parse_header_env(option(f"{side.lower()}_header_env"), item) for item in items)
        for side, items in (("A", a_header_env), ("B", b_header_env))
    }
    targets = run_targets(run, given, headers)
    if not targets:
        return CheckResult(())
    return check_targets(targets, min(timeout, 60.0))


def _reuse_parent_answers(run: Path, say: Say) -> None:
    """A design made from another run's (``bt-design --from``): before its first session,
    copy the answers that run already holds for the kept trials (none asked twice)."""
    if (run / artifacts.RESPONSES).exists():
        return
    from blindtest.generation.reuse import reuse_answers

    reused = reuse_answers(run, artifacts.load_design(run).design, say)
    if reused is not None:
        laundered = f" and {reused.laundered} launderings" if reused.laundered else ""
        say(
            f"reused {reused.answers} answers{laundered} from {reused.run} (the run this design "
            "was made from): none is asked again"
        )


def _previous(run_dir: Path) -> dict[str, Any] | None:
    """The generation.json an earlier session wrote, if any (the ledger and the prices)."""
    path = run_dir / artifacts.GENERATION
    if not path.exists():
        return None
    return artifacts.read_json(path, "generation")


def _write_generation(run_dir: Path, record: GenerationRecord) -> bool:
    """Write generation.json unless it already holds exactly these bytes (a rerun that
    fetches nothing changes nothing); return whether it was written."""
    path = run_dir / artifacts.GENERATION
    if path.exists() and artifacts.read_json(path, "generation") == record:
        return False
    artifacts.write_json(path, record, "generation", force=True)
    return True
