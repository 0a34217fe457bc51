"""A panel's reviewers sit as a single judge does: the same opening of the picks file (its
kind checked, restarted with --force) and the same driven sitting, never a copy of them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import blindtest
from blindtest.errors import BadInput
from blindtest.judging.web.panel import judge_panel
from blindtest.model.picks import load_judge_run

from judge_runs import make_run, write_picks

PANEL = Path(blindtest.__file__).parent / "judging" / "web" / "panel.py"


def _called(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            func = node.func
            names.add(func.id if isinstance(func, ast.Name) else getattr(func, "attr", ""))
    return names


def test_the_panel_sits_through_the_single_judges_sitting() -> None:
    called = _called(PANEL)
    assert {"open_picks", "sit_opened"} <= called
    # What the sitting owns is never done by the panel itself.
    assert not called & {"Recorder", "JsonlAppender", "drive", "plan_output", "remaining_trials"}


def test_a_reviewers_file_holding_a_bots_picks_is_refused_as_a_single_judges_is(
    tmp_path: Path,
) -> None:
    run_dir = make_run(tmp_path, trials=4)
    sha = load_judge_run(run_dir).design_sha256
    bot = {"judge": "bot:length", "pick": 1, "judge_kind": "bot", "design_sha256": sha}
    before = write_picks(run_dir / "picks-alice.jsonl", [{"trial": 1, **bot}]).read_bytes()
    with pytest.raises(BadInput, match="holds a bot's picks"):
        judge_panel(load_judge_run(run_dir), ["alice", "bob"], per_judge=None, force=False)
    assert (run_dir / "picks-alice.jsonl").read_bytes() == before
