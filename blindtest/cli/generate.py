"""bt-generate: fetch every response the design needs, then write the blinded view."""

from __future__ import annotations

import asyncio
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
from blindtest.errors import BadInput
from blindtest.retry import DEFAULT_POLICY

Say = Callable[[str], None]


def _prices(texts: Mapping[str, str | None]) -> dict[str, tuple[float, float]]:
    prices = {}
    for role, text in texts.items():
        if text is None:
            continue
        try:
            parts = [float(p) for p in text.split(",")]
        except ValueError:
            parts = []
        if len(parts) != 2 or min(parts) < 0:
            option = f"--price-{role.lower()}"
            raise BadInput(f"{option}: expected IN,OUT dollars per million tokens, e.g. 2.5,10")
        prices[role] = (parts[0], parts[1])
    return prices


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

    loaded = artifacts.load_design(run_dir)
    design = loaded.design
    prices = _prices({"A": price_a, "B": price_b, "launder": price_launder})
    path = run_dir / artifacts.RESPONSES
    existing = artifacts.read_jsonl(path, "responses", missing_ok=True).records
    lib.check_rows_match_design(design, existing)
    state = lib.SlotState.from_rows(existing)
    if design["source"]["kind"] == "dirs":
        state = _import(design, state, path)
    endpoints = lib.endpoints_for(design)
    for role, endpoint in endpoints.items():
        endpoint.check_key(role)
    say: Say = (lambda _: None) if quiet else (lambda text: click.echo(text, err=True))
    pending = len(lib.pending_work(design, state))
    if pending:
        _announce(lib.estimate_cost(design, prices), pending, len(existing), say)
    started = time.monotonic()
    progress = lib.Progress(total=pending)
    options = {
        "concurrency": concurrency,
        "timeout": timeout,
        "rpm": rpm,
        "max_retries": max_retries,
    }
    if pending:
        show = not quiet and sys.stderr.isatty()
        with artifacts.JsonlAppender(path, "responses") as out:
            state = asyncio.run(
                _fetch(design, endpoints, state, out.append, options, progress, show=show)
            )
    rows = artifacts.read_jsonl(path, "responses").records
    record = lib.generation_record(design, loaded.sha256, rows, prices, time.monotonic() - started)
    artifacts.write_json(run_dir / artifacts.GENERATION, record, "generation", force=True)
    _report(record, say)
    lib.check_finished(design, state)
    trials = lib.build_trials_view(design, state)
    artifacts.write_jsonl(run_dir / artifacts.TRIALS, trials, "trials", force=True)
    say(
        f"wrote {run_dir / artifacts.TRIALS}: {len(trials)} blinded trials; "
        f"next: bt-judge {run_dir}"
    )


def _import(design: Mapping[str, Any], state: Any, path: Path) -> Any:
    """--from-dirs: append the imported outputs for every unanswered slot (no network)."""
    from blindtest import generate as lib
    from blindtest.outputs import imported_text

    def read(side: str, item: str, variant: str) -> str:
        return imported_text(design["source"], side, item, variant)

    rows = lib.import_rows(design, state, read)
    with artifacts.JsonlAppender(path, "responses") as out:
        for row in rows:
            out.append(row)
    return lib.SlotState.from_rows(artifacts.read_jsonl(path, "responses").records)


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
    for role, entry in estimate.items():
        cost = f", about ${entry['cost']:.2f}" if "cost" in entry else ""
        say(
            f"  estimate for the whole run, {role}: ~{entry['input_tokens']:.0f} input and "
            f"<= {entry['output_tokens']:.0f} output tokens{cost}"
        )


def _report(record: Mapping[str, Any], say: Say) -> None:
    for role, entry in record["roles"].items():
        cost = f", ${entry['cost']:.4f}" if entry["cost"] is not None else ""
        say(
            f"{role} ({entry['model']}): {entry['responses']} responses, {entry['requests']} "
            f"requests, {entry['retries']} retries, {entry['failures']} failures, "
            f"{entry['prompt_tokens']}+{entry['completion_tokens']} tokens{cost}"
        )
    say(f"wall time {record['wall_seconds']:.1f}s")
