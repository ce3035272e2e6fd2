"""Refuse rather than degrade: whether the server is overloaded, from its event loop's lag.

The lag samples of :class:`kutnahora.plumbing.signals.LoopLag` (ten a second) feed :meth:`Overload.observe`.
The server is overloaded while the median of the samples of the last ``window`` seconds is past
``threshold`` (and it has been sampling for that long): a loop that cannot keep up wakes every sleeper
late, so most samples are, while one long stall (a collection, a slow callback) is one late sample among
many and refuses nothing. It stops being overloaded once most samples of the window are back under the
threshold. While overloaded, the servicer refuses what would add games (CreateGame, and JoinGame, which
fills a waiting game and starts it) with RESOURCE_EXHAUSTED, reason OVERLOADED and a RetryInfo of the
window; the calls of games under way (Play, SubmitDecision, GetObservation, WatchGame, ResignSeat) go on.
A threshold of 0 turns it off.
"""

from __future__ import annotations

import statistics
from collections import deque

MAX_SAMPLES = 10_000
"""Most samples kept, whatever the window and the sampling interval."""


class Overload:
    """The overload state, from lag samples; time is the sampler's clock, never read here."""

    def __init__(self, threshold: float, window: float) -> None:
        self.threshold = threshold
        self.window = window
        self._samples: deque[tuple[float, float]] = deque(maxlen=MAX_SAMPLES)
        self._first: float | None = None
        self._median = 0.0
        self._overloaded = False

    def observe(self, at: float, lag: float) -> None:
        """One lag sample (seconds) taken at ``at`` (seconds on the sampler's clock)."""
        if self.threshold <= 0:
            return
        if self._first is None:
            self._first = at
        samples = self._samples
        samples.append((at, lag))
        while samples and samples[0][0] < at - self.window:
            samples.popleft()
        self._median = statistics.median(sample for _, sample in samples)
        self._overloaded = at - self._first >= self.window and self._median > self.threshold

    def overloaded(self) -> bool:
        """Whether new games are refused now."""
        return self._overloaded

    def lag(self) -> float:
        """The median lag of the last window, in seconds."""
        return self._median
