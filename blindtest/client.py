"""OpenAI-compatible chat-completions client: the only module in blindtest that opens sockets.

It owns, per endpoint (one per side: ``"A"``, ``"B"``, ``"launder"``): one aiohttp session and
connection pool, explicit timeouts, a concurrency limit that shrinks on 429 and grows back
when the 429s stop, an optional requests-per-minute pace, and counters for progress. It applies
the retry policy of :mod:`blindtest.retry` in one bounded loop, translates transport errors and
HTTP statuses into :mod:`blindtest.errors` classes in one function (:func:`_failure`), and
classifies every 2xx body instead of crashing on it. What goes into and comes out of a body
(the request, a completion, an error's structure) is :mod:`blindtest.wire`'s; the client
owns how a request travels, and the one decision a body's structure asks of it: a server that
refuses ``seed`` is asked again without it.

It must never store, log, or put into an exception message or repr the API key: the key is
read from the environment variable *named* by the caller each time a request is built, and
scrubbed from anything a server echoes back. It never sends ``n`` > 1, never writes files, and
never decides what a failure means for a run: that is the stage's job.
"""

from __future__ import annotations

import asyncio
import copy
import errno
import io
import logging
import math
import os
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit, urlunsplit

import orjson

if TYPE_CHECKING:
    import aiohttp

from blindtest import __version__
from blindtest.endpoints import proxy_for
from blindtest.errors import (
    AuthFailed,
    BadInput,
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
)
from blindtest.retry import DEFAULT_POLICY, RetryPolicy, SupportsRandom, next_delay, should_retry
from blindtest.sides import RESERVED_PARAMS
from blindtest.wire import (
    USABLE_KINDS,
    BodyKind,
    ChatMessage,
    ParsedCompletion,
    ServerError,
    TokenField,
    Usage,
    names_param,
    parameter_fix,
    parse_completion,
    parse_error,
    prompt_too_long,
    quota_exceeded,
    request_body,
)

__all__ = [
    "BATCH_DONE",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "BatchClient",
    "ChatClient",
    "Completion",
    "CompletionKind",
    "Counters",
    "Endpoint",
]

_log = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 8
DEFAULT_TIMEOUT = 120.0
DEFAULT_CONNECT_TIMEOUT = 10.0
#: Retries of a connect timeout at a host that has not answered in this run (then the run
#: stops: about 3 x the connect timeout, rather than 6 x per request with the full retries).
CONNECT_RETRIES = 2
_LARGE_BODY = 512 * 1024

# Multiplicative decrease on 429, at most once per window of requests sent since the last
# decrease. 0.75 rather than TCP's 0.5, and +1 per success rather than +1 per round trip:
# with sporadic 429s (one in ten) the limit then stays near its ceiling, while a steady
# stream of 429s still walks it down to 1 in a handful of windows.
_DECREASE = 0.75

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
# Failures that say the request or the configuration is wrong, or that nothing listens at the
# address: the same request would fail for every slot, so they end the call by raising.
_FATAL = (AuthFailed, ConnectionRefused, EndpointRejected, QuotaExceeded)
# (A connect timeout at a host that never answered is made fatal in ``ChatClient._finish``.)


def _bad(condition: bool, message: str) -> None:
    if condition:
        raise BadInput(message)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where and how to ask one model. Holds the *name* of the key's variable, never a key.

    ``base_url`` includes the API prefix (``https://api.openai.com/v1``). Sampling parameters
    left at ``None`` are not sent, so the server's defaults apply. ``max_tokens_field`` picks
    the body field for the token cap: ``"max_tokens"`` (default) is what every
    OpenAI-compatible server (vLLM, llama.cpp, Ollama, LM Studio, LiteLLM) reads; OpenAI's own
    reasoning models refuse it and need ``"max_completion_tokens"``.
    """

    base_url: str
    model: str
    key_env: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    max_tokens_field: TokenField = "max_tokens"
    #: Body fields set last (a side's ``--a-param``; ``None`` removes the field).
    extra: Mapping[str, object] | None = field(default=None, hash=False, compare=True)
    #: Extra headers as (header NAME, environment variable): the value is read when a
    #: request is sent, never stored (``--a-header-env NAME:ENVVAR``).
    header_env: tuple[tuple[str, str], ...] = ()
    #: The key variable named for this endpoint but unset, when no key is needed to try (a
    #: local server, ``key_env`` then None): nothing is sent, and a 401/403 names it.
    unset_key_env: str | None = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        _bad(
            parts.scheme not in ("http", "https") or not parts.hostname,
            f"base URL {self.base_url!r} must start with http:// or https:// and name a host",
        )
        _bad(not self.model.strip(), "model name is empty")
        _bad(self.key_env is not None and not self.key_env.strip(), "key_env is empty")
        _bad(
            self.unset_key_env is not None and not self.unset_key_env.strip(),
            "unset_key_env is empty",
        )
        t = self.temperature
        _bad(
            t is not None and not (0.0 <= t <= 2.0),
            f"temperature must be in [0, 2], got {t}",
        )
        p = self.top_p
        _bad(p is not None and not (0.0 <= p <= 1.0), f"top_p must be in [0, 1], got {p}")
        n = self.max_tokens
        _bad(n is not None and n < 1, f"max_tokens must be >= 1, got {n}")
        nested = (self.extra or {}).get("extra_body")
        fields = nested if isinstance(nested, Mapping) else {}
        owned = sorted(RESERVED_PARAMS.intersection(fields))
        _bad(bool(owned), f"extra_body sets {', '.join(owned)}, which blindtest sets itself")
        _bad(
            self.max_tokens_field not in ("max_tokens", "max_completion_tokens"),
            f"max_tokens_field must be max_tokens or max_completion_tokens, "
            f"got {self.max_tokens_field!r}",
        )

    @property
    def url(self) -> str:
        """The chat-completions URL (a query string, as Azure uses, stays at the end)."""
        parts = urlsplit(self.base_url)
        return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))

    @property
    def origin(self) -> str:
        """``scheme://host[:port]`` only: no user info, path or query (where keys may hide)."""
        parts = urlsplit(self.base_url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")

    def request_body(
        self,
        messages: Sequence[ChatMessage],
        *,
        seed: int | None = None,
        response_format: Mapping[str, object] | None = None,
    ) -> dict[str, object]:
        """The chat-completions body for ``messages`` at this endpoint's model and sampling
        parameters (:func:`blindtest.wire.request_body`)."""
        return request_body(
            self.model,
            messages,
            temperature=self.temperature,
            top_p=self.top_p,
            max_tokens=self.max_tokens,
            token_field=self.max_tokens_field,
            seed=seed,
            extra=self.extra,
            response_format=response_format,
        )

    def check_key(self, side: str) -> None:
        """Raise :class:`BadInput` now if the named key variable (or a header's variable) is
        unset (nothing is read out)."""
        _read_key(side, self)
        _read_headers(side, self)


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


def _role(side: str) -> str:
    """How a message names whoever is asked: ``side A``, ``the LLM judge``, ``the launderer``."""
    return _ROLES.get(side, f"side {side}")


_ROLES = {"judge": "the LLM judge", "launder": "the launderer"}


def _read_key(side: str, endpoint: Endpoint) -> str | None:
    if endpoint.key_env is None:
        return None
    key = os.environ.get(endpoint.key_env, "")
    if not key:
        raise BadInput(
            f"{_role(side)}: environment variable {endpoint.key_env} is not set; "
            f"export it with the API key for {endpoint.model}"
        )
    return key


def _read_headers(side: str, endpoint: Endpoint) -> dict[str, str]:
    headers = {}
    for name, env in endpoint.header_env:
        value = os.environ.get(env, "")
        if not value:
            raise BadInput(
                f"{_role(side)}: environment variable {env} (for the {name} header) is not set; "
                "export it, or drop the --header-env option"
            )
        headers[name] = value
    return headers


def _scrub(text: str, key: str | None) -> str:
    """One line, bounded, and without the key even if a server echoed it back."""
    if key:
        text = text.replace(key, "***")
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


# --------------------------------------------------------------------------------------------
# Errors: the one translation


def _failure(
    where: str,
    attempts: int,
    *,
    error: BaseException | None = None,
    status: int | None = None,
    reason: str = "",
    said: ServerError | None = None,
    location: str = "",
    hint_env: str | None = None,
    unset_env: str | None = None,
    timeouts: aiohttp.ClientTimeout,
    key: str | None,
    side: str = "",
) -> EndpointFailed:
    """Translate one failed attempt (an aiohttp/OS error, a timeout, or an HTTP status) into
    the :mod:`blindtest.errors` class that names it, with a one-line message."""
    after = f" (after {attempts} attempts)" if attempts > 1 else ""

    def make(cls: type[EndpointFailed], what: str) -> EndpointFailed:
        return cls(_scrub(f"{where}: {what}{after}", key))

    if error is not None:
        return _transport_failure(error, timeouts, make)
    assert status is not None
    body = said if said is not None else ServerError("")
    fix = parameter_fix(status, body, side)
    if fix is not None:
        words = body.message.rstrip().removesuffix(".")
        failure: EndpointFailed = make(EndpointRejected, f"HTTP {status}: {words}; {fix}")
    else:
        failure = _status_failure(status, reason, body, location, (hint_env, unset_env), make)
    failure.status, failure.code, failure.type = status, body.code, body.type
    failure.param = body.param
    failure.server_message = _scrub(body.message, key)
    return failure


def _status_failure(
    status: int,
    reason: str,
    body: ServerError,
    location: str,
    envs: tuple[str | None, str | None],
    make: Callable[[type[EndpointFailed], str], EndpointFailed],
) -> EndpointFailed:
    """The HTTP-status half of :func:`_failure`; ``envs``: the key's variable, and the one
    named but unset (no key was sent)."""
    # The server's words verbatim, less a final period so that a hint can follow.
    said = body.message.rstrip().removesuffix(".")
    head = f"HTTP {status} {reason}".rstrip()
    if quota_exceeded(status, body):
        return make(QuotaExceeded, f"{head} (a billing limit, not retried): {said}")
    if prompt_too_long(status, body):
        return make(PromptTooLong, f"{head}: {said}")
    if status in (401, 403):
        hint_env, unset_env = envs
        if unset_env is not None:
            # The cause first: no key was sent because its variable is unset (a local server
            # may need none, so it was tried without).
            return make(
                AuthFailed,
                f"{unset_env} is not set, and the server answered {head}: {said}; "
                f"export {unset_env} with the API key",
            )
        env = f"; check the key in ${hint_env}" if hint_env else "; this endpoint needs a key_env"
        return make(AuthFailed, f"{head}: {said}{env}")
    if status == 429:
        return make(RateLimited, f"{head}: {said}")
    if status in (408, 409) or status >= 500:
        return make(EndpointUnavailable, f"{head}: {said}")
    if 300 <= status < 400:
        return make(EndpointRejected, f"{head}: redirected to {location!r}; use that base URL")
    hint = "; check the model name and base URL" if status == 404 else ""
    return make(EndpointRejected, f"{head}: {said}{hint}")


def _transport_failure(
    error: BaseException,
    timeouts: aiohttp.ClientTimeout,
    make: Callable[[type[EndpointFailed], str], EndpointFailed],
) -> EndpointFailed:
    """The transport half of :func:`_failure` (split out only to keep each branch list short)."""
    import aiohttp  # deferred: start-up

    if isinstance(error, aiohttp.InvalidURL):
        return make(EndpointRejected, "invalid URL; check the base URL")
    if isinstance(error, (aiohttp.ClientConnectorCertificateError, aiohttp.ClientSSLError)):
        return make(EndpointRejected, f"TLS failed ({type(error).__name__}); check the base URL")
    if isinstance(error, aiohttp.ConnectionTimeoutError):
        return make(ConnectTimeout, f"no connection within {timeouts.sock_connect:g} s")
    if isinstance(error, (asyncio.TimeoutError, TimeoutError)):
        return make(EndpointTimeout, f"no answer within {timeouts.sock_read:g} s (see --timeout)")
    if isinstance(error, aiohttp.ServerDisconnectedError):
        return make(EndpointUnreachable, "the server closed the connection before answering")
    if isinstance(error, aiohttp.ClientPayloadError):
        return make(EndpointUnreachable, "the connection broke in the middle of the answer")
    if isinstance(error, aiohttp.ClientConnectorError):
        if _refused(error.os_error):
            return make(
                ConnectionRefused,
                "connection refused, nothing listens there; start the server, or check the "
                "base URL",
            )
        return make(EndpointUnreachable, f"cannot connect ({error.os_error.strerror or error})")
    if isinstance(error, OSError):
        return make(EndpointUnreachable, f"connection error ({error.strerror or error})")
    return make(EndpointUnreachable, f"connection error ({type(error).__name__})")


def _refused(error: OSError) -> bool:
    return isinstance(error, ConnectionRefusedError) or error.errno == errno.ECONNREFUSED


def _refuses_seed(result: _Attempt) -> bool:
    """A rejection of the request's ``seed`` parameter (some servers refuse parameters they
    do not know); read from the error body's structure (:func:`blindtest.wire.names_param`)."""
    failure = result.failure
    if not isinstance(failure, EndpointRejected) or isinstance(failure, PromptTooLong):
        return False
    return result.said is not None and names_param(result.status, result.said, "seed")


# Fatal failures that do not depend on the request: after the first, no request of the same
# endpoint is sent (a 400 or 404 may concern one body only: a refused ``response_format``, a
# prompt too long, and is left to the caller).
_ENDPOINT_WIDE = (AuthFailed, ConnectionRefused, QuotaExceeded, ConnectTimeout)


def _retries(policy: RetryPolicy, failure: EndpointFailed | None, answered: bool) -> int:
    """How many retries this failure gets: a connect timeout at a host that has not answered
    in this run only :data:`CONNECT_RETRIES` (it is likely to repeat for every request)."""
    if isinstance(failure, ConnectTimeout) and not answered:
        return min(policy.max_retries, CONNECT_RETRIES)
    return policy.max_retries


def _unreachable(failure: ConnectTimeout) -> ConnectTimeout:
    """A connect timeout that stops the run, with the fix."""
    stopped = ConnectTimeout(
        f"{failure}: nothing answered there; check the host and port of the base URL, "
        "or the network (a firewall, a proxy)"
    )
    stopped.attempts = failure.attempts
    return stopped


def _not_sent(failure: EndpointFailed) -> EndpointFailed:
    """The endpoint's stopping failure again, for a request that was never sent."""
    again = copy.copy(failure)
    again.attempts = 0
    return again


# Only these are retried; InvalidURL and TLS failures come back as EndpointRejected (fatal).
_RETRYABLE_TRANSPORT = (EndpointUnreachable, EndpointTimeout)


# --------------------------------------------------------------------------------------------
# Flow control


class _AdaptiveLimit:
    """A semaphore whose size follows the endpoint's 429s (AIMD), with retries served first.

    Decrease: x0.75 on a 429, once per window, a window being the requests granted since the
    last decrease (the ``epoch``), so one burst of 429s from requests already in flight counts
    once. Increase: +1 per answer that is not a 429, up to the ceiling.
    """

    __slots__ = ("_ceiling", "_epoch", "_in_flight", "_limit", "_waiters")

    def __init__(self, ceiling: int) -> None:
        self._ceiling = float(ceiling)
        self._limit = float(ceiling)
        self._in_flight = 0
        self._epoch = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def limit(self) -> int:
        return max(1, int(self._limit))

    async def acquire(self, *, retry: bool) -> int:
        """Wait for a slot; return the epoch it was granted in."""
        if not self._waiters and self._in_flight < self.limit:
            self._in_flight += 1
            return self._epoch
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # A retry already waited its turn once; queueing it behind every fresh slot would
        # push all retries to the end of the run and stretch the tail.
        if retry:
            self._waiters.appendleft(waiter)
        else:
            self._waiters.append(waiter)
        self._wake()
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()
            raise
        return self._epoch

    def release(self) -> None:
        self._in_flight -= 1
        self._wake()

    def rate_limited(self, epoch: int) -> None:
        if epoch == self._epoch:
            self._limit = max(1.0, self._limit * _DECREASE)
            self._epoch += 1

    def answered(self) -> None:
        if self._limit < self._ceiling:
            self._limit = min(self._ceiling, self._limit + 1.0)
            self._wake()

    def _wake(self) -> None:
        while self._waiters and self._in_flight < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():  # skip waiters whose task was cancelled
                self._in_flight += 1
                waiter.set_result(None)


class _Pace:
    """Requests-per-minute cap: starts spaced evenly, ``60/rpm`` seconds apart."""

    __slots__ = ("_interval", "_next")

    def __init__(self, rpm: float | None) -> None:
        self._interval = 60.0 / rpm if rpm else 0.0
        self._next = 0.0

    async def wait(self) -> None:
        if not self._interval:
            return
        now = asyncio.get_running_loop().time()
        at = max(now, self._next)
        self._next = at + self._interval
        if at > now:
            await asyncio.sleep(at - now)


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
    ) -> None:
        import aiohttp  # deferred: start-up

        _bad(not endpoints, "no endpoints given")
        self._ceilings = {side: concurrency for side in endpoints} | dict(side_concurrency or {})
        self._rpms = {side: rpm for side in endpoints} | dict(side_rpm or {})
        for side, ceiling in self._ceilings.items():
            _bad(ceiling < 1, f"--concurrency must be >= 1, got {ceiling} (side {side})")
        for side, cap in self._rpms.items():
            _bad(
                cap is not None and not (cap > 0 and math.isfinite(cap)),
                f"rpm must be > 0, got {cap} (side {side})",
            )
        _bad(not (timeout > 0), f"--timeout must be > 0 seconds, got {timeout}")
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

        for side, endpoint in self._endpoints.items():
            if side in self._lanes:
                continue
            ceiling = self._ceilings[side]
            connector = aiohttp.TCPConnector(limit=ceiling, limit_per_host=0)
            # trust_env stays off: aiohttp would read ~/.netrc; the proxy is chosen here.
            session = aiohttp.ClientSession(
                connector=connector, timeout=self._timeouts, raise_for_status=False
            )
            limit, pace = _AdaptiveLimit(ceiling), _Pace(self._rpms[side])
            self._lanes[side] = _Lane(
                side, endpoint, session, limit, pace, self._tallies[side], proxy_for(endpoint.url)
            )

    async def aclose(self) -> None:
        """Close every session; idempotent."""
        lanes, self._lanes = list(self._lanes.values()), {}
        for lane in lanes:
            await lane.session.close()

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


# --------------------------------------------------------------------------------------------
# Files and batches (OpenAI's Batch API; vLLM's and the simulator's speak it too)

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
