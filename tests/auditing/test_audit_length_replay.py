"""bt-audit's length bot on a several-candidate run counts each answer's words once, however
many comparisons show it (an answer sits in up to k - 1 comparisons of its prompt), and
audit.json is the same bytes as counting them again for every comparison."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from blindtest.auditing import build as auditing
from blindtest.model.candidates import answer_owners
from blindtest.model.normalize import count_words
from blindtest.rundir import artifacts

from candidate_runs import add_candidate_answers, offline_candidate_run
from report_runs import cli, tokens

NAMES = ("alpha", "beta", "gamma", "delta", "epsilon")


def text(prompt_id: str, name: str) -> str:
    number = int(prompt_id[1:])
    return tokens(f"{prompt_id}{name}", 5 + (number * (len(name) + 3)) % 40)


def test_each_answer_is_counted_once_and_audit_json_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, design = offline_candidate_run(tmp_path, NAMES, prompts=10, mode="all")
    add_candidate_answers(run, text)
    again = tmp_path / "again"
    shutil.copytree(run, again)
    calls: list[str] = []

    def counting(words: str) -> int:
        calls.append(words)
        return count_words(words)

    monkeypatch.setattr(auditing, "count_words", counting)
    assert cli("audit", run).exit_code == 0
    answers = len(answer_owners(design))  # 5 candidates x 10 prompts
    assert answers == 50
    assert design["trials"] == 100  # each answer in 4 comparisons: 200 sides to read
    assert len(calls) == len(set(calls)) == answers
    # Counting every comparison's two sides afresh gives the same audit.json, byte for byte.
    monkeypatch.setattr(auditing, "_counted_once", lambda: count_words)
    assert cli("audit", again).exit_code == 0
    assert (run / artifacts.AUDIT).read_bytes() == (again / artifacts.AUDIT).read_bytes()
