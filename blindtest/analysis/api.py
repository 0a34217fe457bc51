"""bt-analyze's library: score picks against the arrangement, call the statistics, and write
the report a person reads (``render`` formats it).

The work lives in ``blindtest.analysis``, one module per job: ``triangle``, ``pair`` and
``preference`` (one protocol each), ``tells`` (what the audit's bots explain), ``responses``
and ``answers`` (what is revealed after judging), ``wording`` (the screen, the next step),
``report`` (``build_report``, pure: opens no file) and ``load`` (``analyze_run``, the one place
that reads the run directory). This module is the stage's entry point and keeps its names.

What a report may say is fixed there, in one place: a null is a bound, never "the same"; a
fixed design that was not finished is void; a preference run that fails its position-bias or
agreement gate has not measured anything. ``AnalysisResult.exit_code`` is 1 in those cases.
"""

from __future__ import annotations

from blindtest.analysis.common import AnalysisOptions, AnalysisResult
from blindtest.analysis.load import (
    analyze_run,
    default_against,
    export_rows,
    input_name,
    report_page,
)
from blindtest.analysis.report import VOID_KEYS, build_report
from blindtest.analysis.wording import void_line
from blindtest.reportfmt import TESTS, format_p, format_p_against

__all__ = [
    "TESTS",
    "VOID_KEYS",
    "AnalysisOptions",
    "AnalysisResult",
    "analyze_run",
    "build_report",
    "default_against",
    "export_rows",
    "format_p",
    "format_p_against",
    "input_name",
    "report_page",
    "void_line",
]
