"""``bt-judge --check FILE`` and ``--web --panel`` are the judging stage's functions
(:func:`~blindtest.judging.stage.check_picks`, :func:`~blindtest.judging.stage.judge_panel`):
called from Python they do what the command does, which only prints their line."""

from __future__ import annotations

import re
import threading
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from test_judge_web import get

from blindtest.errors import BadInput
from blindtest.judging.stage import PanelJudgeResult, check_picks, judge_panel
from blindtest.rundir import artifacts

from conftest import Invoke
from judge_runs import answer_key, make_run, write_picks


def _picks(run: Path, judge: str, trials: range) -> list[dict[str, Any]]:
    odd = [e["odd_position"] for e in answer_key(run)]
    return [
        {"schema": "blindtest/picks@1", "trial": t, "judge": judge, "pick": odd[t - 1]}
        for t in trials
    ]


def test_check_picks_says_what_the_command_prints(tmp_path: Path, invoke: Invoke) -> None:
    run = make_run(tmp_path, trials=6)
    theirs = write_picks(tmp_path / "theirs.jsonl", [*_picks(run, "ann", range(1, 7))])
    checked = check_picks(run, theirs)
    assert (checked.picks, checked.judges, checked.corrections) == (6, ("ann",), 0)
    assert checked.summary == (
        f"{theirs}: 6 picks by 1 judge (ann), valid for triangle design "
        f"{artifacts.load_design(run).sha256[:12]}"
    )
    result = invoke("judge", run, "--check", theirs)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == checked.summary + "\n"
    assert not (run / artifacts.PICKS).exists()  # nothing written, no lock file left either
    assert sorted(p.name for p in run.iterdir()) == [
        artifacts.DESIGN,
        "design.sha256",
        "trials.jsonl",
    ]


def test_check_picks_names_the_line_of_a_bad_pick(tmp_path: Path, invoke: Invoke) -> None:
    run = make_run(tmp_path, trials=6)
    bad = write_picks(tmp_path / "bad.jsonl", [*_picks(run, "ann", range(1, 3)), {"trial": 9}])
    with pytest.raises(BadInput, match=r"bad\.jsonl:3"):
        check_picks(run, bad)
    result = invoke("judge", run, "--check", bad)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert re.match(r"blindtest: error: \S*bad\.jsonl:3", result.stderr)
    assert len(result.stderr.splitlines()) == 1


def test_a_panel_refused_from_python_names_the_parameter(tmp_path: Path) -> None:
    run = make_run(tmp_path, trials=4)
    with pytest.raises(
        BadInput, match=r"^panel: name two or more reviewers, e\.g\. panel=alice,bob$"
    ):
        judge_panel(run, "alice", open_browser=False)
    sequential = make_run(tmp_path, trials=4, sequential=True, name="seq")
    with pytest.raises(BadInput, match=r"^panel: a sequential design stops on one judge's"):
        judge_panel(sequential, ["alice", "bob"], open_browser=False)
    for directory in (run, sequential):
        assert not any(p.name.startswith("picks") for p in directory.iterdir())


def test_a_panel_sits_in_the_stage_function_and_returns_its_closing_line(
    tmp_path: Path,
) -> None:
    run = make_run(tmp_path, trials=4)
    odd = [e["odd_position"] for e in answer_key(run)]
    lines: list[str] = []
    ended: list[PanelJudgeResult] = []
    sitting = threading.Thread(
        target=lambda: ended.append(
            judge_panel(run, ["ann", "bob"], per_judge=2, open_browser=False, echo=lines.append)
        )
    )
    sitting.start()
    try:
        urls: dict[str, str] = {}
        while len(urls) < 2:
            for line in list(lines):
                found = re.match(r"^(\S+) \(2 trials\): open (http\S+)$", line)
                if found:
                    urls[found.group(1)] = found.group(2)
            sitting.join(0.05)
            assert sitting.is_alive() or urls, lines
        for url in urls.values():
            for _ in range(2):
                _, body = get(url)
                trial = int(re.findall(r'name="trial" value="(\d+)"', body)[0])
                mark = re.findall(r'name="mark" value="([^"]+)"', body)[0]
                form = urllib.parse.urlencode(
                    {"trial": trial, "mark": mark, "pick": odd[trial - 1]}
                )
                get(url + "pick", form.encode())
            get(url + "static/page.css")  # the end screen's stylesheet, as a browser fetches it
    finally:
        sitting.join(60)
    assert not sitting.is_alive()
    (result,) = ended
    assert result.complete
    assert [(name, n, of) for name, _, n, of in result.seats] == [("ann", 2, 2), ("bob", 2, 2)]
    assert result.closing.startswith("The panel is closed: ann 2 of 2, bob 2 of 2 judged. Run ")
    assert "--picks" in result.closing
    assert [p.name for p in sorted(run.glob("picks-*.jsonl"))] == [
        "picks-ann.jsonl",
        "picks-bob.jsonl",
    ]
