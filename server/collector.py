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
"""

from __future__ import annotations

import gc

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
