"""Keeping a replica's loaded games in step with the shared store, for several servers on one database.

Every replica serves any game; the store's log is the truth and its unique ``(game_id, seq)`` decides
which replica's decision N wins. A replica that holds a game in memory must therefore learn what the
others wrote, or its watchers would stall and its players would be told their versions are "ahead".

Each game catches up itself (:meth:`kutnahora.server.game.LiveGame.catch_up`): it reads the game from the
store and applies what this replica has not seen yet, seat joins and resignations, new decisions (through
:meth:`~kutnahora.server.game.LiveGame.replay_stored`, the one replay of a log, as a reload does) and status
changes. It does so where it cannot wait for a notification (a submission for a version beyond the one it
holds, a decision the store refused as a duplicate, a join, an unknown token), and :class:`ReplicaSync`
asks it to whenever the store's change feed (:mod:`kutnahora.server.notify`) reports that another replica
changed it, coalescing bursts into one read per game. Decisions applied so are not counted in
``kutnahora_decisions_applied_total`` (the replica that stored them counted them);
``kutnahora_replica_catchup_decisions_total`` (:class:`ReplicationMetrics`) counts them instead. Stores
without other writers (memory, SQLite) have no feed, and nothing here runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from prometheus_client import Counter

from kutnahora.server.notify import GameChange, change_feed
from kutnahora.server.store import Store, StoreError


class ReplicatedGame(Protocol):
    """What catching up needs of a loaded game (:class:`kutnahora.server.game.LiveGame` is one): its
    version, its lock, and the catch-up itself, run under that lock."""

    @property
    def version(self) -> int: ...

    @property
    def lock(self) -> asyncio.Lock: ...

    async def catch_up_locked(self, trigger: str) -> Any: ...


class ReplicationMetrics:
    """The counters of replica catch-up, registered in the server's own registry."""

    def __init__(self, registry: Any) -> None:
        self.catchups = Counter(
            "kutnahora_replica_catchups_total",
            "Loaded games brought up to date from the store after another replica changed them, by trigger.",
            ["trigger"],
            registry=registry,
        )
        self.decisions = Counter(
            "kutnahora_replica_catchup_decisions_total",
            "Decisions stored by another replica and applied here to a loaded game.",
            registry=registry,
        )
        for trigger in ("notification", "resync", "submission", "duplicate", "join", "token"):
            self.catchups.labels(trigger=trigger)


class ReplicaSync:
    """Catches up the loaded games that other replicas change, as the store's change feed reports them."""

    def __init__(
        self,
        games: Mapping[str, ReplicatedGame],
        store: Store,
        log: Any,
    ) -> None:
        self._games = games
        self._store = store
        self._log = log
        self._dirty: dict[str, str] = {}  # game id -> trigger, for games waiting to be caught up
        self._running: dict[str, asyncio.Task[None]] = {}
        self._unsubscribe: Callable[[], None] | None = None

    @property
    def active(self) -> bool:
        """Whether the store has other writers to follow."""
        return self._unsubscribe is not None

    def start(self) -> bool:
        """Subscribe to the store's feed; False (and nothing to do) for a store without one."""
        feed = change_feed(self._store)
        if feed is None:
            return False
        self._unsubscribe = feed.subscribe(self._on_change)
        return True

    async def close(self) -> None:
        """Stop following the feed and wait for catch-ups in flight."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _on_change(self, change: GameChange) -> None:
        if change.kind == "resync":
            for game_id in list(self._games):
                self._schedule(game_id, "resync")
            return
        game = self._games.get(change.game_id)
        if game is None:
            return  # not loaded here: it will be read fresh from the store when asked for
        if change.kind == "decision" and change.version <= game.version:
            return  # already applied (this replica caught up on its own)
        if change.kind == "created":
            return
        self._schedule(change.game_id, "notification")

    def _schedule(self, game_id: str, trigger: str) -> None:
        self._dirty.setdefault(game_id, trigger)
        if game_id not in self._running:
            task = asyncio.get_running_loop().create_task(self._refresh(game_id), name=f"catch-up {game_id}")
            self._running[game_id] = task

    async def _refresh(self, game_id: str) -> None:
        try:
            while game_id in self._dirty:
                trigger = self._dirty.pop(game_id)
                game = self._games.get(game_id)
                if game is None:
                    return
                try:
                    async with game.lock:
                        await game.catch_up_locked(trigger)
                except StoreError as error:
                    # The next notification, submission or reload tries again; nothing was applied.
                    self._log.error("replica catch-up failed", game_id=game_id, error=str(error))
                    return
        finally:
            self._running.pop(game_id, None)
