"""bt-generate: fetch every response the design needs, then write the blinded view."""

from __future__ import annotations

import asyncio
import math
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from blindtest import artifacts
from blindtest.cli import _common
from blindtest.cli._common import (
    command,
    concurrency_option,
    quiet_option,
    run_argument,
    timeout_option,
)
from blindtest.errors import BadInput, CheckFailed, EndpointFailed
from blindtest.hints import stage_command
from blindtest.retry import DEFAULT_POLICY

Say = Callable[[str], None]
_ROLE_ORDER = ("A", "B", "launder")


def _prices(texts: Mapping[str, str | None]) -> dict[str, tuple[float, float]]:
    prices = {}
    for role, text in texts.items():
        if text is None:
            continue
        try:
            parts = [float(p) for p in text.split(",")]
        except ValueError:
            parts = []
        if len(parts) != 2 or not all(math.isfinite(p) and p >= 0 for p in parts):
            option = f"--price-{role.lower()}"
            raise BadInput(
                f"{option}: expected IN,OUT dollars per million tokens (two finite numbers "
                f">= 0), e.g. 2.5,10; got {text!r}"
            )
        prices[role] = (parts[0], parts[1])
    return prices


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
@click.option("--price-a", metavar="IN,OUT", help="Side A price, dollars per million tokens.")
@click.option("--price-b", metavar="IN,OUT", help="Side B price, dollars per million tokens.")
@click.option("--price-launder", metavar="IN,OUT", help="Laundering model price.")
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
) -> None:
    """Fetch every response before any judging; a rerun fetches only what is missing.

    \b
    Example:
      export OPENAI_API_KEY=...
      bt-generate run --concurrency 16 --price-a 2.5,10 --price-b 0.15,0.6
    """
    from blindtest import generate as lib
    from blindtest import slots

    _check_numbers(timeout, rpm)
    given = _prices({"A": price_a, "B": price_b, "launder": price_launder})
    loaded = artifacts.load_design(run_dir)
    design = loaded.design
    path = run_dir / artifacts.RESPONSES
    existing = artifacts.read_jsonl(path, "responses", missing_ok=True).records
    slots.check_rows_match_design(design, existing)
    endpoints = lib.endpoints_for(design)
    for role, endpoint in endpoints.items():
        endpoint.check_key(role)
    previous = _previous(run_dir)
    prices = lib.recorded_prices(previous, loaded.sha256) | given
    state = slots.SlotState.from_rows(existing)
    if design["source"]["kind"] == "dirs":
        state = _import(design, state, path)
    say: Say = (lambda _: None) if quiet else (lambda text: click.echo(text, err=True))
    pending = len(slots.pending_work(design, state))
    if pending:
        lib.check_not_deterministic(design, state)  # found so on an earlier run: no more calls
        _announce(lib.estimate_cost(design, prices), pending, len(existing), say)
    started = time.monotonic()
    progress = lib.Progress(total=pending)
    options = {
        "concurrency": concurrency,
        "timeout": timeout,
        "rpm": rpm,
        "max_retries": max_retries,
    }
    stopped: BaseException | None = None
    if pending:
        show = not quiet and sys.stderr.isatty()
        try:
            with artifacts.JsonlAppender(path, "responses") as out:
                state = asyncio.run(
                    _fetch(design, endpoints, state, out.append, options, progress, show=show)
                )
        except (EndpointFailed, CheckFailed, KeyboardInterrupt) as error:
            stopped = error  # the ledger still records what this session fetched
    rows = artifacts.read_jsonl(path, "responses", missing_ok=True).records
    fetched = rows[len(existing) :]
    if stopped is not None and not fetched:
        raise stopped
    session = lib.session_entry(fetched, time.monotonic() - started) if fetched else None
    sessions, wall = lib.ledger(previous, loaded.sha256, existing, session)
    record = lib.generation_record(design, loaded.sha256, rows, prices, wall, sessions)
    changed = _write_generation(run_dir, record)
    say(lib.session_summary(fetched, len(rows), previous, sessions, given, prices, changed))
    if stopped is not None:
        raise stopped
    lib.check_finished(design, state)
    notice = lib.collision_notice(lib.DrawCollisions.for_design(design, state))
    if notice:
        say(notice)
    trials = slots.build_trials_view(design, state)
    artifacts.write_jsonl(run_dir / artifacts.TRIALS, trials, "trials", force=True)
    say(
        f"wrote {run_dir / artifacts.TRIALS}: {len(trials)} blinded trials; "
        f"next: {stage_command('judge', run_dir)}"
    )


def _previous(run_dir: Path) -> dict[str, Any] | None:
    """The generation.json an earlier session wrote, if any (the ledger and the prices)."""
    path = run_dir / artifacts.GENERATION
    if not path.exists():
        return None
    return artifacts.read_json(path, "generation")


def _write_generation(run_dir: Path, record: dict[str, Any]) -> bool:
    """Write generation.json unless it already holds exactly these bytes (a rerun that
    fetches nothing changes nothing); return whether it was written."""
    path = run_dir / artifacts.GENERATION
    if path.exists() and artifacts.read_json(path, "generation") == record:
        return False
    artifacts.write_json(path, record, "generation", force=True)
    return True


def _import(design: Mapping[str, Any], state: Any, path: Path) -> Any:
    """--from-dirs: append the imported outputs for every unanswered slot (no network)."""
    from blindtest import generate as lib
    from blindtest import slots
    from blindtest.outputs import imported_text

    def read(side: str, item: str, variant: str) -> str:
        return imported_text(design["source"], side, item, variant)

    rows = lib.import_rows(design, state, read)
    with artifacts.JsonlAppender(path, "responses") as out:
        for row in rows:
            out.append(row)
    return slots.SlotState.from_rows(artifacts.read_jsonl(path, "responses").records)


async def _fetch(
    design: Mapping[str, Any],
    endpoints: Any,
    state: Any,
    append: Callable[[Any], None],
    options: Mapping[str, Any],
    progress: Any,
    show: bool,
) -> Any:
    from blindtest.client import ChatClient
    from blindtest.generate import run_generation
    from blindtest.retry import RetryPolicy

    policy = RetryPolicy(max_retries=options["max_retries"])
    async with ChatClient(
        endpoints,
        concurrency=options["concurrency"],
        rpm=options["rpm"],
        timeout=options["timeout"],
        policy=policy,
    ) as client:
        line = _ProgressLine(progress, client, enabled=show)
        try:
            return await run_generation(
                design,
                client,
                state,
                append,
                concurrency=options["concurrency"],
                progress=progress,
                on_update=line,
            )
        finally:
            line(final=True)


class _ProgressLine:
    """One self-overwriting stderr line: done/total, rate, retries, ETA. Silent off a tty."""

    def __init__(self, progress: Any, client: Any, enabled: bool) -> None:
        self.progress, self.client, self.enabled = progress, client, enabled
        self._last = 0.0

    def __call__(self, final: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or not self.progress.total or (not final and now - self._last < 0.2):
            return
        self._last = now
        p = self.progress
        rate = p.done / max(now - p.started, 1e-9)
        eta = f"{(p.total - p.done) / rate:.0f}s" if rate > 0 else "?"
        click.echo(
            f"\r{p.done}/{p.total} responses  {rate:.1f}/s  retries "
            f"{self.client.counters().retries}  failed {p.failed}  ETA {eta}   ",
            err=True,
            nl=final,
        )


def _announce(
    estimate: Mapping[str, Mapping[str, float]], pending: int, existing: int, say: Say
) -> None:
    resumed = f" (resuming: {existing} rows already on disk)" if existing else ""
    say(f"fetching {pending} responses{resumed}")
    for role, entry in sorted(estimate.items(), key=lambda item: _ROLE_ORDER.index(item[0])):
        cost = f", about ${entry['cost']:.2f}" if "cost" in entry else ""
        say(
            f"  estimate for the whole run, {role}: ~{entry['input_tokens']:.0f} input and "
            f"<= {entry['output_tokens']:.0f} output tokens{cost}"
        )
