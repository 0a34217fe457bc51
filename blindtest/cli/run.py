"""blindtest run: every stage in order. Not built yet (issue 6)."""

from __future__ import annotations

import click

from blindtest.cli._common import command, not_built


@command("run")
@click.argument("model_a", metavar="A", required=False)
@click.argument("model_b", metavar="B", required=False)
def run(model_a: str | None, model_b: str | None) -> None:
    """Not built yet: exits 2 and says so."""
    not_built("blindtest run", "issue 6")()
