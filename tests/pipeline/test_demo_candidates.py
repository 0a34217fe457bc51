"""``make demo-candidates``: four candidates designed, generated, judged by the length bot,
audited, analysed and verified, end to end against the in-process simulator; run again on the
same directory it resumes (nothing asked twice, nothing rewritten)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blindtest.cli.demo import main as two_sided_demo
from blindtest.cli.demo_candidates import CANDIDATES, main, run_demo
from blindtest.errors import BadInput
from blindtest.rundir import artifacts


def test_the_candidates_demo_ranks_four_candidates_and_ends_verified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "demo"
    assert run_demo(run, trials=36) == 0
    shown = capsys.readouterr()
    screen = shown.out + shown.err
    assert "the judge is bot:length: a bot that prefers the longer of the two answers" in screen
    assert "4 candidates (large, small, large-brief, small-detailed)" in screen
    assert f"bt-verify: every file in {run}/ recomputes" in screen
    assert "Next: the same on your own endpoints" in screen
    assert "bt-judge run --web" in screen

    design = artifacts.load_design(run).design
    assert design["candidates"] == [name for name, _, _ in CANDIDATES]
    assert design["pairing"]["mode"] == "all"
    assert design["trials"] == 36
    assert design["models"]["large-brief"]["system"] == "Be brief."
    report = json.loads((run / artifacts.REPORT).read_text())
    ranked = {row["candidate"] for row in report["candidates"]["ranking"]}
    assert ranked == set(design["candidates"])
    picks = artifacts.read_jsonl(run / artifacts.PICKS, "picks").records
    assert {pick["judge"] for pick in picks} == {"bot:length"}
    assert len(picks) == 36

    kept = {
        name: (run / name).read_bytes()
        for name in (artifacts.DESIGN, artifacts.RESPONSES, artifacts.TRIALS, artifacts.PICKS)
    }
    assert run_demo(run, trials=36) == 0
    again = capsys.readouterr()
    assert f"resuming the demo in {run}/ (nothing is deleted)" in again.err
    assert f"bt-verify: every file in {run}/ recomputes" in again.out + again.err
    for name, data in kept.items():
        assert (run / name).read_bytes() == data, name

    # make demo (two sides) given this directory refuses it in one line, writing nothing.
    with pytest.raises(BadInput, match="holds a different design"):
        two_sided_demo([str(run)])
    for name, data in kept.items():
        assert (run / name).read_bytes() == data, name


def test_the_candidates_demo_refuses_a_directory_that_is_not_its_own(tmp_path: Path) -> None:
    run = tmp_path / "mine"
    run.mkdir()
    (run / "notes.txt").write_text("mine\n")
    with pytest.raises(BadInput, match=r"notes\.txt, which is not part of a blindtest demo run"):
        main([str(run)])
    assert sorted(p.name for p in run.iterdir()) == ["notes.txt"]
