"""a billing error (429 ``insufficient_quota``) is not a rate limit: no retry, the
run stops at once with exit 3 and one line naming the side and the server's words.

The body is OpenAI's, as quoted in chatanywhere/GPT_API_free#229 ("Error code: 429 - {'error':
{'message': 'You exceeded your current quota, please check your plan and billing details. For
more information on this error, read the docs: https://platform.openai.com/docs/guides/
error-codes/api-errors.', 'type': 'insufficient_quota', 'param': None, 'code':
'insufficient_quota'}}") and langchain-ai/langchainjs#1929 ("OpenAI insufficient_quota errors
are mistaken for rate limits and repeatedly retried"); the simulator's ``429-quota`` fault
sends it verbatim (``blindtest.simulator.QUOTA_BODY``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from blindtest.errors import QuotaExceeded
from blindtest.simulator import QUOTA_BODY, Simulator
from blindtest.transport.client import ChatClient
from blindtest.transport.endpoint import Endpoint
from blindtest.transport.retry import should_retry

from conftest import Invoke
from generate_runs import make_design


def test_the_simulator_sends_openais_exact_quota_body(simulator: Simulator) -> None:
    assert orjson.loads(QUOTA_BODY)["error"] == {
        "message": "You exceeded your current quota, please check your plan and billing "
        "details. For more information on this error, read the docs: "
        "https://platform.openai.com/docs/guides/error-codes/api-errors.",
        "type": "insufficient_quota",
        "param": None,
        "code": "insufficient_quota",
    }


def test_retry_policy_never_retries_a_billing_code() -> None:
    assert should_retry(429) is True
    assert should_retry(429, error_code="insufficient_quota") is False
    assert should_retry(429, {"x-should-retry": "true"}, error_code="insufficient_quota") is False


def test_client_raises_quota_exceeded_after_one_request_with_structure(
    simulator: Simulator, sim_endpoint: Callable[..., Endpoint]
) -> None:
    simulator.inject("429-quota", times=10)

    async def ask() -> None:
        async with ChatClient({"A": sim_endpoint("sim-large")}) as client:
            await client.complete("A", [{"role": "user", "content": "hi"}])

    with pytest.raises(QuotaExceeded) as raised:
        asyncio.run(ask())
    error = raised.value
    assert error.exit_code == 3
    assert (error.status, error.code, error.type) == (
        429,
        "insufficient_quota",
        "insufficient_quota",
    )
    assert error.server_message is not None
    assert error.server_message.startswith("You exceeded your current quota")
    assert len(simulator.requests) == 1


def test_insufficient_quota_stops_the_run_at_once_exit_3_naming_side_and_words(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    simulator.inject("429-quota", times=100, model="sim-large")
    result = invoke("generate", run, "--concurrency", "1")
    assert result.exit_code == 3
    error = result.stderr.splitlines()[-1]
    assert error.startswith("blindtest: error: side A (sim-large at ")
    assert "HTTP 429 Too Many Requests (a billing limit, not retried): You exceeded your " in error
    assert "current quota, please check your plan and billing details" in error
    # exactly one request to the side whose account is out of money: no retry, no next slot
    asked = [r for r in simulator.requests if r.json()["model"] == "sim-large"]
    assert len(asked) == 1
