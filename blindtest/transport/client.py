"""OpenAI-compatible chat-completions client: with the Batch API's
(:mod:`blindtest.transport.batch_client`), the only code in blindtest that opens sockets.

It owns, per endpoint (one per side: ``"A"``, ``"B"``, ``"launder"``): one aiohttp session and
connection pool, explicit timeouts, a concurrency limit that shrinks on 429 and grows back
when the 429s stop (:mod:`blindtest.transport.flow`), an optional requests-per-minute pace,
and counters for progress. It applies the retry policy of :mod:`blindtest.transport.retry` in
one bounded loop, translates transport errors and HTTP statuses into :mod:`blindtest.errors`
classes in one function (:mod:`blindtest.transport.failures`), and classifies every 2xx body
instead of crashing on it. What goes into and comes out of a body (the request, a completion,
an error's structure) is :mod:`blindtest.transport.wire`'s; the client owns how a request
travels, and the one decision a body's structure asks of it: a server that
refuses ``seed`` is asked again without it.

It must never store, log, or put into an exception message or repr the API key: the key is
read from the environment variable *named* by the caller each time a request is built, and
scrubbed from anything a server echoes back. It never sends ``n`` > 1, never writes files, and
never decides what a failure means for a run: that is the stage's job.
"""

from __future__ import annotations

import asyncio
import io
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit, urlunsplit

import orjson

if TYPE_CHECKING:
    import aiohttp

from blindtest.errors import (
    ConnectionRefused,
    ConnectTimeout,
    EndpointFailed,
    EndpointRejected,
    EndpointTimeout,
    EndpointUnavailable,
    EndpointUnreachable,
    PromptTooLong,
    QuotaExceeded,
    RateLimited,
    option,
)
from blindtest.transport.addresses import proxy_for
from blindtest.transport.endpoint import Endpoint, _bad, _read_headers, _read_key, _role
from blindtest.transport.failures import (
    _ENDPOINT_WIDE,
    _FATAL,
    _RETRYABLE_TRANSPORT,
    _failure,
    _not_sent,
    _retries,
    _unreachable,
)
from blindtest.transport.flow import _AdaptiveLimit, _Pace
from blindtest.transport.retry import (
    DEFAULT_POLICY,
    RetryPolicy,
    SupportsRandom,
    next_delay,
    should_retry,
)
from blindtest.transport.wire import (
    USABLE_KINDS,
    BodyKind,
    ChatMessage,
    ParsedCompletion,
    ServerError,
    Usage,
    names_param,
    parse_completion,
    parse_error,
)
from blindtest.version import __version__

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "ChatClient",
    "Completion",
    "CompletionKind",
    "Counters",
]

_log = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 8
DEFAULT_TIMEOUT = 120.0
DEFAULT_CONNECT_TIMEOUT = 10.0
_LARGE_BODY = 512 * 1024

CompletionKind = Literal[
    # what a 2xx body is (usable kinds kept; the others retried, then returned)
    BodyKind,
    # retryable failures that outlasted the retries (returned, never raised)
    "rate_limited",
    "server_error",
    "connection_error",
    "timeout",
    # a 4xx the stage decided concerns one slot only (a prompt too long for the model)
    "rejected",
    "too_long",
]

_KIND_OF_FAILURE: dict[type[EndpointFailed], CompletionKind] = {
    RateLimited: "rate_limited",
    EndpointUnavailable: "server_error",
    EndpointUnreachable: "connection_error",
    EndpointTimeout: "timeout",
    ConnectTimeout: "timeout",
}


@dataclass(frozen=True, slots=True)
class Completion:
    """The outcome of asking for one slot: an answer, or why there is none after retries.

    ``kind`` classifies it; :attr:`ok` is true for the usable kinds (``ok``, ``length``,
    ``refusal``). For the others ``text`` is ``""`` and ``error`` is the one-line reason: the
    stage records a failure row, never an empty answer. ``attempts`` counts HTTP requests
    sent for this slot, retries included; ``latency_ms`` is the last one's, from sending the
    request to reading the whole body; ``status`` is the last HTTP status (``None`` if the
    last attempt got none); ``model`` is the model name the server reported; ``seed`` is the
    seed the last attempt sent (``None`` once the server refused one, see
    :meth:`ChatClient.complete`).
    """

    side: str
    kind: CompletionKind
    text: str
    finish_reason: str | None
    usage: Usage | None
    latency_ms: float
    attempts: int
    status: int | None
    model: str | None = None
    refused: bool = False
    refusal: str | None = None
    truncated: bool = False
    response_id: str | None = None
    error: str | None = None
    seed: int | None = None
    #: The model's reasoning, kept apart from ``text`` (never shown to a judge).
    reasoning: str | None = None

    @property
    def ok(self) -> bool:
        """True when the model answered (even if it refused or was cut at max_tokens)."""
        return self.kind in USABLE_KINDS


@dataclass(frozen=True, slots=True)
class Counters:
    """Progress counters: HTTP requests sent, of which retries; 429s seen; slots finished."""

    requests: int = 0
    retries: int = 0
    rate_limited: int = 0
    completions: int = 0
    failures: int = 0

    def __add__(self, other: Counters) -> Counters:
        return Counters(
            self.requests + other.requests,
            self.retries + other.retries,
            self.rate_limited + other.rate_limited,
            self.completions + other.completions,
            self.failures + other.failures,
        )


def _refuses_seed(result: _Attempt) -> bool:
    """A rejection of the request's ``seed`` parameter (some servers refuse parameters they
    do not know); read from the error body's structure
    (:func:`blindtest.transport.wire.names_param`)."""
    failure = result.failure
    if not isinstance(failure, EndpointRejected) or isinstance(failure, PromptTooLong):
        return False
    return result.said is not None and names_param(result.status, result.said, "seed")


@dataclass(slots=True)
class _Tally:
    requests: int = 0
    retries: int = 0
    rate_limited: int = 0
    completions: int = 0
    failures: int = 0

    def snapshot(self) -> Counters:
        return Counters(
            self.requests, self.retries, self.rate_limited, self.completions, self.failures
        )


@dataclass(slots=True)
class _Lane:
    side: str
    endpoint: Endpoint
    session: aiohttp.ClientSession
    limit: _AdaptiveLimit
    pace: _Pace
    tally: _Tally
    #: The proxy this side's requests go through (``HTTPS_PROXY``...; None: direct).
    proxy: str | None = None
    #: Whether the server has answered at all (any HTTP status) in this run.
    answered: bool = False
    #: The first failure that would repeat for every request of this endpoint (a refused
    #: key, a quota, nothing listening): once set, no further request of this side is sent.
    stopped: EndpointFailed | None = None

    @property
    def where(self) -> str:
        return f"{_role(self.side)} ({self.endpoint.model} at {self.endpoint.origin})"


@dataclass(slots=True)
class _Attempt:
    status: int | None = None
    headers: Mapping[str, str] | None = None
    latency_ms: float = 0.0
    parsed: ParsedCompletion | None = None
    failure: EndpointFailed | None = None
    said: ServerError | None = None


# --------------------------------------------------------------------------------------------
# The client


class ChatClient:
    """Async client for the endpoints of one stage run, keyed by side.

    Use as ``async with ChatClient({"A": a, "B": b}) as client:`` and call
    :meth:`complete` once per slot, as concurrently as you like: each endpoint admits at most
    ``concurrency`` requests at a time (fewer while it answers 429) and at most ``rpm``
    request starts per minute. ``timeout`` bounds the silence while waiting for an answer
    (aiohttp ``sock_read``); there is no total deadline, because long generations are
    legitimate. ``sleep``, ``clock`` and ``rng`` are injectable for tests.
    """

    def __init__(
        self,
        endpoints: Mapping[str, Endpoint],
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        rpm: float | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        policy: RetryPolicy = DEFAULT_POLICY,
        rng: SupportsRandom | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.time,
        side_concurrency: Mapping[str, int] | None = None,
        side_rpm: Mapping[str, float] | None = None,
        share_endpoints: bool = False,
    ) -> None:
        import aiohttp  # deferred: start-up

        _bad(not endpoints, "no endpoints given")
        self._ceilings = {side: concurrency for side in endpoints} | dict(side_concurrency or {})
        self._rpms = {side: rpm for side in endpoints} | dict(side_rpm or {})
        for side, ceiling in self._ceilings.items():
            _bad(ceiling < 1, f"{option('concurrency')} must be >= 1, got {ceiling} (side {side})")
        for side, cap in self._rpms.items():
            _bad(
                cap is not None and not (cap > 0 and math.isfinite(cap)),
                f"rpm must be > 0, got {cap} (side {side})",
            )
        _bad(not (timeout > 0), f"{option('timeout')} must be > 0 seconds, got {timeout}")
        _bad(not (connect_timeout > 0), f"connect timeout must be > 0, got {connect_timeout}")
        self._endpoints = dict(endpoints)
        self._concurrency = concurrency
        self._rpm = rpm
        self._timeouts = aiohttp.ClientTimeout(
            total=None, connect=connect_timeout, sock_connect=connect_timeout, sock_read=timeout
        )
        self._policy = policy
        # Jitter only: it spreads retries in time and never reaches an artifact, so a private
        # generator (not the design seed, not the global one) is enough.
        self._rng: SupportsRandom = rng if rng is not None else random.Random()
        self._sleep = sleep
        self._clock = clock
        self._lanes: dict[str, _Lane] = {}
        # Counters outlive the sessions, so a closing summary can read them after the run.
        self._tallies = {side: _Tally() for side in self._endpoints}
        # Sides whose server refused a ``seed`` parameter: their requests go without one.
        self._seedless: set[str] = set()
        #: Sides asking the same server with the same key (a design of candidates) share one
        #: session, concurrency limit and pace: ``concurrency`` and ``rpm`` hold per endpoint,
        #: however many candidates it serves.
        self._share = share_endpoints

    def __repr__(self) -> str:
        sides = ", ".join(f"{s}={e.model}" for s, e in self._endpoints.items())
        return f"ChatClient({sides}; concurrency={self._concurrency}, rpm={self._rpm})"

    async def __aenter__(self) -> ChatClient:
        self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def open(self) -> None:
        """Create one session and connection pool per endpoint (needs a running loop)."""
        import aiohttp  # deferred: start-up

        shared: dict[object, tuple[aiohttp.ClientSession, _AdaptiveLimit, _Pace]] = {}
        for side, endpoint in self._endpoints.items():
            if side in self._lanes:
                continue
            ceiling = self._ceilings[side]
            key: object = side
            if self._share:
                key = (endpoint.base_url, endpoint.key_env, endpoint.unset_key_env)
                key = (key, endpoint.header_env, ceiling, self._rpms[side])
            if key not in shared:
                connector = aiohttp.TCPConnector(limit=ceiling, limit_per_host=0)
                # trust_env stays off: aiohttp would read ~/.netrc; the proxy is chosen here.
                session = aiohttp.ClientSession(
                    connector=connector, timeout=self._timeouts, raise_for_status=False
                )
                shared[key] = (session, _AdaptiveLimit(ceiling), _Pace(self._rpms[side]))
            session, limit, pace = shared[key]
            self._lanes[side] = _Lane(
                side, endpoint, session, limit, pace, self._tallies[side], proxy_for(endpoint.url)
            )

    async def aclose(self) -> None:
        """Close every session; idempotent."""
        lanes, self._lanes = list(self._lanes.values()), {}
        sessions = {id(lane.session): lane.session for lane in lanes}  # shared ones once
        for session in sessions.values():
            await session.close()

    @property
    def sides(self) -> tuple[str, ...]:
        return tuple(self._endpoints)

    def endpoint(self, side: str) -> Endpoint:
        return self._endpoints[side]

    def counters(self, side: str | None = None) -> Counters:
        """A snapshot of the counters of one side, or of all sides summed (also after close)."""
        if side is not None:
            return self._tallies[side].snapshot()
        total = Counters()
        for tally in self._tallies.values():
            total = total + tally.snapshot()
        return total

    def sends_seed(self, side: str) -> bool:
        """False once ``side``'s server has refused a ``seed`` (its requests go without)."""
        return side not in self._seedless

    def concurrency(self, side: str) -> int:
        """The current concurrency limit of one side (shrinks on 429, grows back)."""
        lane = self._lanes.get(side)
        return lane.limit.limit if lane else self._ceilings[side]

    def ceiling(self, side: str) -> int:
        """The most requests ``side`` may have in flight (``--a-concurrency`` or the shared)."""
        return self._ceilings[side]

    async def complete(
        self,
        side: str,
        messages: Sequence[ChatMessage],
        *,
        seed: int | None = None,
        response_format: Mapping[str, object] | None = None,
    ) -> Completion:
        """Ask ``side``'s model once for one completion of ``messages``, retrying transient
        failures. Returns a :class:`Completion` for every per-slot outcome; raises
        :class:`~blindtest.errors.AuthFailed` or :class:`~blindtest.errors.EndpointRejected`
        at once for failures that would repeat for every slot (with ``attempts`` set), and
        :class:`~blindtest.errors.BadInput` if the key variable is unset.

        ``seed`` is sent where the server takes one: a 4xx refusing the ``seed`` parameter
        (by its ``param`` field, or a 400/422 naming it) is answered by asking again without
        it, at once, and every later request of this side goes without (see
        :meth:`sends_seed`). The refused request counts in ``attempts`` like any other."""
        lane = self._lanes.get(side)
        if lane is None:
            if side not in self._endpoints:
                raise KeyError(f"no endpoint for side {side!r}; have {sorted(self._endpoints)}")
            raise RuntimeError("ChatClient is not open: use 'async with ChatClient(...)'")
        if side in self._seedless:
            seed = None
        shape = response_format
        body = orjson.dumps(lane.endpoint.request_body(messages, seed=seed, response_format=shape))
        attempt = 0
        while True:
            attempt += 1
            result = await self._attempt(lane, body, attempt)
            if seed is not None and _refuses_seed(result):
                _log.info("%s; asking again without seed", self._reason(lane, result, attempt))
                self._seedless.add(side)
                seed = None
                body = orjson.dumps(lane.endpoint.request_body(messages, response_format=shape))
                continue
            retryable = self._retryable(lane, result)
            if retryable and attempt <= _retries(self._policy, result.failure, lane.answered):
                delay = next_delay(
                    attempt, result.headers, self._rng, policy=self._policy, clock=self._clock
                )
                _log.info(
                    "%s; retry %d of %d in %.2f s",
                    self._reason(lane, result, attempt),
                    attempt,
                    self._policy.max_retries,
                    delay,
                )
                await self._sleep(delay)
                continue
            return self._finish(lane, result, attempt, seed)

    async def get_json(self, side: str, path: str, *, root: bool = False) -> tuple[int, object]:
        """GET ``path`` under ``side``'s base URL once, no retry (``root``: under its origin,
        as llama.cpp's ``/props``), with the side's key and headers: (HTTP status, the body
        parsed as JSON, or None). What ``bt-generate --check`` asks (``/models``); raises
        the :mod:`blindtest.errors` class of a transport failure (nothing listens there)."""
        import aiohttp  # deferred: start-up

        lane = self._lanes[side]
        endpoint = lane.endpoint
        key = _read_key(side, endpoint)
        headers = {"Accept": "application/json", "User-Agent": f"blindtest/{__version__}"}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        headers.update(_read_headers(side, endpoint))
        parts = urlsplit(endpoint.base_url)
        prefix = "" if root else parts.path.rstrip("/")
        url = urlunsplit(parts._replace(path=prefix + path, query=""))
        try:
            async with lane.session.get(
                url, headers=headers, allow_redirects=False, proxy=lane.proxy
            ) as response:
                payload = await response.read()
        except (aiohttp.ClientError, asyncio.TimeoutError, TimeoutError, OSError) as error:
            raise _failure(lane.where, 1, error=error, timeouts=self._timeouts, key=key) from None
        lane.answered = True
        try:
            return response.status, orjson.loads(payload)
        except orjson.JSONDecodeError:
            return response.status, None

    async def _attempt(self, lane: _Lane, body: bytes, attempt: int) -> _Attempt:
        epoch = await lane.limit.acquire(retry=attempt > 1)
        try:
            await lane.pace.wait()
            if lane.stopped is not None:
                # Seen by a request that was waiting for its turn (or its retry): requests
                # already in flight may still be answered; none starts after the failure.
                raise _not_sent(lane.stopped)
            result = await self._send(lane, body, attempt)
        finally:
            lane.limit.release()
        if result.status is not None:
            lane.answered = True
        if result.status == 429:
            lane.tally.rate_limited += 1
            lane.limit.rate_limited(epoch)
        elif result.status is not None:
            lane.limit.answered()
        return result

    async def _send(self, lane: _Lane, body: bytes, attempt: int) -> _Attempt:
        import aiohttp  # deferred: start-up

        endpoint = lane.endpoint
        key = _read_key(lane.side, endpoint)
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"blindtest/{__version__}",
        }
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        headers.update(_read_headers(lane.side, endpoint))
        lane.tally.requests += 1
        lane.tally.retries += attempt > 1
        started = time.perf_counter()
        try:
            # aiohttp warns that a large bytes body may block the loop; a stream does not.
            data = io.BytesIO(body) if len(body) > _LARGE_BODY else body
            async with lane.session.post(
                endpoint.url, data=data, headers=headers, allow_redirects=False, proxy=lane.proxy
            ) as response:
                payload = await response.read()
        except (aiohttp.ClientError, asyncio.TimeoutError, TimeoutError, OSError) as error:
            failure = _failure(lane.where, attempt, error=error, timeouts=self._timeouts, key=key)
            return _Attempt(failure=failure)
        latency_ms = round((time.perf_counter() - started) * 1000.0, 1)
        status = response.status
        if 200 <= status < 300:
            parsed = parse_completion(payload, response.content_type)
            return _Attempt(status, response.headers, latency_ms, parsed=parsed)
        said = parse_error(payload, response.content_type)
        failure = _failure(
            lane.where,
            attempt,
            status=status,
            reason=response.reason or "",
            said=said,
            location=response.headers.get("Location", ""),
            hint_env=endpoint.key_env,
            unset_env=endpoint.unset_key_env,
            timeouts=self._timeouts,
            key=key,
            side=lane.side,
        )
        return _Attempt(status, response.headers, latency_ms, failure=failure, said=said)

    @staticmethod
    def _retryable(lane: _Lane, result: _Attempt) -> bool:
        if result.parsed is not None:
            # A 2xx that is not a completion: the transfer went wrong, not the request.
            return result.parsed.kind not in USABLE_KINDS and should_retry(None, result.headers)
        if isinstance(result.failure, ConnectionRefused):
            # A server that never answered is down, or the URL is wrong: no wait fixes that.
            # One that has answered may be restarting: it gets the retries.
            return lane.answered
        if result.status is None:
            return isinstance(result.failure, _RETRYABLE_TRANSPORT)
        if isinstance(result.failure, (PromptTooLong, QuotaExceeded)):
            return False  # the same request gets the same answer
        code = result.failure.code if result.failure is not None else None
        return should_retry(result.status, result.headers, error_code=code)

    @staticmethod
    def _reason(lane: _Lane, result: _Attempt, attempts: int) -> str:
        if result.failure is not None:
            return str(result.failure)
        assert result.parsed is not None
        after = f" (after {attempts} attempts)" if attempts > 1 else ""
        return f"{lane.where}: {result.parsed.detail}{after}"

    def _finish(self, lane: _Lane, result: _Attempt, attempts: int, seed: int | None) -> Completion:
        parsed, failure = result.parsed, result.failure
        if parsed is not None and parsed.kind in USABLE_KINDS:
            lane.tally.completions += 1
            return Completion(
                side=lane.side,
                kind=parsed.kind,
                text=parsed.text,
                finish_reason=parsed.finish_reason,
                usage=parsed.usage,
                latency_ms=result.latency_ms,
                attempts=attempts,
                status=result.status,
                model=parsed.model,
                refused=parsed.kind == "refusal",
                refusal=parsed.refusal,
                truncated=parsed.truncated,
                response_id=parsed.response_id,
                seed=seed,
                reasoning=parsed.reasoning,
            )
        lane.tally.failures += 1
        fatal = isinstance(failure, _FATAL)
        if isinstance(failure, ConnectTimeout) and not lane.answered:
            failure, fatal = _unreachable(failure), True
        if fatal:
            assert failure is not None
            failure.attempts = attempts
            if isinstance(failure, _ENDPOINT_WIDE) and lane.stopped is None:
                lane.stopped = failure
            raise failure
        if failure is not None:
            kind = _KIND_OF_FAILURE[type(failure)]
            error = str(failure)
        else:
            assert parsed is not None
            kind, error = parsed.kind, self._reason(lane, result, attempts)
        return Completion(
            side=lane.side,
            kind=kind,
            text="",
            finish_reason=parsed.finish_reason if parsed else None,
            usage=parsed.usage if parsed else None,
            latency_ms=result.latency_ms,
            attempts=attempts,
            status=result.status,
            model=parsed.model if parsed else None,
            error=error,
            seed=seed,
        )
