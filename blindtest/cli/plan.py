"""bt-plan: exact power table on stdout (``--json`` for machines). Calls no model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import orjson

from blindtest.cli._command import command
from blindtest.cli._options import FilePath, alpha_option, json_option
from blindtest.cli._plan_options import people_sample_options, split_list, trial_counts
from blindtest.model.protocols import DEFAULT_PROTOCOL, PROTOCOLS


@command("plan")
@click.option(
    "--protocol",
    type=click.Choice(tuple(PROTOCOLS)),
    default=None,
    help="triangle: pick the odd one of three; pair: tell which is which; preference: "
    f"which is better.  [default: {DEFAULT_PROTOCOL}; preference with a preference --decide]",
)
@click.option(
    "--trials",
    "trials_text",
    metavar="N[,N...]",
    help="Trial counts to tabulate, each up to 100,000 (1,000,000 in all).",
)
@click.option(
    "--pc",
    "pc_text",
    metavar="PC[,PC...]",
    help="Alternatives as proportion correct (win rate for preference).",
)
@click.option(
    "--pd",
    "pd_text",
    metavar="PD[,PD...]",
    help="Alternatives as proportion of discriminators (instead of --pc).",
)
@alpha_option
@click.option(
    "--target-power",
    "--power",
    "target_power",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="Also print the smallest n (up to 100,000) reaching this power at each alternative, "
    "and the stable n from which every larger n does (with --decide: default 0.8).",
)
@click.option(
    "--decide",
    metavar="RULE",
    help="Plan a pre-registered decision: noninferior:MARGIN, superior or equivalent:MARGIN "
    "(preference: the challenger's share of untied comparisons), similar:PD0 (triangle, pair).",
)
@click.option(
    "--true", "true_share", type=click.FloatRange(0, 1), metavar="SHARE",
    help="With --decide or --people-sample: the challenger's true share of untied comparisons "
    "to plan at (default 0.5: as good as the champion).",
)  # fmt: skip
@click.option(
    "--similarity",
    "similarity_pd0",
    type=float,
    metavar="PD0",
    help="Plan a similarity claim (pd < PD0) instead of a difference test.",
)
@click.option(
    "--ties",
    type=click.FloatRange(0, 1, max_open=True),
    default=0.0,
    metavar="RATE",
    help="Preference: the share of comparisons expected to be ties (ties leave the test, so "
    "more trials are needed); trials then count every comparison; with --people-sample, "
    "the people's tie rate.",
)
@click.option(
    "--html",
    "html_path",
    type=FilePath(),
    default=None,
    help="Also write the power curves as a standalone HTML page.",
)
@people_sample_options
@json_option
def plan(
    protocol: str | None,
    trials_text: str | None,
    pc_text: str | None,
    pd_text: str | None,
    alpha: float,
    target_power: float | None,
    similarity_pd0: float | None,
    ties: float,
    html_path: Path | None,
    as_json: bool,
    decide: str | None,
    true_share: float | None,
    **people: Any,
) -> None:
    """Print what a design can detect: critical count, achieved alpha, exact power.

    \b
    Example:
      bt-plan --trials 20,23,30 --pc 0.6,0.7
      bt-plan --target-power 0.9 --pd 0.4
      bt-plan --similarity 0.3 --trials 30,60,100 --json
      bt-plan --trials 10,60 --pc 0.5,0.6,0.7 --html power.html
      bt-plan --protocol preference --ties 0.3 --target-power 0.8
      bt-plan --decide noninferior:0.05 --true 0.5 --ties 0.3 --power 0.8
      bt-plan --people-sample 200 --agreement 0.7 --ties 0.2 --margin 0.05 --power 0.8
    """
    import shutil

    from blindtest.planning.stage import plan as tabulate

    table = tabulate(
        protocol,
        trials=trial_counts(trials_text),
        pc=split_list(pc_text, "--pc"),
        pd=split_list(pd_text, "--pd"),
        alpha=alpha,
        target_power=target_power,
        similarity_pd0=similarity_pd0,
        ties=ties,
        html=html_path,
        decide=decide,
        true=true_share,
        **people,
    )
    if as_json:
        click.echo(orjson.dumps(table.rows(), option=orjson.OPT_INDENT_2).decode())
    else:
        # The terminal's width (COLUMNS first), 80 when output is not a terminal.
        click.echo(table.text(width=shutil.get_terminal_size((80, 24)).columns))
