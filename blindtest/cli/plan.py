"""bt-plan: exact power table on stdout (``--json`` for machines). Calls no model."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import click
import orjson

from blindtest.cli._common import FilePath, alpha_option, command, json_option
from blindtest.designing import PROTOCOLS
from blindtest.errors import BadInput


def _split(text: str | None, option: str) -> list[str] | None:
    if text is None:
        return None
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise BadInput(f"{option}: give a comma-separated list, e.g. 0.6,0.7")
    return parts


def _trials(text: str | None, default: tuple[int, ...]) -> list[int]:
    from blindtest.planning import MAX_TOTAL_TRIALS, MAX_TRIALS

    if text is None:
        return list(default)
    values = []
    for part in _split(text, "--trials") or []:
        if not part.isascii() or not part.isdigit() or int(part) < 1:
            raise BadInput(f"--trials: {part!r} is not a whole number of trials >= 1")
        if int(part) > MAX_TRIALS:
            raise BadInput(
                f"--trials: {int(part):,} is more than bt-plan computes; trials go up to "
                f"{MAX_TRIALS:,} (each row is exact, its cost grows with n)"
            )
        values.append(int(part))
    if sum(values) > MAX_TOTAL_TRIALS:
        raise BadInput(
            f"--trials: the counts add up to {sum(values):,}; one table computes at most "
            f"{MAX_TOTAL_TRIALS:,} trials in all (each up to {MAX_TRIALS:,})"
        )
    return values


def _width() -> int:
    """The terminal's width (COLUMNS first), 80 when output is not a terminal."""
    return shutil.get_terminal_size((80, 24)).columns


@command("plan")
@click.option(
    "--protocol",
    type=click.Choice(PROTOCOLS),
    default="triangle",
    show_default=True,
    help="triangle: pick the odd one of three; pair: tell which is which; preference: "
    "which is better.",
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
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="Also print the smallest n (up to 100,000) reaching this power at each alternative, "
    "and the stable n from which every larger n does.",
)
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
    "more trials are needed); trials then count every comparison.",
)
@click.option(
    "--html",
    "html_path",
    type=FilePath(),
    default=None,
    help="Also write the power curves as a standalone HTML page.",
)
@json_option
def plan(
    protocol: str,
    trials_text: str | None,
    pc_text: str | None,
    pd_text: str | None,
    alpha: float,
    target_power: float | None,
    similarity_pd0: float | None,
    ties: float,
    html_path: Path | None,
    as_json: bool,
) -> None:
    """Print what a design can detect: critical count, achieved alpha, exact power.

    \b
    Example:
      bt-plan --trials 20,23,30 --pc 0.6,0.7
      bt-plan --target-power 0.9 --pd 0.4
      bt-plan --similarity 0.3 --trials 30,60,100 --json
      bt-plan --trials 10,60 --pc 0.5,0.6,0.7 --html power.html
      bt-plan --protocol preference --ties 0.3 --target-power 0.8
    """
    from blindtest.planning import DEFAULT_TRIALS, build_plan, build_similarity_plan, format_plan

    if pc_text is not None and pd_text is not None:
        raise BadInput("give --pc or --pd, not both")
    if not 0 < alpha <= 0.5:
        raise BadInput(f"--alpha must be in (0, 0.5], got {alpha}")
    trials = _trials(trials_text, DEFAULT_TRIALS)
    pcs, pds = _split(pc_text, "--pc"), _split(pd_text, "--pd")
    try:
        if similarity_pd0 is not None:
            if pcs is not None:
                raise BadInput("with --similarity, give the true pd grid with --pd")
            if ties:
                raise BadInput("--ties is for preference difference plans; drop --similarity")
            if not 0 < similarity_pd0 < 1:
                raise BadInput(f"--similarity must be in (0, 1), got {similarity_pd0}")
            result = build_similarity_plan(
                protocol, trials, similarity_pd0, alpha=alpha, pds=pds, target_power=target_power
            )
        else:
            result = build_plan(
                protocol,
                trials,
                alpha=alpha,
                pcs=pcs,
                pds=pds,
                target_power=target_power,
                ties=ties,
            )
    except ValueError as error:
        raise BadInput(str(error)) from None
    if html_path is not None:
        _write_page(html_path, result, trials, pcs, pds, alpha, target_power, similarity_pd0)
    if as_json:
        click.echo(orjson.dumps(list(result.rows), option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(format_plan(result, width=_width()))


def _write_page(
    path: Path,
    result: Any,
    trials: list[int],
    pcs: list[str] | None,
    pds: list[str] | None,
    alpha: float,
    target: float | None,
    similarity_pd0: float | None,
) -> None:
    """The power curves from the smallest to the largest --trials, every n (at most 400)."""
    from blindtest import artifacts
    from blindtest.planning import build_plan, format_plan
    from blindtest.reportpage import render_plan_page

    if similarity_pd0 is not None:
        raise BadInput("--html draws difference power curves; drop --similarity or --html")
    artifacts.claim_output(path, artifacts.HTML, force=True)
    lo, hi = min(trials), max(trials)
    step = max(1, (hi - lo) // 400 + 1)
    ns = sorted({*range(lo, hi + 1, step), hi})
    dense = build_plan(result.protocol, ns, alpha=alpha, pcs=pcs, pds=pds, ties=result.ties)
    curves = [
        (f"{dense.grid} {v.text}", [row["power"][v.text] for row in dense.rows])
        for v in dense.values
    ]
    page = render_plan_page(
        result.protocol, alpha, dense.grid, ns, curves, format_plan(result, width=100), target
    )
    artifacts.write_bytes_atomic(path, page.encode())
