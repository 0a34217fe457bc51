"""The retry policy, as tables: which failures are retried and how long each wait is.

The clock and the jitter source are injected; nothing here sleeps or touches the network.
Expected values follow the policy written in blindtest/transport/retry.py (openai-python's
constants: 0.5 s doubling to 8 s, up to 25 % jitter taken off, server-directed waits capped at
60 s).
"""

from __future__ import annotations

import email.utils
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blindtest.transport.retry import (
    DEFAULT_POLICY,
    MAX_RETRIES,
    RetryPolicy,
    header,
    next_delay,
    retry_after,
    should_retry,
)

NOW = 1_700_000_000.0  # a fixed wall clock: 2023-11-14T22:13:20Z


def clock() -> float:
    return NOW


class FixedRng:
    """An rng whose ``random()`` always returns the same value."""

    def __init__(self, value: float) -> None:
        self.value = value

    def random(self) -> float:
        return self.value


def http_date(offset: float) -> str:
    return email.utils.formatdate(NOW + offset, usegmt=True)


def test_default_max_retries_is_five() -> None:
    assert MAX_RETRIES == 5
    assert DEFAULT_POLICY.max_retries == 5


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (None, True),  # connection error, timeout, unreadable body
        (408, True),
        (409, True),
        (429, True),
        (500, True),
        (502, True),
        (503, True),
        (504, True),
        (599, True),
        (400, False),
        (401, False),
        (403, False),
        (404, False),
        (422, False),
        (418, False),
        (200, False),
        (301, False),
    ],
)
def test_should_retry_by_status(status: int | None, expected: bool) -> None:
    assert should_retry(status, {}) is expected
    assert should_retry(status) is expected


@pytest.mark.parametrize(
    ("status", "headers", "expected"),
    [
        (400, {"x-should-retry": "true"}, True),
        (401, {"X-Should-Retry": "true"}, True),
        (503, {"x-should-retry": "false"}, False),
        (429, {"X-SHOULD-RETRY": "FALSE"}, False),
        (None, {"x-should-retry": "false"}, False),
        (500, {"x-should-retry": " true "}, True),
        (500, {"x-should-retry": "maybe"}, True),  # unreadable: the status decides
        (404, {"x-should-retry": ""}, False),
    ],
)
def test_x_should_retry_overrides_the_status(
    status: int | None, headers: dict[str, str], expected: bool
) -> None:
    assert should_retry(status, headers) is expected


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"Retry-After-Ms": "20"}, 0.02),
        ({"retry-after": "3"}, 3.0),
        ({"Retry-After": "2.5"}, 2.5),  # fractional seconds tolerated, as openai-python does
        ({"Retry-After": "0"}, 0.0),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # ms wins
        ({"retry-after-ms": "soon", "retry-after": "4"}, 4.0),  # unreadable ms: fall through
        ({"Retry-After": http_date(10)}, 10.0),
        ({"Retry-After": http_date(90)}, 90.0),  # capping is next_delay's job
        ({"Retry-After": http_date(-30)}, 0.0),  # already past: now
        ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "-1"}, None),
        ({"Retry-After": "nan"}, None),
        ({"Retry-After": "inf"}, None),
        ({"retry-after-ms": "-5"}, None),
        ({"Retry-After": ""}, None),
    ],
)
def test_retry_after_reads_ms_seconds_and_http_dates(
    headers: dict[str, str], expected: float | None
) -> None:
    assert retry_after(headers, clock=clock) == (
        expected if expected is None else pytest.approx(expected)
    )


@pytest.mark.parametrize(
    ("attempt", "jitter", "expected"),
    [
        (1, 0.0, 0.5),
        (2, 0.0, 1.0),
        (3, 0.0, 2.0),
        (4, 0.0, 4.0),
        (5, 0.0, 8.0),
        (6, 0.0, 8.0),  # capped at 8 s
        (50, 0.0, 8.0),
        (10_000, 0.0, 8.0),  # no overflow
        (1, 1.0, 0.375),  # at most 25 % taken off
        (5, 1.0, 6.0),
        (3, 0.5, 1.75),
    ],
)
def test_backoff_doubles_from_half_a_second_to_eight_with_jitter(
    attempt: int, jitter: float, expected: float
) -> None:
    assert next_delay(attempt, {}, FixedRng(jitter), clock=clock) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"Retry-After": "7"}, 7.0),
        ({"Retry-After": http_date(12)}, 12.0),
        ({"Retry-After": "0"}, 0.0),
        ({"Retry-After": "600"}, 60.0),  # capped
        ({"Retry-After": http_date(3600)}, 60.0),
        ({"retry-after-ms": "90000"}, 60.0),
        ({"Retry-After": "garbage"}, 0.5),  # unreadable: plain backoff
    ],
)
def test_server_directed_waits_are_honoured_without_jitter_up_to_the_cap(
    headers: dict[str, str], expected: float
) -> None:
    assert next_delay(1, headers, FixedRng(0.0), clock=clock) == pytest.approx(expected)
    if "garbage" not in str(headers):
        assert next_delay(1, headers, FixedRng(0.99), clock=clock) == pytest.approx(expected)


def test_policy_bounds_are_configurable() -> None:
    policy = RetryPolicy(max_retries=2, initial_delay=0.01, max_backoff=0.03, max_retry_after=1)
    delays = [next_delay(n, None, FixedRng(0.0), policy=policy) for n in (1, 2, 3, 4)]
    assert delays == pytest.approx([0.01, 0.02, 0.03, 0.03])
    assert next_delay(1, {"Retry-After": "5"}, FixedRng(0.0), policy=policy) == 1.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_retries": -1}, "max_retries must be >= 0, got -1"),
        ({"initial_delay": -0.5}, "initial_delay must be a finite number >= 0, got -0.5"),
        ({"max_backoff": float("inf")}, "max_backoff must be a finite number >= 0, got inf"),
        ({"max_retry_after": float("nan")}, "max_retry_after must be a finite number"),
    ],
)
def test_policy_rejects_bad_bounds(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


def test_attempts_are_one_based() -> None:
    with pytest.raises(ValueError, match="attempt is 1-based, got 0"):
        next_delay(0, {}, FixedRng(0.0))


def test_headers_match_case_insensitively_in_plain_dicts() -> None:
    assert header({"Retry-After": "3"}, "retry-after") == "3"
    assert header({"retry-after": "3"}, "Retry-After") == "3"
    assert header(None, "retry-after") is None
    assert header({}, "retry-after") is None


def test_no_global_random_state_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden() -> float:
        raise AssertionError("the global random generator was used")

    monkeypatch.setattr(random, "random", forbidden)
    assert next_delay(2, {}, FixedRng(0.2)) == pytest.approx(1.0 * (1 - 0.25 * 0.2))


@given(attempt=st.integers(min_value=1, max_value=200), u=st.floats(min_value=0, max_value=1))
def test_backoff_stays_between_three_quarters_and_all_of_the_capped_base(
    attempt: int, u: float
) -> None:
    base = min(0.5 * 2.0 ** (attempt - 1), 8.0)
    delay = next_delay(attempt, None, FixedRng(u))
    assert 0.75 * base - 1e-12 <= delay <= base + 1e-12


@given(seconds=st.integers(min_value=0, max_value=10**6))
def test_any_readable_retry_after_is_honoured_up_to_sixty_seconds(seconds: int) -> None:
    delay = next_delay(3, {"Retry-After": str(seconds)}, FixedRng(0.5), clock=clock)
    assert delay == min(seconds, 60)
