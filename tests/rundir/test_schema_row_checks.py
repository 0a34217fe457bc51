"""Rows close to valid ones are refused naming the field, and grouped syncs of
responses.jsonl."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from blindtest.errors import BadInput
from blindtest.rundir import artifacts

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def _row(trial: int, **changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "schema": "blindtest/responses@1",
        "trial": trial,
        "slot": 1,
        "side": "A",
        "model": "m",
        "prompt_id": f"p{trial}",
        "status": "ok",
        "text": "x" * 200,
        "finish_reason": "stop",
        "refusal": None,
        "usage": {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8},
        "latency_ms": 12.5,
        "attempts": 1,
        "stage": "generate",
        "kind": "ok",
        "seed": 7,
        "truncated": False,
    }
    return row | changes


def _keywords(node: Any, found: set[str], *, names: bool = False) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if not names:
                found.add(key)
            _keywords(value, found, names=key in ("properties", "$defs", "patternProperties"))
    elif isinstance(node, list):
        for item in node:
            _keywords(item, found)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"slot": 4}, "/slot"),
        ({"slot": 0}, "/slot"),
        ({"trial": 0}, "/trial"),
        ({"trial": -5}, "/trial"),
        ({"side": "C D"}, "/side"),  # A, B or a candidate's name: "C" alone is a name
        ({"side": ""}, "/side"),
        ({"status": "failed"}, "error"),
        ({"latency_ms": -0.5}, "/latency_ms"),
        ({"attempts": True}, "/attempts"),
        ({"attempts": 1.5}, "/attempts"),
        ({"text": 3}, "/text"),
    ],
)
def test_a_row_like_a_valid_one_is_still_refused(changes: dict[str, Any], message: str) -> None:
    for trial in (1, 2, 900):  # shapes seen valid first
        artifacts.validate(_row(trial), "responses", "responses.jsonl")
    with pytest.raises(BadInput, match=message):
        artifacts.validate(_row(901) | changes, "responses", "responses.jsonl")


def test_grouped_appender_syncs_in_groups_and_on_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    path = tmp_path / "responses.jsonl"
    with artifacts.JsonlAppender(path, "responses", grouped=True) as out:
        out.SYNC_SECONDS = 3600.0  # rows only
        for trial in range(1, 1_202):
            out.append(_row(trial))
        assert len(synced) == 2  # at rows 500 and 1,000
        # Every row is in the file (the kernel's page cache) before any sync: kill -9 loses none.
        assert path.read_bytes().count(b"\n") == 1_201
    assert len(synced) == 3  # the last 201 on close
    assert len(artifacts.read_jsonl(path, "responses").records) == 1_201


def test_ungrouped_appender_syncs_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    with artifacts.JsonlAppender(tmp_path / "responses.jsonl", "responses") as out:
        for trial in range(1, 6):
            out.append(_row(trial))
    assert len(synced) == 5
