"""Per-connection rate limiting: a token bucket for each peer address.

Each connection (``context.peer()``, one per HTTP/2 connection) may send ``rate`` requests or stream
messages per second on average and ``burst`` at once. Buckets of peers that have been quiet for a while
are dropped, so the table stays small however many connections come and go.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class _Bucket:
    __slots__ = ("stamp", "tokens")

    def __init__(self, tokens: float, stamp: float) -> None:
        self.tokens = tokens
        self.stamp = stamp


class RateLimiter:
    """Token buckets keyed by peer."""

    def __init__(
        self,
        rate: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        idle_seconds: float = 60.0,
        max_peers: int = 10_000,
    ) -> None:
        self.rate = rate
        self.burst = float(burst)
        self._clock = clock
        self._idle = idle_seconds
        self._max_peers = max_peers
        self._buckets: dict[str, _Bucket] = {}

    def allow(self, peer: str, cost: float = 1.0) -> bool:
        """Take ``cost`` tokens from the peer's bucket; False when it does not hold that many."""
        if self.rate <= 0:
            return True
        now = self._clock()
        bucket = self._buckets.get(peer)
        if bucket is None:
            if len(self._buckets) >= self._max_peers:
                self._forget_idle(now)
            bucket = self._buckets[peer] = _Bucket(self.burst, now)
        else:
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.stamp) * self.rate)
            bucket.stamp = now
        if bucket.tokens < cost:
            return False
        bucket.tokens -= cost
        return True

    def _forget_idle(self, now: float) -> None:
        for peer in [p for p, b in self._buckets.items() if now - b.stamp > self._idle]:
            del self._buckets[peer]
