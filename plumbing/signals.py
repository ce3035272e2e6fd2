"""The process signals both services export: how late their event loop runs, and how long Python's
garbage collector stops it.

- ``kutnahora_event_loop_lag_seconds`` (histogram): a task sleeps :data:`INTERVAL` seconds again and again
  and observes how much later than asked it woke. A loop busy with other work (a long callback, a burst of
  stream writes, a collection) wakes it late by as much as every other task waits, so the histogram is
  the delay every call's next step saw, sampled ten times a second.
- ``kutnahora_gc_pause_seconds{generation}`` (histogram): each collection's duration, from the collector's
  own ``gc.callbacks`` start and stop; a collection of generation 2 walks every object the process holds.

:class:`Signals` registers both in a service's registry; :meth:`Signals.start` starts sampling on the
running loop, :meth:`Signals.stop` ends it. A listener given to :meth:`Signals.start` hears every lag
sample (the game server's overload guard does).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Awaitable, Callable
from typing import Any

from prometheus_client import CollectorRegistry, Histogram

INTERVAL = 0.1
"""Seconds the lag task asks to sleep between samples."""

LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
GC_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
GENERATIONS = ("0", "1", "2")

Listener = Callable[[float, float], None]
"""Called with each lag sample: the clock's time it was taken and the lag in seconds."""


class LoopLag:
    """Samples the event loop's lag into a histogram (the clock and the sleep are injectable for tests)."""

    def __init__(
        self,
        histogram: Histogram,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.histogram = histogram
        self.interval = interval
        self._clock = clock
        self._sleep = sleep
        self._listeners: list[Listener] = []
        self._task: asyncio.Task[None] | None = None

    def listen(self, listener: Listener) -> None:
        """Tell ``listener`` every sample from now on."""
        self._listeners.append(listener)

    def start(self) -> None:
        """Start sampling on the running loop."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self.run(), name="event-loop-lag")

    async def run(self, samples: int | None = None) -> None:
        """Sample for ever (or ``samples`` times)."""
        taken = 0
        while samples is None or taken < samples:
            due = self._clock() + self.interval
            await self._sleep(self.interval)
            now = self._clock()
            self.record(now, max(0.0, now - due))
            taken += 1

    def record(self, at: float, lag: float) -> None:
        """Observe one sample and tell the listeners."""
        self.histogram.observe(lag)
        for listener in self._listeners:
            listener(at, lag)

    async def stop(self) -> None:
        """Stop sampling."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


class GcPauses:
    """Times every collection of Python's garbage collector into a histogram by generation."""

    def __init__(self, histogram: Histogram, clock: Callable[[], float] = time.perf_counter) -> None:
        self.histogram = histogram
        self._by_generation = {name: histogram.labels(generation=name) for name in GENERATIONS}
        self._clock = clock
        self._started: float | None = None

    def start(self) -> None:
        """Listen to the collector."""
        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)

    def stop(self) -> None:
        """Stop listening."""
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = self._clock()
        elif self._started is not None:
            generation = str(info.get("generation", ""))
            child = self._by_generation.get(generation) or self.histogram.labels(generation=generation)
            child.observe(self._clock() - self._started)
            self._started = None


class Signals:
    """Both signals of one service, in its registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.lag = LoopLag(
            Histogram(
                "kutnahora_event_loop_lag_seconds",
                f"How late the event loop woke a task that sleeps {INTERVAL:g} s at a time: the delay every "
                "call's next step waited for the loop.",
                buckets=LAG_BUCKETS,
                registry=registry,
            )
        )
        self.gc = GcPauses(
            Histogram(
                "kutnahora_gc_pause_seconds",
                "Time each collection of Python's garbage collector stopped the process, by generation.",
                ["generation"],
                buckets=GC_BUCKETS,
                registry=registry,
            )
        )

    def start(self, listener: Listener | None = None) -> Signals:
        """Start sampling on the running loop (``listener`` hears every lag sample); returns itself."""
        if listener is not None:
            self.lag.listen(listener)
        self.lag.start()
        self.gc.start()
        return self

    async def stop(self) -> None:
        """Stop sampling."""
        self.gc.stop()
        await self.lag.stop()
