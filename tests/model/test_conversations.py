"""conversations as prompts. A .jsonl record may carry ``messages`` (turns
ending with a user turn); the sides answer the last turn, the judge sees every turn, hashes
and the duplicate check cover the whole conversation, a malformed one is exit 2 on its line."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.judging.terminal.layout import display_width, trial_layout
from blindtest.judging.terminal.session import Console
from blindtest.model.picks import load_judge_run
from blindtest.pipeline.recompute import verify_run
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke

TOPICS = ["gardening", "databases", "sourdough", "cycling", "chess", "astronomy", "jazz", "sailing"]


def conversation(topic: str) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"I want to learn about {topic}. Where do I start?"},
        {"role": "assistant", "content": f"Start with the basics of {topic}. " * 12},
        {"role": "user", "content": f"What mistakes do beginners in {topic} make?"},
    ]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def conversations_file(tmp_path: Path) -> Path:
    records = [{"id": f"c{i}", "messages": conversation(t)} for i, t in enumerate(TOPICS)]
    return write_jsonl(tmp_path / "conv.jsonl", records)


@pytest.mark.parametrize("protocol", ["triangle", "preference"])
def test_done_when_three_turn_conversations_run_and_the_judge_sees_every_turn(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, protocol: str
) -> None:
    run = tmp_path / "run"
    result = invoke(
        "run",
        "sim-large",
        "sim-small",
        "--prompts",
        conversations_file(tmp_path),
        "--a-url",
        simulator.base_url,
        "--b-url",
        simulator.base_url,
        "--protocol",
        protocol,
        "--trials",
        "8",
        "--seed",
        "conv",
        "--judge",
        "bot:length",
        "--run-dir",
        run,
    )
    assert result.exit_code == 0, result.stderr
    # The sides were sent every turn and answer the last one.
    for request in simulator.requests:
        messages = request.json()["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "user"]
        assert messages[-1]["content"].startswith("What mistakes do beginners")
    # The design hashes the whole conversation; trials.jsonl carries the earlier turns.
    design = orjson.loads((run / artifacts.DESIGN).read_bytes())
    assert all(len(p["messages"]) == 3 for p in design["prompts"])
    trials = [orjson.loads(line) for line in (run / artifacts.TRIALS).read_bytes().splitlines()]
    topic = next(t for t in TOPICS if t in trials[0]["prompt"])
    assert trials[0]["history"] == conversation(topic)[:2]
    # The terminal judge's screen shows every turn (earlier ones folded), then the prompt.
    judge_run = load_judge_run(run)
    trial = judge_run.view.trials[0]
    console = Console(io.StringIO(), io.StringIO(), interactive=False)
    rows, _ = trial_layout(judge_run.view, trial, 79, console)
    screen = "\n".join(rows)
    assert "Conversation: 2 earlier turns, then the prompt" in screen
    assert f"user:      I want to learn about {topic}. Where do I start?" in screen
    assert f"assistant: Start with the basics of {topic}." in screen
    assert f"What mistakes do beginners in {topic} make?" in screen
    assert all(display_width(row) <= 79 for row in rows)
    assert screen.index("assistant:") < screen.index("Prompt")
    assert verify_run(run).ok


MALFORMED = [
    ({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]},
     "p.jsonl:2: the conversation ends with an assistant turn"),
    ({"messages": [{"role": "wizard", "content": "hi"}]}, "turn 1 has unknown role 'wizard'"),
    ({"messages": [{"role": "user", "content": " "}]}, ":2: turn 1 (user) has empty content"),
    ({"messages": []}, 'p.jsonl:2: "messages" must be a non-empty list'),
    ({"messages": [{"role": "user"}]}, 'p.jsonl:2: turn 1 must be an object with exactly "role"'),
    ({"prompt": "x", "messages": [{"role": "user", "content": "x"}]},
     'p.jsonl:2: give "prompt" or "messages", not both'),
]  # fmt: skip


@pytest.mark.parametrize(("record", "message"), MALFORMED)
def test_malformed_conversation_exits_2_naming_the_line_and_writes_nothing(
    invoke: Invoke, tmp_path: Path, record: dict[str, Any], message: str
) -> None:
    prompts = write_jsonl(tmp_path / "p.jsonl", [{"prompt": "fine"}, record])
    run = tmp_path / "run"
    result = invoke("design", run, "--prompts", prompts, "--a", "m1", "--b", "m2")
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not run.exists()


def test_duplicates_and_hashes_cover_the_whole_conversation(invoke: Invoke, tmp_path: Path) -> None:
    first = conversation("chess")
    other_history = [{**first[0], "content": "Tell me about board games."}, *first[1:]]
    prompts = write_jsonl(
        tmp_path / "p.jsonl",
        [{"messages": first}, {"messages": other_history}, {"prompt": first[-1]["content"]}],
    )
    run = tmp_path / "run"
    args = ["--a", "m1", "--b", "m2", "--trials", "3", "--protocol", "pair", "--seed", "h"]
    assert invoke("design", run, "--prompts", prompts, *args).exit_code == 0
    design = orjson.loads((run / artifacts.DESIGN).read_bytes())
    hashes = [p["sha256"] for p in design["prompts"]]
    assert len(set(hashes)) == 3  # same last turn, three different prompts
    assert [p["text"] for p in design["prompts"]] == [first[-1]["content"]] * 3
    same = write_jsonl(tmp_path / "same.jsonl", [{"messages": first}, {"messages": first}])
    result = invoke("design", tmp_path / "r2", "--prompts", same, *args)
    assert result.exit_code == 2
    assert "line 2 repeats the prompt on line 1" in result.stderr
