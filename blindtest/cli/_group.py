"""The ``blindtest`` group: it registers the very command objects the ``bt-<stage>`` scripts run."""

from __future__ import annotations

import click

from blindtest.cli._command import BlindtestGroup
from blindtest.cli.analyze import analyze
from blindtest.cli.audit import audit
from blindtest.cli.design import design
from blindtest.cli.generate import generate
from blindtest.cli.judge import judge
from blindtest.cli.plan import plan
from blindtest.cli.run import run
from blindtest.cli.verify import verify
from blindtest.version import __version__

STAGES = (design, generate, judge, audit, analyze, verify, plan)
#: ``blindtest --help`` lists the commands in the order a run uses them, not alphabetically.
PIPELINE_ORDER = tuple(stage.name or "" for stage in (*STAGES, run))


class PipelineGroup(BlindtestGroup):
    """The umbrella group: commands in pipeline order, each with its whole one-line summary
    (click would cut it at 45 characters), wrapped at word boundaries to the terminal."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        known = [name for name in PIPELINE_ORDER if name in self.commands]
        return known + sorted(set(self.commands) - set(known))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group("blindtest", cls=PipelineGroup)
@click.version_option(__version__, "--version", prog_name="blindtest")
def cli() -> None:
    """Blinded trials between two language models: can anyone tell them apart, on my prompts?"""


for _stage in (*STAGES, run):
    cli.add_command(_stage)
