"""How many of a bounded thing (open streams, mostly) each caller holds at once.

:class:`Holds` counts by key what callers take and give back, up to ``most`` each (0: no bound), and
forgets a key once it holds nothing, so a crowd of callers that came and went leaves no trace. The web
front end counts a visitor's event streams with it, the arena a caller's Seek and StreamEvents streams.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class Holds(Generic[K]):
    """What each key holds now, at most ``most`` (0: any number); ``total`` is every key's together."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.total = 0
        self._held: dict[K, int] = {}

    def take(self, key: K) -> bool:
        """Count one more held by ``key``; False (nothing counted) when it holds ``most`` already."""
        held = self._held.get(key, 0)
        if self.most > 0 and held >= self.most:
            return False
        self._held[key] = held + 1
        self.total += 1
        return True

    def give(self, key: K) -> None:
        """Give back one that :meth:`take` counted (nothing happens for a key that holds none)."""
        held = self._held.get(key, 0)
        if held <= 0:
            return
        self.total -= 1
        if held > 1:
            self._held[key] = held - 1
        else:
            del self._held[key]

    def held(self, key: K) -> int:
        """What ``key`` holds now."""
        return self._held.get(key, 0)

    def __len__(self) -> int:
        """The keys that hold one or more."""
        return len(self._held)
