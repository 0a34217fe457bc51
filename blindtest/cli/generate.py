"""bt-generate: fetch every response the design needs, then write the blinded view."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from blindtest.cli import _batch, _chain, _check, _options, _prose
from blindtest.cli._command import command
from blindtest.cli._options import concurrency_option, quiet_option, run_argument, timeout_option
from blindtest.transport.retry import DEFAULT_POLICY

if TYPE_CHECKING:
    from blindtest.generation.fetch import Progress


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
@_options.side_transport_options
@_options.refetch_option
@click.option("--price-a", metavar="IN,OUT", help="Side A price, dollars per million tokens.")
@click.option("--price-b", metavar="IN,OUT", help="Side B price, dollars per million tokens.")
@click.option("--price-launder", metavar="IN,OUT", help="Laundering model price.")
@click.option(
    "--price",
    "price_named",
    metavar="NAME=IN,OUT",
    multiple=True,
    help="A candidate's price (a design with candidates), once per candidate.",
)
@_batch.options
@_check.option
@quiet_option
def generate(
    run_dir: Path,
    concurrency: int,
    timeout: float,
    max_retries: int,
    rpm: float | None,
    price_a: str | None,
    price_b: str | None,
    price_launder: str | None,
    price_named: tuple[str, ...],
    quiet: bool,
    check: bool,
    **batch: Any,
) -> None:
    """Fetch every response before any judging; a rerun fetches only what is missing.

    \b
    Example:
      export OPENAI_API_KEY=...
      bt-generate run --check --price-a 2.5,10 --price-b 0.15,0.6
      bt-generate run --concurrency 16 --price-a 2.5,10 --price-b 0.15,0.6
    """
    from blindtest.generation.cost import named_prices

    prices = {"A": price_a, "B": price_b, "launder": price_launder}
    prices |= named_prices(price_named)
    if check:
        _check.generate(run_dir, prices, batch, timeout)
        return
    from blindtest.generation.stage import generate as fetch

    _batch.merge_files(batch)
    fetch(
        run_dir,
        concurrency=concurrency,
        timeout=timeout,
        rpm=rpm,
        max_retries=max_retries,
        prices=prices,
        say=_prose.say_unless(quiet),
        on_progress=ProgressLine() if not quiet and sys.stderr.isatty() else None,
        batch_progress=_batch.progress_line(quiet),
        holder=_chain.stage_label(),
        **batch,
    )


class ProgressLine:
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
