"""A failed attempt in words and in :mod:`blindtest.errors` classes: the one translation of
transport errors and HTTP statuses (:func:`_failure`, with the key scrubbed from anything a
server echoes back), and what a failure means for the endpoint as a whole: which failures end
a call by raising, which stop every later request of the same endpoint, and how many retries
a connect timeout gets at a host that has not answered yet. Shared by the live client and
the Batch API client.
"""

from __future__ import annotations

import asyncio
import copy
import errno
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiohttp

from blindtest.errors import (
    AuthFailed,
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
from blindtest.transport.retry import RetryPolicy
from blindtest.transport.wire import (
    ServerError,
    parameter_fix,
    prompt_too_long,
    quota_exceeded,
)

__all__ = ["CONNECT_RETRIES"]

#: Retries of a connect timeout at a host that has not answered in this run (then the run
#: stops: about 3 x the connect timeout, rather than 6 x per request with the full retries).
CONNECT_RETRIES = 2

# Failures that say the request or the configuration is wrong, or that nothing listens at the
# address: the same request would fail for every slot, so they end the call by raising.
_FATAL = (AuthFailed, ConnectionRefused, EndpointRejected, QuotaExceeded)
# (A connect timeout at a host that never answered is made fatal in ``ChatClient._finish``.)


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
