"""Rate limiting: a token bucket for each key (a connection, or a caller).

Each key may spend ``rate`` tokens per second on average and ``burst`` at once. The table of buckets is
bounded: it holds at most ``max_keys`` buckets, and when a new key comes to a full table the bucket used
least recently is dropped. Dropping a bucket that has had time to fill up again loses nothing (a new key
starts full); dropping one that has not forgives its debt, which only a crowd of more than ``max_keys``
keys at once can arrange.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable


class _Bucket:
    __slots__ = ("stamp", "tokens")

    def __init__(self, tokens: float, stamp: float) -> None:
        self.tokens = tokens
        self.stamp = stamp


class RateLimiter:
    """Token buckets keyed by a text (a peer, a caller)."""

    def __init__(
        self,
        rate: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 10_000,
    ) -> None:
        self.rate = rate
        self.burst = float(max(1, burst))
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def _bucket(self, key: str, now: float) -> _Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            while len(self._buckets) >= self._max_keys:
                self._buckets.popitem(last=False)
            bucket = self._buckets[key] = _Bucket(self.burst, now)
        else:
            self._buckets.move_to_end(key)
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.stamp) * self.rate)
            bucket.stamp = now
        return bucket

    def allow(self, key: str, cost: float = 1.0) -> bool:
        """Take ``cost`` tokens from the key's bucket; False when it does not hold that many."""
        return self.take(key, cost) == 0.0

    def take(self, key: str, cost: float = 1.0) -> float:
        """Take ``cost`` tokens from the key's bucket and return 0.0; or, when it does not hold that many,
        take nothing and return the seconds after which it will."""
        if self.rate <= 0:
            return 0.0
        now = self._clock()
        bucket = self._bucket(key, now)
        if bucket.tokens < cost:
            return (min(cost, self.burst) - bucket.tokens) / self.rate
        bucket.tokens -= cost
        return 0.0
