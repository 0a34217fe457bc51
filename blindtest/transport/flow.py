"""Flow control for one endpoint: a concurrency limit that shrinks on 429 and grows back
when the 429s stop (AIMD, retries served first), and a requests-per-minute pace.
"""

from __future__ import annotations

import asyncio
from collections import deque

# Multiplicative decrease on 429, at most once per window of requests sent since the last
# decrease. 0.75 rather than TCP's 0.5, and +1 per success rather than +1 per round trip:
# with sporadic 429s (one in ten) the limit then stays near its ceiling, while a steady
# stream of 429s still walks it down to 1 in a handful of windows.
_DECREASE = 0.75


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
