"""The chat-completions client against the simulator on 127.0.0.1: the exact bodies it sends,
how it classifies answers, which failures it retries and for how long, the errors it raises,
its concurrency and pace, and that the key never shows up anywhere.

Waits between retries go through an injected ``sleep`` that records them and returns at once,
so the tests assert the delays without spending them.
"""

from __future__ import annotations

import asyncio
import logging
import pickle
import re
import socket
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.errors import (
    AuthFailed,
    BadInput,
    ConnectionRefused,
    EndpointFailed,
    EndpointRejected,
)
from blindtest.simulator import Fault, Simulator, SimulatorConfig
from blindtest.transport.client import ChatClient, Completion, Counters
from blindtest.transport.endpoint import Endpoint
from blindtest.transport.flow import _AdaptiveLimit
from blindtest.transport.retry import RetryPolicy
from blindtest.transport.wire import ChatMessage
from blindtest.version import __version__

from endpoint_fixtures import *  # noqa: F403
from endpoint_fixtures import SIM_KEY_ENV

MESSAGES: list[ChatMessage] = [
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": "How do tides work?"},
]
MakeEndpoint = Callable[..., Endpoint]


class Sleeps:
    """Stands in for asyncio.sleep in the retry loop: records each wait, waits for nothing."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)


def ask(
    endpoint: Endpoint,
    messages: Sequence[ChatMessage] = MESSAGES,
    *,
    seed: int | None = None,
    sleeps: Sleeps | None = None,
    **options: Any,
) -> Completion:
    """One completion through a fresh client, in a fresh event loop."""
    options.setdefault("sleep", sleeps if sleeps is not None else Sleeps())

    async def go() -> Completion:
        async with ChatClient({"A": endpoint}, **options) as client:
            return await client.complete("A", messages, seed=seed)

    return asyncio.run(go())


@pytest.fixture(autouse=True)
def _every_request_body_follows_the_schema(
    simulator: Simulator, request_validator: Any
) -> Iterator[None]:
    """Whatever a test does, each body the client sent must be a valid OpenAI request."""
    yield
    for request in simulator.requests:
        request_validator.validate(request.json())


# --------------------------------------------------------------------------------------------
# Request bodies


def test_request_body_is_exactly_the_openai_shape(
    simulator: Simulator, sim_key: str, sim_endpoint: MakeEndpoint, request_validator: Any
) -> None:
    endpoint = sim_endpoint("sim-large", temperature=0.7, top_p=0.9, max_tokens=50)
    ask(endpoint, seed=42)
    [sent] = simulator.requests
    expected = {
        "model": "sim-large",
        "messages": MESSAGES,
        "temperature": 0.7,
        "top_p": 0.9,
        "max_tokens": 50,
        "seed": 42,
    }
    assert sent.body == orjson.dumps(expected)
    request_validator.validate(sent.json())
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["authorization"] == f"Bearer {sim_key}"
    assert sent.headers["user-agent"] == f"blindtest/{__version__}"


def test_unset_parameters_are_not_sent_and_n_never_is(
    simulator: Simulator, sim_endpoint: MakeEndpoint, request_validator: Any
) -> None:
    ask(sim_endpoint("sim-small"))
    [sent] = simulator.requests
    assert sent.json() == {"model": "sim-small", "messages": MESSAGES}
    assert "authorization" not in sent.headers
    request_validator.validate(sent.json())


def test_the_token_cap_can_be_sent_as_max_completion_tokens(
    simulator: Simulator, sim_endpoint: MakeEndpoint, request_validator: Any
) -> None:
    endpoint = sim_endpoint(max_tokens=7, max_tokens_field="max_completion_tokens")
    completion = ask(endpoint)
    body = simulator.requests[0].json()
    assert body["max_completion_tokens"] == 7
    assert "max_tokens" not in body
    request_validator.validate(body)
    assert completion.truncated


def test_build_request_body_needs_a_message() -> None:
    endpoint = Endpoint("http://127.0.0.1:9/v1", "m")
    with pytest.raises(ValueError, match="at least one message"):
        endpoint.request_body([])


# --------------------------------------------------------------------------------------------
# Classified answers


def test_a_plain_answer_carries_text_usage_latency_and_one_attempt(
    simulator: Simulator, sim_endpoint: MakeEndpoint
) -> None:
    simulator.config.latency = 0.02
    completion = ask(sim_endpoint("sim-small", temperature=0.0), seed=1)
    assert completion.kind == "ok"
    assert completion.ok
    assert completion.text
    assert completion.finish_reason == "stop"
    assert completion.attempts == 1
    assert completion.status == 200
    assert completion.model == "sim-small"
    assert completion.side == "A"
    assert completion.response_id is not None
    assert completion.response_id.startswith("chatcmpl-")
    assert completion.usage is not None
    assert completion.usage.completion_tokens == len(completion.text.split())
    assert completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens
    )
    assert completion.latency_ms >= 20
    assert not completion.refused
    assert not completion.truncated
    assert completion.error is None


def test_length_is_kept_and_flagged(simulator: Simulator, sim_endpoint: MakeEndpoint) -> None:
    completion = ask(sim_endpoint(max_tokens=5))
    assert completion.kind == "length"
    assert completion.ok
    assert completion.truncated
    assert completion.finish_reason == "length"
    assert len(completion.text.split()) == 5


def test_a_refusal_is_kept_and_flagged_not_retried(
    simulator: Simulator, sim_endpoint: MakeEndpoint
) -> None:
    simulator.inject("refusal")
    completion = ask(sim_endpoint())
    assert completion.kind == "refusal"
    assert completion.ok
    assert completion.refused
    assert completion.refusal == "I'm sorry, but I can't help with that."
    assert completion.text == ""
    assert completion.attempts == 1


@pytest.mark.parametrize(
    "fault",
    [
        "408", "409", "429", "429-bare", "500", "502", "503", "html", "reset", "truncate",
        "html-200", "invalid-json", "empty-choices", "no-content",
    ],
)  # fmt: skip
def test_transient_failures_are_retried_until_an_answer(
    simulator: Simulator, sim_endpoint: MakeEndpoint, fault: str
) -> None:
    simulator.inject(fault)

    async def go() -> tuple[Completion, Counters]:
        async with ChatClient({"A": sim_endpoint()}, sleep=Sleeps()) as client:
            completion = await client.complete("A", MESSAGES, seed=3)
            return completion, client.counters()

    completion, counters = asyncio.run(go())
    assert completion.kind == "ok"
    assert completion.attempts == 2
    assert counters == Counters(
        requests=2, retries=1, rate_limited=fault.startswith("429"), completions=1, failures=0
    )
    [slot] = simulator.slots.values()
    assert (slot.received, slot.answered, slot.after_answer) == (2, 1, 0)


@pytest.mark.parametrize(
    ("fault", "kind", "words"),
    [
        ("503", "server_error", "HTTP 503 Service Unavailable: The engine is currently overloaded"),
        ("408", "server_error", "HTTP 408 Request Timeout"),
        ("html", "server_error", "HTTP 502 Bad Gateway: an HTML page ('502 Bad Gateway')"),
        ("429", "rate_limited", "HTTP 429 Too Many Requests: Rate limit reached"),
        ("reset", "connection_error", "connection"),
        ("truncate", "connection_error", "the connection broke in the middle of the answer"),
        ("html-200", "html", "HTML page"),
        ("invalid-json", "invalid_json", "invalid JSON in the answer"),
        ("empty-choices", "empty_choices", "empty choices list"),
        ("no-content", "no_content", "no content and no refusal"),
    ],
)
def test_a_slot_that_keeps_failing_comes_back_classified_not_raised(
    simulator: Simulator, sim_endpoint: MakeEndpoint, fault: str, kind: str, words: str
) -> None:
    simulator.inject(fault, times=6)
    sleeps = Sleeps()
    completion = ask(sim_endpoint("sim-small"), sleeps=sleeps)
    assert completion.kind == kind
    assert not completion.ok
    assert completion.text == ""
    assert completion.attempts == 6
    assert len(sleeps.delays) == 5
    assert completion.error is not None
    assert "\n" not in completion.error
    port = simulator.port
    assert completion.error.startswith(f"side A (sim-small at http://127.0.0.1:{port}): ")
    assert words in completion.error
    assert completion.error.endswith("(after 6 attempts)")


def test_max_retries_bounds_the_attempts(simulator: Simulator, sim_endpoint: MakeEndpoint) -> None:
    simulator.inject("500", times=10)
    completion = ask(sim_endpoint(), policy=RetryPolicy(max_retries=2))
    assert completion.kind == "server_error"
    assert completion.attempts == 3
    assert simulator.pending() == 7


def test_x_should_retry_overrides_the_status(
    simulator: Simulator, sim_endpoint: MakeEndpoint
) -> None:
    simulator.inject(Fault("status", status=400, should_retry=True))
    assert ask(sim_endpoint()).attempts == 2
    simulator.inject(Fault("status", status=503, should_retry=False))
    completion = ask(sim_endpoint())
    assert completion.kind == "server_error"
    assert completion.attempts == 1


# --------------------------------------------------------------------------------------------
# Waits


@pytest.mark.parametrize(
    ("fault", "low", "high"),
    [
        (Fault("status", status=429, retry_after="3"), 3.0, 3.0),
        (Fault("status", status=429, retry_after_ms=250), 0.25, 0.25),
        (Fault("status", status=503, retry_after="1.5"), 1.5, 1.5),
        (Fault("status", status=429, retry_after_date=30), 28.0, 30.0),  # whole seconds
        (Fault("status", status=429, retry_after="600"), 60.0, 60.0),  # capped
        (Fault("status", status=429), 0.375, 0.5),  # plain backoff with jitter
        (Fault("reset"), 0.375, 0.5),
    ],
)
def test_the_wait_before_a_retry_follows_the_server(
    simulator: Simulator, sim_endpoint: MakeEndpoint, fault: Fault, low: float, high: float
) -> None:
    simulator.inject(fault)
    sleeps = Sleeps()
    assert ask(sim_endpoint(), sleeps=sleeps).attempts == 2
    [delay] = sleeps.delays
    assert low <= delay <= high


def test_backoff_doubles_across_attempts(simulator: Simulator, sim_endpoint: MakeEndpoint) -> None:
    class Top:
        def random(self) -> float:
            return 0.0

    simulator.inject("500", times=5)
    sleeps = Sleeps()
    assert ask(sim_endpoint(), sleeps=sleeps, rng=Top()).attempts == 6
    assert sleeps.delays == [0.5, 1.0, 2.0, 4.0, 8.0]


# --------------------------------------------------------------------------------------------
# Failures that stop at once


@pytest.mark.parametrize(
    ("fault", "error", "words"),
    [
        ("400", EndpointRejected, "HTTP 400 Bad Request: Invalid request"),
        ("422", EndpointRejected, "HTTP 422 Unprocessable"),
        ("404", EndpointRejected, "HTTP 404 Not Found"),
        ("403", AuthFailed, "HTTP 403 Forbidden: You are not allowed to sample from this model"),
        ("401", AuthFailed, "HTTP 401 Unauthorized"),
        (Fault("status", status=301), EndpointRejected, "HTTP 301 Moved Permanently"),
    ],
)
def test_non_retryable_failures_raise_at_once(
    simulator: Simulator,
    sim_endpoint: MakeEndpoint,
    fault: str | Fault,
    error: type[EndpointFailed],
    words: str,
) -> None:
    simulator.inject(fault)
    with pytest.raises(error) as raised:
        ask(sim_endpoint("sim-small"))
    message = str(raised.value)
    assert message.startswith(f"side A (sim-small at http://127.0.0.1:{simulator.port}): ")
    assert words in message
    assert "\n" not in message
    assert raised.value.exit_code == 3
    assert len(simulator.requests) == 1


def test_an_unknown_model_names_side_model_and_the_servers_message(
    simulator: Simulator, sim_endpoint: MakeEndpoint
) -> None:
    with pytest.raises(EndpointRejected) as raised:
        ask(sim_endpoint("gpt-nope"))
    assert str(raised.value) == (
        f"side A (gpt-nope at http://127.0.0.1:{simulator.port}): HTTP 404 Not Found: "
        "The model `gpt-nope` does not exist or you do not have access to it; "
        "check the model name and base URL"
    )


def test_a_wrong_key_raises_auth_failed_naming_the_variable(
    simulator: Simulator, sim_key: str, sim_endpoint: MakeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SIM_KEY_ENV, "simkey-not-the-right-one")
    with pytest.raises(AuthFailed, match=r"HTTP 401 .*; check the key in \$BLINDTEST_SIM_KEY$"):
        ask(sim_endpoint())
    assert len(simulator.requests) == 1


def test_a_401_with_the_key_variable_unset_says_it_is_not_set(
    simulator: Simulator, sim_key: str
) -> None:
    # A local server is asked without a key when its variable is unset (bt-generate's rule):
    # the refusal then names the cause, not only the status.
    endpoint = Endpoint(simulator.base_url, "sim-large", unset_key_env="SIM_KEY")
    with pytest.raises(AuthFailed) as raised:
        ask(endpoint)
    assert str(raised.value) == (
        f"side A (sim-large at http://127.0.0.1:{simulator.port}): SIM_KEY is not set, and the "
        "server answered HTTP 401 Unauthorized: You didn't provide an API key. Provide it as "
        "'Authorization: Bearer KEY'; export SIM_KEY with the API key"
    )
    assert [r.headers.get("authorization") for r in simulator.requests] == [None]


def test_a_missing_key_variable_is_bad_input_before_any_request(
    simulator: Simulator, sim_key: str, sim_endpoint: MakeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SIM_KEY_ENV)
    endpoint = sim_endpoint()
    message = (
        "side A: environment variable BLINDTEST_SIM_KEY is not set; "
        "export it with the API key for sim-large"
    )
    with pytest.raises(BadInput, match=f"^{re.escape(message)}$"):
        endpoint.check_key("A")
    with pytest.raises(BadInput, match=re.escape(message)):
        ask(endpoint)
    assert simulator.requests == []


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound once, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_connection_refused_by_a_server_that_never_answered_raises_at_once() -> None:
    port = closed_port()
    sleeps = Sleeps()
    with pytest.raises(ConnectionRefused) as raised:
        ask(Endpoint(f"http://127.0.0.1:{port}/v1", "sim-large"), sleeps=sleeps)
    assert str(raised.value) == (
        f"side A (sim-large at http://127.0.0.1:{port}): connection refused, nothing listens "
        "there; start the server, or check the base URL"
    )
    assert raised.value.attempts == 1
    assert raised.value.exit_code == 3
    assert sleeps.delays == []


def test_connection_refused_after_the_server_answered_is_retried_then_raises() -> None:
    sleeps = Sleeps()

    async def go() -> tuple[Completion, BaseException, Counters]:
        simulator = Simulator(SimulatorConfig())
        await simulator.start()
        endpoint = Endpoint(simulator.base_url, "sim-small")
        async with ChatClient({"A": endpoint}, sleep=sleeps) as client:
            first = await client.complete("A", MESSAGES)
            await simulator.stop()  # a server restarting: its port refuses for a moment
            try:
                await client.complete("A", MESSAGES)
            except ConnectionRefused as error:
                return first, error, client.counters("A")
        raise AssertionError("the second request did not raise")

    first, error, counters = asyncio.run(go())
    assert first.ok
    assert len(sleeps.delays) == 5  # the retries a restart gets
    assert str(error).endswith("check the base URL (after 6 attempts)")
    assert counters.requests == 7


# --------------------------------------------------------------------------------------------
# Timeouts: a slow answer takes twice the timeout (a sleep: however busy the machine), and a
# timely one is answered well within it (a local answer takes milliseconds; a second leaves
# room for a loaded machine).

TIMEOUT = 1.0
SLOW = 2 * TIMEOUT


def test_a_slow_answer_times_out_and_is_retried(
    simulator: Simulator, sim_endpoint: MakeEndpoint
) -> None:
    simulator.inject(Fault("slow", delay=SLOW))
    completion = ask(sim_endpoint(), timeout=TIMEOUT)
    assert completion.kind == "ok"
    assert completion.attempts == 2
    [slot] = simulator.slots.values()
    assert (slot.received, slot.answered, slot.after_answer) == (2, 1, 0)


def test_a_read_that_stalls_mid_body_times_out_and_is_retried(
    simulator: Simulator, sim_endpoint: MakeEndpoint
) -> None:
    simulator.inject(Fault("slow_read", delay=SLOW))
    completion = ask(sim_endpoint(), timeout=TIMEOUT)
    assert completion.kind == "ok"
    assert completion.attempts == 2


def test_timeouts_that_outlast_the_retries_come_back_classified(
    simulator: Simulator, sim_endpoint: MakeEndpoint
) -> None:
    simulator.inject(Fault("slow", delay=SLOW), times=2)
    completion = ask(sim_endpoint(), timeout=TIMEOUT, policy=RetryPolicy(max_retries=1))
    assert completion.kind == "timeout"
    assert completion.attempts == 2
    assert completion.error is not None
    assert "no answer within 1 s (see --timeout) (after 2 attempts)" in completion.error


# --------------------------------------------------------------------------------------------
# The key


def test_the_key_is_read_when_each_request_is_built(
    simulator: Simulator, sim_key: str, sim_endpoint: MakeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go() -> None:
        async with ChatClient({"A": sim_endpoint()}) as client:
            await client.complete("A", MESSAGES)
            monkeypatch.setenv(SIM_KEY_ENV, "simkey-rotated")
            simulator.config.api_key = "simkey-rotated"
            await client.complete("A", MESSAGES)

    asyncio.run(go())
    sent = [r.headers["authorization"] for r in simulator.requests]
    assert sent == [f"Bearer {sim_key}", "Bearer simkey-rotated"]


def test_the_key_never_appears_in_errors_logs_reprs_or_pickles(
    simulator: Simulator,
    sim_key: str,
    sim_endpoint: MakeEndpoint,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    endpoint = sim_endpoint()
    seen: list[str] = [repr(endpoint)]

    async def go() -> None:
        async with ChatClient({"A": endpoint}, sleep=Sleeps()) as client:
            seen.append(repr(client))
            # A server that echoes the Authorization header into its error messages.
            simulator.inject(Fault("status", status=503, message="overloaded for {key}"), times=6)
            echoed = await client.complete("A", MESSAGES)
            assert echoed.error is not None
            assert "overloaded for ***" in echoed.error
            simulator.inject("reset")
            simulator.inject("429")
            simulator.inject("invalid-json")
            answered = await client.complete("A", MESSAGES)
            for completion in (echoed, answered):
                seen.extend([repr(completion), str(pickle.dumps(completion))])
            simulator.inject(Fault("status", status=400, message="bad header: Bearer {key}"))
            with pytest.raises(EndpointRejected) as raised:
                await client.complete("A", MESSAGES)
            rejected.append(raised.value)

    rejected: list[EndpointRejected] = []
    asyncio.run(go())
    [error] = rejected
    assert error.__context__ is None
    assert error.__cause__ is None  # no chained aiohttp error holding request headers
    seen.extend([str(error), repr(error), "".join(traceback.format_exception(error))])
    seen.append(str(pickle.dumps(error)))
    wrong = "simkey-wrong-" + sim_key[-8:]
    monkeypatch.setenv(SIM_KEY_ENV, wrong)
    simulator.inject(Fault("status", status=401, message="Incorrect API key provided: {key}"))
    with pytest.raises(AuthFailed) as raised:
        ask(endpoint)
    seen.extend([str(raised.value), repr(raised.value)])
    seen.append(caplog.text)
    assert "retry" in caplog.text  # the retries were logged, so the log was really checked
    for text in seen:
        assert sim_key not in text
        assert wrong not in text


# --------------------------------------------------------------------------------------------
# Concurrency, 429 back-off, pace


def test_concurrency_is_capped_per_endpoint(
    simulator: Simulator, sim_endpoint: MakeEndpoint
) -> None:
    # Each answer takes long enough that a round's three requests are in flight together
    # (reaching the cap), however late a loaded machine's server thread reads them.
    simulator.config.latency = 0.2

    async def go() -> None:
        endpoints = {"A": sim_endpoint("sim-large"), "B": sim_endpoint("sim-small")}
        async with ChatClient(endpoints, concurrency=3) as client:
            calls = [client.complete(side, MESSAGES, seed=i) for i in range(9) for side in "AB"]
            await asyncio.gather(*calls)

    asyncio.run(go())
    assert simulator.max_in_flight == {"sim-large": 3, "sim-small": 3}


def _record_limits(monkeypatch: pytest.MonkeyPatch) -> dict[int, list[int]]:
    """Every limit an adaptive limit takes as 429s push it down, by the limit's id: each
    change recorded as it happens (a sampler on a timer could miss a dip on a busy machine)."""
    seen: dict[int, list[int]] = {}
    decrease = _AdaptiveLimit.rate_limited

    def recorded(limit: _AdaptiveLimit, epoch: int) -> None:
        decrease(limit, epoch)
        seen.setdefault(id(limit), []).append(limit.limit)

    monkeypatch.setattr(_AdaptiveLimit, "rate_limited", recorded)
    return seen


def test_429s_shrink_one_endpoints_concurrency_and_it_grows_back(
    simulator: Simulator, sim_endpoint: MakeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulator.config.latency = 0.01
    simulator.inject("429", times=16, model="sim-large")  # only side A is rate limited
    seen = _record_limits(monkeypatch)

    async def go() -> tuple[Counters, Counters, dict[str, int]]:
        endpoints = {"A": sim_endpoint("sim-large"), "B": sim_endpoint("sim-small")}
        async with ChatClient(endpoints, concurrency=8, policy=RetryPolicy(max_retries=10)) as c:
            calls = [c.complete(side, MESSAGES, seed=i) for i in range(16) for side in "AB"]
            results = await asyncio.gather(*calls)
            assert all(r.ok for r in results)
            # The 429s have stopped: answers grow the limit back to its ceiling.
            await asyncio.gather(*(c.complete("A", MESSAGES, seed=100 + i) for i in range(8)))
            assert c.concurrency("A") == 8
            ids = {side: id(c._lanes[side].limit) for side in "AB"}
            return c.counters("A"), c.counters("B"), ids

    counters_a, counters_b, ids = asyncio.run(go())
    assert min(seen[ids["A"]]) <= 4  # halved-ish more than once
    assert ids["B"] not in seen  # the other endpoint never noticed
    assert counters_a.rate_limited == 16
    assert counters_b.rate_limited == 0
    assert counters_a.failures == counters_b.failures == 0


def test_a_server_at_capacity_pushes_the_limit_down_to_what_it_can_take(
    simulator: Simulator, sim_endpoint: MakeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server takes two at a time and holds their answers: every other request meets its
    # capacity (429), however the machine schedules them, until the client asks no more than
    # two at once (or, were it never to, until the rest have given up); then it lets go.
    simulator.config.capacity = 2
    simulator.config.hold = True
    seen = _record_limits(monkeypatch)

    async def go() -> tuple[list[Completion], int]:
        options: dict[str, Any] = {"policy": RetryPolicy(max_retries=20), "sleep": Sleeps()}
        async with ChatClient({"A": sim_endpoint()}, concurrency=8, **options) as c:
            calls = [asyncio.create_task(c.complete("A", MESSAGES, seed=i)) for i in range(24)]
            while c.concurrency("A") > 2 and sum(call.done() for call in calls) < 22:
                await asyncio.sleep(0.001)
            simulator.config.hold = False
            return list(await asyncio.gather(*calls)), id(c._lanes["A"].limit)

    results, limit = asyncio.run(go())
    assert all(r.ok for r in results)
    assert min(seen[limit]) <= 2
    assert simulator.stats()["answered_twice"] == 0


def test_the_adaptive_limit_decreases_once_per_window_and_recovers() -> None:
    async def go() -> list[int]:
        limit = _AdaptiveLimit(8)
        trace = []
        for _ in range(8):
            epoch = await limit.acquire(retry=False)
            limit.release()
            limit.rate_limited(epoch)
            limit.rate_limited(epoch)  # the same window: counted once
            trace.append(limit.limit)
        for _ in range(9):
            limit.answered()
            trace.append(limit.limit)
        return trace

    assert asyncio.run(go()) == [6, 4, 3, 2, 1, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 8, 8]


def test_retries_are_served_before_fresh_requests() -> None:
    async def go() -> list[str]:
        limit = _AdaptiveLimit(1)
        order: list[str] = []
        await limit.acquire(retry=False)

        async def wait(name: str, retry: bool) -> None:
            await limit.acquire(retry=retry)
            order.append(name)
            limit.release()

        fresh = asyncio.create_task(wait("fresh", False))
        await asyncio.sleep(0)
        retry = asyncio.create_task(wait("retry", True))
        await asyncio.sleep(0)
        limit.release()
        await asyncio.gather(fresh, retry)
        return order

    assert asyncio.run(go()) == ["retry", "fresh"]


def test_cancelled_calls_give_their_slots_back(
    simulator: Simulator, sim_endpoint: MakeEndpoint
) -> None:
    simulator.config.latency = 0.2

    async def go() -> Completion:
        async with ChatClient({"A": sim_endpoint()}, concurrency=1) as client:
            running = asyncio.create_task(client.complete("A", MESSAGES, seed=1))
            waiting = asyncio.create_task(client.complete("A", MESSAGES, seed=2))
            while not simulator.requests:  # the first in flight, the second waiting its turn
                await asyncio.sleep(0.001)
            waiting.cancel()
            running.cancel()
            await asyncio.gather(running, waiting, return_exceptions=True)
            assert client._lanes["A"].limit._in_flight == 0  # else the next call would wait
            simulator.config.latency = 0.0
            return await client.complete("A", MESSAGES, seed=3)

    assert asyncio.run(go()).ok


def test_requests_per_minute_spaces_the_starts(
    simulator: Simulator, sim_endpoint: MakeEndpoint
) -> None:
    async def go() -> float:
        started = asyncio.get_running_loop().time()  # time.monotonic(), the simulator's clock
        async with ChatClient({"A": sim_endpoint()}, rpm=1200) as client:  # one per 50 ms
            await asyncio.gather(*(client.complete("A", MESSAGES, seed=i) for i in range(5)))
        return started

    started = asyncio.run(go())
    arrivals = sorted(r.at for r in simulator.requests)
    assert len(arrivals) == 5
    # The k-th start waits until at least k intervals after the first, and a request arrives
    # after it starts: lower bounds only, which a loaded machine (late timers, a slow server
    # thread) can only make easier to meet, never break.
    for k, at in enumerate(arrivals):
        assert at >= started + k * 0.05 - 1e-3


def test_counters_add_up_per_side_and_in_total(
    simulator: Simulator, sim_endpoint: MakeEndpoint
) -> None:
    simulator.inject("429", model="sim-large")
    simulator.inject("empty-choices", model="sim-large", times=6)

    endpoints = {"A": sim_endpoint("sim-large"), "B": sim_endpoint("sim-small")}
    client = ChatClient(endpoints, sleep=Sleeps())

    async def go() -> tuple[Counters, Counters, Counters]:
        async with client:
            assert client.counters() == Counters()
            await client.complete("A", MESSAGES, seed=1)  # 429 then 5 x empty choices
            await client.complete("A", MESSAGES, seed=2)  # empty choices then ok
            await client.complete("B", MESSAGES, seed=1)
            return client.counters("A"), client.counters("B"), client.counters()

    a, b, total = asyncio.run(go())
    assert (client.counters("A"), client.counters()) == (a, total)  # still there after close
    assert a == Counters(requests=8, retries=6, rate_limited=1, completions=1, failures=1)
    assert b == Counters(requests=1, retries=0, rate_limited=0, completions=1, failures=0)
    assert total == a + b


# --------------------------------------------------------------------------------------------
# Configuration and lifecycle


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"base_url": "127.0.0.1:8000/v1"}, "must start with http:// or https://"),
        ({"base_url": "ftp://example.org/v1"}, "must start with http:// or https://"),
        ({"model": " "}, "model name is empty"),
        ({"key_env": ""}, "key_env is empty"),
        ({"temperature": 2.5}, "temperature must be in [0, 2], got 2.5"),
        ({"top_p": 1.5}, "top_p must be in [0, 1], got 1.5"),
        ({"max_tokens": 0}, "max_tokens must be >= 1, got 0"),
        ({"max_tokens_field": "max_length"}, "max_tokens_field must be max_tokens or"),
    ],
)
def test_bad_endpoint_settings_are_bad_input(options: dict[str, Any], message: str) -> None:
    settings: dict[str, Any] = {"base_url": "http://127.0.0.1:8000/v1", "model": "m", **options}
    with pytest.raises(BadInput, match=re.escape(message)):
        Endpoint(**settings)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"concurrency": 0}, "concurrency must be >= 1, got 0"),
        ({"rpm": 0}, "rpm must be > 0, got 0"),
        ({"timeout": 0}, "timeout must be > 0 seconds, got 0"),
    ],
)
def test_bad_client_settings_are_bad_input(options: dict[str, Any], message: str) -> None:
    with pytest.raises(BadInput, match=re.escape(message)):
        ChatClient({"A": Endpoint("http://127.0.0.1:8000/v1", "m")}, **options)


def test_the_origin_in_messages_drops_credentials_paths_and_queries() -> None:
    endpoint = Endpoint("https://user:pw@api.example.org:8443/v1?api-key=abc", "m")
    assert endpoint.origin == "https://api.example.org:8443"
    assert endpoint.url == "https://user:pw@api.example.org:8443/v1/chat/completions?api-key=abc"


def test_a_client_must_be_opened_and_knows_its_sides(sim_endpoint: MakeEndpoint) -> None:
    client = ChatClient({"A": sim_endpoint()})
    assert client.sides == ("A",)
    assert client.concurrency("A") == 8
    with pytest.raises(RuntimeError, match="not open"):
        asyncio.run(client.complete("A", MESSAGES))

    async def go() -> None:
        async with client:
            with pytest.raises(KeyError, match="no endpoint for side 'B'"):
                await client.complete("B", MESSAGES)
        await client.aclose()  # idempotent

    asyncio.run(go())


#: The live client and the Batch API client: no other module sends a request.
CLIENTS = ("transport/client.py", "transport/batch_client.py")


def test_only_the_client_opens_outgoing_connections() -> None:
    package = Path(__file__).resolve().parents[2] / "blindtest"
    outgoing = re.compile(
        r"ClientSession|urllib\.request|http\.client|httpx|create_connection|open_connection"
    )
    offenders = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path.relative_to(package).as_posix() not in CLIENTS
        and outgoing.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_a_whole_run_keeps_the_concurrency_it_was_given(
    simulator: Simulator, sim_endpoint: MakeEndpoint
) -> None:
    """64 slots at concurrency 16: the server sees 16 requests at once, never more. (The
    run's speed is measured by ``make bench`` against the openai SDK, not asserted here:
    wall-clock limits fail on a loaded machine.)"""
    simulator.config.latency = 0.2  # long enough that 16 started together overlap at the server

    async def go() -> None:
        async with ChatClient({"A": sim_endpoint()}, concurrency=16) as client:
            await asyncio.gather(*(client.complete("A", MESSAGES, seed=i) for i in range(64)))

    asyncio.run(go())
    assert len(simulator.requests) == 64
    assert simulator.max_in_flight == {"sim-large": 16}
