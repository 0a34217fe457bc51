"""The options several commands share, word for word (one definition each, so they can
never drift apart): the run argument, file and directory paths, --force, --json, --quiet,
transport and prices (the design options of ``bt-design`` and ``blindtest run`` are
:mod:`blindtest.cli._design_options`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class DirPath(click.Path):
    """A directory path that may not exist yet, and may not be empty: an unset shell variable
    ("") would otherwise mean the current directory."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("is empty (an unset shell variable?); name a directory", param, ctx)
        return super().convert(value, param, ctx)


class FilePath(click.Path):
    """A file option's value. A value that starts with ``--`` is an option the user meant to
    give next (``--html --force`` would otherwise write a file named ``--force``)."""

    def __init__(self, *, exists: bool = False, dir_okay: bool = False) -> None:
        super().__init__(exists=exists, dir_okay=dir_okay, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.startswith("--"):
            self.fail(
                f"needs a file name, but got the option {value!r}; give the file first", param, ctx
            )
        if isinstance(value, str) and not value.strip():
            self.fail("is empty (an unset shell variable?); name a file", param, ctx)
        return super().convert(value, param, ctx)


run_argument = click.argument("run_dir", metavar="RUN", type=DirPath())
force_option = click.option(
    "--force", is_flag=True, help="Overwrite existing output files instead of refusing."
)
json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout."
)
quiet_option = click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
#: bt-analyze's and blindtest run's report page (the one page, written by the analysis).
html_option = click.option(
    "--html",
    "html_path",
    type=FilePath(),
    help="Also write the report as a standalone HTML page (inline charts, fetches nothing).",
)
refetch_option = click.option(
    "--refetch-changed",
    is_flag=True,
    help="Ask again for the slots whose answer on disk was made for another request (the "
    "design was edited since); the old rows stay in responses.jsonl, no longer counted.",
)
alpha_option = click.option(
    "--alpha",
    type=float,
    default=0.05,
    show_default=True,
    help="Significance level, in (0, 0.5].",
)
concurrency_option = click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Requests in flight per endpoint.",
)
timeout_option = click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=120.0,
    show_default=True,
    help="Seconds to wait for a connection and for each read.",
)


def _side_transport(side: str) -> list[Callable[[F], F]]:
    upper = side.upper()
    return [
        click.option(
            f"--{side}-concurrency",
            type=click.IntRange(min=1),
            help=f"Requests in flight for side {upper} only.",
        ),
        click.option(
            f"--{side}-rpm",
            type=click.FloatRange(min=0, min_open=True),
            help=f"Requests started per minute for side {upper} only.",
        ),
        click.option(
            f"--{side}-header-env",
            metavar="NAME:ENVVAR",
            multiple=True,
            help=f"Send header NAME on side {upper}'s requests, its value read from ENVVAR "
            "(never written; repeatable).",
        ),
    ]


def grouped(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """Several option decorators as one, the options listed in the order given."""

    def apply(function: F) -> F:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


#: Warnings that fail the run, for bt-analyze and `blindtest run` (CI).
fail_on_options = grouped(
    click.option(
        "--fail-on",
        "fail_on",
        multiple=True,
        metavar="CODE,...",
        help="Exit 1 when the report holds a warning with one of these codes (docs/formats.md); "
        "repeatable.",
    ),
    click.option(
        "--strict",
        is_flag=True,
        help="Exit 1 when the report holds any serious warning (for CI).",
    ),
)
#: Per-side transport, for bt-generate and `blindtest run`.
side_transport_options = grouped(*_side_transport("a"), *_side_transport("b"))

#: The parameter names of ``side_transport_options``.
SIDE_TRANSPORT = tuple(
    f"{side}_{what}" for what in ("concurrency", "rpm", "header_env") for side in "ab"
)

price_options = grouped(
    click.option("--price-a", metavar="IN,OUT", help="Side A price, dollars per million tokens."),
    click.option("--price-b", metavar="IN,OUT", help="Side B price, dollars per million tokens."),
    click.option(
        "--price",
        "price_named",
        metavar="NAME=IN,OUT",
        multiple=True,
        help="A candidate's price (a design with candidates), once per candidate.",
    ),
)


def given_prices(given: dict[str, Any]) -> dict[str, str | None]:
    """The prices of ``price_options``, popped from ``given``: keyed "A", "B" and by candidate."""
    from blindtest.generation.cost import named_prices

    prices = {"A": given.pop("price_a", None), "B": given.pop("price_b", None)}
    return prices | named_prices(given.pop("price_named", ()) or ())
