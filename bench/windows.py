"""Figures measured in report windows, by one or several client processes, and merged into one line each.

A load that holds thousands of streams measures its own event loop as much as the server when one process
runs every client: a bot's latency includes the time its own loop took to get round to reading the
answer. So :mod:`kutnahora.bench.hold`, :mod:`kutnahora.bench.bare_floor` and :mod:`kutnahora.bench.probe`
can run their clients in child processes, each measuring the same windows of ``--report-every`` seconds
on the same schedule (window k ends k intervals after the start, the last at the end of the duration).
A child prints one JSON line per window (:func:`emit`); the parent reads them (:func:`child_lines`) and a
:class:`Merger` puts the windows of the same number together: decisions summed, latencies pooled before
the percentiles are taken (a percentile of percentiles would be wrong), counters summed.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

LINE_LIMIT = 1 << 26
"""The longest line read from a child: a window's latencies, a few hundred thousand numbers at most."""


@dataclass
class Window:
    """What one source measured in one window: its number (from 1), its seconds, the decisions made, the
    latencies measured (seconds) and counters so far (cumulative, summed over sources when merged)."""

    index: int
    seconds: float
    decisions: int = 0
    latencies: list[float] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "window": self.index,
            "seconds": round(self.seconds, 3),
            "decisions": self.decisions,
            "latencies": [round(value, 6) for value in self.latencies],
            "counters": self.counters,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Window:
        return cls(
            int(data["window"]),
            float(data["seconds"]),
            int(data["decisions"]),
            [float(value) for value in data["latencies"]],
            {str(key): int(value) for key, value in data["counters"].items()},
        )


def schedule(duration: float, every: float) -> list[float]:
    """When each window ends, in seconds from the start: every ``every`` seconds, the last at
    ``duration``."""
    count = max(1, math.ceil(duration / every - 1e-9))
    return [min(duration, every * number) for number in range(1, count + 1)]


def quantile(ordered: Sequence[float], fraction: float) -> float:
    """The nearest-rank quantile of sorted values (NaN for none)."""
    if not ordered:
        return math.nan
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def spread(latencies: Sequence[float]) -> dict[str, float]:
    """p50, p99, p99.9 and the maximum of ``latencies``, in milliseconds (NaN for none)."""
    ordered = sorted(latencies)
    return {
        "p50": quantile(ordered, 0.50) * 1000,
        "p99": quantile(ordered, 0.99) * 1000,
        "p99.9": quantile(ordered, 0.999) * 1000,
        "max": (ordered[-1] if ordered else math.nan) * 1000,
    }


def merge(windows: Sequence[Window]) -> Window:
    """Windows of the same number from several sources as one: decisions and counters summed, latencies
    pooled, the longest of their lengths."""
    merged = Window(windows[0].index, max(window.seconds for window in windows))
    for window in windows:
        merged.decisions += window.decisions
        merged.latencies.extend(window.latencies)
        for key, value in window.counters.items():
            merged.counters[key] = merged.counters.get(key, 0) + value
    return merged


def emit(window: Window) -> None:
    """Print a window as one JSON line on stdout, for the parent."""
    print(json.dumps(window.to_json(), separators=(",", ":")), flush=True)


async def windows_on_schedule(
    started: float, duration: float, every: float, take: Callable[[int, float], Window]
) -> AsyncIterator[Window]:
    """At the end of each window of :func:`schedule`, the window ``take(number, seconds)`` returns."""
    last = 0.0
    for number, end in enumerate(schedule(duration, every), 1):
        await asyncio.sleep(max(0.0, started + end - time.monotonic()))
        now = time.monotonic() - started
        yield take(number, now - last)
        last = now


class Merger:
    """Collects the windows of several named sources; calls ``ready`` with each window number's windows,
    by source, once every source still running has given its window of that number (in order)."""

    def __init__(self, sources: Sequence[str], ready: Callable[[int, dict[str, Window]], None]) -> None:
        self.running = set(sources)
        self.ready = ready
        self.pending: dict[int, dict[str, Window]] = {}
        self.next = 1

    def add(self, source: str, window: Window) -> None:
        self.pending.setdefault(window.index, {})[source] = window
        self._flush()

    def finish(self, source: str) -> None:
        """``source`` gives no more windows (it ended, or failed)."""
        self.running.discard(source)
        self._flush()
        while self.pending and not self.running:  # what the sources that ended left behind
            number = min(self.pending)
            self.ready(number, self.pending.pop(number))
            self.next = number + 1

    def _flush(self) -> None:
        while self.next in self.pending and self.running <= set(self.pending[self.next]):
            self.ready(self.next, self.pending.pop(self.next))
            self.next += 1


async def child_lines(command: Sequence[str]) -> tuple[asyncio.subprocess.Process, AsyncIterator[str]]:
    """Start a child process with its stdout read line by line (its stderr goes to this one's)."""
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=sys.stderr, limit=LINE_LIMIT
    )

    async def lines() -> AsyncIterator[str]:
        assert process.stdout is not None
        while True:
            line = await process.stdout.readline()
            if not line:
                return
            yield line.decode()

    return process, lines()


def millis(figures: dict[str, float], keys: Sequence[str] = ("p50", "p99", "p99.9", "max")) -> str:
    """``p50 1.2 ms p99 30.1 ms ...`` from :func:`spread`'s figures."""
    return "  ".join(f"{key} {figures[key]:6.1f}" for key in keys) + " ms"
