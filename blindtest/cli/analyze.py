"""bt-analyze: design + picks (+ whatever else is there) -> RUN/report.json and a summary."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from blindtest.cli import _chain, _decide, _export, _options, _prose
from blindtest.cli._command import command
from blindtest.cli._options import force_option, json_option, quiet_option, run_argument
from blindtest.rundir import artifacts
from blindtest.rundir.types import ReportRecord


@command("analyze")
@run_argument
@click.option(
    "--picks",
    "picks_files",
    multiple=True,
    type=_options.FilePath(),
    help="Picks file(s) to analyse (default RUN/picks.jsonl); repeat for several judges.",
)
@click.option(
    "--out",
    "out_path",
    type=_options.FilePath(),
    help="Where to write the report (default RUN/report.json), e.g. for a second judge.",
)
@_options.html_option
@click.option(
    "--min-kappa",
    type=click.FloatRange(-1, 1),
    metavar="ALPHA",
    help="Preference: a stricter agreement rule: panel agreement (Krippendorff's alpha) below "
    "this fails the run [default: fail only agreement not distinguishable from chance].",
)
@click.option(
    "--position-margin",
    type=click.FloatRange(0, 0.5, min_open=True, max_open=True),
    metavar="M",
    help="Preference: the position gate's margin on the left share: a run fails when the share "
    "is shown beyond 1/2 +- M [default: the design's, else 0.05].",
)
@_options.fail_on_options
@click.option(
    "--against",
    "against_files",
    multiple=True,
    type=_options.FilePath(exists=True),
    help="Another judge kind's picks (an LLM judge's, or people's): their agreement and kappa "
    "with each judge of --picks is reported, never pooled.",
)
@_export.options
@_decide.options
@click.option("--brief", is_flag=True, help="Leave the per-trial table out of the summary.")
@click.option(
    "--reveal-void",
    is_flag=True,
    help="Show the full analysis of an unfinished fixed design; whoever sees it can no "
    "longer judge the run blind.",
)
@json_option
@force_option
@quiet_option
def analyze(
    run_dir: Path,
    picks_files: tuple[Path, ...],
    out_path: Path | None,
    html_path: Path | None,
    min_kappa: float | None,
    position_margin: float | None,
    fail_on: tuple[str, ...],
    strict: bool,
    against_files: tuple[Path, ...],
    export_path: Path | None,
    export_min_confidence: float,
    export_text: str,
    brief: bool,
    reveal_void: bool,
    as_json: bool,
    force: bool,
    quiet: bool,
    **decision: Any,
) -> int:
    """Score the picks, compute the exact statistics, and write the report.

    \b
    Example:
      bt-analyze run
      bt-analyze run --picks run/picks-alice.jsonl --picks run/picks-bob.jsonl --force
      bt-analyze run --picks run/picks-bot.jsonl --out run/report-bot.json
      bt-analyze run --junit decision.xml      # exit 0 shown, 4 refuted, 5 not settled
    """
    from blindtest.analysis.stage import analyze as score

    result = score(
        run_dir,
        picks=picks_files,
        out=out_path,
        html=html_path,
        min_kappa=min_kappa,
        position_margin=position_margin,
        fail_on=fail_on,
        strict=strict,
        against=against_files,
        export_preferences=export_path,
        export_min_confidence=export_min_confidence,
        export_text=export_text,
        reveal_void=reveal_void,
        force=force,
        holder=_chain.stage_label(),
        say=_prose.say_unless(quiet),
        **_decide.stage_arguments(decision),
    )
    if result.export_path is not None and result.dropped is not None:
        _export.summary(result.export_path, result.exported or 0, result.dropped)
    show(result.report, run_dir, as_json=as_json, quiet=quiet, brief=brief, reveal=reveal_void)
    _decide.show_failed_on(result.failed_on, strict=strict)
    return result.exit_code  # run_main, the one error mapper, exits with it


def show(
    report: ReportRecord, run_dir: Path, *, as_json: bool, quiet: bool, brief: bool, reveal: bool
) -> None:
    """A void analysis prints one line unless revealed; the rest print the result screen."""
    from blindtest.present.render import clean, format_summary
    from blindtest.present.screen import screen_width

    void = report["verdict"] == "void"
    if as_json:
        click.echo(artifacts.dump_json(report).decode(), nl=False)
    elif not quiet and not (void and not reveal):
        width = screen_width(sys.stdout)  # the terminal's, or 80 into a pipe or a file
        tables = screen_width(sys.stdout, cap=None)
        click.echo(format_summary(report, per_trial=not brief, width=width, table_width=tables))
    if not as_json and not quiet:  # the decision's lines, after the result (void ones too)
        _decide.show(report, screen_width(sys.stdout))
    if void:
        _prose.echo_void(report, run_dir, reveal)
    elif report["verdict"] in ("unusable", "incomplete"):
        _prose.echo_prose(clean(f"bt-analyze: {report['statement']}"), err=True)
