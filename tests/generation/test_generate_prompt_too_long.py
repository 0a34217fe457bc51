"""a prompt too long for the server fails only its slot, named by trial and prompt
id in the failure row and in the final message; the servers people run are recognised by error
type or code first and wording second, each on its exact body.

Where each body comes from (``blindtest.simulator.CONTEXT_BODIES`` holds them verbatim):

* OpenAI: chathub-dev/chathub#126, ``{"error":{"message":"This model's maximum context length
  is 4097 tokens. However, your messages resulted in 4294 tokens. Please reduce the length of
  the messages.","type":"invalid_request_error","param":"messages","code":
  "context_length_exceeded"}}`` (same shape in mckaywrigley/chatbot-ui#102).
* llama.cpp ``llama-server``: the body in ("request (4233 tokens) exceeds the
  available context size (512 tokens), try increasing it", type ``exceed_context_size_error``);
  the server adds ``"code": 400, "n_prompt_tokens", "n_ctx"`` (as quoted in a context-size
  write-up: ``{'error': {'code': 400, 'message': 'request (4476 tokens) exceeds the available
  context size (4096 tokens)', 'type': 'exceed_context_size_error', 'n_prompt_tokens': 4476,
  'n_ctx': 4096}}``).
* vLLM: vllm-project/vllm#20409, ``Error code: 400 - {'object': 'error', 'message': "This
  model's maximum context length is 16384 tokens. However, you requested 19591 tokens (9591 in
  the messages, 10000 in the completion). Please reduce the length of the messages or
  completion. None", 'type': 'BadRequestError', 'param': None, 'code': 400}`` (the older
  top-level shape; vllm-project/vllm#4667 shows the same keys).
* Ollama: "the input length exceeds the context length" (lfnovo/open-notebook#350: "Ollama API
  error: the input length exceeds the context length"; 400 through the OpenAI-compatible
  layer, which wraps it as ``{"error": {"message", "type", "param", "code"}}``; some versions
  answered 500 with the native ``{"error": "..."}``).
* LiteLLM proxy: BerriAI/litellm#7259, ``{'error': {'message': 'litellm.BadRequestError:
  litellm.ContextWindowExceededError: AnthropicError - {"type":"error","error":{"type":
  "invalid_request_error","message":"prompt is too long: 200480 tokens > 200000 maximum"}}
  \\nReceived Model Group=anthropic/claude-3-5-sonnet-20241022 ...', 'type': None, 'param':
  None, 'code': '400'}}``.
* HTTP 413: aiohttp (the simulator) refuses a body over 1 MiB with "Maximum request body size
  1048576 exceeded"; nginx and other proxies answer 413 too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from blindtest.errors import PromptTooLong
from blindtest.simulator import CONTEXT_BODIES, Fault, Simulator
from blindtest.transport.client import ChatClient
from blindtest.transport.endpoint import Endpoint
from blindtest.transport.wire import parse_error, prompt_too_long

from conftest import Invoke, numbered_prompts
from generate_runs import make_design, rows


@pytest.mark.parametrize(
    ("server", "status", "code", "type_"),
    [
        ("openai", 400, "context_length_exceeded", "invalid_request_error"),
        ("llamacpp", 400, "400", "exceed_context_size_error"),
        ("vllm", 400, "400", "BadRequestError"),
        ("ollama", 400, None, "invalid_request_error"),
        ("litellm", 400, "400", None),
    ],
)
def test_each_servers_exact_too_long_body_is_recognised(
    server: str, status: int, code: str | None, type_: str | None
) -> None:
    said = parse_error(CONTEXT_BODIES[server].encode(), "application/json")
    assert (said.code, said.type) == (code, type_)
    assert prompt_too_long(status, said)


def test_type_or_code_first_wording_second() -> None:
    # A code alone is enough, whatever the words; and the words alone, without a code.
    coded = parse_error(b'{"error": {"message": "nope", "code": "context_length_exceeded"}}', "")
    typed = parse_error(b'{"error": {"message": "x", "type": "exceed_context_size_error"}}', "")
    assert prompt_too_long(400, coded)
    assert prompt_too_long(400, typed)
    # Ollama's native shape, and a 500 as older Ollama sent it
    native = parse_error(b'{"error":"the input length exceeds the context length"}', "")
    assert prompt_too_long(500, native)
    assert prompt_too_long(413, parse_error(b"", "text/plain"))


@pytest.mark.parametrize(
    "body",
    [
        b'{"error": {"message": "Invalid request: one of the parameters is not valid."}}',
        b'{"error": {"message": "Unrecognized request argument supplied: seed"}}',
        b'{"error": {"message": "The model `x` does not exist", "code": "model_not_found"}}',
    ],
)
def test_other_400s_are_not_taken_for_a_prompt_too_long(body: bytes) -> None:
    assert not prompt_too_long(400, parse_error(body, "application/json"))


def test_a_context_error_is_not_retried_even_on_a_500() -> None:
    # a 502 page that happens to mention a context is still a server error
    assert not prompt_too_long(502, parse_error(b"maximum context length", "text/plain"))


@pytest.mark.parametrize("server", sorted(CONTEXT_BODIES))
def test_too_long_fails_only_that_slot_named_by_trial_and_prompt(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, server: str
) -> None:
    run = tmp_path / "run"
    design = make_design(invoke, run, simulator, tmp_path)
    simulator.inject(f"context-{server}", times=1, model="sim-small")
    result = invoke("generate", run, "--concurrency", "1")
    assert result.exit_code == 3
    failed = [r for r in rows(run) if r["status"] == "failed"]
    assert len(failed) == 1
    row = failed[0]
    assert row["kind"] == "too_long"
    assert row["attempts"] == 1
    assert row["error"].startswith(
        f"trial {row['trial']}, prompt {row['prompt_id']}: the prompt is too long for the server"
    )
    assert len([r for r in rows(run) if r["status"] == "ok"]) == 17
    error = result.stderr.splitlines()[-1]
    assert f"1 slot(s) still unanswered: trial {row['trial']} (prompt {row['prompt_id']}): " in (
        error
    )
    assert "shorten or drop that prompt in a new design" in error
    # shown before judging: it never names the side or the model of the slot
    for word in ("side", "sim-small", "sim-large", "slot 1", "slot 2", "slot 3"):
        assert word not in error
    assert design["models"]["B"]["model"] == "sim-small"
    assert len(simulator.requests) == 18  # not retried, nothing else stopped


def test_a_2_mb_prompt_gets_413_and_fails_its_trial_only(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    prompts = numbered_prompts(6)
    prompts[2] = "Summarise this: " + "word " * 420_000  # > 1 MiB as a request body
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, prompts=prompts)
    result = invoke("generate", run)
    assert result.exit_code == 3, result.stderr
    failed = [r for r in rows(run) if r["status"] == "failed"]
    assert {r["prompt_id"] for r in failed} == {"p003"}
    assert all(r["kind"] == "too_long" and "HTTP 413" in r["error"] for r in failed)
    assert len(failed) == 3  # every slot of the trial with that prompt
    error = result.stderr.splitlines()[-1]
    assert "3 slot(s) still unanswered: trial " in error
    assert "(prompt p003): the prompt is too long for the server (HTTP 413: " in error
    # a rerun asks only those slots again (aiohttp answers 413 before the simulator counts a
    # request, so count the rows) and says the same
    again = invoke("generate", run, "--quiet")
    assert again.exit_code == 3
    assert len(rows(run)) == 18 + 3
    assert "(prompt p003)" in again.stderr


def test_a_seed_refusal_is_still_recognised_by_its_param(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    body = (
        '{"error": {"message": "Unrecognized request argument supplied: seed", '
        '"type": "invalid_request_error", "param": "seed", "code": null}}'
    )
    simulator.inject(Fault("status", status=400, body=body), times=1, model="sim-large")
    result = invoke("generate", run, "--quiet", "--concurrency", "1")
    assert result.exit_code == 0, result.stderr
    assert all(r["seed"] is None for r in rows(run) if r["side"] == "A")


def test_the_client_raises_prompt_too_long_with_the_servers_structure_at_once(
    simulator: Simulator, sim_endpoint: Callable[..., Endpoint]
) -> None:
    simulator.inject("context-openai", times=5)

    async def ask() -> None:
        async with ChatClient({"A": sim_endpoint("sim-large")}) as client:
            await client.complete("A", [{"role": "user", "content": "hi"}])

    with pytest.raises(PromptTooLong) as raised:
        asyncio.run(ask())
    error = raised.value
    assert (error.status, error.code, error.type, error.param) == (
        400,
        "context_length_exceeded",
        "invalid_request_error",
        "messages",
    )
    assert error.server_message is not None
    assert error.server_message.startswith("This model's maximum context length is 4097")
    assert len(simulator.requests) == 1  # the same prompt gets the same answer: no retry
