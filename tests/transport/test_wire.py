"""What ``blindtest.transport.wire.request_body`` builds is what goes on the wire,
and every body built here is validated against OpenAI's published request schema
(``tests/data/openai-chat-completions.schema.json``).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.errors import EndpointRejected
from blindtest.generation.requests import endpoints_for
from blindtest.simulator import Fault, Simulator
from blindtest.transport.client import ChatClient
from blindtest.transport.endpoint import Endpoint
from blindtest.transport.wire import (
    ChatMessage,
    ParsedCompletion,
    ServerError,
    Usage,
    names_param,
    parse_completion,
    parse_error,
    request_body,
    token_field_for,
)

from conftest import Invoke
from endpoint_fixtures import *  # noqa: F403
from generate_runs import make_design, rows

MESSAGES: list[ChatMessage] = [
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": "How do tides work?"},
]

# --------------------------------------------------------------------------------------------
# Request bodies


def test_request_body_is_exact_and_follows_openais_schema(request_validator: Any) -> None:
    body = request_body(
        "gpt-4o-mini", MESSAGES, temperature=0.7, top_p=0.9, max_tokens=50, seed=1234567
    )
    assert orjson.dumps(body) == (
        b'{"model":"gpt-4o-mini","messages":[{"role":"system","content":"Answer briefly."},'
        b'{"role":"user","content":"How do tides work?"}],"temperature":0.7,"top_p":0.9,'
        b'"max_tokens":50,"seed":1234567}'
    )
    request_validator.validate(body)


def test_unset_parameters_are_left_out_and_n_is_never_sent(
    request_validator: Any,
) -> None:
    body = request_body("m", MESSAGES[1:])
    assert body == {"model": "m", "messages": [{"role": "user", "content": "How do tides work?"}]}
    request_validator.validate(body)


def test_temperature_zero_and_seed_zero_are_sent_not_dropped(
    request_validator: Any,
) -> None:
    body = request_body("m", MESSAGES, temperature=0.0, seed=0)
    assert (body["temperature"], body["seed"]) == (0.0, 0)
    request_validator.validate(body)


@pytest.mark.parametrize(
    ("base_url", "field"),
    [
        ("https://api.openai.com/v1", "max_completion_tokens"),
        ("https://api.openai.com/v1?x=1", "max_completion_tokens"),
        ("http://127.0.0.1:8000/v1", "max_tokens"),
        ("https://openrouter.ai/api/v1", "max_tokens"),
        ("https://example.openai.azure.com/openai/deployments/d", "max_tokens"),
    ],
)
def test_the_token_cap_field_follows_the_host(
    base_url: str, field: str, request_validator: Any
) -> None:
    assert token_field_for(base_url) == field
    body = request_body("m", MESSAGES, max_tokens=9, token_field=token_field_for(base_url))
    assert body[field] == 9
    assert len([k for k in body if k.startswith("max_")]) == 1
    request_validator.validate(body)


def test_the_body_bt_generate_sends_is_the_wire_modules(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, request_validator: Any
) -> None:
    """What goes over the socket is byte for byte ``Endpoint.request_body`` of the design's
    endpoint, with the per-slot seed."""
    run = tmp_path / "run"
    design = make_design(invoke, run, simulator, tmp_path, trials=2)
    assert invoke("generate", run, "--quiet").exit_code == 0
    endpoints = endpoints_for(design)
    by_seed = {r["seed"]: r for r in rows(run)}
    assert len(simulator.requests) == len(by_seed) == 6
    for request in simulator.requests:
        sent = request.json()
        request_validator.validate(sent)
        row = by_seed[sent["seed"]]
        expected = endpoints[row["side"]].request_body(sent["messages"], seed=row["seed"])
        assert request.body == orjson.dumps(expected)


def test_a_request_needs_a_message() -> None:
    with pytest.raises(ValueError, match="at least one message"):
        request_body("m", [])


# --------------------------------------------------------------------------------------------
# Completions


def completion_body(message: dict[str, Any], finish: str | None = "stop", **extra: Any) -> bytes:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
    }
    return orjson.dumps(body | extra)


def test_a_completion_is_read_with_text_usage_and_served_model(
    response_validator: Any,
) -> None:
    message = {"role": "assistant", "content": "Tides follow the moon.", "refusal": None}
    payload = completion_body(message)
    response_validator.validate(orjson.loads(payload))
    assert parse_completion(payload) == ParsedCompletion(
        "ok",
        text="Tides follow the moon.",
        finish_reason="stop",
        usage=Usage(12, 5, 17),
        model="gpt-4o-mini-2024-07-18",
        refusal=None,
        response_id="chatcmpl-1",
    )


@pytest.mark.parametrize(
    ("message", "finish", "kind", "text", "refusal", "truncated"),
    [
        ({"role": "assistant", "content": "Cut"}, "length", "length", "Cut", None, True),
        ({"role": "assistant", "content": "Cut"}, "max_tokens", "length", "Cut", None, True),
        (
            {"role": "assistant", "content": None, "refusal": "I can't help with that."},
            "stop",
            "refusal",
            "",
            "I can't help with that.",
            False,
        ),
        ({"role": "assistant", "content": ""}, "content_filter", "refusal", "", None, False),
        (
            {"role": "assistant", "content": "I'm sorry, but I can't help with that."},
            "stop",
            "refusal",
            "I'm sorry, but I can't help with that.",
            None,
            False,
        ),
        ({"role": "assistant", "content": None}, "stop", "no_content", "", None, False),
        (
            {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"text": "b"}]},
            "stop",
            "ok",
            "ab",
            None,
            False,
        ),
    ],
)
def test_finish_reason_refusal_and_content_shapes_are_classified(
    message: dict[str, Any],
    finish: str,
    kind: str,
    text: str,
    refusal: str | None,
    truncated: bool,
) -> None:
    parsed = parse_completion(completion_body(message, finish))
    assert (parsed.kind, parsed.text, parsed.refusal, parsed.truncated) == (
        kind,
        text,
        refusal,
        truncated,
    )
    assert parsed.ok is (kind in ("ok", "length", "refusal"))


@pytest.mark.parametrize(
    ("payload", "content_type", "kind", "detail"),
    [
        (
            b"<html><title>502 Bad Gateway</title></html>",
            "text/html",
            "html",
            "HTTP 2xx with an HTML page ('502 Bad Gateway') instead of JSON",
        ),
        (b'{"choices": [', "application/json", "invalid_json", "invalid JSON in the answer: "),
        (b'{"choices": []}', "application/json", "empty_choices", "empty choices list"),
        (
            b'{"error": {"message": "upstream failed"}}',
            "application/json",
            "malformed",
            "not a chat completion: upstream failed",
        ),
        (b'{"choices": [{"text": "x"}]}', "application/json", "malformed", "not a chat"),
    ],
)
def test_a_body_that_is_not_a_completion_gets_a_kind_and_never_raises(
    payload: bytes, content_type: str, kind: str, detail: str
) -> None:
    parsed = parse_completion(payload, content_type)
    assert parsed.kind == kind
    assert detail in parsed.detail
    assert not parsed.ok


def test_usage_is_kept_only_when_counted() -> None:
    message = {"role": "assistant", "content": "x"}
    partial = completion_body(message, usage={"prompt_tokens": 3, "completion_tokens": 4})
    assert parse_completion(partial).usage == Usage(3, 4, 7)
    junk = completion_body(message, usage={"prompt_tokens": True, "total_tokens": -1})
    assert parse_completion(junk).usage is None
    assert parse_completion(completion_body(message, usage=None)).usage is None


# --------------------------------------------------------------------------------------------
# Error bodies


@pytest.mark.parametrize(
    ("payload", "content_type", "expected"),
    [
        (  # OpenAI
            b'{"error": {"message": "Unrecognized request argument supplied: seed", '
            b'"type": "invalid_request_error", "param": "seed", "code": null}}',
            "application/json",
            ServerError(
                "Unrecognized request argument supplied: seed",
                type="invalid_request_error",
                param="seed",
            ),
        ),
        (  # llama.cpp: a numeric code
            b'{"error": {"code": 400, "message": "bad", "type": "invalid_request_error"}}',
            "application/json",
            ServerError("bad", code="400", type="invalid_request_error"),
        ),
        (  # Ollama's native shape
            b'{"error": "model \\"x\\" not found"}',
            "application/json",
            ServerError('model "x" not found'),
        ),
        (  # older vLLM: the fields at the top level
            b'{"object": "error", "message": "m", "type": "BadRequestError", "code": 400}',
            "application/json",
            ServerError("m", code="400", type="BadRequestError"),
        ),
        (
            b"<html><head><title>403 Forbidden</title></head></html>",
            "text/html",
            ServerError("an HTML page ('403 Forbidden')"),
        ),
        (b"", "text/plain", ServerError("empty body")),
        (b"upstream connect error", "text/plain", ServerError("'upstream connect error'")),
    ],
)
def test_error_bodies_are_read_as_structure(
    payload: bytes, content_type: str, expected: ServerError, error_validator: Any
) -> None:
    assert parse_error(payload, content_type) == expected
    if payload.startswith(b'{"error": {"message"'):
        error_validator.validate(orjson.loads(payload))


@pytest.mark.parametrize(
    ("status", "said", "names_seed"),
    [
        (400, ServerError("Unrecognized request argument supplied: seed", param="seed"), True),
        (400, ServerError("extra fields not permitted: seed"), True),
        (422, ServerError("body -> seed: Extra inputs are not permitted"), True),
        (400, ServerError("seeded sampling is off"), False),
        (400, ServerError("bad seed", param="messages"), False),
        (500, ServerError("seed"), False),
        (None, ServerError("seed", param="seed"), False),
    ],
)
def test_a_refused_parameter_is_named_by_structure_first(
    status: int | None, said: ServerError, names_seed: bool
) -> None:
    assert names_param(status, said, "seed") is names_seed


# --------------------------------------------------------------------------------------------
# The seed fallback, in the client


def test_the_client_asks_again_without_seed_and_counts_the_refused_attempt(
    simulator: Simulator, sim_endpoint: Callable[..., Endpoint]
) -> None:
    body = (
        '{"error": {"message": "Unrecognized request argument supplied: seed", '
        '"type": "invalid_request_error", "param": "seed", "code": null}}'
    )
    simulator.inject(Fault("status", status=400, body=body), times=1)

    async def go() -> tuple[Any, Any, bool]:
        async with ChatClient({"A": sim_endpoint("sim-small", temperature=0.7)}) as client:
            first = await client.complete("A", MESSAGES, seed=11)
            second = await client.complete("A", MESSAGES, seed=12)
            return first, second, client.sends_seed("A")

    first, second, sends = asyncio.run(go())
    assert (first.kind, first.attempts, first.seed) == ("ok", 2, None)
    assert (second.attempts, second.seed) == (1, None)
    assert sends is False
    seeds = [request.json().get("seed") for request in simulator.requests]
    assert seeds == [11, None, None]


def test_a_400_about_something_else_is_raised_with_its_attempts(
    simulator: Simulator, sim_endpoint: Callable[..., Endpoint]
) -> None:
    simulator.inject(Fault("status", status=400, message="Invalid value for 'top_p'."), times=1)

    async def go() -> None:
        async with ChatClient({"A": sim_endpoint("sim-small")}) as client:
            await client.complete("A", MESSAGES, seed=11)

    with pytest.raises(EndpointRejected) as raised:
        asyncio.run(go())
    assert (raised.value.status, raised.value.attempts) == (400, 1)
    assert len(simulator.requests) == 1


def test_a_server_refusing_seed_gets_requests_without_one_and_the_refusal_is_counted(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    refusal = Fault("status", status=400, message="Unrecognized request argument supplied: seed")
    simulator.inject(refusal, times=1, model="sim-large")
    result = invoke("generate", run, "--quiet", "--concurrency", "1")
    assert result.exit_code == 0, result.stderr
    found = rows(run)
    assert len(found) == 18
    # That side's requests go without seed from then on (recorded as seed null); B keeps it.
    assert all(r["seed"] is None for r in found if r["side"] == "A")
    assert all(r["seed"] is not None for r in found if r["side"] == "B")
    side_a = [r for r in found if r["side"] == "A"]
    assert sorted(r["attempts"] for r in side_a) == [1] * (len(side_a) - 1) + [2]
    # Every HTTP request the server saw is in some row's attempts, the refused one too.
    assert sum(r["attempts"] for r in found) == len(simulator.requests)
    generation = orjson.loads((run / "generation.json").read_bytes())
    requests = sum(role["requests"] for role in generation["roles"].values())
    assert requests == len(simulator.requests)


def test_generate_sniffs_no_error_strings() -> None:
    """The seed fallback lives in the client; bt-generate's library reads no error wording."""
    root = Path(__file__).parents[2] / "blindtest"
    paths = sorted((root / "generation").glob("*.py"))
    source = "".join(path.read_text() for path in paths)
    assert '"seed" in' not in source
    assert "rejects_seed" not in source
    assert "http 400" not in source.lower()


# --------------------------------------------------------------------------------------------
# Shared modules, not stages


def test_importing_the_analysis_does_not_load_aiohttp() -> None:
    code = "import blindtest.analysis.api, sys; assert 'aiohttp' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_wire_and_slots_import_no_stage_and_no_http_stack() -> None:
    code = (
        "import sys, blindtest.transport.wire, blindtest.model.slots\n"
        "import blindtest.transport.addresses\n"
        "heavy = {'aiohttp', 'click', 'blindtest.transport.client',\n"
        "         'blindtest.generation.generate',\n"
        "         'blindtest.generation.fetch', 'blindtest.generation.ledger'}\n"
        "assert not heavy & set(sys.modules), heavy & set(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_audit_verify_and_analyze_import_slots_not_generate() -> None:
    root = Path(__file__).parents[2] / "blindtest"
    for name in ("analysis/api.py", "auditing/build.py"):
        text = (root / name).read_text()
        assert "blindtest.generation.generate" not in text, name
        assert "blindtest.generation" not in text, name
    verify = (root / "pipeline" / "recompute.py").read_text()
    assert "from blindtest.generation.generate import SlotState" not in verify
