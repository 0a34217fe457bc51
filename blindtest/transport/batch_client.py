"""The calls of OpenAI's Batch API (vLLM's and the simulator's speak it too): files and
batches at one endpoint's base URL, with the live client's retries and failures.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import orjson

if TYPE_CHECKING:
    import aiohttp

from blindtest.errors import (
    ConnectionRefused,
    ConnectTimeout,
    EndpointFailed,
    QuotaExceeded,
)
from blindtest.transport.addresses import proxy_for
from blindtest.transport.client import DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT
from blindtest.transport.endpoint import Endpoint, _read_headers, _read_key
from blindtest.transport.failures import (
    _RETRYABLE_TRANSPORT,
    _failure,
    _retries,
    _unreachable,
)
from blindtest.transport.retry import (
    DEFAULT_POLICY,
    RetryPolicy,
    next_delay,
    should_retry,
)
from blindtest.transport.wire import (
    parse_error,
)
from blindtest.version import __version__

__all__ = ["BATCH_DONE", "BatchClient"]

#: Batch states after which nothing more will be processed.
BATCH_DONE: frozenset[str] = frozenset({"completed", "failed", "expired", "cancelled"})


class BatchClient:
    """The calls of OpenAI's Batch API at one endpoint's base URL: upload a batch input file
    (``POST /files``, purpose ``batch``), create a batch (``POST /batches``, 24h window), read
    one (``GET /batches/{id}``) or the recent ones (``GET /batches``), and download a file's
    content (``GET /files/{id}/content``). Transient failures (429, 5xx, resets) are retried as
    completions are; anything else raises the :mod:`blindtest.errors` class that names it, at
    once for what would repeat for every call, as the live client does: a 401/403 (naming the
    key's variable), a quota, a refused connection at an API that has not answered yet; a
    connect timeout there after :data:`CONNECT_RETRIES` retries.
    The key is read from the variable named by ``endpoint.key_env`` per request, never kept.

    Use as ``async with BatchClient(endpoint) as batches:``.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        policy: RetryPolicy = DEFAULT_POLICY,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        import aiohttp  # deferred: start-up

        self._endpoint = endpoint
        self._timeouts = aiohttp.ClientTimeout(
            total=None,
            connect=connect_timeout,
            sock_connect=connect_timeout,
            sock_read=timeout,
        )
        self._policy = policy
        self._sleep = sleep
        self._rng = random.Random()
        self._session: aiohttp.ClientSession | None = None
        #: Whether the API has answered at all (any HTTP status), as the live client keeps it.
        self._answered = False

    def __repr__(self) -> str:
        return f"BatchClient({self._endpoint.origin})"

    @property
    def origin(self) -> str:
        """``scheme://host[:port]`` of the API (what a record may keep)."""
        return self._endpoint.origin

    async def __aenter__(self) -> BatchClient:
        import aiohttp  # deferred: start-up

        self._session = aiohttp.ClientSession(timeout=self._timeouts, raise_for_status=False)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _url(self, path: str) -> str:
        parts = urlsplit(self._endpoint.base_url)
        return urlunsplit(parts._replace(path=parts.path.rstrip("/") + path))

    async def _call(
        self,
        method: str,
        path: str,
        what: str,
        *,
        json: object = None,
        form: bool = False,
        file: tuple[str, bytes] | None = None,
    ) -> bytes:
        import aiohttp  # deferred: start-up

        assert self._session is not None, "use 'async with BatchClient(...)'"
        where = f"batch API ({what} at {self._endpoint.origin})"
        attempt = 0
        while True:
            attempt += 1
            key = _read_key("batch", self._endpoint)
            headers = {"User-Agent": f"blindtest/{__version__}"}
            if key is not None:
                headers["Authorization"] = f"Bearer {key}"
            headers.update(_read_headers("batch", self._endpoint))
            data: aiohttp.FormData | bytes | None = None
            if file is not None:
                data = aiohttp.FormData()
                data.add_field("purpose", "batch")
                data.add_field("file", file[1], filename=file[0], content_type="application/jsonl")
            elif json is not None:
                data = orjson.dumps(json)
                headers["Content-Type"] = "application/json"
            try:
                async with self._session.request(
                    method,
                    self._url(path),
                    data=data,
                    headers=headers,
                    allow_redirects=False,
                    proxy=proxy_for(self._url(path)),
                ) as response:
                    payload = await response.read()
                    status, reason = response.status, response.reason or ""
                    response_headers = response.headers
                    content_type = response.content_type
            except (aiohttp.ClientError, asyncio.TimeoutError, TimeoutError, OSError) as error:
                failure = _failure(where, attempt, error=error, timeouts=self._timeouts, key=key)
                if attempt <= _retries(self._policy, failure, self._answered) and (
                    self._retryable(failure)
                ):
                    await self._sleep(next_delay(attempt, None, self._rng, policy=self._policy))
                    continue
                if isinstance(failure, ConnectTimeout) and not self._answered:
                    failure = _unreachable(failure)
                raise failure from None
            self._answered = True
            if 200 <= status < 300:
                return payload
            said = parse_error(payload, content_type)
            failure = _failure(
                where,
                attempt,
                status=status,
                reason=reason,
                said=said,
                hint_env=self._endpoint.key_env,
                unset_env=self._endpoint.unset_key_env,
                timeouts=self._timeouts,
                key=key,
            )
            if (
                attempt <= self._policy.max_retries
                and should_retry(status, response_headers, error_code=said.code)
                and not isinstance(failure, QuotaExceeded)
            ):
                await self._sleep(
                    next_delay(attempt, response_headers, self._rng, policy=self._policy)
                )
                continue
            raise failure

    def _retryable(self, failure: EndpointFailed) -> bool:
        """A transport failure worth another try, as the live client decides: a refused
        connection only once the server has answered (it may be restarting); before, nothing
        listens there and no wait fixes that."""
        if isinstance(failure, ConnectionRefused):
            return self._answered
        return isinstance(failure, _RETRYABLE_TRANSPORT)

    async def _json(self, method: str, path: str, what: str, **kw: object) -> dict[str, object]:
        payload = await self._call(method, path, what, **kw)  # type: ignore[arg-type]
        try:
            data = orjson.loads(payload)
        except orjson.JSONDecodeError:
            data = None
        if not isinstance(data, dict):
            raise EndpointFailed(f"batch API ({what} at {self._endpoint.origin}): not JSON")
        return data

    async def upload(self, filename: str, data: bytes) -> dict[str, object]:
        """Upload a batch input file; the file object (its ``id``)."""
        return await self._json("POST", "/files", "upload", file=(filename, data))

    async def create(
        self, input_file_id: str, metadata: Mapping[str, str] | None = None
    ) -> dict[str, object]:
        """Create a batch of chat completions over an uploaded file, 24h window."""
        body: dict[str, object] = {
            "input_file_id": input_file_id,
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
        }
        if metadata:
            body["metadata"] = dict(metadata)
        return await self._json("POST", "/batches", "create", json=body)

    async def retrieve(self, batch_id: str) -> dict[str, object]:
        """The batch object as it is now (``status``, ``request_counts``, file ids)."""
        return await self._json("GET", f"/batches/{batch_id}", "poll")

    async def recent(self) -> list[dict[str, object]]:
        """The most recent batches (one page of ``GET /batches``), newest first."""
        data = await self._json("GET", "/batches?limit=100", "list")
        items = data.get("data")
        return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []

    async def content(self, file_id: str) -> bytes:
        """A file's bytes (a batch's output or error file)."""
        return await self._call("GET", f"/files/{file_id}/content", "download")
