"""bt-judge's judging page: its options (``--web``, the address, a panel of reviewers, the
break screen), the checks that they go together, and a panel's sitting with its closing line.
"""

from __future__ import annotations

from pathlib import Path

import click

from blindtest.cli._options import grouped
from blindtest.errors import BadInput
from blindtest.model.picks import load_judge_run
from blindtest.present.hints import stage_command

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


def sit_panel(
    run_dir: Path,
    panel: str,
    per_judge: int | None,
    force: bool,
    quiet: bool,
    host: str,
    port: int,
    session_cap: int,
    no_browser: bool,
) -> None:
    import webbrowser

    from blindtest.judging.web.panel import judge_panel, panel_names

    names = panel_names(panel)
    ended = judge_panel(
        load_judge_run(run_dir),
        names,
        per_judge=per_judge,
        force=force,
        host=host,
        port=port,
        session_cap=session_cap,
        echo=click.echo,
        open_link=None if no_browser else webbrowser.open,
    )
    if quiet:
        return
    done = ", ".join(f"{name} {n} of {of}" for name, _, n, of in ended.seats)
    files: list[str | Path] = []
    for _, path, _, _ in ended.seats:
        files += ["--picks", path]
    if ended.complete:
        click.echo(
            f"The panel is closed: {done} judged. Run {stage_command('analyze', run_dir, *files)} "
            "to see the result and the reviewers' agreement."
        )
    else:
        click.echo(f"Stopped: {done} judged and saved; run the same command again to go on.")
