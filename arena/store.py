"""The arena's store: accounts, placed games, results and ratings with their history.

SQLite by default (one file), PostgreSQL when the URL is ``postgresql://…`` (replicas share it). Both are
reached through the DB-API, in a worker thread so that the event loop never waits on the disk; one
statement text serves both (``?`` marks become ``%s`` for PostgreSQL).

Migrations are versioned as the game server's, by the same runner
(:class:`kutnahora.plumbing.migrations.Schema`): ``MIGRATIONS`` lists the steps,
``arena_schema_version`` records those applied, a database migrated by a newer arena is refused, and with
PostgreSQL the migration runs under an advisory lock so replicas that start together migrate once. Every
write that belongs together (a game's result, its seats' places, their new ratings and history) is one
transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from kutnahora.arena.ratings import RatedGame, Rating
from kutnahora.plumbing.databases import is_postgres_url, redact_url
from kutnahora.plumbing.errors import StoreError
from kutnahora.plumbing.migrations import Schema

T = TypeVar("T")

MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            """CREATE TABLE arena_accounts (
                account_id {ID},
                name TEXT NOT NULL UNIQUE,
                key_hash TEXT NOT NULL UNIQUE,
                revoked INTEGER NOT NULL DEFAULT 0,
                house INTEGER NOT NULL DEFAULT 0,
                created_at DOUBLE PRECISION NOT NULL
            )""",
            """CREATE TABLE arena_games (
                game_id TEXT PRIMARY KEY,
                pool TEXT NOT NULL,
                server TEXT NOT NULL,
                status TEXT NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                ended_at DOUBLE PRECISION,
                rated_seq INTEGER UNIQUE
            )""",
            "CREATE INDEX arena_games_by_status ON arena_games (status)",
            """CREATE TABLE arena_seats (
                game_id TEXT NOT NULL REFERENCES arena_games (game_id),
                seat INTEGER NOT NULL,
                account_id INTEGER NOT NULL REFERENCES arena_accounts (account_id),
                place INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (game_id, seat)
            )""",
            "CREATE INDEX arena_seats_by_account ON arena_seats (account_id)",
            """CREATE TABLE arena_ratings (
                account_id INTEGER NOT NULL REFERENCES arena_accounts (account_id),
                pool TEXT NOT NULL,
                mu DOUBLE PRECISION NOT NULL,
                sigma DOUBLE PRECISION NOT NULL,
                games INTEGER NOT NULL,
                wins INTEGER NOT NULL,
                PRIMARY KEY (account_id, pool)
            )""",
            """CREATE TABLE arena_rating_history (
                account_id INTEGER NOT NULL REFERENCES arena_accounts (account_id),
                pool TEXT NOT NULL,
                game_id TEXT NOT NULL REFERENCES arena_games (game_id),
                mu DOUBLE PRECISION NOT NULL,
                sigma DOUBLE PRECISION NOT NULL,
                rated_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (account_id, game_id)
            )""",
        ),
    ),
)
MIGRATIONS += (
    (
        2,
        (
            # Tickets shared by replicas on one PostgreSQL database: each replica writes its own, the one
            # replica running the matchmaker fills in the match (seat token included), and the owner hands
            # it to its bot and deletes the row.
            """CREATE TABLE arena_tickets (
                ticket_id TEXT PRIMARY KEY,
                account_id INTEGER NOT NULL REFERENCES arena_accounts (account_id),
                pool TEXT NOT NULL,
                opened_at DOUBLE PRECISION NOT NULL,
                heartbeat DOUBLE PRECISION NOT NULL,
                server TEXT,
                game_id TEXT,
                seat INTEGER,
                seat_token TEXT,
                seat_names TEXT,
                UNIQUE (account_id, pool)
            )""",
        ),
    ),
)
MIGRATIONS += (
    (
        3,
        (
            # What happened to each account's games (started, finished with its rating change, abandoned
            # with the cause), written in the transaction that records the change itself, and read by
            # every replica to tell the bots on their StreamEvents streams. Rows are kept for a while,
            # then pruned (EVENT_KEEP_SECONDS).
            """CREATE TABLE arena_events (
                event_id {ID},
                account_id INTEGER NOT NULL REFERENCES arena_accounts (account_id),
                game_id TEXT NOT NULL REFERENCES arena_games (game_id),
                kind TEXT NOT NULL,
                detail TEXT NOT NULL,
                recorded_at DOUBLE PRECISION NOT NULL
            )""",
            "CREATE INDEX arena_events_by_time ON arena_events (recorded_at)",
        ),
    ),
)
MIGRATION_LOCK_KEY = 0x6B68_6172_656E_6131  # "kharena1": the advisory lock of arena migrations
SCHEMA = Schema(
    table="arena_schema_version",
    steps=MIGRATIONS,
    lock_key=MIGRATION_LOCK_KEY,
    refusal="the arena store's schema is at version {found}, newer than this arena knows ({known}): "
    "run an arena at least as new as the one that migrated it",
)
SCHEMA_VERSION = SCHEMA.version
MATCHMAKER_LOCK_KEY = 0x6B68_6172_656E_6132  # "kharena2": held by the one replica that matches
TICKET_STALE_SECONDS = 5.0
"""A shared ticket whose replica has not renewed it for this long is dead (its replica is gone)."""
EVENT_KEEP_SECONDS = 600.0
"""Events older than this are pruned: every replica has long read them by then."""


class NameTaken(Exception):
    """Another account has the name."""


@dataclass(frozen=True, slots=True)
class Account:
    """A registered bot."""

    account_id: int
    name: str
    key_hash: str
    revoked: bool
    house: bool
    created_at: float


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A game the arena placed, with its seats' account names and the asking account's seat and place."""

    game_id: str
    pool: str
    server: str
    status: str
    created_at: float
    seat_names: tuple[str, ...]
    seat: int = -1
    place: int = 0


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """An account's rating after one game."""

    pool: str
    game_id: str
    mu: float
    sigma: float
    rated_at: float


@dataclass(frozen=True, slots=True)
class GameEvent:
    """Something that happened to one account's game: ``kind`` is ``started``, ``finished`` or
    ``abandoned``; ``detail`` holds the pool, server, seat and seat names, and, by kind, the place with the
    ratings before and after, or the cause and its sentence."""

    event_id: int
    account_id: int
    game_id: str
    kind: str
    detail: dict[str, Any]
    recorded_at: float


ACCOUNT_COLUMNS = "account_id, name, key_hash, revoked, house, created_at"


def _rating_fields(rating: Rating) -> list[float]:
    return [rating.mu, rating.sigma, rating.games, rating.wins]


def _account(row: Sequence[Any]) -> Account:
    return Account(int(row[0]), str(row[1]), str(row[2]), bool(row[3]), bool(row[4]), float(row[5]))


class ArenaStore:
    """The arena's tables in SQLite or PostgreSQL; every method is a coroutine run in a worker thread."""

    def __init__(self, db: str) -> None:
        self.db = db
        self.postgres = is_postgres_url(db)
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

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s") if self.postgres else statement

    def _execute(self, conn: Any, statement: str, params: Sequence[Any] = ()) -> Any:
        return conn.execute(self._sql(statement), tuple(params))

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
        try:
            SCHEMA.migrate(
                conn, postgres=self.postgres, statement=lambda text: text.replace("{ID}", identity)
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

        def work(conn: Any) -> Account:
            taken = self._execute(conn, "SELECT 1 FROM arena_accounts WHERE name = ?", (name,)).fetchone()
            if taken is not None:
                raise NameTaken(name)
            self._execute(
                conn,
                "INSERT INTO arena_accounts (name, key_hash, revoked, house, created_at) "
                "VALUES (?, ?, 0, ?, ?)",
                (name, key_hash, int(house), time.time()),
            )
            row = self._execute(
                conn, f"SELECT {ACCOUNT_COLUMNS} FROM arena_accounts WHERE name = ?", (name,)
            ).fetchone()
            return _account(row)

        try:
            return await self._run(work)
        except NameTaken:
            raise
        except Exception as error:  # a concurrent registration of the same name on another replica
            if "unique" in str(error).lower():
                raise NameTaken(name) from None
            raise

    async def account_by_key_hash(self, key_hash: str) -> Account | None:
        """The account whose key hashes to ``key_hash`` (revoked or not), or None."""

        def work(conn: Any) -> Account | None:
            row = self._execute(
                conn, f"SELECT {ACCOUNT_COLUMNS} FROM arena_accounts WHERE key_hash = ?", (key_hash,)
            ).fetchone()
            return None if row is None else _account(row)

        return await self._run(work)

    async def account_by_name(self, name: str) -> Account | None:
        """The account with this name, or None."""

        def work(conn: Any) -> Account | None:
            row = self._execute(
                conn, f"SELECT {ACCOUNT_COLUMNS} FROM arena_accounts WHERE name = ?", (name,)
            ).fetchone()
            return None if row is None else _account(row)

        return await self._run(work)

    async def set_key(self, account_id: int, key_hash: str) -> None:
        """Replace an account's key (a revoked account stays revoked)."""
        await self._run(
            lambda conn: self._execute(
                conn, "UPDATE arena_accounts SET key_hash = ? WHERE account_id = ?", (key_hash, account_id)
            )
        )

    async def revoke(self, account_id: int) -> None:
        """Revoke an account's key for good."""
        await self._run(
            lambda conn: self._execute(
                conn, "UPDATE arena_accounts SET revoked = 1 WHERE account_id = ?", (account_id,)
            )
        )

    async def account_count(self) -> int:
        """How many accounts exist."""
        return await self._run(
            lambda conn: int(self._execute(conn, "SELECT count(*) FROM arena_accounts").fetchone()[0])
        )

    # --- games and ratings -----------------------------------------------------------------------------

    async def ratings(self, pool: str, account_ids: Sequence[int]) -> dict[int, Rating]:
        """The ratings of these accounts in the pool (an account without a game has none here)."""
        if not account_ids:
            return {}

        def work(conn: Any) -> dict[int, Rating]:
            marks = ", ".join("?" for _ in account_ids)
            rows = self._execute(
                conn,
                f"SELECT account_id, mu, sigma, games, wins FROM arena_ratings "
                f"WHERE pool = ? AND account_id IN ({marks})",
                (pool, *account_ids),
            ).fetchall()
            return {int(r[0]): Rating(float(r[1]), float(r[2]), int(r[3]), int(r[4])) for r in rows}

        return await self._run(work)

    async def seat_counts(self, pool: str, account_ids: Sequence[int]) -> dict[int, list[int]]:
        """How often each account played each seat in the pool (games placed, whatever their end)."""
        if not account_ids:
            return {}

        def work(conn: Any) -> dict[int, list[int]]:
            marks = ", ".join("?" for _ in account_ids)
            rows = self._execute(
                conn,
                f"SELECT s.account_id, s.seat, count(*) FROM arena_seats s JOIN arena_games g "
                f"ON g.game_id = s.game_id WHERE g.pool = ? AND s.account_id IN ({marks}) "
                f"GROUP BY s.account_id, s.seat",
                (pool, *account_ids),
            ).fetchall()
            counts: dict[int, list[int]] = {}
            for account_id, seat, count in rows:
                seats = counts.setdefault(int(account_id), [0, 0, 0, 0])
                if 0 <= int(seat) < 4:
                    seats[int(seat)] = int(count)
            return counts

        return await self._run(work)

    async def record_game(self, game_id: str, pool: str, server: str, account_ids: Sequence[int]) -> None:
        """Store a placed game with its seats (account by seat), as active."""

        def work(conn: Any) -> None:
            self._execute(
                conn,
                "INSERT INTO arena_games (game_id, pool, server, status, created_at) VALUES (?, ?, ?, ?, ?)",
                (game_id, pool, server, "active", time.time()),
            )
            for seat, account_id in enumerate(account_ids):
                self._execute(
                    conn,
                    "INSERT INTO arena_seats (game_id, seat, account_id) VALUES (?, ?, ?)",
                    (game_id, seat, account_id),
                )
            self._add_events(conn, game_id, "started", lambda seat: {})

        await self._run(work)

    def _add_events(
        self, conn: Any, game_id: str, kind: str, detail: Callable[[int], dict[str, Any]]
    ) -> None:
        """One event per seat of a game (in the caller's transaction): the game's pool, server, the seat and
        every seat's name, with ``detail(seat)`` added."""
        game = self._execute(
            conn, "SELECT pool, server FROM arena_games WHERE game_id = ?", (game_id,)
        ).fetchone()
        seats = self._execute(
            conn,
            "SELECT s.seat, s.account_id, a.name FROM arena_seats s "
            "JOIN arena_accounts a ON a.account_id = s.account_id WHERE s.game_id = ? ORDER BY s.seat",
            (game_id,),
        ).fetchall()
        names = [str(row[2]) for row in seats]
        now = time.time()
        for seat, account_id, _ in seats:
            body = {"pool": str(game[0]), "server": str(game[1]), "seat": int(seat), "seat_names": names}
            body.update(detail(int(seat)))
            self._execute(
                conn,
                "INSERT INTO arena_events (account_id, game_id, kind, detail, recorded_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (int(account_id), game_id, kind, json.dumps(body), now),
            )

    async def active_games(self) -> list[tuple[str, str, str, list[int]]]:
        """Every game still active: (game id, pool, server, account ids by seat)."""

        def work(conn: Any) -> list[tuple[str, str, str, list[int]]]:
            # One query, not one a game: the matching replica reads this every tick.
            rows = self._execute(
                conn,
                "SELECT g.game_id, g.pool, g.server, s.account_id FROM arena_games g "
                "JOIN arena_seats s ON s.game_id = g.game_id WHERE g.status = 'active' "
                "ORDER BY g.game_id, s.seat",
            ).fetchall()
            found: dict[str, tuple[str, str, str, list[int]]] = {}
            for game_id, pool, server, account_id in rows:
                game = found.setdefault(str(game_id), (str(game_id), str(pool), str(server), []))
                game[3].append(int(account_id))
            return list(found.values())

        return await self._run(work)

    async def abandon_game(self, game_id: str, cause: str = "abandoned_on_server", message: str = "") -> bool:
        """Mark an active game abandoned (unrated), with an event per seat saying ``cause`` (an
        ``AbandonCause`` name in lower case) and ``message``; False (nothing written) when it was no longer
        active."""

        def work(conn: Any) -> bool:
            cursor = self._execute(
                conn,
                "UPDATE arena_games SET status = 'abandoned', ended_at = ? "
                "WHERE game_id = ? AND status = 'active'",
                (time.time(), game_id),
            )
            if not cursor.rowcount:
                return False
            self._add_events(conn, game_id, "abandoned", lambda seat: {"cause": cause, "message": message})
            return True

        return await self._run(work)

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

        def work(conn: Any) -> list[Rating] | None:
            now = time.time()
            row = self._execute(
                conn, "SELECT COALESCE(max(rated_seq), 0) + 1 FROM arena_games", ()
            ).fetchone()
            cursor = self._execute(
                conn,
                "UPDATE arena_games SET status = 'finished', ended_at = ?, rated_seq = ? "
                "WHERE game_id = ? AND status = 'active'",
                (now, int(row[0]), game_id),
            )
            if not cursor.rowcount:
                return None
            before = []
            for account_id in account_ids:
                found = self._execute(
                    conn,
                    "SELECT mu, sigma, games, wins FROM arena_ratings WHERE account_id = ? AND pool = ?",
                    (account_id, pool),
                ).fetchone()
                before.append(
                    Rating()
                    if found is None
                    else Rating(float(found[0]), float(found[1]), int(found[2]), int(found[3]))
                )
            after = rate(before)
            for seat, (account_id, place, rating) in enumerate(
                zip(account_ids, seat_places, after, strict=True)
            ):
                self._execute(
                    conn,
                    "UPDATE arena_seats SET place = ? WHERE game_id = ? AND seat = ?",
                    (place, game_id, seat),
                )
                self._upsert_rating(conn, account_id, pool, rating)
                self._execute(
                    conn,
                    "INSERT INTO arena_rating_history (account_id, pool, game_id, mu, sigma, rated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (account_id, pool, game_id, rating.mu, rating.sigma, now),
                )

            def change(seat: int) -> dict[str, Any]:
                return {
                    "place": int(seat_places[seat]),
                    "before": _rating_fields(before[seat]),
                    "after": _rating_fields(after[seat]),
                }

            self._add_events(conn, game_id, "finished", change)
            return after

        return await self._run(work)

    def _upsert_rating(self, conn: Any, account_id: int, pool: str, rating: Rating) -> None:
        self._execute(
            conn,
            "INSERT INTO arena_ratings (account_id, pool, mu, sigma, games, wins) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (account_id, pool) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma, "
            "games = excluded.games, wins = excluded.wins",
            (account_id, pool, rating.mu, rating.sigma, rating.games, rating.wins),
        )

    async def rated_games(self) -> list[RatedGame]:
        """Every rated game in the order it was rated, seats as (account name, place)."""

        def work(conn: Any) -> list[RatedGame]:
            rows = self._execute(
                conn,
                "SELECT g.game_id, g.pool, s.seat, a.name, s.place FROM arena_games g "
                "JOIN arena_seats s ON s.game_id = g.game_id "
                "JOIN arena_accounts a ON a.account_id = s.account_id "
                "WHERE g.status = 'finished' ORDER BY g.rated_seq, s.seat",
            ).fetchall()
            games: list[RatedGame] = []
            current: tuple[str, str] | None = None
            seats: list[tuple[str, int]] = []
            for game_id, pool, _seat, name, place in rows:
                if current is not None and current[0] != game_id:
                    games.append(RatedGame(current[1], current[0], tuple(seats)))
                    seats = []
                current = (str(game_id), str(pool))
                seats.append((str(name), int(place)))
            if current is not None:
                games.append(RatedGame(current[1], current[0], tuple(seats)))
            return games

        return await self._run(work)

    async def stored_ratings(self) -> dict[tuple[str, str], Rating]:
        """Every stored rating by (account name, pool)."""

        def work(conn: Any) -> dict[tuple[str, str], Rating]:
            rows = self._execute(
                conn,
                "SELECT a.name, r.pool, r.mu, r.sigma, r.games, r.wins FROM arena_ratings r "
                "JOIN arena_accounts a ON a.account_id = r.account_id",
            ).fetchall()
            return {
                (str(r[0]), str(r[1])): Rating(float(r[2]), float(r[3]), int(r[4]), int(r[5])) for r in rows
            }

        return await self._run(work)

    async def replace_ratings(self, ratings: dict[tuple[str, str], Rating]) -> None:
        """Overwrite the stored ratings with these (by account name and pool), in one transaction."""

        def work(conn: Any) -> None:
            self._execute(conn, "DELETE FROM arena_ratings")
            for (name, pool), rating in ratings.items():
                row = self._execute(
                    conn, "SELECT account_id FROM arena_accounts WHERE name = ?", (name,)
                ).fetchone()
                self._upsert_rating(conn, int(row[0]), pool, rating)

        await self._run(work)

    # --- events ------------------------------------------------------------------------------------------

    async def events_after(self, event_id: int, limit: int = 1000) -> list[GameEvent]:
        """The events recorded after ``event_id``, oldest first (at most ``limit``)."""

        def work(conn: Any) -> list[GameEvent]:
            rows = self._execute(
                conn,
                "SELECT event_id, account_id, game_id, kind, detail, recorded_at FROM arena_events "
                "WHERE event_id > ? ORDER BY event_id LIMIT ?",
                (event_id, limit),
            ).fetchall()
            return [
                GameEvent(int(r[0]), int(r[1]), str(r[2]), str(r[3]), json.loads(r[4]), float(r[5]))
                for r in rows
            ]

        return await self._run(work)

    async def last_event_id(self) -> int:
        """The id of the newest event (0 without any)."""
        return await self._run(
            lambda conn: int(
                self._execute(conn, "SELECT COALESCE(max(event_id), 0) FROM arena_events").fetchone()[0]
            )
        )

    async def started_events(self, account_id: int) -> list[GameEvent]:
        """The ``started`` events of the account's games still active, oldest first."""

        def work(conn: Any) -> list[GameEvent]:
            rows = self._execute(
                conn,
                "SELECT e.event_id, e.account_id, e.game_id, e.kind, e.detail, e.recorded_at "
                "FROM arena_events e JOIN arena_games g ON g.game_id = e.game_id "
                "WHERE e.account_id = ? AND e.kind = 'started' AND g.status = 'active' ORDER BY e.event_id",
                (account_id,),
            ).fetchall()
            return [
                GameEvent(int(r[0]), int(r[1]), str(r[2]), str(r[3]), json.loads(r[4]), float(r[5]))
                for r in rows
            ]

        return await self._run(work)

    async def prune_events(self, keep_seconds: float = EVENT_KEEP_SECONDS) -> int:
        """Delete the events older than ``keep_seconds``, but never a started event of an active game;
        returns how many were deleted."""

        def work(conn: Any) -> int:
            cursor = self._execute(
                conn,
                "DELETE FROM arena_events WHERE recorded_at < ? AND NOT (kind = 'started' AND game_id IN "
                "(SELECT game_id FROM arena_games WHERE status = 'active'))",
                (time.time() - keep_seconds,),
            )
            return int(cursor.rowcount)

        return await self._run(work)

    # --- shared tickets (PostgreSQL replicas) -----------------------------------------------------------

    async def add_ticket(self, ticket_id: str, account_id: int, pool: str) -> bool:
        """Store a ticket; False (nothing written) when the account holds one in the pool already."""

        def work(conn: Any) -> bool:
            now = time.time()
            held = self._execute(
                conn,
                "SELECT heartbeat FROM arena_tickets WHERE account_id = ? AND pool = ?",
                (account_id, pool),
            ).fetchone()
            if held is not None:
                if float(held[0]) > now - TICKET_STALE_SECONDS:
                    return False
                self._execute(  # left behind by a replica that died
                    conn, "DELETE FROM arena_tickets WHERE account_id = ? AND pool = ?", (account_id, pool)
                )
            self._execute(
                conn,
                "INSERT INTO arena_tickets (ticket_id, account_id, pool, opened_at, heartbeat) "
                "VALUES (?, ?, ?, ?, ?)",
                (ticket_id, account_id, pool, now, now),
            )
            return True

        try:
            return await self._run(work)
        except Exception as error:  # two replicas inserting at once: the unique key refuses the second
            if "unique" in str(error).lower() or "duplicate" in str(error).lower():
                return False
            raise

    async def remove_ticket(self, ticket_id: str) -> None:
        """Delete a ticket (withdrawn, or its match delivered)."""
        await self._run(
            lambda conn: self._execute(conn, "DELETE FROM arena_tickets WHERE ticket_id = ?", (ticket_id,))
        )

    async def heartbeat(self, ticket_ids: Sequence[str]) -> list[tuple[str, str, str, int, str, str]]:
        """Mark these tickets alive, and take those matched: (ticket, server, game, seat, token, names).

        A matched ticket's row is deleted in the same transaction that reads its match (``DELETE …
        RETURNING``), before the replica hands the seat to its bot: once a bot holds its seat, no row of
        that ticket is left to refuse the bot's next Seek, on this replica or any other. A match written
        by the matchmaker between two heartbeats is taken whole by the next one."""
        if not ticket_ids:
            return []

        def work(conn: Any) -> list[tuple[str, str, str, int, str, str]]:
            marks = ", ".join("?" for _ in ticket_ids)
            self._execute(
                conn,
                f"UPDATE arena_tickets SET heartbeat = ? WHERE ticket_id IN ({marks})",
                (time.time(), *ticket_ids),
            )
            rows = self._execute(
                conn,
                f"DELETE FROM arena_tickets WHERE game_id IS NOT NULL AND ticket_id IN ({marks}) "
                "RETURNING ticket_id, server, game_id, seat, seat_token, seat_names",
                tuple(ticket_ids),
            ).fetchall()
            return [(str(r[0]), str(r[1]), str(r[2]), int(r[3]), str(r[4]), str(r[5])) for r in rows]

        return await self._run(work)

    async def open_tickets(self) -> list[tuple[str, int, str, float, bool, str]]:
        """Every live, unmatched ticket: (ticket, account, pool, opened at, house, account name)."""

        def work(conn: Any) -> list[tuple[str, int, str, float, bool, str]]:
            rows = self._execute(
                conn,
                "SELECT t.ticket_id, t.account_id, t.pool, t.opened_at, a.house, a.name FROM arena_tickets t "
                "JOIN arena_accounts a ON a.account_id = t.account_id "
                "WHERE t.game_id IS NULL AND t.heartbeat > ?",
                (time.time() - TICKET_STALE_SECONDS,),
            ).fetchall()
            return [(str(r[0]), int(r[1]), str(r[2]), float(r[3]), bool(r[4]), str(r[5])) for r in rows]

        return await self._run(work)

    async def match_ticket(
        self, ticket_id: str, server: str, game_id: str, seat: int, token: str, names: str
    ) -> None:
        """Write a ticket's match for its replica to deliver."""
        await self._run(
            lambda conn: self._execute(
                conn,
                "UPDATE arena_tickets SET server = ?, game_id = ?, seat = ?, seat_token = ?, seat_names = ? "
                "WHERE ticket_id = ?",
                (server, game_id, seat, token, names, ticket_id),
            )
        )

    # --- reading ---------------------------------------------------------------------------------------

    async def leaderboard(
        self, pool: str, offset: int, limit: int
    ) -> tuple[list[tuple[Account, Rating]], int]:
        """One page of the pool's ratings, best conservative rating first, and how many there are."""

        def work(conn: Any) -> tuple[list[tuple[Account, Rating]], int]:
            columns = ", ".join(f"a.{c.strip()}" for c in ACCOUNT_COLUMNS.split(","))
            rows = self._execute(
                conn,
                f"SELECT {columns}, r.mu, r.sigma, r.games, r.wins FROM arena_ratings r "
                "JOIN arena_accounts a ON a.account_id = r.account_id WHERE r.pool = ? "
                "ORDER BY r.mu - 3 * r.sigma DESC, a.name LIMIT ? OFFSET ?",
                (pool, limit, offset),
            ).fetchall()
            total = self._execute(
                conn, "SELECT count(*) FROM arena_ratings WHERE pool = ?", (pool,)
            ).fetchone()
            entries = [
                (_account(r[:6]), Rating(float(r[6]), float(r[7]), int(r[8]), int(r[9]))) for r in rows
            ]
            return entries, int(total[0])

        return await self._run(work)

    async def profile(
        self, account_id: int
    ) -> tuple[dict[str, Rating], list[HistoryPoint], list[GameRecord]]:
        """An account's ratings by pool, its rating history (oldest first, the last 500) and 50 of its
        games: those in play first (the newest first), then the ended ones, the one that ended last first,
        so that a game under way is never listed below games that ended after it began."""

        def work(conn: Any) -> tuple[dict[str, Rating], list[HistoryPoint], list[GameRecord]]:
            ratings = {
                str(r[0]): Rating(float(r[1]), float(r[2]), int(r[3]), int(r[4]))
                for r in self._execute(
                    conn,
                    "SELECT pool, mu, sigma, games, wins FROM arena_ratings "
                    "WHERE account_id = ? ORDER BY pool",
                    (account_id,),
                ).fetchall()
            }
            history = [
                HistoryPoint(str(r[0]), str(r[1]), float(r[2]), float(r[3]), float(r[4]))
                for r in self._execute(
                    conn,
                    "SELECT pool, game_id, mu, sigma, rated_at FROM arena_rating_history "
                    "WHERE account_id = ? "
                    "ORDER BY rated_at DESC LIMIT 500",
                    (account_id,),
                ).fetchall()
            ]
            history.reverse()
            games = []
            for game_id, pool, server, status, created_at, seat, place in self._execute(
                conn,
                "SELECT g.game_id, g.pool, g.server, g.status, g.created_at, s.seat, s.place "
                "FROM arena_seats s JOIN arena_games g ON g.game_id = s.game_id WHERE s.account_id = ? "
                "ORDER BY CASE WHEN g.status = 'active' THEN 0 ELSE 1 END, "
                "COALESCE(g.ended_at, g.created_at) DESC, g.created_at DESC LIMIT 50",
                (account_id,),
            ).fetchall():
                names = self._execute(
                    conn,
                    "SELECT a.name FROM arena_seats s JOIN arena_accounts a ON a.account_id = s.account_id "
                    "WHERE s.game_id = ? ORDER BY s.seat",
                    (game_id,),
                ).fetchall()
                games.append(
                    GameRecord(
                        str(game_id),
                        str(pool),
                        str(server),
                        str(status),
                        float(created_at),
                        tuple(str(n[0]) for n in names),
                        int(seat),
                        int(place),
                    )
                )
            return ratings, history, games

        return await self._run(work)


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
