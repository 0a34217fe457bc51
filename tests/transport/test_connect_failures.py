"""How the live client and the Batch API client treat an address where nothing answers, the
same way: a refused connection at a host that has not answered stops at once; a connect timeout
there (packets dropped: a firewall, a wrong port behind one) is retried twice, then stops the
run with the fix, since every other request would wait the same; a refused key (401/403)
stops at once with one line naming the URL and the key's variable."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from blindtest.errors import AuthFailed, ConnectionRefused, ConnectTimeout
from blindtest.simulator import Simulator
from blindtest.transport.batch_client import BatchClient
from blindtest.transport.client import ChatClient
from blindtest.transport.endpoint import Endpoint
from blindtest.transport.failures import CONNECT_RETRIES
from blindtest.transport.retry import RetryPolicy

POLICY = RetryPolicy(max_retries=5)


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port whose connections never complete: a listening socket with a backlog of 0,
    filled by connections nobody accepts, so further SYNs are dropped, as a firewall does."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    yield port
    for sock in (*fillers, server):
        sock.close()


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Sleeps:
    """The retry waits asked for, none waited."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)


MESSAGES: list[Any] = [{"role": "user", "content": "hi"}]


def test_a_connect_timeout_at_a_host_never_answered_is_retried_twice_then_stops_the_run(
    silent_port: int,
) -> None:
    sleeps = Sleeps()
    endpoint = Endpoint(f"http://127.0.0.1:{silent_port}/v1", "m")

    async def ask() -> list[ConnectTimeout]:
        client = ChatClient({"A": endpoint}, connect_timeout=0.2, policy=POLICY, sleep=sleeps)
        raised: list[ConnectTimeout] = []
        async with client:
            for _ in range(2):
                try:
                    await client.complete("A", MESSAGES)
                except ConnectTimeout as error:
                    raised.append(error)
        return raised

    first, second = asyncio.run(ask())
    assert first.attempts == CONNECT_RETRIES + 1 == 3
    assert len(sleeps.asked) == CONNECT_RETRIES  # not the 5 retries of other failures
    assert str(first) == (
        f"side A (m at http://127.0.0.1:{silent_port}): no connection within 0.2 s (after 3 "
        "attempts): nothing answered there; check the host and port of the base URL, or the "
        "network (a firewall, a proxy)"
    )
    # Once stopped, the endpoint is not tried again: the next request is never sent.
    assert second.attempts == 0
    assert str(second) == str(first)
    assert len(sleeps.asked) == CONNECT_RETRIES


def test_the_batch_client_stops_at_a_refused_connection_at_once(closed_port: int) -> None:
    sleeps = Sleeps()
    endpoint = Endpoint(f"http://127.0.0.1:{closed_port}/v1", "m")

    async def upload() -> None:
        async with BatchClient(endpoint, policy=POLICY, sleep=sleeps) as batches:
            await batches.upload("input.jsonl", b"{}\n")

    with pytest.raises(ConnectionRefused) as raised:
        asyncio.run(upload())
    assert sleeps.asked == []  # it was retried 5 times, 15 s of waits
    assert str(raised.value) == (
        f"batch API (upload at http://127.0.0.1:{closed_port}): connection refused, nothing "
        "listens there; start the server, or check the base URL"
    )


def test_the_batch_client_gives_a_connect_timeout_two_retries(silent_port: int) -> None:
    sleeps = Sleeps()
    endpoint = Endpoint(f"http://127.0.0.1:{silent_port}/v1", "m")

    async def poll() -> None:
        client = BatchClient(endpoint, connect_timeout=0.2, policy=POLICY, sleep=sleeps)
        async with client as batches:
            await batches.retrieve("batch_1")

    with pytest.raises(ConnectTimeout) as raised:
        asyncio.run(poll())
    assert len(sleeps.asked) == CONNECT_RETRIES
    assert "(after 3 attempts): nothing answered there; check the host and port" in str(
        raised.value
    )


def test_the_batch_client_stops_at_a_refused_key_at_once_naming_the_url_and_the_fix(
    simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulator.config.api_key = "simkey-the-right-one"
    monkeypatch.setenv("SIM_KEY", "simkey-a-wrong-one-0123")
    sleeps = Sleeps()
    endpoint = Endpoint(simulator.base_url, "sim-large", key_env="SIM_KEY")

    async def upload() -> None:
        async with BatchClient(endpoint, policy=POLICY, sleep=sleeps) as batches:
            await batches.upload("input.jsonl", b"{}\n")

    with pytest.raises(AuthFailed) as raised:
        asyncio.run(upload())
    assert sleeps.asked == []
    origin = simulator.base_url.removesuffix("/v1")
    assert str(raised.value).startswith(f"batch API (upload at {origin}): HTTP 401 Unauthorized")
    assert str(raised.value).endswith("; check the key in $SIM_KEY")
    assert "simkey-a-wrong-one-0123" not in str(raised.value)
    assert simulator.batches_created == 0
