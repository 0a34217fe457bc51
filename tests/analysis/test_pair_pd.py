"""pair pd = |2 Pc - 1| in report.json and on the screen, against reference values.

The reference is tests/data/pair_pd_reference.py (mpmath Clopper-Pearson at 50 digits, folded
by definition; its header has the command). The convention is stated in stats/pair.py's
docstring and in the README's statistics section.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from blindtest.analysis.api import build_report
from blindtest.model.picks import Pick
from blindtest.reportfmt import pct
from blindtest.rundir import artifacts
from blindtest.rundir.types import ReportRecord

from data.pair_pd_reference import PAIR_PD
from report_runs import (
    cli,
    load,
    make_design,
    pair_picks,
    read_report,
    write_design_run,
    write_picks,
)

REFERENCE = {(n, k): (estimate, lo, hi, p) for n, k, estimate, lo, hi, p in PAIR_PD}


def pair_report(n: int, consistent: int) -> ReportRecord:
    design = make_design("pair", n)
    picks = [Pick.from_record(r) for r in pair_picks(design, consistent)]
    return build_report(design, "0" * 64, picks, inputs={}).report


@pytest.mark.parametrize(("n", "k"), [(20, 10), (20, 12), (20, 15), (20, 17), (20, 3), (40, 27)])
def test_pair_report_pd_is_the_folded_clopper_pearson_interval(n: int, k: int) -> None:
    report = pair_report(n, k)
    estimate, lo, hi, p = REFERENCE[(n, k)]
    assert (report["n"], report["correct"]) == (n, k)
    assert report["pd"] == pytest.approx({"estimate": estimate, "lo": lo, "hi": hi}, rel=1e-9)
    assert report["p_value"] == pytest.approx(p, rel=1e-9)
    # The interval and the verdict never disagree: pd's lower end is above 0 iff p <= alpha.
    pd_lo = report["pd"]["lo"]
    assert pd_lo is not None
    assert (pd_lo > 0) == (report["verdict"] == "distinguished")


def test_a_pair_null_prints_the_reference_upper_bound(tmp_path: Path) -> None:
    _, _, hi, _ = REFERENCE[(20, 12)]
    report = pair_report(20, 12)
    assert report["verdict"] == "not distinguished"
    assert pct(hi) == "62%"
    assert report["statement"].endswith(
        "if a difference exists, it shows on at most 62% of these prompts (upper end of the "
        "two-sided 95% interval)."
    )
    # What the person reads on the screen (through the CLI, once).
    run = write_design_run(tmp_path, make_design("pair", 20))
    write_picks(run / artifacts.PICKS, pair_picks(load(run), 12))
    result = cli("analyze", run)
    assert result.exit_code == 0, result.stderr
    assert read_report(run)["pd"] == report["pd"]
    assert "at most 62% of these prompts" in result.stdout
    assert "pd, visible on      20%  (95% interval 0% to 62%) of these prompts" in result.stdout


def test_inverted_nicknames_report_the_same_pd_as_consistent_ones() -> None:
    inverted, consistent = pair_report(20, 3), pair_report(20, 17)
    assert inverted["pd"] == consistent["pd"]
    assert inverted["verdict"] == consistent["verdict"] == "distinguished"
