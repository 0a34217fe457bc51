"""every responses row records the model the server
says answered (``served_model``); refusals and truncations are classified in ``kind``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from blindtest.rundir import artifacts
from blindtest.simulator import Simulator
from blindtest.transport.client import ChatClient
from blindtest.transport.endpoint import Endpoint
from blindtest.transport.wire import parse_completion

from conftest import Invoke
from generate_runs import make_design, rows


def test_a_single_model_server_answering_another_name_is_recorded(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    simulator.config.serve_as = "sim-small"  # like llama.cpp: any name, one model
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    assert invoke("generate", run, "--quiet").exit_code == 0
    got = rows(run)
    assert {r["model"] for r in got} == {"sim-large", "sim-small"}  # what was asked for
    assert {r["served_model"] for r in got} == {"sim-small"}  # what answered


def test_served_model_is_on_every_fetched_row_and_old_rows_stay_valid(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    assert invoke("generate", run, "--quiet").exit_code == 0
    got = rows(run)
    assert all(r["served_model"] == r["model"] for r in got)
    # a file written before the field existed is still read and verified
    lines = [
        orjson.dumps(
            {k: v for k, v in r.items() if k != "served_model"}, option=orjson.OPT_SORT_KEYS
        )
        for r in got
    ]
    (run / "responses.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    assert artifacts.read_jsonl(run / "responses.jsonl", "responses").records
    assert invoke("verify", run).exit_code == 0


def body(content: str | None, finish: str | None, refusal: str | None = None) -> bytes:
    message = {"role": "assistant", "content": content, "refusal": refusal}
    return orjson.dumps({"choices": [{"message": message, "finish_reason": finish}]})


@pytest.mark.parametrize(
    ("content", "finish", "refusal", "kind"),
    [
        ("A full answer.", "stop", None, "ok"),
        ("A cut answ", "length", None, "length"),
        ("A cut answ", "max_tokens", None, "length"),  # Anthropic-style gateways
        ("", "length", None, "length"),  # every token spent before any text
        (None, "stop", "I'm sorry, but I can't help with that.", "refusal"),
        ("Partial text", "content_filter", None, "refusal"),
        (None, "content_filter", None, "refusal"),
        ("I'm sorry, but I can't help with that.", "stop", None, "refusal"),
        ("I’m sorry, but I can’t assist with that request.", "stop", None, "refusal"),
        ("I cannot help with that.", "stop", None, "refusal"),
        ("I'm sorry to hear about your bike. First, check the chain.", "stop", None, "ok"),
        ("Sorry for the wait: here is the answer you asked for.", "stop", None, "ok"),
    ],
)
def test_refusals_and_truncations_are_classified_in_kind(
    content: str | None, finish: str | None, refusal: str | None, kind: str
) -> None:
    assert parse_completion(body(content, finish, refusal), "application/json").kind == kind


def test_refusal_and_length_rows_carry_their_kind_on_disk(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--max-tokens", "30")
    simulator.inject("refusal", times=2, model="sim-small")
    assert invoke("generate", run, "--quiet", "--concurrency", "1").exit_code == 0
    got = rows(run)
    refusals = [r for r in got if r["kind"] == "refusal"]
    assert len(refusals) == 2
    assert all(r["side"] == "B" and r["status"] == "ok" for r in refusals)
    assert all(r["refusal"] and r["text"] == r["refusal"] for r in refusals)
    cut = [r for r in got if r["kind"] == "length"]
    assert cut
    assert all(r["truncated"] and r["finish_reason"] == "length" for r in cut)
    assert all(not r["truncated"] for r in got if r["kind"] != "length")


def test_client_marks_a_max_tokens_finish_as_truncated(
    simulator: Simulator, sim_endpoint: Callable[..., Endpoint]
) -> None:
    async def ask() -> bool:
        async with ChatClient({"A": sim_endpoint("sim-large", max_tokens=5)}) as client:
            completion = await client.complete("A", [{"role": "user", "content": "Explain rust"}])
            return completion.truncated and completion.kind == "length"

    assert asyncio.run(ask())
