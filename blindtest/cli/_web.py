"""bt-judge's judging page: its options (``--web``, the address, a panel of reviewers, the
break screen) and the checks that they go together; the page and the panel are the stage's
(:func:`blindtest.judging.stage.judge`, :func:`blindtest.judging.stage.judge_panel`).
"""

from __future__ import annotations

from pathlib import Path

import click

from blindtest.cli._options import grouped
from blindtest.errors import BadInput

#: The page's options, in the order ``bt-judge --help`` lists them.
options = grouped(
    click.option(
        "--web", is_flag=True, help="Judge on a local web page (the same as --judge web)."
    ),
    click.option(
        "--host",
        default="127.0.0.1",
        show_default=True,
        help="Address the judging page listens on; anything but loopback lets others judge.",
    ),
    click.option(
        "--port", type=click.IntRange(0, 65535), default=0, help="Port (default: a free one)."
    ),
    click.option(
        "--panel",
        default=None,
        help="Reviewers, comma-separated: a link each, picks in RUN/picks-<name>.jsonl.",
    ),
    click.option(
        "--per-judge",
        type=click.IntRange(1),
        default=None,
        help="With --panel: trials per reviewer, dealt from the design seed (default: all).",
    ),
    click.option(
        "--no-browser", is_flag=True, help="Print the page's link; do not open a browser."
    ),
    click.option(
        "--session-cap",
        type=click.IntRange(1),
        default=30,
        show_default=True,
        help="Comparisons before the judging page shows a break screen.",
    ),
)


def web_kind(ctx: click.Context, kind: str, web: bool) -> str:
    """--web is --judge web; the page's options need it."""
    given = {
        name: ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
        for name in ("kind", "host", "port", "panel", "per_judge", "no_browser", "session_cap")
    }
    if web and given["kind"] and kind != "web":
        raise BadInput(f"--web judges on the page; drop --judge {kind}")
    chosen = "web" if web else kind
    if chosen != "web":
        page = [f"--{n.replace('_', '-')}" for n in list(given)[1:] if given[n]]
        if page:
            raise BadInput(f"{', '.join(page)}: only for the judging page; add --web")
    return chosen


def is_panel(
    panel: str | None, per_judge: int | None, judge_id: str | None, out: Path | None
) -> bool:
    if per_judge is not None and panel is None:
        raise BadInput("--per-judge deals trials to a panel; add --panel NAMES")
    if panel is not None and (judge_id is not None or out is not None):
        raise BadInput("--panel names the reviewers and their files; drop --judge-id/--out")
    return panel is not None
