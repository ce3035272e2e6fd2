"""The lobby: waiting tickets, the matchmaking loop, placing matched games, and rating their results.

A ticket is one account seeking in one pool; it lives as long as its ``Seek`` stream. Every tick the
lobby hands the waiting tickets of accounts not already playing in that pool to the pure matchmaker
(:func:`kutnahora.arena.matchmaker.make_matches`), places each match on a game server, and resolves each
ticket's future with its seat. A match that cannot be placed puts its tickets back to wait. Each placed
game is followed to its end: a finished game is rated in one store transaction, an abandoned game (or
one whose server is lost) is stored as abandoned and not rated. Games still active when the arena
stopped are followed again when it starts.

With PostgreSQL, replicas share the lobby through the store: each replica writes its tickets to
``arena_tickets`` and renews them every tick; the one replica holding the matchmaker lock
(:class:`kutnahora.arena.store.MatchmakerLock`) matches every live ticket of every replica, places the
games, writes each match into its ticket and follows the games (adopting those of a replica that held the
lock before); each replica hands its own matched tickets to their bots. Should the matching replica die,
another takes the lock at its next tick and matches the waiting tickets; their bots keep their streams.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kutnahora.arena.accounts import Account
from kutnahora.arena.game_events import GameEvent
from kutnahora.arena.matchmaker import Match, Ticket, Window, make_matches
from kutnahora.arena.metrics import ArenaMetrics
from kutnahora.arena.pools import Pool
from kutnahora.arena.ratings import Rating, SeatOutcome, places, rate
from kutnahora.arena.servers import GameServers, PlacementFailed
from kutnahora.arena.store import ArenaStore, MatchmakerLock
from kutnahora.arena.tickets import TICKET_STALE_SECONDS
from kutnahora.plumbing.errors import conflict
from kutnahora.v1 import game_pb2

HANDOVER_GRACE = TICKET_STALE_SECONDS + 1.0
"""Seconds a Seek waits for the account's ticket in the pool, held on another replica, to go before it is
refused with ALREADY_EXISTS: long enough for a Seek closed there a moment ago to have its row deleted, and
for the row of a replica that died (a bot moving to a surviving replica) to go stale."""


@dataclass(frozen=True, slots=True)
class Seat:
    """What a matched ticket receives: where to play and the seat's token."""

    pool: str
    server: str
    game_id: str
    seat: int
    token: str
    seat_names: tuple[str, ...]


@dataclass(slots=True)
class OpenTicket:
    """A ticket in the lobby."""

    ticket_id: str
    account: Account
    pool: Pool
    opened: float
    matched: asyncio.Future[Seat]
    placing: bool = False
    withdrawn: bool = False


@dataclass(slots=True)
class _PoolState:
    ratings: dict[int, Rating] = field(default_factory=dict)
    seat_counts: dict[int, list[int]] = field(default_factory=dict)
    playing: dict[int, str] = field(default_factory=dict)  # account -> its unfinished game in the pool


class Lobby:
    """Tickets, matchmaking and results of one arena."""

    def __init__(
        self,
        store: ArenaStore,
        servers: GameServers,
        pools: dict[str, Pool],
        metrics: ArenaMetrics,
        log: Any,
        *,
        window: Window | None = None,
        tick: float = 0.2,
    ) -> None:
        self.store = store
        self.servers = servers
        self.pools = pools
        self.metrics = metrics
        self.log = log
        self.window = window or Window()
        self.tick = tick
        self.tickets: dict[str, OpenTicket] = {}
        self._held: dict[tuple[int, str], str] = {}  # (account, pool) -> ticket id
        self._state = {name: _PoolState() for name in pools}
        self.shared = store.postgres
        self.lock = MatchmakerLock(store)
        self.leading = False
        self._following: set[str] = set()
        self._placing: set[str] = set()  # shared tickets being placed by this (leading) replica
        self._removing: dict[tuple[int, str], asyncio.Task[None]] = {}  # withdrawn rows not yet deleted
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loop_task: asyncio.Task[None] | None = None
        self._watchers: dict[int, set[asyncio.Queue[GameEvent | None]]] = {}
        self._event_cursor = 0
        self._pruned_at = 0.0
        for name in pools:
            metrics.tickets_waiting.labels(pool=name).set(0)
        metrics.leader.set(0 if self.shared else 1)

    # --- lifecycle -------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Follow the games left active by a previous run, and start matchmaking."""
        self._event_cursor = await self.store.last_event_id()
        if not self.shared:
            await self._adopt_games()
        self._loop_task = asyncio.create_task(self._run())

    async def close(self) -> None:
        """Stop matchmaking and following games (games on the servers play on)."""
        tasks = [t for t in (self._loop_task, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.lock.close()

    async def _adopt_games(self) -> None:
        """Follow every active game not followed yet (at start, or on taking the matchmaker lock)."""
        for game_id, pool, server, account_ids in await self.store.active_games():
            if game_id in self._following:
                continue
            if pool in self._state:
                self._state[pool].playing.update(dict.fromkeys(account_ids, game_id))
            self._spawn(self._follow(game_id, pool, server, account_ids))

    def _spawn(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- tickets ---------------------------------------------------------------------------------------

    async def open_ticket(self, account: Account, pool: Pool) -> OpenTicket:
        """A new ticket; ALREADY_EXISTS (``ticket_exists``) when the account holds one in the pool."""
        key = (account.account_id, pool.name)
        if key in self._held:
            raise conflict(
                f"bot {account.name!r} already seeks in pool {pool.name!r}; close that Seek stream first",
                "ticket_exists",
            )
        ticket_id = uuid.uuid4().hex
        self._held[key] = ticket_id  # before any wait, so two Seeks at once cannot both pass
        try:
            state = self._state[pool.name]
            if account.account_id not in state.ratings:
                ids = [account.account_id]
                rating = (await self.store.ratings(pool.name, ids)).get(account.account_id, Rating())
                state.ratings[account.account_id] = rating  # an unrated account starts at the default
                state.seat_counts.update(await self.store.seat_counts(pool.name, ids))
            removing = self._removing.get(key)
            if removing is not None:  # the account's previous ticket here: its row goes first
                with contextlib.suppress(Exception):
                    await asyncio.shield(removing)
            if self.shared and not await self._add_shared(ticket_id, account.account_id, pool.name):
                raise conflict(
                    f"bot {account.name!r} already seeks in pool {pool.name!r} (on another arena replica)",
                    "ticket_exists",
                )
        except BaseException:
            del self._held[key]
            raise
        ticket = OpenTicket(
            ticket_id, account, pool, time.monotonic(), asyncio.get_running_loop().create_future()
        )
        self.tickets[ticket_id] = ticket
        self._count(pool.name)
        return ticket

    async def _add_shared(self, ticket_id: str, account_id: int, pool: str) -> bool:
        """Store a shared ticket; False when the account's ticket in the pool stays held on another
        replica for ``HANDOVER_GRACE`` seconds (so a bot that leaves one replica for another, or whose
        replica died, is not refused)."""
        deadline = time.monotonic() + HANDOVER_GRACE
        while True:
            if await self.store.add_ticket(ticket_id, account_id, pool):
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(min(self.tick, HANDOVER_GRACE / 5))

    def withdraw(self, ticket: OpenTicket, *, row_gone: bool = False) -> None:
        """Close a ticket (its stream ended, or it was matched). A ticket being placed is given up: its game
        goes ahead, and the server's clock plays the seat nobody takes. ``row_gone``: its shared row was
        deleted already (taken with its match by :meth:`ArenaStore.heartbeat`)."""
        ticket.withdrawn = True
        if self.tickets.pop(ticket.ticket_id, None) is not None:
            self._held.pop((ticket.account.account_id, ticket.pool.name), None)
            self._count(ticket.pool.name)
            if self.shared and not row_gone:
                self._remove_row(ticket)

    def _remove_row(self, ticket: OpenTicket) -> None:
        """Delete a withdrawn ticket's shared row; a new Seek of the account in the pool waits for it."""
        key = (ticket.account.account_id, ticket.pool.name)
        task = asyncio.ensure_future(self.store.remove_ticket(ticket.ticket_id))
        self._removing[key] = task
        self._tasks.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            self._tasks.discard(finished)
            if self._removing.get(key) is finished:
                del self._removing[key]

        task.add_done_callback(done)

    def withdraw_account(self, account_id: int) -> None:
        """Close every ticket and event stream of an account (its key was revoked)."""
        for ticket in [t for t in self.tickets.values() if t.account.account_id == account_id]:
            if not ticket.matched.done():
                ticket.matched.cancel()
            self.withdraw(ticket)
        for queue in self._watchers.get(account_id, set()):
            queue.put_nowait(None)

    # --- events ----------------------------------------------------------------------------------------

    def watch(self, account_id: int) -> asyncio.Queue[GameEvent | None]:
        """A queue that receives every event of the account's games from now on (None: the stream must
        end, the key was revoked); :meth:`unwatch` it when done."""
        queue: asyncio.Queue[GameEvent | None] = asyncio.Queue()
        self._watchers.setdefault(account_id, set()).add(queue)
        self.metrics.event_streams.inc()
        return queue

    def unwatch(self, account_id: int, queue: asyncio.Queue[GameEvent | None]) -> None:
        """Stop delivering to a queue from :meth:`watch`."""
        queues = self._watchers.get(account_id)
        if queues is not None and queue in queues:
            queues.discard(queue)
            self.metrics.event_streams.dec()
            if not queues:
                del self._watchers[account_id]

    async def deliver_events(self) -> None:
        """Hand the events recorded since the last call (by this replica or any other) to the streams
        watching their accounts; prune old events now and then."""
        while True:
            events = await self.store.events_after(self._event_cursor)
            for event in events:
                self._event_cursor = event.event_id
                for queue in self._watchers.get(event.account_id, ()):
                    queue.put_nowait(event)
            if len(events) < 1000:
                break
        now = time.monotonic()
        if now - self._pruned_at > 60 and (self.leading or not self.shared):
            self._pruned_at = now
            await self.store.prune_events()

    def waiting(self, pool: str) -> int:
        """Tickets open in a pool."""
        return sum(1 for t in self.tickets.values() if t.pool.name == pool)

    def _count(self, pool: str) -> None:
        self.metrics.tickets_waiting.labels(pool=pool).set(self.waiting(pool))

    # --- matchmaking -----------------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.tick)
            try:
                if self.shared:
                    await self._shared_tick()
                else:
                    self.match_once()
            except Exception:
                self.log.exception("matchmaking failed")
            try:
                await self.deliver_events()
            except Exception:
                self.log.exception("delivering events failed")

    async def _shared_tick(self) -> None:
        """Renew this replica's tickets and deliver their matches; match every replica's when leading."""
        mine = [t.ticket_id for t in self.tickets.values()]
        for ticket_id, server, game_id, seat, token, names in await self.store.heartbeat(mine):
            ticket = self.tickets.get(ticket_id)
            if ticket is None:
                continue
            self.withdraw(ticket, row_gone=True)
            if not ticket.matched.done():
                self.metrics.time_to_match.labels(pool=ticket.pool.name).observe(
                    time.monotonic() - ticket.opened
                )
                seat_names = tuple(names.split("\n"))
                ticket.matched.set_result(Seat(ticket.pool.name, server, game_id, seat, token, seat_names))
        leading = await self.lock.held()
        if leading != self.leading:
            self.log.info("matchmaker lock " + ("taken" if leading else "lost"))
            self.leading = leading
            self.metrics.leader.set(1 if leading else 0)
            if leading:
                await self._adopt_games()
        if leading:
            await self._match_shared()

    async def _match_shared(self) -> None:
        rows = [row for row in await self.store.open_tickets() if row[0] not in self._placing]
        playing: dict[str, dict[int, str]] = {}  # pool -> account -> its unfinished game
        for game_id, game_pool, _, account_ids in await self.store.active_games():
            playing.setdefault(game_pool, {}).update(dict.fromkeys(account_ids, game_id))
        now = time.time()
        candidates: list[Ticket] = []
        counts: dict[tuple[str, str], list[int]] = {}
        by_id = {row[0]: row for row in rows}
        for pool_name in {row[2] for row in rows}:
            pool = self.pools.get(pool_name)
            if pool is None:
                continue
            ids = [row[1] for row in rows if row[2] == pool_name]
            ratings = await self.store.ratings(pool_name, ids)
            for account_id, seats in (await self.store.seat_counts(pool_name, ids)).items():
                counts[(str(account_id), pool_name)] = seats
            for ticket_id, account_id, _, opened, house, _ in (row for row in rows if row[2] == pool_name):
                playing_in = playing.get(pool_name, {}).get(account_id)
                if playing_in is not None:
                    self.servers.check_soon(playing_in)  # seeking again: its game has most likely ended
                    continue
                rating = ratings.get(account_id, Rating())
                candidates.append(
                    Ticket(
                        ticket_id,
                        str(account_id),
                        pool_name,
                        pool.players,
                        rating.conservative,
                        now - opened,
                        house,
                    )
                )
        started = time.perf_counter()
        matches = make_matches(candidates, counts, self.window)
        self.metrics.matchmaker_seconds.observe(time.perf_counter() - started)
        for match in matches:
            chosen = [by_id[t.ticket_id] for t in match.tickets]
            self._placing.update(row[0] for row in chosen)
            self._spawn(self._place_shared(self.pools[match.pool], chosen))

    async def _place_shared(self, pool: Pool, rows: list[tuple[str, int, str, float, bool, str]]) -> None:
        names = [row[5] for row in rows]
        account_ids = [row[1] for row in rows]
        try:
            try:
                placed = await self.servers.place(pool, names, f"arena {pool.name}")
            except PlacementFailed as failure:
                for server in failure.failures or {"none": ""}:
                    self.metrics.placement_failures.labels(server=server).inc()
                self.log.warning("placing a game failed", pool=pool.name, error=str(failure))
                return
            await self.store.record_game(placed.game_id, pool.name, placed.server, account_ids)
            for seat, row in enumerate(rows):
                await self.store.match_ticket(
                    row[0], placed.server, placed.game_id, seat, placed.seat_tokens[seat], "\n".join(names)
                )
            self.metrics.matches.labels(pool=pool.name).inc()
            self.log.info(
                "game placed", pool=pool.name, game_id=placed.game_id, server=placed.server, seats=names
            )
            self._spawn(self._follow(placed.game_id, pool.name, placed.server, account_ids))
        finally:
            self._placing.difference_update(row[0] for row in rows)

    def match_once(self) -> list[Match]:
        """One matchmaker pass over the waiting tickets; starts placing each match made."""
        now = time.monotonic()
        candidates: list[Ticket] = []
        for ticket in self.tickets.values():
            state = self._state[ticket.pool.name]
            account_id = ticket.account.account_id
            if ticket.placing:
                continue
            game_id = state.playing.get(account_id)
            if game_id is not None:
                self.servers.check_soon(game_id)  # seeking again: its game has most likely ended
                continue
            rating = state.ratings.get(account_id, Rating())
            candidates.append(
                Ticket(
                    ticket.ticket_id,
                    str(account_id),
                    ticket.pool.name,
                    ticket.pool.players,
                    rating.conservative,
                    now - ticket.opened,
                    ticket.account.house,
                )
            )
        counts = {
            (str(account), pool): seats
            for pool, state in self._state.items()
            for account, seats in state.seat_counts.items()
        }
        started = time.perf_counter()
        matches = make_matches(candidates, counts, self.window)
        self.metrics.matchmaker_seconds.observe(time.perf_counter() - started)
        for match in matches:
            tickets = [self.tickets[t.ticket_id] for t in match.tickets]
            for ticket in tickets:
                ticket.placing = True
            self._spawn(self._place(tickets))
        return matches

    async def _place(self, tickets: list[OpenTicket]) -> None:
        pool = tickets[0].pool
        names = [t.account.name for t in tickets]
        account_ids = [t.account.account_id for t in tickets]
        state = self._state[pool.name]
        try:
            placed = await self.servers.place(pool, names, f"arena {pool.name}")
        except PlacementFailed as failure:
            for server in failure.failures or {"none": ""}:
                self.metrics.placement_failures.labels(server=server).inc()
            self.log.warning("placing a game failed", pool=pool.name, error=str(failure))
            for ticket in tickets:
                ticket.placing = False
            return
        state.playing.update(dict.fromkeys(account_ids, placed.game_id))
        for seat, account_id in enumerate(account_ids):
            state.seat_counts.setdefault(account_id, [0, 0, 0, 0])[seat] += 1
        try:
            await self.store.record_game(placed.game_id, pool.name, placed.server, account_ids)
        except Exception:
            self.log.exception("storing a placed game failed", game_id=placed.game_id)
        self.metrics.matches.labels(pool=pool.name).inc()
        self.log.info(
            "game placed", pool=pool.name, game_id=placed.game_id, server=placed.server, seats=names
        )
        now = time.monotonic()
        for seat, ticket in enumerate(tickets):
            self.withdraw(ticket)
            if not ticket.matched.done():
                self.metrics.time_to_match.labels(pool=pool.name).observe(now - ticket.opened)
                ticket.matched.set_result(
                    Seat(
                        pool.name, placed.server, placed.game_id, seat, placed.seat_tokens[seat], tuple(names)
                    )
                )
        self._spawn(self._follow(placed.game_id, pool.name, placed.server, account_ids))

    # --- results ---------------------------------------------------------------------------------------

    async def _follow(self, game_id: str, pool: str, server: str, account_ids: Sequence[int]) -> None:
        self._following.add(game_id)
        try:
            summary = await self.servers.wait_end(server, game_id)
            if summary is not None and summary.status == game_pb2.GAME_STATUS_FINISHED:
                await self._rate(game_id, pool, summary, account_ids)
            else:
                if summary is None:
                    cause = "game_server_lost"
                    why = (
                        f"the game server {server} stopped answering for over {self.servers.lost_after:g} s; "
                        "the game is not rated"
                    )
                else:
                    cause = "abandoned_on_server"
                    reason = summary.abandon_reason or "no reason given"
                    why = f"the game server abandoned the game ({reason}); the game is not rated"
                if await self.store.abandon_game(game_id, cause, why):
                    self.metrics.unrated_games.labels(pool=pool).inc()
                    self.log.info("game not rated", game_id=game_id, pool=pool, cause=cause)
        finally:
            self._following.discard(game_id)
            state = self._state.get(pool)
            if state is not None:
                for account_id in account_ids:
                    if state.playing.get(account_id) == game_id:
                        del state.playing[account_id]

    async def _rate(
        self, game_id: str, pool: str, summary: game_pb2.GameSummary, account_ids: Sequence[int]
    ) -> None:
        by_seat = {s.seat: s for s in summary.result.seats}
        info = {s.seat: s for s in summary.seats}
        outcomes = [
            SeatOutcome(
                by_seat[seat].score,
                by_seat[seat].groschen,
                by_seat[seat].resigned or info[seat].resigned or info[seat].replaced,
            )
            for seat in range(len(account_ids))
        ]
        seat_places = places(outcomes)
        after = await self.store.rate_game(
            game_id, pool, account_ids, seat_places, lambda before: rate(before, seat_places)
        )
        if after is None:
            return  # rated already (by another replica, or before a restart)
        state = self._state.get(pool)
        if state is not None:
            state.ratings.update(zip(account_ids, after, strict=True))
        self.metrics.rating_updates.labels(pool=pool).inc()
        self.log.info("game rated", game_id=game_id, pool=pool, places=seat_places)
