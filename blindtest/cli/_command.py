"""The click command classes every stage uses: ``BlindtestCommand`` (and the umbrella group
``BlindtestGroup``), so ``bt-<stage>`` and ``blindtest <stage>`` behave the same: the shared
context settings, and a standalone ``main`` that ends through the one error mapper
(:mod:`blindtest.cli._exits`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from blindtest.cli._exits import run_main
from blindtest.cli._flags import known, speaking_for

F = TypeVar("F", bound=Callable[..., Any])

CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class _ExitCodes:
    """Mixin for click commands and groups: shared context settings, and a standalone
    ``main`` that maps every ending to the contract's exit codes (see ``run_main``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", CONTEXT_SETTINGS)
        super().__init__(*args, **kwargs)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        click_main = super().main  # type: ignore[misc]
        if not standalone_mode:
            return click_main(args=args, prog_name=prog_name, standalone_mode=False, **extra)
        run_main(click_main, args, prog_name, **extra)


class BlindtestCommand(_ExitCodes, click.Command):  # type: ignore[misc]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        known(self)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        speaking_for(self)  # a library error names this command's flags
        return super().make_context(info_name, args, parent, **extra)


class BlindtestGroup(_ExitCodes, click.Group):  # type: ignore[misc]
    command_class = BlindtestCommand


def command(name: str) -> Callable[[F], click.Command]:
    """Decorator for a stage command: ``BlindtestCommand`` with the shared context settings."""
    return click.command(name, cls=BlindtestCommand)
