"""Retry policy for endpoint calls: whether to try again, and how long to wait first.

This module owns the decision and the arithmetic only. It is pure: it never sleeps, never
opens a socket, never reads the wall clock or global random state on its own. The clock and
the jitter source come in as arguments, so the tables in ``tests/transport/test_retry.py`` pin every
branch. ``blindtest.transport.client`` applies it in a bounded loop; stages never retry.

Anchors: openai-python ``_base_client.py`` (``x-should-retry``, ``retry-after-ms``, 0.5 s
doubling to 8 s with up to 25 % jitter taken off) and RFC 9110 §10.2.3 (``Retry-After`` as
delay-seconds or an HTTP-date).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

MAX_RETRIES = 5
INITIAL_DELAY = 0.5
MAX_BACKOFF = 8.0
MAX_RETRY_AFTER = 60.0

# 408 request timeout, 409 lock conflict, 429 rate limit: transient by definition (openai-python).
_RETRY_STATUSES = frozenset({408, 409, 429})
#: Error codes that no wait can fix, whatever the status says: OpenAI's billing error comes as
#: a 429 ``{"error": {"type": "insufficient_quota", "code": "insufficient_quota", ...}}``.
NEVER_RETRY_CODES = frozenset({"insufficient_quota"})


class SupportsRandom(Protocol):
    """Anything with ``random() -> float`` in [0, 1), e.g. a ``random.Random`` instance."""

    def random(self) -> float: ...


Headers = Mapping[str, str]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many times to retry and the bounds of the waits, in seconds."""

    max_retries: int = MAX_RETRIES
    initial_delay: float = INITIAL_DELAY
    max_backoff: float = MAX_BACKOFF
    max_retry_after: float = MAX_RETRY_AFTER

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        for name in ("initial_delay", "max_backoff", "max_retry_after"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


DEFAULT_POLICY = RetryPolicy()


def header(headers: Headers | None, name: str) -> str | None:
    """The value of header ``name``, matched case-insensitively (plain dicts included)."""
    if not headers:
        return None
    value = headers.get(name)
    if value is not None:
        return value
    lowered = name.lower()
    for key, candidate in headers.items():
        if key.lower() == lowered:
            return candidate
    return None


def should_retry(
    status: int | None, headers: Headers | None = None, *, error_code: str | None = None
) -> bool:
    """Whether a failed attempt is worth repeating.

    ``status`` is the HTTP status, or ``None`` when there is none to judge: a connection
    error, a timeout, or a 2xx body that could not be read as a completion. ``error_code`` is
    the ``code`` of the server's error body: one in :data:`NEVER_RETRY_CODES` (a billing
    limit) is never retried. Otherwise a server's ``x-should-retry: true|false`` overrides
    everything else.
    """
    if error_code in NEVER_RETRY_CODES:
        return False
    verdict = (header(headers, "x-should-retry") or "").strip().lower()
    if verdict == "true":
        return True
    if verdict == "false":
        return False
    if status is None:
        return True
    return status in _RETRY_STATUSES or status >= 500


def retry_after(headers: Headers | None, *, clock: Callable[[], float] = time.time) -> float | None:
    """The wait the server asked for, in seconds, or ``None`` if it asked for none we can read.

    ``retry-after-ms`` wins over ``Retry-After``; ``Retry-After`` may be seconds (fractions
    tolerated, as openai-python does) or an HTTP-date, measured against ``clock()``. A date
    already past means "now" (0.0) rather than "unreadable": clock skew of a few seconds is
    common and the server's intent is plain. Negative, NaN or infinite numbers are unreadable.
    """
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = header(headers, name)
        if raw is None:
            continue
        try:
            value = float(raw.strip())
        except ValueError:
            continue
        if math.isfinite(value) and value >= 0:
            return value * scale
    raw = header(headers, "retry-after")
    if raw is None:
        return None
    try:
        import email.utils  # deferred: an HTTP date is rare, and the import is ~3 ms of start-up

        parsed = email.utils.parsedate_tz(raw.strip())
        if parsed is None:
            return None
        when = float(email.utils.mktime_tz(parsed))
    except (TypeError, ValueError, OverflowError):
        return None
    return max(0.0, when - clock())


def next_delay(
    attempt: int,
    headers: Headers | None,
    rng: SupportsRandom,
    *,
    policy: RetryPolicy = DEFAULT_POLICY,
    clock: Callable[[], float] = time.time,
) -> float:
    """Seconds to wait before the next attempt, after attempt number ``attempt`` (1-based) failed.

    A server-directed wait (see :func:`retry_after`) is honoured as given, capped at
    ``policy.max_retry_after``; it carries no jitter because the server already chose it.
    Otherwise: ``initial_delay * 2**(attempt-1)`` capped at ``max_backoff``, with up to 25 %
    taken off at random so that many slots failing together do not retry in lockstep.
    """
    if attempt < 1:
        raise ValueError(f"attempt is 1-based, got {attempt}")
    asked = retry_after(headers, clock=clock)
    if asked is not None:
        return min(asked, policy.max_retry_after)
    # min() on the exponent keeps 2**n finite for absurd attempt numbers.
    base = policy.initial_delay * 2.0 ** min(attempt - 1, 64)
    return min(base, policy.max_backoff) * (1.0 - 0.25 * rng.random())
