"""The result screen: prose wraps to the terminal, tables and score lines keep their columns."""

from __future__ import annotations

from pathlib import Path

import orjson

from blindtest.present.render import format_summary, render_html

GOLDEN_REPORT = Path(__file__).resolve().parents[2] / "examples" / "run" / "report.json"


def test_prose_wraps_to_the_width_and_tables_keep_their_rows() -> None:
    report = orjson.loads(GOLDEN_REPORT.read_bytes())
    unwrapped = format_summary(report)
    wrapped = format_summary(report, width=72)
    assert " ".join(unwrapped.split()) == " ".join(wrapped.split())
    for line in wrapped.splitlines():
        is_table = line.startswith("  ") and "  " in line[2:]
        assert is_table or len(line) <= 72, line
    assert max(len(line) for line in unwrapped.splitlines()) > 72


def test_html_page_is_standalone_and_escaped() -> None:
    report = orjson.loads(GOLDEN_REPORT.read_bytes())
    evil = "<script>alert(1)</script>"
    page = render_html(
        report | {"statement": evil, "summary": report["summary"] | {"verdict": evil}}
    )
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert "http" not in page.split("<body>")[0]  # no external resources in the head


def _agreement_with_gate(lo: float, hi: float) -> dict[str, object]:
    interval = {"estimate": (lo + hi) / 2, "lo": lo, "hi": hi}
    alpha = {
        "statistic": (lo + hi) / 2, "label": "poor", "interval": interval,
        "confidence_level": 0.95, "resamples": 2000, "undefined_resamples": 0,
    }  # fmt: skip
    return {
        "measurable": True, "n_items": 30, "alpha": alpha, "percent": {"statistic": 0.3},
        "pairs": [], "caveat": "",
        "gate": {"alpha": alpha, "distinguishable": False, "verdict": "fail", "reason": "chance"},
    }  # fmt: skip


def test_agreement_wholly_below_chance_is_said_to_be_below_it() -> None:
    from blindtest.present.lines import agreement_text

    below = " ".join(agreement_text(_agreement_with_gate(-0.33, -0.16)))
    assert "Below chance (its whole interval is below 0): the gate fails." in below
    reaching = " ".join(agreement_text(_agreement_with_gate(-0.2, 0.3)))
    assert "Not distinguishable from chance (its interval reaches 0)" in reaching
