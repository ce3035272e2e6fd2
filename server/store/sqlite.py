"""The SQLite store: the server's embedded default, one file in WAL mode.

A worker thread owns a connection and runs every read. With ``synchronous`` OFF or NORMAL (a commit
does not wait for the disk) each write runs on the event loop's own connection and commits at once; with
FULL or EXTRA, writes go to the worker, which gathers those queued while it commits into the next
transaction (group commit), so that many decisions share one fsync. Either way a caller's coroutine
returns only after its write has committed: the server answers a client only once the decision is
durable. A write on the event loop's connection never waits; a caller cancelled while the worker has its
write (its client gone) still gets to the end of it, its cancellation delivered again at its next wait, so
a decision is never stored without its game applying it. ``synchronous=NORMAL`` (the default) survives
the process being killed at any moment; ``FULL`` also survives a power cut, at the cost of an fsync per
commit. ``:memory:`` gives a private in-memory database for tests.

Schema: ``games`` (one row per game, its status updated in place), ``seats`` (one row per seat), and
``decisions``, the append-only log, whose primary key ``(game_id, seq)`` refuses a second decision N.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from kutnahora.plumbing.errors import StoreError
from kutnahora.server.records import UNFINISHED
from kutnahora.server.requests import RequestRecord
from kutnahora.server.store.base import (
    GAME_COLUMNS,
    UNFINISHED_SQL,
    DecisionRow,
    GameQuery,
    GameRow,
    SeatRow,
    StoredGame,
    decode_json,
    encode_json,
    game_filter,
    game_values,
    refused_append,
    to_the_end,
)

T = TypeVar("T")

SEAT_COLUMNS = "game_id, seat, name, token_hash, resigned, joined_at"
GAME_MARKS = ", ".join("?" for _ in GAME_COLUMNS.split(","))
# Columns added after the first schema, with their definitions: a file made by an older server gains them.
ADDED_GAME_COLUMNS = (("components_hash", "TEXT NOT NULL DEFAULT ''"),)
SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    game_id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    players INTEGER NOT NULL,
    events INTEGER NOT NULL,
    guild_setup_card INTEGER,
    mine_setup_card INTEGER,
    seed INTEGER NOT NULL,
    clock TEXT NOT NULL,
    label TEXT NOT NULL,
    game_token_hash TEXT NOT NULL,
    rules_version INTEGER NOT NULL,
    status TEXT NOT NULL,
    updated_at REAL NOT NULL,
    abandon_reason TEXT NOT NULL DEFAULT '',
    result TEXT,
    components_hash TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS games_by_status ON games (status, created_at);
CREATE INDEX IF NOT EXISTS games_by_created ON games (created_at, game_id);
CREATE TABLE IF NOT EXISTS seats (
    game_id TEXT NOT NULL REFERENCES games (game_id),
    seat INTEGER NOT NULL,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    resigned INTEGER NOT NULL,
    joined_at REAL NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE TABLE IF NOT EXISTS decisions (
    game_id TEXT NOT NULL REFERENCES games (game_id),
    seq INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    option TEXT NOT NULL,
    source TEXT NOT NULL,
    think_ms INTEGER NOT NULL,
    applied_at REAL NOT NULL,
    PRIMARY KEY (game_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS requests (
    key_hash TEXT PRIMARY KEY,
    method TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    sealed BLOB NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS requests_by_created ON requests (created_at);
"""
_RECORD_REQUEST = (
    "INSERT INTO requests (key_hash, method, fingerprint, sealed, created_at) VALUES (?, ?, ?, ?, ?)"
)


def _record_request(db: sqlite3.Connection, request: RequestRecord | None) -> None:
    """Store a request's record in the transaction of the change it made."""
    if request is not None:
        db.execute(
            _RECORD_REQUEST,
            (request.key_hash, request.method, request.fingerprint, request.sealed, request.created_at),
        )


_APPEND = (
    "INSERT INTO decisions (game_id, seq, seat, option, source, think_ms, applied_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_APPEND_NEXT = (
    "INSERT INTO decisions (game_id, seq, seat, option, source, think_ms, applied_at) "
    "SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM games WHERE game_id = ?) "
    "AND ? = (SELECT COALESCE(MAX(seq) + 1, 0) FROM decisions WHERE game_id = ?)"
)


@dataclass(slots=True)
class _Job:
    """One unit of work for the worker thread and the future that awaits its outcome."""

    work: Callable[[sqlite3.Connection], Any]
    future: asyncio.Future[Any]
    write: bool
    statements: int = 1  # a job of several statements runs in a savepoint, so that it fails whole


CHECKPOINT_EVERY = 250
"""With writes on the event loop's connection, the writes after which the worker thread checkpoints.

SQLite checkpoints a WAL file itself in the commit that takes the log past 1,000 pages: it copies the
log's pages into the database file and syncs both, in that commit, which here runs on the event loop
(about one decision in 740; 16-30 ms at the median and up to 110-360 ms on a busy disk, a third of all
the time spent writing: ``python -m kutnahora.bench.sqlite_writes``). So the worker thread also runs a
passive checkpoint every this many writes: it never blocks a writer, sqlite3 releases the GIL while it
copies and syncs, and it leaves SQLite's own checkpoint little to copy. SQLite's own stays on: with
writes arriving during every checkpoint the worker's never reaches the log's end, and only a checkpoint
in a commit lets the log start over instead of growing."""


class SqliteStore:
    """A :class:`kutnahora.server.store.base.Store` on a SQLite file (or ``:memory:``)."""

    kind = "sqlite"

    def __init__(
        self,
        path: str | Path,
        synchronous: str = "NORMAL",
        on_commit: Callable[[float, int], None] | None = None,
        inline_writes: bool | None = None,
        checkpoint_every: int = CHECKPOINT_EVERY,
    ) -> None:
        """``on_commit(seconds, writes)`` is called after every commit.

        ``checkpoint_every`` (with inline writes): the writes between the worker thread's passive
        checkpoints (:data:`CHECKPOINT_EVERY`); 0 leaves every checkpoint to SQLite, in the commits.

        ``inline_writes`` runs each write on the event loop's own connection, committed at once, instead of
        handing it to the worker thread. A commit that does not wait for the disk (WAL with synchronous
        OFF or NORMAL) takes tens of microseconds, far less than the hand-over between threads, so that
        is the default for a file; with FULL or EXTRA every commit waits for the disk, and the worker
        thread's group commit shares that wait between many writes. Reads always run on the worker.
        """
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {synchronous!r}")
        self.path = str(path)
        self.synchronous = synchronous.upper()
        self._on_commit = on_commit
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        if inline_writes is None:
            inline_writes = self.path != ":memory:" and self.synchronous in ("OFF", "NORMAL")
        self._inline_writes = inline_writes
        self._inline: sqlite3.Connection | None = None
        self._checkpoint_every = checkpoint_every
        self._writes_since_checkpoint = 0
        self._checkpointing = False
        # The length of each unfinished game's log, as this store last wrote or read it (committed).
        self._log_lengths: dict[str, int] = {}

    # --- lifecycle -----------------------------------------------------------------------------------

    async def open(self) -> None:
        """Start the worker thread and create the schema."""
        if self._thread is not None:
            return
        self._loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = self._loop.create_future()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="sqlite-store", daemon=True)
        self._thread.start()
        await ready
        if self._inline_writes:
            try:
                self._inline = self._connect()
            except Exception as error:
                raise self._open_error(error) from None

    async def close(self) -> None:
        """Finish every queued write, then stop the worker and close the file."""
        if self._thread is None or self._closed:
            return
        self._closed = True
        self._jobs.put(None)
        await asyncio.get_running_loop().run_in_executor(None, self._thread.join)
        self._thread = None
        if self._inline is not None:
            self._inline.close()
            self._inline = None

    # --- the Store protocol --------------------------------------------------------------------------

    async def create_game(
        self, game: GameRow, seats: Sequence[SeatRow], request: RequestRecord | None = None
    ) -> None:
        """Record a new game and its seats: empty, or taken when the game is created with them."""

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                f"INSERT INTO games ({GAME_COLUMNS}) VALUES ({GAME_MARKS})",
                game_values(game),
            )
            db.executemany(
                f"INSERT INTO seats ({SEAT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                [(game.game_id, s.seat, s.name, s.token_hash, int(s.resigned), s.joined_at) for s in seats],
            )
            _record_request(db, request)

        await self._submit(work, write=True, statements=3 if request is not None else 2)
        self._log_lengths[game.game_id] = 0

    async def save_seat(self, game_id: str, seat: SeatRow, request: RequestRecord | None = None) -> None:
        """Record a seat's join or resignation."""

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                f"INSERT INTO seats ({SEAT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (game_id, seat) DO UPDATE SET name = excluded.name, "
                "token_hash = excluded.token_hash, resigned = excluded.resigned, "
                "joined_at = excluded.joined_at",
                (game_id, seat.seat, seat.name, seat.token_hash, int(seat.resigned), seat.joined_at),
            )
            _record_request(db, request)

        await self._submit(work, write=True, statements=2 if request is not None else 1)

    async def find_request(self, key_hash: str) -> RequestRecord | None:
        """The record of an answered request, or None."""

        def work(db: sqlite3.Connection) -> RequestRecord | None:
            row = db.execute(
                "SELECT key_hash, method, fingerprint, sealed, created_at FROM requests WHERE key_hash = ?",
                (key_hash,),
            ).fetchone()
            return None if row is None else RequestRecord(row[0], row[1], row[2], bytes(row[3]), row[4])

        found: RequestRecord | None = await self._submit(work, write=False)
        return found

    async def purge_requests(self, before: float) -> None:
        """Delete the records of requests made before ``before``."""

        def work(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM requests WHERE created_at < ?", (before,))

        await self._submit(work, write=True)

    async def append_decision(self, game_id: str, decision: DecisionRow) -> None:
        """Append one decision to the game's log."""
        values = (
            game_id,
            decision.seq,
            decision.seat,
            decision.option,
            decision.source,
            decision.think_ms,
            decision.applied_at,
        )
        # When this store wrote or read the log's length itself, a plain insert keeps the log whole: the
        # primary key refuses a decision N stored already and the foreign key an unknown game. Otherwise one
        # statement appends only the next decision of a known game. Either way, a second look says why
        # nothing was appended.
        next_in_log = self._log_lengths.get(game_id) == decision.seq

        def work(db: sqlite3.Connection) -> None:
            if next_in_log:
                try:
                    db.execute(_APPEND, values)
                    return
                except sqlite3.IntegrityError:
                    pass
            elif db.execute(_APPEND_NEXT, (*values, game_id, decision.seq, game_id)).rowcount == 1:
                return
            known, following = db.execute(
                "SELECT (SELECT 1 FROM games WHERE game_id = ?), "
                "(SELECT COALESCE(MAX(seq) + 1, 0) FROM decisions WHERE game_id = ?)",
                (game_id, game_id),
            ).fetchone()
            raise refused_append(game_id, decision.seq, known is not None, following)

        try:
            await self._submit(work, write=True)
        except BaseException:
            self._log_lengths.pop(game_id, None)
            raise
        self._log_lengths[game_id] = decision.seq + 1

    async def set_status(
        self,
        game_id: str,
        status: str,
        updated_at: float,
        abandon_reason: str = "",
        result: dict[str, Any] | None = None,
        unfinished_only: bool = False,
    ) -> bool:
        """Record a change of status."""

        def work(db: sqlite3.Connection) -> bool:
            changed: int = db.execute(
                "UPDATE games SET status = ?, updated_at = ?, abandon_reason = ?, result = ? "
                f"WHERE game_id = ? AND (? = 0 OR status IN {UNFINISHED_SQL})",
                (status, updated_at, abandon_reason, encode_json(result), game_id, int(unfinished_only)),
            ).rowcount
            return changed == 1

        written: bool = await self._submit(work, write=True)
        if status not in UNFINISHED:
            self._log_lengths.pop(game_id, None)  # an ended game's log grows no more
        return written

    async def load_game(self, game_id: str) -> StoredGame | None:
        """Everything about one game, or None."""

        def work(db: sqlite3.Connection) -> StoredGame | None:
            row = db.execute(f"SELECT {GAME_COLUMNS} FROM games WHERE game_id = ?", (game_id,)).fetchone()
            if row is None:
                return None
            seats = tuple(
                SeatRow(seat=r[0], name=r[1], token_hash=r[2], resigned=bool(r[3]), joined_at=r[4])
                for r in db.execute(
                    "SELECT seat, name, token_hash, resigned, joined_at FROM seats "
                    "WHERE game_id = ? ORDER BY seat",
                    (game_id,),
                )
            )
            decisions = tuple(
                DecisionRow(seq=r[0], seat=r[1], option=r[2], source=r[3], think_ms=r[4], applied_at=r[5])
                for r in db.execute(
                    "SELECT seq, seat, option, source, think_ms, applied_at FROM decisions "
                    "WHERE game_id = ? ORDER BY seq",
                    (game_id,),
                )
            )
            for expected, decision in enumerate(decisions):
                if decision.seq != expected:
                    raise StoreError(f"the log of game {game_id} has a gap before decision {decision.seq}")
            return StoredGame(_game_row(row, len(decisions)), seats, decisions)

        result: StoredGame | None = await self._submit(work, write=False)
        if result is not None and result.game.status in UNFINISHED:
            self._log_lengths[game_id] = len(result.decisions)
        return result

    async def list_games(self, query: GameQuery) -> list[GameRow]:
        """Games matching the query, newest first."""

        def work(db: sqlite3.Connection) -> list[GameRow]:
            where, params = game_filter(query, "?")
            rows = db.execute(
                f"SELECT {GAME_COLUMNS}, (SELECT COUNT(*) FROM decisions d WHERE d.game_id = g.game_id) "
                f"FROM games g {where} ORDER BY created_at DESC, game_id DESC LIMIT ?",
                (*params, query.limit),
            ).fetchall()
            games = [_game_row(row[:-1], row[-1]) for row in rows]
            if not games:
                return games
            seats: dict[str, list[SeatRow]] = {game.game_id: [] for game in games}
            marks = ", ".join("?" for _ in games)
            for r in db.execute(
                f"SELECT game_id, seat, name, token_hash, resigned, joined_at FROM seats "
                f"WHERE game_id IN ({marks}) ORDER BY game_id, seat",
                [game.game_id for game in games],
            ):
                seats[r[0]].append(
                    SeatRow(seat=r[1], name=r[2], token_hash=r[3], resigned=bool(r[4]), joined_at=r[5])
                )
            return [replace(game, seats=tuple(seats[game.game_id])) for game in games]

        result: list[GameRow] = await self._submit(work, write=False)
        return result

    async def unfinished_games(self) -> list[str]:
        """The ids of the games still waiting or active, oldest first."""

        def work(db: sqlite3.Connection) -> list[str]:
            return [
                r[0]
                for r in db.execute(
                    f"SELECT game_id FROM games WHERE status IN {UNFINISHED_SQL} ORDER BY created_at, game_id"
                )
            ]

        result: list[str] = await self._submit(work, write=False)
        return result

    # --- the worker ----------------------------------------------------------------------------------

    async def _submit(self, work: Callable[[sqlite3.Connection], T], write: bool, statements: int = 1) -> T:
        if self._thread is None or self._loop is None or self._closed:
            raise StoreError("the store is not open")
        if write and self._inline is not None:
            return self._write_inline(self._inline, work, statements)
        future: asyncio.Future[T] = self._loop.create_future()
        self._jobs.put(_Job(work, future, write, statements))
        if write:
            return await to_the_end(future)
        return await future

    def _write_inline(
        self, db: sqlite3.Connection, work: Callable[[sqlite3.Connection], T], statements: int
    ) -> T:
        """Run one write on the event loop's connection; it fails whole.

        A single statement commits by itself (autocommit); a longer job runs in a transaction.
        """
        started = time.perf_counter()
        try:
            if statements == 1:
                value = work(db)
            else:
                db.execute("BEGIN IMMEDIATE")
                try:
                    value = work(db)
                except BaseException:
                    db.rollback()
                    raise
                db.execute("COMMIT")
        except sqlite3.Error as error:
            if db.in_transaction:
                db.rollback()
            raise StoreError(f"the store could not write: {error}") from None
        if self._on_commit is not None:
            self._on_commit(time.perf_counter() - started, 1)
        self._writes_since_checkpoint += 1
        if self._checkpoint_every and self._writes_since_checkpoint >= self._checkpoint_every:
            self._checkpoint_on_worker()
        return value

    def _checkpoint_on_worker(self) -> None:
        """Queue a passive checkpoint for the worker thread, unless one is queued or running already."""
        if self._checkpointing or self._loop is None:
            return
        self._writes_since_checkpoint = 0
        self._checkpointing = True

        def checkpoint(db: sqlite3.Connection) -> None:
            try:
                if not db.in_transaction:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            finally:
                self._checkpointing = False  # on the worker: the loop may not turn for a while

        future: asyncio.Future[None] = self._loop.create_future()
        future.add_done_callback(_retrieve)
        self._jobs.put(_Job(checkpoint, future, write=False))

    def _open_error(self, error: BaseException) -> BaseException:
        """A failure to open the file, as a :class:`StoreError` that names it (other errors unchanged)."""
        if isinstance(error, sqlite3.Error):
            return StoreError(f"cannot open the SQLite store {self.path}: {error}")
        return error

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        if self.path != ":memory:":
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"SQLite refused WAL mode for {self.path} (got {mode})")
        db.execute(f"PRAGMA synchronous={self.synchronous}")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("PRAGMA busy_timeout=5000")
        db.executescript(SCHEMA)
        present = {row[1] for row in db.execute("PRAGMA table_info(games)")}
        for column, definition in ADDED_GAME_COLUMNS:
            if column not in present:  # a file written by an older server
                db.execute(f"ALTER TABLE games ADD COLUMN {column} {definition}")
        return db

    def _run(self, ready: asyncio.Future[None]) -> None:
        loop = self._loop
        assert loop is not None
        try:
            db = self._connect()
        except Exception as error:  # reported to open()'s caller
            loop.call_soon_threadsafe(_settle_one, ready, None, self._open_error(error))
            return
        loop.call_soon_threadsafe(_settle_one, ready, None, None)
        stopping = False
        try:
            while not stopping:
                first = self._jobs.get()
                if first is None:
                    break
                batch = [first]
                while True:  # gather whatever queued up meanwhile: one commit for all of it
                    try:
                        job = self._jobs.get_nowait()
                    except queue.Empty:
                        break
                    if job is None:
                        stopping = True
                        break
                    batch.append(job)
                outcomes = self._run_batch(db, batch)
                loop.call_soon_threadsafe(_settle_all, outcomes)
        finally:
            db.close()

    def _run_batch(
        self, db: sqlite3.Connection, batch: list[_Job]
    ) -> list[tuple[asyncio.Future[Any], Any, BaseException | None]]:
        outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        writes = sum(1 for job in batch if job.write)
        started = time.perf_counter()
        try:
            if writes:
                db.execute("BEGIN IMMEDIATE")
            for job in batch:
                # A job that fails leaves nothing behind, and the others of the batch still commit: a
                # single statement that fails is undone by SQLite itself; longer jobs get a savepoint.
                savepoint = writes and job.statements > 1
                if savepoint:
                    db.execute("SAVEPOINT job")
                try:
                    value = job.work(db)
                except Exception as error:
                    if savepoint:
                        db.execute("ROLLBACK TO job")
                        db.execute("RELEASE job")
                    failure = StoreError(str(error)) if isinstance(error, sqlite3.Error) else error
                    outcomes.append((job.future, None, failure))
                    continue
                if savepoint:
                    db.execute("RELEASE job")
                outcomes.append((job.future, value, None))
            if writes:
                db.execute("COMMIT")
        except sqlite3.Error as error:  # the commit itself failed: nothing of the batch is durable
            if db.in_transaction:
                db.rollback()
            failure = StoreError(f"the store could not commit: {error}")
            return [(job.future, None, failure) for job in batch]
        if writes and self._on_commit is not None:
            committed = sum(
                1 for job, (_, _, error) in zip(batch, outcomes, strict=True) if job.write and not error
            )
            if committed:
                self._on_commit(time.perf_counter() - started, committed)
        return outcomes


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Take a background job's failure (a failed checkpoint is tried again after the next writes; SQLite's
    own checkpoints go on meanwhile), so that it is not reported as never retrieved."""
    if not future.cancelled():
        future.exception()


def _settle_one(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


def _settle_all(outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]]) -> None:
    for future, value, error in outcomes:
        _settle_one(future, value, error)


def _game_row(row: Sequence[Any], version: int) -> GameRow:
    clock = decode_json(row[7]) or {}
    return GameRow(
        game_id=row[0],
        created_at=row[1],
        players=row[2],
        events=bool(row[3]),
        guild_setup_card=row[4],
        mine_setup_card=row[5],
        seed=row[6],
        clock=clock,
        label=row[8],
        game_token_hash=row[9],
        rules_version=row[10],
        status=row[11],
        updated_at=row[12],
        abandon_reason=row[13],
        result=decode_json(row[14]),
        components_hash=row[15],
        version=version,
    )
