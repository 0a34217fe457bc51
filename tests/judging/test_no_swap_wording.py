"""An LLM judge run with ``--no-swap`` asks each comparison once, and nothing it prints (the
judge's closing line, the batch export, the result screen, the HTML report) speaks of "both
passes" or "two passes"; the swapped run beside it still does where it should."""

from __future__ import annotations

import html
import re
from pathlib import Path

from blindtest.simulator import Simulator

from conftest import Invoke
from screen_text import flat

PASSES = re.compile(r"\b(both|two) passes\b")


def _page_text(path: Path) -> str:
    page = path.read_text(encoding="utf-8")
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S)
    return flat(html.unescape(re.sub(r"<[^>]+>", " ", page)))


def _generated(invoke: Invoke, run: Path, url: str) -> None:
    designed = invoke(
        "design", run, "--demo", "--a", "sim-large", "--b", "sim-small", "--a-url", url,
        "--b-url", url, "--protocol", "preference", "--trials", "12", "--controls", "4",
        "--seed", "no-swap",
    )  # fmt: skip
    assert designed.exit_code == 0, designed.stderr
    generated = invoke("generate", run)
    assert generated.exit_code == 0, generated.stderr


def _judged_and_analyzed(invoke: Invoke, run: Path, url: str, *swap: str) -> tuple[str, str]:
    judge = ("--judge", "llm:sim-judge-fair", "--judge-url", url, *swap)
    exported = invoke("judge", run, *judge, "--batch-export", run.parent / f"x{swap}.jsonl")
    assert exported.exit_code == 0, exported.stderr
    judged = invoke("judge", run, *judge)
    assert judged.exit_code == 0, judged.stderr
    page = run.parent / f"report{swap}.html"
    analyzed = invoke("analyze", run, "--html", page)
    assert analyzed.exit_code in (0, 1), analyzed.stderr
    screen = flat(" ".join([exported.stderr, judged.stdout, judged.stderr, analyzed.stdout]))
    return screen, _page_text(page)


def test_no_swap_output_never_speaks_of_both_passes(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    _generated(invoke, run, simulator.base_url)
    screen, page = _judged_and_analyzed(invoke, run, simulator.base_url, "--no-swap")
    assert PASSES.findall(screen) == []
    assert PASSES.findall(page) == []
    # The run is a no-swap one, and each surface says so in its own words.
    assert "16 requests (16 comparisons, one pass each, no swap)" in screen
    assert "position (no swap, one pass per comparison): of 12 comparisons" in screen
    assert "position (no swap): of 12 comparisons" in page
    assert "The unit is the comparison: one judge's verdict on one trial." in page
    # Two answers per trial (12 real + 4 controls), then one judge request per comparison.
    assert simulator.stats()["answered"] == 2 * 16 + 16


def test_a_swapped_run_still_names_its_two_passes(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    _generated(invoke, run, simulator.base_url)
    screen, page = _judged_and_analyzed(invoke, run, simulator.base_url)
    assert "32 requests (16 comparisons, both passes)" in screen
    assert "position swap: both passes agreed in" in screen
    assert "(an LLM judge's two passes of the position swap read as one verdict" in page
