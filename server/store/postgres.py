"""The PostgreSQL store: one database shared by several server replicas.

Chosen with ``--db postgresql://user@host:5432/dbname`` (``postgres://`` works too). It implements
:class:`kutnahora.server.store.base.Store` with psycopg 3 and a connection pool, and adds the change feed of
:mod:`kutnahora.server.notify`, so replicas hear about each other's writes.

How replicas agree: the decision log's primary key is ``(game_id, seq)``. Two replicas that both try to
append decision N of a game race on that key; exactly one insert commits, the other gets
:class:`kutnahora.server.store.base.DuplicateDecision` and must re-read the log (then answer ABORTED, or the
recorded answer for an exact retry). An insert must also follow decision N-1 already in the log, so the log
never has a gap. Every write sends ``NOTIFY`` in its transaction; PostgreSQL delivers it to the other
replicas only once the transaction has committed, so a replica that hears "decision N" can read it.

Group commit: one writer task per store commits the writes queued while the previous commit ran in one
transaction. Every write is one statement that writes nothing, instead of failing, when it is refused (a
duplicate decision, a taken seat, an unknown game), so a refused write leaves nothing behind and the
others still commit. The transaction is sent as one pipeline (BEGIN, every statement, COMMIT) and costs
one round trip to the database however many writes it holds; only a refused write costs a second query,
which says why. Every caller's coroutine returns only once the transaction holding its write has
committed, so a decision is still durable before it is answered, but a slow disk's fsync and the network
round trip are shared by many games. Writes within a transaction are ordered by game, so two replicas'
transactions never deadlock.

Schema and migrations: the store creates or migrates its tables when it opens, under a transaction-level
advisory lock, so replicas that start together migrate once. ``kutnahora_schema_version`` records the
applied steps; a database migrated by a newer server (a version this code does not know) is refused
rather than written with an old schema (the runner, :class:`~kutnahora.plumbing.migrations.Schema`,
is the arena's too). Tables are created unqualified, in the first schema of the
connection's ``search_path``: ``?options=-csearch_path%3Dname`` in the URL puts them in a schema of their
own (the tests do this, one schema per run).

Query parameters that are not libpq's: ``pool_min_size`` (default 1) and ``pool_max_size`` (default 10),
``pool_timeout`` (seconds to wait for a free connection, default 10). Everything else in the URL goes to
libpq unchanged (``sslmode``, ``application_name``, ``connect_timeout``, ``options``…).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool

from kutnahora.plumbing.databases import is_postgres_url, redact_url
from kutnahora.plumbing.errors import StoreError
from kutnahora.plumbing.migrations import Schema
from kutnahora.server.notify import ChangeListener, GameChange, new_replica_id
from kutnahora.server.requests import RequestRecord
from kutnahora.server.store.base import (
    GAME_COLUMNS,
    UNFINISHED_SQL,
    DecisionRow,
    GameQuery,
    GameRow,
    SeatRow,
    StoredGame,
    encode_json,
    game_filter,
    game_values,
    refused_append,
    to_the_end,
)

POOL_PARAMETERS = ("pool_min_size", "pool_max_size", "pool_timeout")

# An arbitrary constant: the key of the advisory lock held while the schema is migrated.
MIGRATION_LOCK_KEY = 0x6B75_746E_6168

# Each step runs once, in order, in one transaction with its version number recorded. Never edit a step
# that has shipped: add a new one.
MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        """
        CREATE TABLE games (
            game_id TEXT COLLATE "C" PRIMARY KEY,
            created_at DOUBLE PRECISION NOT NULL,
            players SMALLINT NOT NULL CHECK (players BETWEEN 1 AND 8),
            events BOOLEAN NOT NULL,
            guild_setup_card INTEGER,
            mine_setup_card INTEGER,
            seed BIGINT NOT NULL,
            clock JSONB NOT NULL,
            label TEXT NOT NULL,
            game_token_hash TEXT NOT NULL,
            rules_version INTEGER NOT NULL,
            status TEXT NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            abandon_reason TEXT NOT NULL DEFAULT '',
            result JSONB
        );
        CREATE INDEX games_by_status ON games (status, created_at);
        CREATE INDEX games_by_created ON games (created_at, game_id);
        CREATE TABLE seats (
            game_id TEXT COLLATE "C" NOT NULL REFERENCES games (game_id) ON DELETE CASCADE,
            seat SMALLINT NOT NULL,
            name TEXT NOT NULL,
            token_hash TEXT NOT NULL,
            resigned BOOLEAN NOT NULL,
            joined_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (game_id, seat)
        );
        CREATE TABLE decisions (
            game_id TEXT COLLATE "C" NOT NULL REFERENCES games (game_id) ON DELETE CASCADE,
            seq INTEGER NOT NULL CHECK (seq >= 0),
            seat SMALLINT NOT NULL,
            option TEXT NOT NULL,
            source TEXT NOT NULL,
            think_ms INTEGER NOT NULL,
            applied_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (game_id, seq)
        );
        """,
    ),
    (2, "ALTER TABLE games ADD COLUMN components_hash TEXT NOT NULL DEFAULT ''"),
    (
        3,
        """
        CREATE TABLE requests (
            key_hash TEXT COLLATE "C" PRIMARY KEY,
            method TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            sealed BYTEA NOT NULL,
            created_at DOUBLE PRECISION NOT NULL
        );
        CREATE INDEX requests_by_created ON requests (created_at);
        """,
    ),
)
SCHEMA = Schema(
    table="kutnahora_schema_version",
    steps=tuple((version, (statements,)) for version, statements in MIGRATIONS),
    lock_key=MIGRATION_LOCK_KEY,
    refusal="the database schema is at version {found}, newer than this server knows ({known}): "
    "run a server at least as new as the one that migrated it",
    stamped=True,
)
SCHEMA_VERSION = SCHEMA.version

# The request's record, inserted by a write's own statement after its change ({after}: the CTE whose row
# says the change was made); a key recorded already fails the statement, and with it the change.
_RECORD_REQUEST = (
    ", recorded AS (INSERT INTO requests (key_hash, method, fingerprint, sealed, created_at)"
    " SELECT %s, %s, %s, %s, %s FROM {after} RETURNING 1)"
)
_REQUEST_NAMES = ("request_key", "request_method", "request_fingerprint", "request_sealed", "request_at")
_RECORD_REQUEST_NAMED = (
    ", recorded AS (INSERT INTO requests (key_hash, method, fingerprint, sealed, created_at)"
    " SELECT %(request_key)s, %(request_method)s, %(request_fingerprint)s, %(request_sealed)s,"
    " %(request_at)s FROM saved RETURNING 1)"
)


def _request_values(request: RequestRecord | None) -> tuple[Any, ...]:
    """A request record's column values (none without a record)."""
    if request is None:
        return ()
    return (request.key_hash, request.method, request.fingerprint, request.sealed, request.created_at)


MAX_BATCH = 256  # the most writes committed in one transaction

# Asked, on the write's connection, when its statement wrote nothing: why (the error its caller gets).
Refusal = Callable[[psycopg.AsyncConnection[TupleRow]], Awaitable[StoreError]]


@dataclass(slots=True)
class _WriteJob:
    """One queued write: a statement that returns one row (its NOTIFY) when it wrote and none when it was
    refused, what to ask then (None: writing nothing is no refusal), which game it touches, and the
    future its caller awaits."""

    statement: str
    params: Sequence[Any] | Mapping[str, Any]
    refusal: Refusal | None
    game_id: str
    what: str
    future: asyncio.Future[bool]  # whether the statement wrote
    wrote: bool = False


def split_url(url: str) -> tuple[str, dict[str, float]]:
    """The libpq URL without this store's own query parameters, and those parameters."""
    parts = urlsplit(url)
    kept: list[tuple[str, str]] = []
    pool: dict[str, float] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key in POOL_PARAMETERS:
            try:
                pool[key] = float(value)
            except ValueError:
                raise ValueError(f"{key} must be a number, not {value!r}") from None
        else:
            kept.append((key, value))
    return urlunsplit(parts._replace(query=urlencode(kept))), pool


class PostgresStore:
    """A :class:`~kutnahora.server.store.Store` and change feed on a PostgreSQL database."""

    kind = "postgresql"

    def __init__(
        self,
        url: str,
        on_commit: Callable[[float, int], None] | None = None,
        replica_id: str | None = None,
        channel: str | None = None,
    ) -> None:
        """``on_commit(seconds, writes)`` is called after every committed write.

        ``channel`` names the NOTIFY channel; by default it is derived from the schema the tables live in,
        so stores in different schemas of one database do not hear each other.
        """
        if not is_postgres_url(url):
            raise ValueError(f"not a PostgreSQL URL: {redact_url(url)}")
        self.url = url
        self._conninfo, pool = split_url(url)
        self._min_size = int(pool.get("pool_min_size", 1))
        self._max_size = int(pool.get("pool_max_size", 10))
        self._timeout = float(pool.get("pool_timeout", 10.0))
        if not 1 <= self._min_size <= self._max_size:
            raise ValueError("pool sizes must satisfy 1 <= pool_min_size <= pool_max_size")
        self.replica_id = replica_id or new_replica_id()
        self.channel = channel or ""
        self.schema = ""
        self._on_commit = on_commit
        self._pool: AsyncConnectionPool[psycopg.AsyncConnection[TupleRow]] | None = None
        self._listeners: list[ChangeListener] = []
        self._listen_task: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()
        self._closed = False
        self._queue: asyncio.Queue[_WriteJob | None] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None

    # --- lifecycle -----------------------------------------------------------------------------------

    async def open(self) -> None:
        """Connect, create or migrate the schema, and start listening for other replicas' writes."""
        if self._pool is not None:
            return
        pool: AsyncConnectionPool[psycopg.AsyncConnection[TupleRow]] = AsyncConnectionPool(
            self._conninfo,
            min_size=self._min_size,
            max_size=self._max_size,
            timeout=self._timeout,
            open=False,
            kwargs={"application_name": "kutnahora-server"}
            if "application_name" not in self._conninfo
            else {},
            check=AsyncConnectionPool.check_connection,
            name="kutnahora-store",
        )
        try:
            await pool.open(wait=True, timeout=self._timeout)
        except Exception as error:
            await pool.close()
            raise StoreError(f"cannot connect to PostgreSQL at {redact_url(self.url)}: {error}") from error
        self._pool = pool
        try:
            await self.migrate()
        except BaseException:
            await self.close()
            raise
        self._writer = asyncio.create_task(self._write_loop(), name="postgres-store-writer")
        self._listen_task = asyncio.create_task(self._listen(), name="postgres-store-listen")
        # Wait (briefly) until LISTEN is active, so that no change committed after open() is missed.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._listening.wait(), timeout=self._timeout)

    async def close(self) -> None:
        """Finish the queued writes, stop listening and close every connection."""
        if self._writer is not None:
            self._queue.put_nowait(None)
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._writer
            self._writer = None
        self._closed = True
        if self._listen_task is not None:
            self._listen_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listen_task
            self._listen_task = None
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    async def migrate(self) -> int:
        """Bring the schema to :data:`SCHEMA_VERSION`; returns the version found before."""

        async def learn_schema(conn: psycopg.AsyncConnection[TupleRow]) -> None:
            row = await (await conn.execute("SELECT current_schema()")).fetchone()
            if row is None or row[0] is None:
                raise StoreError("PostgreSQL has no current schema: set search_path to an existing schema")
            self.schema = str(row[0])
            if not self.channel:
                self.channel = f"kutnahora_{self.schema}"[:63]

        async with self._connection() as conn, conn.transaction():
            return await SCHEMA.migrate_async(conn, after_lock=learn_schema)

    # --- the ChangeFeed protocol ---------------------------------------------------------------------

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Registers a listener for other replicas' writes; returns the function that unregisters it."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe

    # --- the Store protocol --------------------------------------------------------------------------

    # Each write is one statement that never fails for a refusal the server expects (a duplicate decision,
    # a taken seat, an unknown game): those show as "no row written", and only then does a second query
    # tell which it was. So the writes of a batch share one transaction without savepoints; a write that
    # does raise a database error rolls the batch back, and each write is retried alone. The NOTIFY rides
    # on the write's own statement, sent only when a row was written.

    async def create_game(
        self, game: GameRow, seats: Sequence[SeatRow], request: RequestRecord | None = None
    ) -> None:
        """Record a new game and its seats: empty, or taken when the game is created with them.

        With a request record, the record is inserted by the same statement: a request id recorded
        already (a retry on another replica that won the race) fails the whole statement, game included.
        """
        change = GameChange(game.game_id, "created", 0, self.replica_id)
        marks = ", ".join(["%s"] * len(GAME_COLUMNS.split(",")))
        statement = (
            f"WITH created AS (INSERT INTO games ({GAME_COLUMNS}) VALUES ({marks})"
            " ON CONFLICT (game_id) DO NOTHING RETURNING game_id),"
            " seated AS (INSERT INTO seats (game_id, seat, name, token_hash, resigned, joined_at)"
            " SELECT created.game_id, s.seat, s.name, s.token_hash, s.resigned, s.joined_at FROM created,"
            " unnest(%s::smallint[], %s::text[], %s::text[], %s::boolean[], %s::double precision[])"
            " AS s (seat, name, token_hash, resigned, joined_at))"
            f"{_RECORD_REQUEST.format(after='created') if request is not None else ''} "
            "SELECT pg_notify(%s, %s) FROM created"
        )
        params = (
            *game_values(game),
            [s.seat for s in seats],
            [s.name for s in seats],
            [s.token_hash for s in seats],
            [s.resigned for s in seats],
            [s.joined_at for s in seats],
            *_request_values(request),
            self.channel,
            change.encode(),
        )

        async def refusal(conn: psycopg.AsyncConnection[TupleRow]) -> StoreError:
            return StoreError(f"game {game.game_id} already exists")

        await self._write(statement, params, refusal, game.game_id, f"create game {game.game_id}")

    async def save_seat(self, game_id: str, seat: SeatRow, request: RequestRecord | None = None) -> None:
        """Record a seat's join or resignation (with its request's record, as :meth:`create_game`).

        A seat's token never changes once set: a join through one replica that another replica's join
        of the same seat beat is refused with :class:`StoreError`, instead of replacing that seat's token.
        """
        change = GameChange(game_id, "seat", 0, self.replica_id)
        statement = (
            "WITH saved AS ("
            " INSERT INTO seats (game_id, seat, name, token_hash, resigned, joined_at)"
            " SELECT %(game_id)s, %(seat)s, %(name)s, %(token_hash)s, %(resigned)s, %(joined_at)s"
            " WHERE EXISTS (SELECT 1 FROM games WHERE game_id = %(game_id)s)"
            " ON CONFLICT (game_id, seat) DO UPDATE SET name = excluded.name,"
            " token_hash = excluded.token_hash, resigned = excluded.resigned,"
            " joined_at = excluded.joined_at"
            " WHERE seats.token_hash = '' OR seats.token_hash = excluded.token_hash"
            " RETURNING seat)"
            f"{_RECORD_REQUEST_NAMED if request is not None else ''} "
            "SELECT pg_notify(%(channel)s, %(payload)s) FROM saved"
        )
        params = {
            "game_id": game_id,
            "seat": seat.seat,
            "name": seat.name,
            "token_hash": seat.token_hash,
            "resigned": seat.resigned,
            "joined_at": seat.joined_at,
            "channel": self.channel,
            "payload": change.encode(),
        }
        if request is not None:
            params.update(zip(_REQUEST_NAMES, _request_values(request), strict=True))

        async def refusal(conn: psycopg.AsyncConnection[TupleRow]) -> StoreError:
            if not await self._game_exists(conn, game_id):
                return StoreError(f"no game {game_id} in the store")
            return StoreError(f"seat {seat.seat} of game {game_id} was taken through another replica")

        await self._write(statement, params, refusal, game_id, f"save seat {seat.seat} of game {game_id}")

    async def find_request(self, key_hash: str) -> RequestRecord | None:
        """The record of an answered request, or None."""
        rows = await self._read(
            "SELECT key_hash, method, fingerprint, sealed, created_at FROM requests WHERE key_hash = %s",
            (key_hash,),
            "look up a request id",
        )
        if not rows:
            return None
        row = rows[0]
        return RequestRecord(row[0], row[1], row[2], bytes(row[3]), row[4])

    async def purge_requests(self, before: float) -> None:
        """Delete the records of requests made before ``before``."""
        await self._read(
            "WITH gone AS (DELETE FROM requests WHERE created_at < %s RETURNING 1) SELECT count(*) FROM gone",
            (before,),
            "delete old request ids",
        )

    async def append_decision(self, game_id: str, decision: DecisionRow) -> None:
        """Append one decision; raises :class:`DuplicateDecision` if another writer appended ``seq`` first."""
        change = GameChange(game_id, "decision", decision.seq + 1, self.replica_id)
        statement = (
            "WITH inserted AS ("
            " INSERT INTO decisions (game_id, seq, seat, option, source, think_ms, applied_at)"
            " SELECT %(game_id)s, %(seq)s, %(seat)s, %(option)s, %(source)s, %(think_ms)s, %(applied_at)s"
            " WHERE EXISTS (SELECT 1 FROM games WHERE game_id = %(game_id)s)"
            " AND (%(seq)s = 0 OR EXISTS"
            " (SELECT 1 FROM decisions WHERE game_id = %(game_id)s AND seq = %(seq)s - 1))"
            " ON CONFLICT (game_id, seq) DO NOTHING"
            " RETURNING seq) "
            "SELECT pg_notify(%(channel)s, %(payload)s) FROM inserted"
        )
        params = {
            "game_id": game_id,
            "seq": decision.seq,
            "seat": decision.seat,
            "option": decision.option,
            "source": decision.source,
            "think_ms": decision.think_ms,
            "applied_at": decision.applied_at,
            "channel": self.channel,
            "payload": change.encode(),
        }

        async def refusal(conn: psycopg.AsyncConnection[TupleRow]) -> StoreError:
            # Nothing written: decision N is already there (another replica won), or it is not allowed.
            found = await (
                await conn.execute(
                    "SELECT EXISTS (SELECT 1 FROM games WHERE game_id = %(game_id)s), "
                    "(SELECT COALESCE(MAX(seq) + 1, 0) FROM decisions WHERE game_id = %(game_id)s)",
                    {"game_id": game_id},
                )
            ).fetchone()
            known, following = found if found is not None else (False, 0)
            return refused_append(game_id, decision.seq, known, following)

        await self._write(
            statement, params, refusal, game_id, f"append decision {decision.seq} of game {game_id}"
        )

    async def set_status(
        self,
        game_id: str,
        status: str,
        updated_at: float,
        abandon_reason: str = "",
        result: dict[str, Any] | None = None,
        unfinished_only: bool = False,
    ) -> bool:
        """Record a change of status (active, finished with its result, abandoned with a reason); whether
        the game's record changed (see :meth:`kutnahora.server.store.Store.set_status`)."""
        change = GameChange(game_id, "status", 0, self.replica_id)
        statement = (
            "WITH updated AS ("
            " UPDATE games SET status = %s, updated_at = %s, abandon_reason = %s, result = %s"
            f" WHERE game_id = %s AND (NOT %s OR status IN {UNFINISHED_SQL}) RETURNING game_id) "
            "SELECT pg_notify(%s, %s) FROM updated"
        )
        params = (
            status,
            updated_at,
            abandon_reason,
            encode_json(result),
            game_id,
            unfinished_only,
            self.channel,
            change.encode(),
        )
        return await self._write(statement, params, None, game_id, f"set status of game {game_id}")

    async def load_game(self, game_id: str) -> StoredGame | None:
        """Everything about one game, read in one snapshot, or None."""
        try:
            async with self._connection() as conn:
                # REPEATABLE READ: the game row, its seats and its log come from one snapshot.
                await conn.set_isolation_level(psycopg.IsolationLevel.REPEATABLE_READ)
                try:
                    async with conn.transaction():
                        row = await (
                            await conn.execute(
                                f"SELECT {GAME_COLUMNS} FROM games WHERE game_id = %s", (game_id,)
                            )
                        ).fetchone()
                        if row is None:
                            return None
                        seat_rows = await (
                            await conn.execute(
                                "SELECT seat, name, token_hash, resigned, joined_at FROM seats "
                                "WHERE game_id = %s ORDER BY seat",
                                (game_id,),
                            )
                        ).fetchall()
                        decision_rows = await (
                            await conn.execute(
                                "SELECT seq, seat, option, source, think_ms, applied_at FROM decisions "
                                "WHERE game_id = %s ORDER BY seq",
                                (game_id,),
                            )
                        ).fetchall()
                finally:
                    await conn.set_isolation_level(None)
        except psycopg.Error as error:
            raise StoreError(f"the store could not load game {game_id}: {error}") from error
        seats = tuple(
            SeatRow(seat=r[0], name=r[1], token_hash=r[2], resigned=bool(r[3]), joined_at=r[4])
            for r in seat_rows
        )
        decisions = tuple(
            DecisionRow(seq=r[0], seat=r[1], option=r[2], source=r[3], think_ms=r[4], applied_at=r[5])
            for r in decision_rows
        )
        for expected, decision in enumerate(decisions):
            if decision.seq != expected:
                raise StoreError(f"the log of game {game_id} has a gap before decision {decision.seq}")
        return StoredGame(_game_row(row, len(decisions)), seats, decisions)

    async def list_games(self, query: GameQuery) -> list[GameRow]:
        """Games matching the query, newest first."""
        where, params = game_filter(query, "%s")
        statement = (
            f"SELECT {GAME_COLUMNS}, (SELECT count(*) FROM decisions d WHERE d.game_id = g.game_id) "
            f"FROM games g {where} ORDER BY created_at DESC, game_id DESC LIMIT %s"
        )
        rows = await self._read(statement, (*params, query.limit), "list games")
        return [_game_row(row[:-1], int(row[-1])) for row in rows]

    async def unfinished_games(self) -> list[str]:
        """The ids of the games still waiting or active, oldest first."""
        rows = await self._read(
            f"SELECT game_id FROM games WHERE status IN {UNFINISHED_SQL} ORDER BY created_at, game_id",
            (),
            "list unfinished games",
        )
        return [str(row[0]) for row in rows]

    # --- helpers -------------------------------------------------------------------------------------

    def _connection(self) -> contextlib.AbstractAsyncContextManager[psycopg.AsyncConnection[TupleRow]]:
        if self._pool is None or self._closed:
            raise StoreError("the store is not open")
        return self._pool.connection()

    async def _write(
        self,
        statement: str,
        params: Sequence[Any] | Mapping[str, Any],
        refusal: Refusal | None,
        game_id: str,
        what: str,
    ) -> bool:
        """Queues one write for the writer and waits until the transaction holding it has committed, even
        if the caller is cancelled meanwhile (:func:`~kutnahora.server.store.to_the_end`); whether its
        statement wrote (a refused write raises its refusal instead)."""
        if self._writer is None or self._closed:
            raise StoreError("the store is not open")
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_WriteJob(statement, params, refusal, game_id, what, future))
        return await to_the_end(future)

    async def _write_loop(self) -> None:
        """Commits queued writes, everything queued meanwhile in one transaction (group commit)."""
        while True:
            first = await self._queue.get()
            if first is None:
                return
            batch = [first]
            stopping = False
            while len(batch) < MAX_BATCH and not self._queue.empty():
                job = self._queue.get_nowait()
                if job is None:
                    stopping = True
                    break
                batch.append(job)
            # One lock order for every batch of every replica (by game, each game's writes in their order),
            # so that two replicas' batches never wait for each other in a cycle.
            batch.sort(key=lambda job: job.game_id)
            for job, error in await self._commit(batch):
                if job.future.done():
                    continue
                if error is None:
                    job.future.set_result(job.wrote)
                else:
                    job.future.set_exception(error)
            if stopping:
                return

    async def _commit(self, batch: list[_WriteJob]) -> list[tuple[_WriteJob, BaseException | None]]:
        """Runs a batch in one transaction; after a database error, each write again in its own."""
        started = time.perf_counter()
        try:
            outcomes = await self._transaction(batch)
        except Exception as error:
            if len(batch) == 1:
                outcomes = [(batch[0], _store_error(batch[0], error))]
            else:
                outcomes = []
                for job in batch:
                    try:
                        outcomes.extend(await self._transaction([job]))
                    except Exception as single_error:
                        outcomes.append((job, _store_error(job, single_error)))
        if self._on_commit is not None:
            committed = sum(1 for _, error in outcomes if error is None)
            if committed:
                self._on_commit(time.perf_counter() - started, committed)
        return outcomes

    async def _transaction(self, batch: list[_WriteJob]) -> list[tuple[_WriteJob, BaseException | None]]:
        """Runs the writes in one transaction, sent as one pipeline. A write's refusal is its outcome, the
        others still commit; a database error rolls everything back and is raised."""
        outcomes: list[tuple[_WriteJob, BaseException | None]] = []
        async with self._connection() as conn:
            async with conn.pipeline(), conn.transaction():
                cursors = [await conn.execute(job.statement, job.params) for job in batch]
            # The pipeline is synced: every statement ran and the transaction committed, so from here on
            # nothing may raise (the batch would be run again). A refused write wrote nothing: if the
            # store cannot say why, its caller learns just that.
            for job, cursor in zip(batch, cursors, strict=True):
                job.wrote = cursor.rowcount == 1
                if job.wrote or job.refusal is None:
                    outcomes.append((job, None))
                    continue
                try:
                    async with conn.transaction():
                        refused = await job.refusal(conn)
                except psycopg.Error as error:
                    refused = _store_error(job, error)
                outcomes.append((job, refused))
        return outcomes

    async def _game_exists(self, conn: psycopg.AsyncConnection[TupleRow], game_id: str) -> bool:
        row = await (
            await conn.execute("SELECT EXISTS (SELECT 1 FROM games WHERE game_id = %s)", (game_id,))
        ).fetchone()
        return bool(row and row[0])

    async def _read(self, statement: str, params: Sequence[Any], what: str) -> list[TupleRow]:
        try:
            async with self._connection() as conn:
                rows = await (await conn.execute(statement, params)).fetchall()
                await conn.commit()
                return rows
        except psycopg.Error as error:
            raise StoreError(f"the store could not {what}: {error}") from error

    async def _listen(self) -> None:
        """Holds a connection that LISTENs on the channel; reconnects with backoff when it is lost."""
        delay = 0.2
        first = True
        while not self._closed:
            try:
                async with await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True) as conn:
                    await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                    self._listening.set()
                    delay = 0.2
                    if not first:  # changes may have been missed while disconnected
                        self._dispatch(GameChange("", "resync", 0, ""))
                    first = False
                    async for notice in conn.notifies():
                        try:
                            change = GameChange.decode(notice.payload)
                        except ValueError:
                            continue
                        if change.origin != self.replica_id:
                            self._dispatch(change)
            except asyncio.CancelledError:
                raise
            except Exception:
                first = False
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    def _dispatch(self, change: GameChange) -> None:
        for listener in list(self._listeners):
            with contextlib.suppress(Exception):  # one broken listener must not silence the others
                listener(change)


def _store_error(job: _WriteJob, error: BaseException) -> StoreError:
    """A failure of a write as the server sees it."""
    if isinstance(error, StoreError):
        return error
    return StoreError(f"the store could not {job.what}: {error}")


def _json_column(value: Any) -> dict[str, Any] | None:
    """A JSONB column as a dict (psycopg already decodes JSONB; text is decoded here)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, dict):
        raise StoreError(f"expected a JSON object in the store, got {type(value).__name__}")
    return value


def _game_row(row: Sequence[Any], version: int) -> GameRow:
    return GameRow(
        game_id=row[0],
        created_at=row[1],
        players=row[2],
        events=bool(row[3]),
        guild_setup_card=row[4],
        mine_setup_card=row[5],
        seed=row[6],
        clock=_json_column(row[7]) or {},
        label=row[8],
        game_token_hash=row[9],
        rules_version=row[10],
        status=row[11],
        updated_at=row[12],
        abandon_reason=row[13],
        result=_json_column(row[14]),
        components_hash=row[15],
        version=version,
    )
