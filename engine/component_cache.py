"""Values worked out once per component set, looked up by the set's identity.

A component set is immutable and a process holds one or a few (the packaged set; a server's own file;
some more in tests), so what is derived from one alone (its content hash, its card table, its wire form)
is worth keeping. Comparing or hashing a set by value would walk all its data on every lookup, so a
:class:`ComponentCache` keys by ``id()`` and keeps the set itself beside the value: a set stays alive
while it is held, so its id cannot be reused by another set meanwhile, and a lookup checks identity.
Holding a few sets at most (``limit``), the cache is emptied when a new one would pass it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from kutnahora.engine.components import ComponentSet

T = TypeVar("T")


class ComponentCache(Generic[T]):
    """``build(components)`` once per component set (by identity), for a few sets at a time."""

    __slots__ = ("_build", "_held", "_limit")

    def __init__(self, build: Callable[[ComponentSet], T], limit: int = 8) -> None:
        self._build = build
        self._held: dict[int, tuple[ComponentSet, T]] = {}
        self._limit = limit

    def get(self, components: ComponentSet) -> T:
        """The value for ``components``, built on the first call for this set."""
        held = self._held.get(id(components))
        if held is not None and held[0] is components:
            return held[1]
        if len(self._held) >= self._limit:
            self._held.clear()
        value = self._build(components)
        self._held[id(components)] = (components, value)
        return value

    def clear(self) -> None:
        """Forget every set."""
        self._held.clear()

    def __len__(self) -> int:
        return len(self._held)
