"""The arena's store: accounts, placed games, results and ratings with their history, shared tickets and
events.

SQLite by default (one file), PostgreSQL when the URL is ``postgresql://…`` (replicas share it). Both are
reached through the DB-API, in a worker thread so that the event loop never waits on the disk; one
statement text serves both (:class:`kutnahora.arena.sql.Sql`).

:class:`ArenaStore` holds the connection, migrates it (:mod:`kutnahora.arena.schema`) and runs each call
as one transaction: every write that belongs together (a game's result, its seats' places, their new
ratings and history) is one. The statements are beside it, by the tables they serve: accounts
(:mod:`kutnahora.arena.accounts`), placed games (:mod:`kutnahora.arena.placements`), ratings and the
leaderboard (:mod:`kutnahora.arena.standings`), events (:mod:`kutnahora.arena.game_events`), shared
tickets (:mod:`kutnahora.arena.tickets`), profiles (:mod:`kutnahora.arena.profiles`), and hosted bots: their
versions and settings (:mod:`kutnahora.arena.submissions`), the workers' leases
(:mod:`kutnahora.arena.host_leases`), the seats' logs (:mod:`kutnahora.arena.seat_logs`) and the built
folders (:mod:`kutnahora.arena.built`).
:class:`MatchmakerLock` says which replica runs the matchmaker.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from kutnahora.arena import (
    accounts,
    built,
    game_events,
    host_leases,
    placements,
    profiles,
    seat_logs,
    standings,
    submissions,
    tickets,
)
from kutnahora.arena.accounts import Account, NameTaken
from kutnahora.arena.built import Built
from kutnahora.arena.game_events import EVENT_KEEP_SECONDS, GameEvent
from kutnahora.arena.host_leases import BuildWork, HostWork, Lease, ReportedSeat
from kutnahora.arena.profiles import GameRecord, HistoryPoint
from kutnahora.arena.ratings import RatedGame, Rating
from kutnahora.arena.schema import SCHEMA
from kutnahora.arena.seat_logs import SeatLog
from kutnahora.arena.sql import Sql
from kutnahora.arena.submissions import Hosting, Version
from kutnahora.plumbing.databases import is_postgres_url, redact_url
from kutnahora.plumbing.errors import StoreError

T = TypeVar("T")

MATCHMAKER_LOCK_KEY = 0x6B68_6172_656E_6132  # "kharena2": held by the one replica that matches


class ArenaStore:
    """The arena's tables in SQLite or PostgreSQL; every method is a coroutine run in a worker thread."""

    def __init__(self, db: str) -> None:
        self.db = db
        self.postgres = is_postgres_url(db)
        self._sql = Sql(self.postgres)
        self._conn: Any = None
        self._lock = threading.Lock()

    @property
    def description(self) -> str:
        """What the store is, for logs: ``sqlite FILE`` or ``postgresql URL`` (password hidden)."""
        return f"postgresql {redact_url(self.db)}" if self.postgres else f"sqlite {self.db}"

    # --- plumbing --------------------------------------------------------------------------------------

    async def _run(self, work: Callable[[Any], T]) -> T:
        def locked() -> T:
            with self._lock:
                if self._conn is None:
                    raise StoreError("the arena store is closed")
                try:
                    result = work(self._conn)
                    self._conn.commit()
                    return result
                except BaseException:
                    self._conn.rollback()
                    raise

        return await asyncio.to_thread(locked)

    async def open(self) -> None:
        """Connect and migrate; :class:`StoreError` when the database cannot be used."""
        try:
            await asyncio.to_thread(self._connect)
        except StoreError:
            raise
        except Exception as error:
            raise StoreError(f"cannot open the arena store {self.description}: {error}") from None

    def _connect(self) -> None:
        if self.postgres:
            import psycopg

            conn: Any = psycopg.connect(self.db)
        else:
            conn = sqlite3.connect(self.db, check_same_thread=False, isolation_level="DEFERRED")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=5000")
        try:
            self._migrate(conn)
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    def _migrate(self, conn: Any) -> None:
        identity = (
            "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
            if self.postgres
            else "INTEGER PRIMARY KEY AUTOINCREMENT"
        )
        blob = "BYTEA" if self.postgres else "BLOB"
        try:
            SCHEMA.migrate(
                conn,
                postgres=self.postgres,
                statement=lambda text: text.replace("{ID}", identity).replace("{BLOB}", blob),
            )
        except BaseException:
            conn.rollback()
            raise
        conn.commit()

    async def close(self) -> None:
        """Close the connection (idempotent)."""

        def close() -> None:
            with self._lock:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        await asyncio.to_thread(close)

    # --- accounts --------------------------------------------------------------------------------------

    async def register(self, name: str, key_hash: str, *, house: bool = False) -> Account:
        """Create an account; :class:`NameTaken` when the name is taken (nothing is written then)."""
        try:
            return await self._run(lambda conn: accounts.register(self._sql, conn, name, key_hash, house))
        except NameTaken:
            raise
        except Exception as error:  # a concurrent registration of the same name on another replica
            if "unique" in str(error).lower():
                raise NameTaken(name) from None
            raise

    async def account_by_key_hash(self, key_hash: str) -> Account | None:
        """The account whose key hashes to ``key_hash`` (revoked or not), or None."""
        return await self._run(lambda conn: accounts.account_by_key_hash(self._sql, conn, key_hash))

    async def account_by_name(self, name: str) -> Account | None:
        """The account with this name, or None."""
        return await self._run(lambda conn: accounts.account_by_name(self._sql, conn, name))

    async def set_key(self, account_id: int, key_hash: str) -> None:
        """Replace an account's key (a revoked account stays revoked)."""
        await self._run(lambda conn: accounts.set_key(self._sql, conn, account_id, key_hash))

    async def revoke(self, account_id: int) -> None:
        """Revoke an account's key for good."""
        await self._run(lambda conn: accounts.revoke(self._sql, conn, account_id))

    async def account_count(self) -> int:
        """How many accounts exist."""
        return await self._run(lambda conn: accounts.account_count(self._sql, conn))

    # --- games and ratings -----------------------------------------------------------------------------

    async def ratings(self, pool: str, account_ids: Sequence[int]) -> dict[int, Rating]:
        """The ratings of these accounts in the pool (an account without a game has none here)."""
        if not account_ids:
            return {}

        return await self._run(lambda conn: standings.ratings(self._sql, conn, pool, account_ids))

    async def seat_counts(self, pool: str, account_ids: Sequence[int]) -> dict[int, list[int]]:
        """How often each account played each seat in the pool (games placed, whatever their end)."""
        if not account_ids:
            return {}

        return await self._run(lambda conn: placements.seat_counts(self._sql, conn, pool, account_ids))

    async def record_game(self, game_id: str, pool: str, server: str, account_ids: Sequence[int]) -> None:
        """Store a placed game with its seats (account by seat), as active."""
        await self._run(
            lambda conn: placements.record_game(self._sql, conn, game_id, pool, server, account_ids)
        )

    async def active_games(self) -> list[tuple[str, str, str, list[int]]]:
        """Every game still active: (game id, pool, server, account ids by seat)."""
        return await self._run(lambda conn: placements.active_games(self._sql, conn))

    async def abandon_game(self, game_id: str, cause: str = "abandoned_on_server", message: str = "") -> bool:
        """Mark an active game abandoned (unrated), with an event per seat saying ``cause`` (an
        ``AbandonCause`` name in lower case) and ``message``; False (nothing written) when it was no longer
        active."""
        return await self._run(lambda conn: placements.abandon_game(self._sql, conn, game_id, cause, message))

    async def rate_game(
        self,
        game_id: str,
        pool: str,
        account_ids: Sequence[int],
        seat_places: Sequence[int],
        rate: Callable[[list[Rating]], list[Rating]],
    ) -> list[Rating] | None:
        """Finish an active game with these places and rate it, in one transaction: ``rate`` turns the
        seats' current ratings into their new ones. None (nothing written) when the game is not active."""
        return await self._run(
            lambda conn: standings.rate_game(self._sql, conn, game_id, pool, account_ids, seat_places, rate)
        )

    async def rated_games(self) -> list[RatedGame]:
        """Every rated game in the order it was rated, seats as (account name, place)."""
        return await self._run(lambda conn: standings.rated_games(self._sql, conn))

    async def stored_ratings(self) -> dict[tuple[str, str], Rating]:
        """Every stored rating by (account name, pool)."""
        return await self._run(lambda conn: standings.stored_ratings(self._sql, conn))

    async def replace_ratings(self, ratings: dict[tuple[str, str], Rating]) -> None:
        """Overwrite the stored ratings with these (by account name and pool), in one transaction."""
        await self._run(lambda conn: standings.replace_ratings(self._sql, conn, ratings))

    # --- events ------------------------------------------------------------------------------------------

    async def events_after(self, event_id: int, limit: int = 1000) -> list[GameEvent]:
        """The events recorded after ``event_id``, oldest first (at most ``limit``)."""
        return await self._run(lambda conn: game_events.events_after(self._sql, conn, event_id, limit))

    async def last_event_id(self) -> int:
        """The id of the newest event (0 without any)."""
        return await self._run(lambda conn: game_events.last_event_id(self._sql, conn))

    async def started_events(self, account_id: int) -> list[GameEvent]:
        """The ``started`` events of the account's games still active, oldest first."""
        return await self._run(lambda conn: game_events.started_events(self._sql, conn, account_id))

    async def prune_events(self, keep_seconds: float = EVENT_KEEP_SECONDS) -> int:
        """Delete the events older than ``keep_seconds``, but never a started event of an active game;
        returns how many were deleted."""
        return await self._run(lambda conn: game_events.prune_events(self._sql, conn, keep_seconds))

    # --- shared tickets (PostgreSQL replicas) -----------------------------------------------------------

    async def add_ticket(self, ticket_id: str, account_id: int, pool: str) -> bool:
        """Store a ticket; False (nothing written) when the account holds one in the pool already."""
        try:
            return await self._run(
                lambda conn: tickets.add_ticket(self._sql, conn, ticket_id, account_id, pool)
            )
        except Exception as error:  # two replicas inserting at once: the unique key refuses the second
            if "unique" in str(error).lower() or "duplicate" in str(error).lower():
                return False
            raise

    async def remove_ticket(self, ticket_id: str) -> None:
        """Delete a ticket (withdrawn, or its match delivered)."""
        await self._run(lambda conn: tickets.remove_ticket(self._sql, conn, ticket_id))

    async def heartbeat(self, ticket_ids: Sequence[str]) -> list[tuple[str, str, str, int, str, str]]:
        """Mark these tickets alive, and take those matched: (ticket, server, game, seat, token, names).

        A matched ticket's row is deleted in the same transaction that reads its match (``DELETE …
        RETURNING``), before the replica hands the seat to its bot: once a bot holds its seat, no row of
        that ticket is left to refuse the bot's next Seek, on this replica or any other. A match written
        by the matchmaker between two heartbeats is taken whole by the next one."""
        if not ticket_ids:
            return []

        return await self._run(lambda conn: tickets.heartbeat(self._sql, conn, ticket_ids))

    async def open_tickets(self) -> list[tuple[str, int, str, float, bool, str]]:
        """Every live, unmatched ticket: (ticket, account, pool, opened at, house, account name)."""
        return await self._run(lambda conn: tickets.open_tickets(self._sql, conn))

    async def match_ticket(
        self, ticket_id: str, server: str, game_id: str, seat: int, token: str, names: str
    ) -> None:
        """Write a ticket's match for its replica to deliver."""
        await self._run(
            lambda conn: tickets.match_ticket(self._sql, conn, ticket_id, server, game_id, seat, token, names)
        )

    # --- reading ---------------------------------------------------------------------------------------

    async def leaderboard(
        self, pool: str, offset: int, limit: int
    ) -> tuple[list[tuple[Account, Rating]], int]:
        """One page of the pool's ratings, best conservative rating first, and how many there are."""
        return await self._run(lambda conn: standings.leaderboard(self._sql, conn, pool, offset, limit))

    async def profile(
        self, account_id: int
    ) -> tuple[dict[str, Rating], list[HistoryPoint], list[GameRecord]]:
        """An account's ratings by pool, its rating history (oldest first, the last 500) and 50 of its
        games: those in play first (the newest first), then the ended ones, the one that ended last first,
        so that a game under way is never listed below games that ended after it began."""
        return await self._run(lambda conn: profiles.profile(self._sql, conn, account_id))

    # --- hosted bots ------------------------------------------------------------------------------------

    async def submit(
        self,
        account_id: int,
        archive: bytes,
        digest: str,
        language: str,
        pools: Sequence[str],
        per_day: int,
    ) -> tuple[Version, bool]:
        """Keep an archive as the account's next version (True), or find the account's version of that
        digest (False), and set the account's pools; :class:`~kutnahora.arena.submissions.OverAllowance`
        (nothing written) past ``per_day`` versions in 24 hours. Two submissions of one account at once
        (on two replicas) are retried once the first is written."""
        for attempt in range(3):
            try:
                return await self._run(
                    lambda conn: submissions.submit(
                        self._sql, conn, account_id, archive, digest, language, pools, per_day, time.time()
                    )
                )
            except submissions.OverAllowance:
                raise
            except Exception as error:
                text = str(error).lower()
                if attempt == 2 or ("unique" not in text and "duplicate" not in text):
                    raise
        raise AssertionError("unreachable")

    async def versions(self, account_id: int) -> list[Version]:
        """The account's versions, newest first."""
        return await self._run(lambda conn: submissions.versions(self._sql, conn, account_id))

    async def version(self, account_id: int, number: int) -> tuple[Version, str] | None:
        """One of the account's versions with its build log, or None."""
        return await self._run(lambda conn: submissions.version(self._sql, conn, account_id, number))

    async def hosting(self, account_id: int) -> Hosting:
        """The account's hosting settings."""
        return await self._run(lambda conn: submissions.hosting(self._sql, conn, account_id))

    async def set_paused(self, account_id: int, paused: bool, reason: str = "") -> Hosting:
        """Pause (with ``reason``) or resume the account's hosted play; its settings after."""

        def work(conn: Any) -> Hosting:
            submissions.set_paused(self._sql, conn, account_id, paused, reason)
            return submissions.hosting(self._sql, conn, account_id)

        return await self._run(work)

    async def playing_versions(self, account_ids: Sequence[int]) -> dict[int, int]:
        """The hosted version each of these accounts plays now (accounts not hosted are not listed)."""
        if not account_ids:
            return {}
        return await self._run(lambda conn: submissions.playing_versions(self._sql, conn, account_ids))

    async def archive(self, digest: str) -> bytes | None:
        """The archive of this digest, or None."""
        return await self._run(lambda conn: submissions.archive(self._sql, conn, digest))

    async def seat_log(self, account_id: int, game_id: str) -> SeatLog | None:
        """The account's hosted seat of the game with its log, or None."""
        return await self._run(lambda conn: seat_logs.seat_log(self._sql, conn, account_id, game_id))

    # --- the workers' leases ----------------------------------------------------------------------------

    async def lease_work(
        self,
        lease_id: str,
        worker: str,
        *,
        build: bool,
        host: bool,
        seek_key_hash: str,
        lease_time: float,
        per_hour: int,
        pools: Sequence[str],
        max_expiries: int = 0,
    ) -> BuildWork | HostWork | None:
        """Lease a build (when ``build``) or else a bot to host (when ``host``), or nothing; a version
        whose build leases expired ``max_expiries`` times is failed instead
        (:func:`kutnahora.arena.host_leases.lease_build`)."""

        def work(conn: Any) -> BuildWork | HostWork | None:
            now = time.time()
            if build:
                found = host_leases.lease_build(
                    self._sql, conn, lease_id, worker, now, lease_time, max_expiries
                )
                if found is not None:
                    return found
            if host:
                return host_leases.lease_host(
                    self._sql, conn, lease_id, worker, seek_key_hash, now, lease_time, per_hour, pools
                )
            return None

        return await self._run(work)

    async def renew_lease(self, lease_id: str, lease_time: float, per_hour: int) -> tuple[Lease, str] | None:
        """Extend a live lease: the lease and, for a host lease, why its worker should wind down ("" to go
        on); None when the lease is no longer live."""

        def work(conn: Any) -> tuple[Lease, str] | None:
            now = time.time()
            held = host_leases.renew(self._sql, conn, lease_id, now, lease_time)
            if held is None:
                return None
            if held.kind != host_leases.HOST:
                return held, ""
            return held, host_leases.wind_down_reason(self._sql, conn, held, per_hour, now)

        return await self._run(work)

    async def report_build(
        self, lease_id: str, ok: bool, reason: str, log: str, built_digest: str = ""
    ) -> tuple[Lease, bool]:
        """Record a build's result and end its lease (:func:`kutnahora.arena.host_leases.report_build`)."""
        return await self._run(
            lambda conn: host_leases.report_build(
                self._sql, conn, lease_id, ok, reason, log, time.time(), built_digest
            )
        )

    async def build_source(self, lease_id: str) -> str:
        """The archive digest of a live build lease's version
        (:func:`kutnahora.arena.host_leases.live_build`; :class:`LeaseGone` otherwise)."""
        return await self._run(lambda conn: host_leases.live_build(self._sql, conn, lease_id, time.time())[1])

    async def put_built(
        self, lease_id: str, digest: str, platform: str, size_bytes: int, chunks: Iterable[bytes]
    ) -> bool:
        """Keep a built folder uploaded under a live build lease, in one transaction (its bytes read from
        ``chunks`` inside it); False when that digest was kept already. :class:`LeaseGone` (nothing
        written) when the lease is not a live build lease."""

        def work(conn: Any) -> bool:
            now = time.time()
            _, source = host_leases.live_build(self._sql, conn, lease_id, now)
            return built.put(self._sql, conn, digest, source, platform, size_bytes, chunks, now)

        return await self._run(work)

    async def built(self, digest: str) -> Built | None:
        """The built folder of this digest (:func:`kutnahora.arena.built.find`)."""
        return await self._run(lambda conn: built.find(self._sql, conn, digest))

    async def built_chunk(self, digest: str, seq: int) -> bytes | None:
        """One chunk of a built folder (:func:`kutnahora.arena.built.chunk`)."""
        return await self._run(lambda conn: built.chunk(self._sql, conn, digest, seq))

    async def report_started(self, lease_id: str, seat: ReportedSeat) -> Lease:
        """Record a hosted seat started (:func:`kutnahora.arena.host_leases.report_started`)."""
        return await self._run(
            lambda conn: host_leases.report_started(self._sql, conn, lease_id, seat, time.time())
        )

    async def report_ended(
        self,
        lease_id: str,
        game_id: str,
        seat: int,
        failure: str | None,
        log: str,
        truncated: bool,
        max_failures: int,
    ) -> tuple[Lease, bool, bool]:
        """Record how a hosted seat ended (:func:`kutnahora.arena.host_leases.report_ended`)."""
        return await self._run(
            lambda conn: host_leases.report_ended(
                self._sql, conn, lease_id, game_id, seat, failure, log, truncated, max_failures, time.time()
            )
        )

    async def release_lease(self, lease_id: str) -> Lease | None:
        """End a lease (:func:`kutnahora.arena.host_leases.release`)."""
        return await self._run(lambda conn: host_leases.release(self._sql, conn, lease_id, time.time()))

    async def seek_key_account(self, key_hash: str) -> tuple[Account, bool] | None:
        """The account of the host lease with this seek key's hash and whether the lease lives, or None."""
        return await self._run(
            lambda conn: host_leases.seek_key_account(self._sql, conn, key_hash, time.time())
        )

    async def live_leases(self) -> dict[str, int]:
        """How many leases of each kind live now."""
        return await self._run(lambda conn: host_leases.live_leases(self._sql, conn, time.time()))


def matchmaker_lock_key(schema: str) -> int:
    """The advisory lock key of the matchmaker of the arena whose tables are in ``schema``. Advisory locks
    belong to the whole database, so arenas on different schemas of one database (separate deployments,
    or tests) each get their own key, and one arena never waits for another's matchmaker."""
    digest = hashlib.blake2b(schema.encode(), digest_size=4).digest()
    return MATCHMAKER_LOCK_KEY ^ int.from_bytes(digest, "big")


class MatchmakerLock:
    """Which replica runs the matchmaker: the one holding a PostgreSQL session advisory lock on its own
    connection. The lock goes with the connection, so a replica that dies (or loses the database) frees
    it at once, and another takes it at its next check. With SQLite there is one arena, always in charge."""

    def __init__(self, store: ArenaStore) -> None:
        self.store = store
        self._conn: Any = None
        self._held = False
        self._key = MATCHMAKER_LOCK_KEY

    async def held(self) -> bool:
        """Whether this replica holds the lock now (taking it when free)."""
        if not self.store.postgres:
            return True
        return await asyncio.to_thread(self._check)

    def _check(self) -> bool:
        import psycopg

        try:
            if self._conn is None:
                self._conn = psycopg.connect(self.store.db, autocommit=True)
                self._held = False
                schema = self._conn.execute("SELECT current_schema()").fetchone()
                self._key = matchmaker_lock_key(str(schema[0]) if schema else "")
            if self._held:
                self._conn.execute("SELECT 1")
            else:
                row = self._conn.execute("SELECT pg_try_advisory_lock(%s)", (self._key,)).fetchone()
                self._held = bool(row[0])
            return self._held
        except psycopg.Error:
            self.release_now()
            return False

    def release_now(self) -> None:
        """Drop the connection, and the lock with it."""
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
        self._conn = None
        self._held = False

    async def close(self) -> None:
        """Release the lock."""
        await asyncio.to_thread(self.release_now)
