"""Change notifications between server replicas that share one store.

When several replicas serve games from one PostgreSQL database, a decision applied on replica A must reach
the watchers and players connected to replica B. The PostgreSQL store publishes a :class:`GameChange` for
every write (through ``NOTIFY``, sent when the writing transaction commits) and hands the changes that
*other* replicas made to the listeners subscribed here. A replica that holds the game in memory then
catches up by reading the decisions it has not yet applied from the store (see :func:`missing_decisions`)
and applying them in order, exactly as a restart would.

Notifications are a wake-up, never the data: the log in the store stays the only truth, so a lost or
repeated notification costs at most a redundant read. After the listening connection is lost and regained
the feed sends a change with an empty ``game_id`` (kind ``resync``): every held game should be checked.

This module holds the types and helpers only. A store that has no other writers (memory, SQLite) simply
offers no feed; :func:`change_feed` tells which stores do.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # the stores import this module for its change feed
    from kutnahora.server.store.base import DecisionRow, StoredGame

CHANGE_KINDS = ("created", "seat", "decision", "status", "resync")


@dataclass(frozen=True, slots=True)
class GameChange:
    """One write another replica made.

    ``version`` is the game's version after the change for a ``decision`` (its ``seq`` + 1), else 0.
    ``game_id`` is empty for ``resync``: notifications may have been missed, every held game is suspect.
    """

    game_id: str
    kind: str
    version: int
    origin: str

    def encode(self) -> str:
        """The NOTIFY payload: four space-separated fields (a game id never holds a space)."""
        return f"{self.origin} {self.kind} {self.version} {self.game_id}"

    @classmethod
    def decode(cls, payload: str) -> GameChange:
        """A change from a NOTIFY payload; raises ValueError for a payload this module did not write."""
        origin, kind, version, game_id = payload.split(" ", 3)
        if kind not in CHANGE_KINDS:
            raise ValueError(f"unknown change kind {kind!r}")
        return cls(game_id=game_id, kind=kind, version=int(version), origin=origin)


ChangeListener = Callable[[GameChange], None]
"""Called on the event loop for every change another replica made; it must not block."""


@runtime_checkable
class ChangeFeed(Protocol):
    """A store that tells about writes made by other replicas."""

    replica_id: str

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Registers a listener; returns the function that unregisters it."""
        ...


def change_feed(store: object) -> ChangeFeed | None:
    """The store's change feed, or None for a store that has no other writers (memory, SQLite)."""
    return store if isinstance(store, ChangeFeed) else None


def new_replica_id() -> str:
    """A name for this process among the replicas: the pod or host name and a random suffix.

    It is unique per process, so a restarted pod never mistakes its predecessor's writes for its own.
    """
    host = os.environ.get("POD_NAME") or os.environ.get("HOSTNAME") or socket.gethostname() or "replica"
    host = "".join(c if c.isalnum() or c in "-_." else "-" for c in host)[:40]
    return f"{host}.{uuid.uuid4().hex[:8]}"


def missing_decisions(stored: StoredGame, held_version: int) -> Sequence[DecisionRow]:
    """The decisions of ``stored`` that a replica holding the game at ``held_version`` has not applied."""
    return stored.decisions[held_version:]
