"""bt-generate: fetch every response the design needs, then write the blinded view."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from blindtest import artifacts
from blindtest.artifact_types import GenerationRecord
from blindtest.cli import _batch, _common
from blindtest.cli._common import (
    command,
    concurrency_option,
    quiet_option,
    run_argument,
    timeout_option,
)
from blindtest.errors import BadInput
from blindtest.hints import stage_command
from blindtest.retry import DEFAULT_POLICY

if TYPE_CHECKING:
    from blindtest.generating import Progress


def _check_numbers(timeout: float, rpm: float | None) -> None:
    """Every numeric option, before anything is read or written (nan and inf pass click)."""
    if not (math.isfinite(timeout) and timeout > 0):
        raise BadInput(f"--timeout: expected a finite number of seconds > 0, got {timeout}")
    if rpm is not None and not (math.isfinite(rpm) and rpm > 0):
        raise BadInput(f"--rpm: expected a finite number of requests per minute > 0, got {rpm}")


@command("generate")
@run_argument
@concurrency_option
@timeout_option
@click.option(
    "--max-retries",
    type=click.IntRange(min=0),
    default=DEFAULT_POLICY.max_retries,
    show_default=True,
    help="Retries per request on 429, 5xx, timeouts, resets.",
)
@click.option(
    "--rpm",
    type=click.FloatRange(min=0, min_open=True),
    help="Cap on requests started per minute, per endpoint.",
)
@_common.side_transport_options
@_common.refetch_option
@click.option("--price-a", metavar="IN,OUT", help="Side A price, dollars per million tokens.")
@click.option("--price-b", metavar="IN,OUT", help="Side B price, dollars per million tokens.")
@click.option("--price-launder", metavar="IN,OUT", help="Laundering model price.")
@_batch.options
@quiet_option
@_common.writes_run
def generate(
    run_dir: Path,
    concurrency: int,
    timeout: float,
    max_retries: int,
    rpm: float | None,
    price_a: str | None,
    price_b: str | None,
    price_launder: str | None,
    quiet: bool,
    **batch: Any,
) -> None:
    """Fetch every response before any judging; a rerun fetches only what is missing.

    \b
    Example:
      export OPENAI_API_KEY=...
      bt-generate run --concurrency 16 --price-a 2.5,10 --price-b 0.15,0.6
    """
    from blindtest import generating as lib
    from blindtest.outputs import imported_text

    _check_numbers(timeout, rpm)
    sides = lib.side_transport(batch)  # --a-concurrency, --b-rpm, --refetch-changed...
    given = lib.parse_prices({"A": price_a, "B": price_b, "launder": price_launder})
    if _batch.wanted(batch, sides["refetch_changed"]):
        _batch.dispatch(run_dir, batch, given, quiet, timeout)
        return
    lib.steady_heap()  # a long run's peak memory stays near its start (issue 15)
    loaded = lib.load_design_aside(run_dir)  # checked before anything is written or sent
    path = run_dir / artifacts.RESPONSES
    existing = artifacts.iter_jsonl(path, "responses", missing_ok=True)  # (offset, row)

    @contextmanager
    def open_responses() -> Iterator[Callable[[Mapping[str, Any]], int]]:
        with artifacts.JsonlAppender(path, "responses", grouped=True) as out:
            yield out.add  # returns each row's offset

    def read_imported(side: str, item: str, variant: str) -> str:
        return imported_text(loaded.design["source"], side, item, variant)

    with artifacts.LineReader(path) as read_row:
        io = lib.StageIO(
            open_responses=open_responses,
            write_generation=lambda record: _write_generation(run_dir, record),
            read_imported=read_imported,
            say=(lambda _: None) if quiet else (lambda text: _common.echo_prose(text, err=True)),
            on_progress=_ProgressLine() if not quiet and sys.stderr.isatty() else None,
            read_row=read_row,
        )
        options = lib.FetchOptions(concurrency, timeout, rpm, max_retries, **sides)
        trials = lib.generate_stage(
            loaded.design, loaded.sha256, existing, _previous(run_dir), given, options, io
        )
        count = artifacts.write_jsonl(run_dir / artifacts.TRIALS, trials, "trials", force=True)
    next_ = stage_command("judge", run_dir)
    io.say(f"wrote {run_dir / artifacts.TRIALS}: {count} blinded trials; next: {next_}")


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


class _ProgressLine:
    """One self-overwriting stderr line: done/total, rate, retries, ETA (only on a tty)."""

    def __init__(self) -> None:
        self._last = 0.0

    def __call__(self, p: Progress, final: bool) -> None:
        now = time.monotonic()
        if not p.total or (not final and now - self._last < 0.2):
            return
        self._last = now
        rate = p.done / max(now - p.started, 1e-9)
        eta = f"{(p.total - p.done) / rate:.0f}s" if rate > 0 else "?"
        click.echo(
            f"\r{p.done}/{p.total} responses  {rate:.1f}/s  retries "
            f"{p.retries}  failed {p.failed}  ETA {eta}   ",
            err=True,
            nl=final,
        )
