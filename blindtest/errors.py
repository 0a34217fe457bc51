"""Typed errors of the library, each carrying the process exit code it maps to.

This module must never import click: the CLI layer (``blindtest.cli._exits``) is the one
place that turns these into output and exit codes.

Exit codes (DESIGN.md): 0 success; 1 the check itself failed; 2 bad input or usage;
3 an endpoint failed after retries; 4 a pre-registered decision's claim is refuted; 5 a
pre-registered decision is not settled at this size; 130 interrupted. 4 and 5 are outcomes,
not errors: bt-analyze returns them (``blindtest.analysis.decision.EXIT_CODES``), nothing
raises them.
"""

from __future__ import annotations

#: A pre-registered decision's outcomes as exit codes (bt-analyze, blindtest run).
EXIT_REFUTED = 4
EXIT_NOT_SETTLED = 5


class BlindtestError(Exception):
    """Base class. ``str(error)`` is the one line shown to the user."""

    exit_code: int = 1


class BadInput(BlindtestError):
    """Bad input or usage: nothing was written (exit 2)."""

    exit_code = 2


class CheckFailed(BlindtestError):
    """The check itself failed: verify mismatch, tally unusable, analysis void (exit 1)."""

    exit_code = 1


class EndpointFailed(BlindtestError):
    """An endpoint failed after retries; what was fetched is kept (exit 3).

    What the server said, when it said anything, is kept as structure rather than only in the
    message: ``status`` (HTTP), ``code``, ``type`` and ``param`` from its error body, and
    ``server_message`` (its own words); ``attempts``, the requests sent before the client
    gave up, when it raised this for one request.
    """

    exit_code = 3
    attempts: int | None = None
    status: int | None = None
    code: str | None = None
    type: str | None = None
    param: str | None = None
    server_message: str | None = None


class RateLimited(EndpointFailed):
    """The endpoint kept answering 429 after every retry."""


class AuthFailed(EndpointFailed):
    """The endpoint refused the key (401/403)."""


class Interrupted(BlindtestError):
    """Ctrl-C: everything done so far is kept and a rerun resumes (exit 130)."""

    exit_code = 130


class EndpointRejected(EndpointFailed):
    """The endpoint refused the request itself (400, 404, 422, other 4xx): retrying cannot help."""


class PromptTooLong(EndpointRejected):
    """The prompt does not fit the model's context (or the server's body limit): one slot's
    failure, not the run's."""


class QuotaExceeded(EndpointFailed):
    """A billing error (OpenAI's 429 ``insufficient_quota``): never retried, stops the run."""


class EndpointUnavailable(EndpointFailed):
    """The endpoint kept answering 5xx, 408 or 409 after every retry."""


class EndpointUnreachable(EndpointFailed):
    """No usable connection: reset, or closed mid-answer, after every retry."""


class ConnectionRefused(EndpointUnreachable):
    """Nothing listens at the endpoint's address (the server is down, or the URL is wrong):
    it stops the run at once, unless the endpoint had answered before (then it is retried, as
    a server restarting would refuse for a moment)."""


class EndpointTimeout(EndpointFailed):
    """The endpoint did not connect or answer within the timeout, after every retry."""


class ConnectTimeout(EndpointTimeout):
    """No connection within the connect timeout: nothing answered at the address at all (a host
    that drops the packets, a firewall, a wrong port behind one). Unlike a refused connection
    it proves nothing, so it is retried, but a host that has not answered in this run gets
    only a few retries and then stops the run: the same wait would repeat for every request.
    Once the host has answered, it is a busy server and gets the ordinary retries."""
