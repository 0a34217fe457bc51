"""``bt-design NEW --from RUN --drop-trial N [--drop-reason TEXT]``: the click side (its three
options, that nothing else of a design is given with them, and what is shown); the work is
:func:`blindtest.designing.stage.derive`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from blindtest.cli import _chain
from blindtest.cli._prose import echo_prose

F = TypeVar("F", bound=Callable[..., Any])

_OPTIONS = [
    click.option(
        "--from",
        "from_run",
        type=click.Path(path_type=Path, file_okay=False),
        metavar="RUN",
        help="Make the design from RUN's without the --drop-trial trials (reuses its answers).",
    ),
    click.option(
        "--drop-trial",
        "drop_trials",
        type=click.IntRange(min=1),
        multiple=True,
        metavar="N",
        help="With --from: leave out trial N of RUN's design (repeatable).",
    ),
    click.option(
        "--drop-reason",
        "reasons",
        multiple=True,
        metavar="TEXT",
        help="With --from: why (one for all, or one per --drop-trial) [default: the trial's "
        "last failure in RUN].",
    ),
]


def options(function: F) -> F:
    """``--from``, ``--drop-trial``, ``--drop-reason``."""
    for option in reversed(_OPTIONS):
        function = option(function)
    return function


#: The options that go with --from (the rest of the design is RUN's).
_WITH_FROM = {"run_dir", "from_run", "drop_trials", "reasons", "quiet"}


def derive(
    run_dir: Path,
    from_run: Path | None,
    drop_trials: tuple[int, ...],
    reasons: tuple[str, ...],
    force: bool,
    quiet: bool,
) -> None:
    """``--from RUN --drop-trial N``: RUN's design without those trials."""
    from blindtest.designing.stage import derive
    from blindtest.errors import BadInput

    if from_run is None:
        raise BadInput(
            "--drop-trial and --drop-reason go with --from RUN (the design to start from)"
        )
    context = click.get_current_context()
    given = [
        param.opts[0]
        for param in context.command.params
        if param.name not in _WITH_FROM
        and context.get_parameter_source(param.name or "") is not click.core.ParameterSource.DEFAULT
    ]
    if given or force:
        raise BadInput(
            f"--from takes the rest of the design from {from_run}: give only --drop-trial and "
            f"--drop-reason with it, not {(given or ['--force'])[0]}"
        )
    result = derive(run_dir, from_run, drop_trials, reasons, holder=_chain.stage_label())
    if quiet:
        return
    kept = result.design["trials"]
    click.echo(
        f"made from {from_run} without {len(drop_trials)} of its trials; {kept} kept, "
        "numbered 1.." + f"{kept}:",
        err=True,
    )
    for entry in result.dropped[-len(drop_trials) :]:
        echo_prose(
            f"  dropped trial {entry['trial']} (prompt {entry['prompt_id']}): {entry['reason']}",
            err=True,
        )
    echo_prose(
        f"bt-generate {run_dir} reuses every answer {from_run} holds for the kept trials",
        err=True,
    )
    click.echo(f"{result.sha256}  {result.design_path}")
