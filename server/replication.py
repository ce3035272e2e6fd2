"""Keeping a replica's loaded games in step with the shared store, for several servers on one database.

Every replica serves any game; the store's log is the truth and its unique ``(game_id, seq)`` decides
which replica's decision N wins. A replica that holds a game in memory must therefore learn what the
others wrote, or its watchers would stall and its players would be told their versions are "ahead":

- :func:`catch_up_locked` reads the game from the store and applies what this replica has not seen yet:
  new decisions (through the engine, in order, exactly as a reload would), seat joins and resignations
  (so a token issued by another replica is honoured here), and status changes. Watchers are woken and the
  pending decision's clock restarts, as after a local decision. Decisions applied here are not counted in
  ``kutnahora_decisions_applied_total`` (the replica that stored them counted them);
  ``kutnahora_replica_catchup_decisions_total`` counts them instead.
- :class:`ReplicaSync` listens to the store's change feed (:mod:`kutnahora.server.notify`) and catches up
  every loaded game another replica changed, coalescing bursts into one read per game.

The server calls :func:`catch_up_locked` itself where it cannot wait for a notification: a submission
for a version beyond the one it holds, and a decision the store refused as a duplicate (then the
recorded decision answers an exact retry, any other answer is ABORTED). Stores without other writers
(memory, SQLite) have no feed, and nothing here runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from prometheus_client import Counter

from kutnahora import engine
from kutnahora.engine import parse_option
from kutnahora.server.game import LiveGame, charge_clock, loaded_status, replayed_decision
from kutnahora.server.notify import GameChange, change_feed
from kutnahora.server.records import SeatState
from kutnahora.server.store import Store, StoreError


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


async def catch_up_locked(
    game: LiveGame, store: Store, metrics: ReplicationMetrics | None = None, trigger: str = "submission"
) -> int:
    """Bring a loaded game up to what the store holds; the caller holds ``game.lock``.

    Returns the number of decisions applied. Raises :class:`StoreError` when the store cannot be read or
    its log does not continue this replica's history (then the game should be dropped and reloaded).
    """
    stored = await store.load_game(game.game_id)
    if stored is None or game.closed:
        return 0
    changed = False
    for row in stored.seats:
        if not 0 <= row.seat < len(game.seats):
            continue
        seat = game.seats[row.seat]
        if (seat.name, seat.token_hash, seat.resigned, seat.joined_at) != (
            row.name,
            row.token_hash,
            row.resigned,
            row.joined_at,
        ):
            game.seats[row.seat] = SeatState(
                seat=row.seat,
                name=row.name,
                token_hash=row.token_hash,
                resigned=row.resigned,
                joined_at=row.joined_at,
                bank_ms=seat.bank_ms,
                strikes=seat.strikes,
            )
            game.updated_at = max(game.updated_at, row.joined_at)
            changed = True
    held = game.state.version
    if held > len(stored.decisions):
        raise StoreError(
            f"game {game.game_id}: this replica holds version {held}, the store only has it up to "
            f"{len(stored.decisions)}"
        )
    for decision in stored.decisions[held:]:
        pending = game.state.pending
        if pending is None or pending.seat != decision.seat:
            raise StoreError(
                f"game {game.game_id}: stored decision {decision.seq} does not follow this replica"
            )
        option = parse_option(decision.option)
        events = engine.apply(game.state, option, decision.seat)
        record = replayed_decision(decision, option, pending, events, game.state.over)
        game.remember(record)
        charge_clock(game.seats[decision.seat], record.source, decision.think_ms, game.clock)
        game.updated_at = max(game.updated_at, decision.applied_at)
        changed = True
    applied = game.state.version - held
    status = loaded_status(stored.game.status, game.seats, game.state.over)
    if status != game.status:
        game.abandon_reason = stored.game.abandon_reason
        game.updated_at = max(game.updated_at, stored.game.updated_at)
        game.set_status(status)
        changed = True
    if changed:
        game.after_change()
    if metrics is not None:
        metrics.catchups.labels(trigger=trigger).inc()
        metrics.decisions.inc(applied)
    return applied


class ReplicaSync:
    """Catches up the loaded games that other replicas change, as the store's change feed reports them."""

    def __init__(
        self,
        games: dict[str, LiveGame],
        store: Store,
        metrics: ReplicationMetrics,
        log: Any,
    ) -> None:
        self._games = games
        self._store = store
        self._metrics = metrics
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

    async def catch_up(self, game: LiveGame, trigger: str) -> int:
        """Bring ``game`` up to the store now (the caller holds its lock); the server's hook for
        ``GameServices.catch_up``. A store that cannot be read is logged and leaves the game as it was."""
        try:
            return await catch_up_locked(game, self._store, self._metrics, trigger)
        except StoreError as error:
            self._log.error(
                "replica catch-up failed", game_id=game.game_id, trigger=trigger, error=str(error)
            )
            return 0

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
                        await catch_up_locked(game, self._store, self._metrics, trigger)
                except StoreError as error:
                    # The next notification, submission or reload tries again; nothing was applied.
                    self._log.error("replica catch-up failed", game_id=game_id, error=str(error))
                    return
        finally:
            self._running.pop(game_id, None)
