"""The judges' own records on the result screen and the report page: after any change of a word
the result on first picks stands beside the result, each judge's words, "both bad", changes,
skips and skip rate are given, and "both bad" per candidate; nothing is said of them when no
judge skipped, changed a word or said "both bad"."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from blindtest.present.raters import first_picks_lines, judges_lines, page_raters
from blindtest.rundir import artifacts

from report_runs import balanced_outcomes, cli, load, make_run, preference_picks, write_picks


class _ById(HTMLParser):
    """The text inside each element that has an id."""

    EMPTY = frozenset({"br", "meta", "line", "circle", "rect", "path", "polyline", "input"})

    def __init__(self, html: str) -> None:
        super().__init__()
        self.text: dict[str, list[str]] = {}
        self._open: list[tuple[str, str | None]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.EMPTY:
            return
        found = dict(attrs).get("id")
        if found:
            self.text[found] = []
        self._open.append((tag, found))

    def handle_endtag(self, tag: str) -> None:
        if all(t != tag for t, _ in self._open):
            return
        while self._open.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        for _, found in self._open:
            if found:
                self.text[found].append(data)

    def of(self, name: str) -> str:
        assert name in self.text, f"no element {name!r}"
        return re.sub(r"\s+", " ", " ".join(self.text[name])).strip()


def _other(word: str) -> str:
    return "left" if word != "left" else "right"


def _run(tmp_path: Path, records: Any = None) -> tuple[Path, str, _ById, dict[str, Any]]:
    """A 20-comparison preference run, 9 wins to 7 with 4 ties, judged by alice as given by
    ``records(picks)``; its screen, its page and its report."""
    run = make_run(tmp_path, "preference", 20)
    picks = preference_picks(load(run), balanced_outcomes(load(run), 9, 7))
    write_picks(run / artifacts.PICKS, records(picks) if records else picks)
    page = tmp_path / "page.html"
    result = cli("analyze", run, "--html", page)
    assert result.exit_code in (0, 1), result.output
    report = artifacts.read_json(run / artifacts.REPORT, "report")
    return run, result.stdout, _ById(page.read_text()), dict(report)


def _skips_changes_both_bad(picks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Trial 1 skipped once, then answered; trials 2 and 3 "both bad"; trial 5 changed."""
    skip = {"trial": 1, "judge": "alice", "pick": "skipped", "skipped": True}
    said = [{**p, "pick": "both_bad"} if p["trial"] in (2, 3) else p for p in picks]
    change = {**picks[4], "pick": _other(picks[4]["pick"]), "correction": True}
    return [skip, *said, change]


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_screen_gives_the_result_on_first_picks_beside_the_result(tmp_path: Path) -> None:
    _, screen, _, report = _run(tmp_path, _skips_changes_both_bad)
    flat = _flat(screen)
    said = "On first picks (before 1 change by alice; 1 word now stands otherwise): "
    assert said in flat
    # Beside the result: after the verdict and its figures, before position and agreement.
    assert flat.index("How big:") < flat.index(said) < flat.index("Position:")
    first = report["first_picks"]
    assert first["same_verdict"] is True
    assert "The changes left the verdict as it was." in flat


def test_the_screen_says_when_the_changes_moved_the_verdict() -> None:
    report = {
        "verdict": "A preferred",
        "first_picks": {
            "changes": 6,
            "by_judge": {"ana": 4, "bo": 2},
            "words_changed": 5,
            "verdict": "inconclusive",
            "same_verdict": False,
            "statement": "Inconclusive.",
            "headline": [],
            "figures": {},
            "ranking": [],
        },
    }
    lines = first_picks_lines(report)
    assert lines[0] == (
        "On first picks (before 6 changes: 4 by ana, 2 by bo; 5 words now stand otherwise): "
        "Inconclusive."
    )
    assert lines[-1] == (
        "  The changes moved the verdict: inconclusive on first picks, A preferred on the last."
    )


def test_the_screen_gives_each_judges_skips_changes_and_both_bad(tmp_path: Path) -> None:
    _, screen, _, report = _run(tmp_path, _skips_changes_both_bad)
    lines = judges_lines(report)
    assert lines[1].split() == [
        "judge", "judged", "both", "bad", "changed", "skips", "(trials)", "skip", "rate",
        "never", "answered",
    ]  # fmt: skip
    assert lines[2].split() == ["alice", "20", "2", "1", "1", "(1)", "5%", "0"]
    assert lines[3].startswith('"Both bad" was said twice, on 2 comparisons')
    assert "A 2 of 20 (10%), B 2 of 20 (10%)" in lines[3]
    for line in lines[1:3]:
        assert line.strip() in screen


def test_nothing_of_the_judges_records_when_none_skipped_changed_or_said_both_bad(
    tmp_path: Path,
) -> None:
    _, screen, page, report = _run(tmp_path)
    assert report["first_picks"] is None
    assert report["abstentions"]["n"] == 0
    assert first_picks_lines(report) == judges_lines(report) == []
    assert page_raters(report) is None
    assert "On first picks" not in screen
    assert "Each judge's records" not in screen
    assert "raters" not in page.text
    assert "first-picks" not in page.text


def test_the_page_gives_first_picks_in_its_header_and_the_judges_records(
    tmp_path: Path,
) -> None:
    _, _, page, _ = _run(tmp_path, _skips_changes_both_bad)
    first = page.of("first-picks")
    assert first.startswith("On first picks (before 1 change by alice;")
    assert "The changes left the verdict as it was." in first
    records = page.of("raters")
    assert "alice 20 2 1 1 (1) 5% 0" in records
    assert '"Both bad" was said twice, on 2 comparisons' in records
    table = page.of("both-bad-table")
    assert "A 2 20 10%" in table
    assert "B 2 20 10%" in table


def test_both_bad_said_once_reads_once(tmp_path: Path) -> None:
    _, _, _, report = _run(
        tmp_path, lambda picks: [{**p, "pick": "both_bad"} if p["trial"] == 2 else p for p in picks]
    )
    assert report["abstentions"]["statement"].startswith('"Both bad" was said once, on 1 ')


def test_first_picks_say_once_what_the_result_already_says_word_for_word() -> None:
    shared = "Cost per 1,000 answers: alpha $0.93, beta $0.26."
    report = {
        "verdict": "ranked",
        "candidates": {"headline": ["Ranking, strongest first: alpha, beta.", shared]},
        "first_picks": {
            "changes": 1,
            "by_judge": {"ana": 1},
            "words_changed": 1,
            "verdict": "ranked",
            "same_verdict": True,
            "statement": "",
            "headline": ["Ranking, strongest first: alpha, beta.", shared, "alpha is ahead."],
            "figures": {},
            "ranking": [{"candidate": "alpha", "rank": 1, "strength": {"estimate": 0.4}}],
        },
    }
    assert first_picks_lines(report) == [
        "On first picks (before 1 change by ana; 1 word now stands otherwise): "
        "Ranking, strongest first: alpha, beta.",
        "alpha is ahead.",
        "  Strengths on first picks: alpha +0.40.",
        "  The changes left the verdict as it was.",
    ]
