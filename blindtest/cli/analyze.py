"""bt-analyze: design + picks (+ whatever else is there) -> RUN/report.json and a summary."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from blindtest import artifacts
from blindtest.artifact_types import ReportRecord
from blindtest.cli import _common, _export
from blindtest.cli._common import command, force_option, json_option, quiet_option, run_argument


@command("analyze")
@run_argument
@click.option(
    "--picks",
    "picks_files",
    multiple=True,
    type=_common.FilePath(),
    help="Picks file(s) to analyse (default RUN/picks.jsonl); repeat for several judges.",
)
@click.option(
    "--out",
    "out_path",
    type=_common.FilePath(),
    help="Where to write the report (default RUN/report.json), e.g. for a second judge.",
)
@click.option(
    "--html",
    "html_path",
    type=_common.FilePath(),
    help="Also write the summary as a standalone HTML page.",
)
@click.option(
    "--min-kappa",
    type=float,
    default=0.2,
    show_default=True,
    help="Preference: panel agreement (Krippendorff's alpha) below this fails the run.",
)
@click.option(
    "--position-margin",
    type=click.FloatRange(0, 0.5),
    default=0.1,
    show_default=True,
    help="Preference: left-share deviation from 1/2 that fails the run.",
)
@click.option(
    "--against",
    "against_files",
    multiple=True,
    type=_common.FilePath(exists=True),
    help="Another judge kind's picks (an LLM judge's, or people's): their agreement and kappa "
    "with each judge of --picks is reported, never pooled.",
)
@_export.options
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
@_common.writes_run
def analyze(
    run_dir: Path,
    picks_files: tuple[Path, ...],
    out_path: Path | None,
    html_path: Path | None,
    min_kappa: float,
    position_margin: float,
    against_files: tuple[Path, ...],
    export_path: Path | None,
    export_min_confidence: float,
    brief: bool,
    reveal_void: bool,
    as_json: bool,
    force: bool,
    quiet: bool,
) -> int:
    """Score the picks, compute the exact statistics, and write the report.

    \b
    Example:
      bt-analyze run
      bt-analyze run --picks run/picks-alice.jsonl --picks run/picks-bob.jsonl --force
      bt-analyze run --picks run/picks-bot.jsonl --out run/report-bot.json
    """
    from blindtest.analyzing import (
        AnalysisOptions,
        analyze_run,
        export_rows,
        input_name,
        report_page,
    )

    report_path = out_path or run_dir / artifacts.REPORT
    options = AnalysisOptions(
        min_kappa=min_kappa, position_margin=position_margin, reveal_void=reveal_void
    )
    e_values_path = report_path.with_name(artifacts.e_values_name(report_path.name))
    picks = list(picks_files) or [run_dir / artifacts.PICKS]
    names = [input_name(run_dir, path) for path in picks]
    artifacts.claim_report(run_dir, picks, names, report_path, e_values_path, html_path, force)
    _export.check(export_path, run_dir, picks, force)
    exported = export_rows(run_dir, picks, export_min_confidence) if export_path else None
    result = analyze_run(
        run_dir, list(picks_files), options, e_values_path=e_values_path, against=against_files
    )
    if result.e_values:
        artifacts.write_jsonl(e_values_path, result.e_values, "e_values", force=True)
    artifacts.write_json(report_path, result.report, "report", force=True)  # claimed above
    if html_path is not None:
        artifacts.write_bytes_atomic(html_path, report_page(run_dir, result).encode())
    if export_path is not None and exported is not None:
        _export.write(export_path, *exported)
    _print(result.report, run_dir, as_json=as_json, quiet=quiet, brief=brief, reveal=reveal_void)
    return result.exit_code  # run_main, the one error mapper, exits with it


def _print(
    report: ReportRecord, run_dir: Path, *, as_json: bool, quiet: bool, brief: bool, reveal: bool
) -> None:
    """A void analysis prints one line unless revealed; the rest print the result screen."""
    from blindtest.analyzing import void_line
    from blindtest.hints import stage_command
    from blindtest.render import clean, format_summary
    from blindtest.screen import screen_width

    void = report["verdict"] == "void"
    if as_json:
        click.echo(artifacts.dump_json(report).decode(), nl=False)
    elif not quiet and not (void and not reveal):
        width = screen_width(sys.stdout)  # the terminal's, or 80 into a pipe or a file
        tables = screen_width(sys.stdout, cap=None)
        click.echo(format_summary(report, per_trial=not brief, width=width, table_width=tables))
    if void:
        line = void_line(report, run_dir, stage_command)
        if reveal:
            line += (
                " -- REVEALED with --reveal-void: whoever has seen this analysis can no longer "
                "judge this run blind"
            )
        _common.echo_prose(clean(line), err=True)
    elif report["verdict"] in ("unusable", "incomplete"):
        _common.echo_prose(clean(f"bt-analyze: {report['statement']}"), err=True)
