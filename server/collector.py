"""How the server's process collects garbage.

Every decision builds many short-lived tuples (the engine's views, cache keys), while each game in
memory holds thousands of long-lived objects (its history, events, cached parts). With Python's
default thresholds (700, 10, 10) the collector runs every 700 new container objects and, every
hundred runs, walks the whole heap: driving 64 games through the decision path, it took about a
quarter of the CPU per decision (174 µs against 131 with the collector off). The server therefore
collects its youngest generation every 50,000 objects and the older ones rarely, and after start-up
moves everything already loaded (modules, components, descriptors) out of the collector's sight with
:func:`gc.freeze`. Reference counting still frees almost everything at once; the collector is only
needed for cycles, which the server makes few of.

``--gc-thresholds`` (``KUTNAHORA_GC_THRESHOLDS``) sets the three thresholds; ``700,10,10`` restores
Python's defaults.

**Young collections on a timer, survivors frozen** (:class:`YoungCollector`, ``--gc-young-every``). The
thresholds count allocations minus deallocations, and at a thousand games the deaths of old objects (each
decision replaces a game's cached views) kept the youngest generation growing for seconds between
collections: a young collection walked over 100,000 objects (up to 330 ms), and a generation-1 collection
the survivors of twenty of them (650,000 objects, up to 690 ms), stopping every game at once. The server
therefore collects the youngest generation every 100 ms from its event loop, so that each collection
walks only what the last 100 ms left alive (a few milliseconds), and then freezes what survived: an object
is walked once, young, and never again by an automatic collection. Reference counting still frees the
frozen objects that die (a finished game, a cached view replaced); only garbage in reference cycles that
formed after an object was frozen would stay, and the server forms almost none (measured: 9 such objects
after 200 games and 38,000 decisions). ``--gc-full-every`` collects everything once in a while all the
same, as a safety net.
"""

from __future__ import annotations

import asyncio
import gc
import time

DEFAULT_THRESHOLDS = (50_000, 20, 100)


def parse_thresholds(text: str) -> tuple[int, int, int]:
    """``"50000,20,100"`` (or fewer numbers: the others keep their defaults) as three thresholds.

    Raises ValueError, with a sentence, for anything else.
    """
    parts = [part.strip() for part in text.split(",")]
    if not 1 <= len(parts) <= 3 or not all(part.isdigit() for part in parts):
        raise ValueError(
            f"GC thresholds must be one to three non-negative integers like 50000,20,100, not {text!r}"
        )
    values = [int(part) for part in parts]
    if values[0] == 0:
        raise ValueError("the first GC threshold must be above 0 (0 would turn the collector off)")
    return (*values, *DEFAULT_THRESHOLDS[len(values) :])  # type: ignore[return-value]


def configure(thresholds: tuple[int, int, int]) -> None:
    """Set the collector's thresholds for this process."""
    gc.set_threshold(*thresholds)


def freeze_loaded() -> None:
    """Collect once, then keep everything alive now out of every later collection."""
    gc.collect()
    gc.freeze()


class YoungCollector:
    """Collects the youngest generation every ``period`` seconds on the running event loop and freezes
    what survived; every ``full_every`` seconds (0: never) unfreezes everything, collects all
    generations once and freezes the survivors again."""

    def __init__(self, period: float, full_every: float) -> None:
        if period <= 0:
            raise ValueError(f"the young-collection period must be above 0 seconds, not {period}")
        if full_every < 0:
            raise ValueError(f"the full-collection period must not be negative, not {full_every}")
        self.period = period
        self.full_every = full_every
        self.young = 0
        self.full = 0
        self._handle: asyncio.TimerHandle | None = None
        self._next_full = 0.0

    def start(self) -> None:
        """Start collecting on the running loop (everything alive now is frozen first)."""
        loop = asyncio.get_running_loop()
        gc.freeze()
        self._next_full = time.monotonic() + self.full_every
        self._handle = loop.call_later(self.period, self._tick)

    def stop(self) -> None:
        """Stop collecting on the timer (the frozen objects stay frozen)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _tick(self) -> None:
        if self.full_every and time.monotonic() >= self._next_full:
            gc.unfreeze()
            gc.collect()
            self.full += 1
            self._next_full = time.monotonic() + self.full_every
        else:
            gc.collect(0)
            self.young += 1
        gc.freeze()
        self._handle = asyncio.get_running_loop().call_later(self.period, self._tick)
