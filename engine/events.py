"""Events: what just happened in a game, as public, readable facts.

``apply`` returns the events a decision caused. Events never carry hidden information (no stack order,
no tile another seat is choosing from), so a server may send them to every watcher.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened: a short kind (``mine_placed``, ``tax``…), the seat it concerns, a sentence."""

    kind: str
    seat: int | None
    text: str
