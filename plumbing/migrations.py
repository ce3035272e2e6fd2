"""Versioned schema migrations, one discipline for every store that keeps its own tables.

A :class:`Schema` lists its steps (version, statements), names the table that records the versions
applied and the advisory lock taken on PostgreSQL while migrating (so that replicas starting together
migrate once), and says how a program refuses a database migrated by a newer one. Its runners bring a
database to the newest version inside the caller's transaction, in the same order: take the lock (on
PostgreSQL), create the version table if missing, read the version, refuse a newer one with
:class:`~kutnahora.plumbing.errors.StoreError`, then apply each missing step and record it.
:meth:`Schema.migrate` drives a DB-API connection (sqlite3 or psycopg, in a worker thread: the arena's
store); :meth:`Schema.migrate_async` a psycopg async connection (the game server's PostgreSQL store).

Never edit a step that has shipped: add a new one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kutnahora.plumbing.errors import StoreError

Steps = tuple[tuple[int, tuple[str, ...]], ...]


@dataclass(frozen=True, slots=True)
class Schema:
    """One program's tables: their migration steps, version table, advisory lock and refusal.

    ``refusal`` is the sentence for a database newer than the steps, with ``{found}`` and ``{known}``.
    ``stamped`` says whether the version table's ``applied_at`` has a default (a PostgreSQL timestamp);
    without one, the runner writes the time itself (seconds since the epoch)."""

    table: str
    steps: Steps
    lock_key: int
    refusal: str
    stamped: bool = False

    @property
    def version(self) -> int:
        """The newest version: the last step's."""
        return self.steps[-1][0]

    def _create(self) -> str:
        applied = "TIMESTAMPTZ NOT NULL DEFAULT now()" if self.stamped else "DOUBLE PRECISION NOT NULL"
        return f"CREATE TABLE IF NOT EXISTS {self.table} (version INTEGER PRIMARY KEY, applied_at {applied})"

    def _record(self, mark: str, version: int) -> tuple[str, tuple[Any, ...]]:
        if self.stamped:
            return f"INSERT INTO {self.table} (version) VALUES ({mark})", (version,)
        return f"INSERT INTO {self.table} (version, applied_at) VALUES ({mark}, {mark})", (
            version,
            time.time(),
        )

    def pending(self, found: int) -> Steps:
        """The steps a database at version ``found`` lacks; :class:`StoreError` when it is newer."""
        if found > self.version:
            raise StoreError(self.refusal.format(found=found, known=self.version))
        return tuple(step for step in self.steps if step[0] > found)

    @staticmethod
    def _found(row: Any) -> int:
        return int(row[0]) if row is not None and row[0] is not None else 0

    def migrate(
        self, conn: Any, *, postgres: bool, statement: Callable[[str], str] = lambda text: text
    ) -> int:
        """Migrate through a DB-API connection (``?`` marks on SQLite, ``%s`` on PostgreSQL), in its open
        transaction (the caller commits); ``statement`` adapts each step's text. Returns the version
        found."""
        mark = "%s" if postgres else "?"
        if postgres:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self.lock_key,))
        conn.execute(self._create())
        found = self._found(conn.execute(f"SELECT max(version) FROM {self.table}").fetchone())
        for version, statements in self.pending(found):
            for text in statements:
                conn.execute(statement(text))
            conn.execute(*self._record(mark, version))
        return found

    async def migrate_async(self, conn: Any, *, after_lock: Callable[[Any], Any] | None = None) -> int:
        """Migrate through a psycopg async connection, in its open transaction; ``after_lock(conn)`` (a
        coroutine function) runs once the lock is held. Returns the version found."""
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (self.lock_key,))
        if after_lock is not None:
            await after_lock(conn)
        await conn.execute(self._create())
        found = self._found(await (await conn.execute(f"SELECT max(version) FROM {self.table}")).fetchone())
        for version, statements in self.pending(found):
            for text in statements:
                await conn.execute(text)  # trusted constant DDL
            await conn.execute(*self._record("%s", version))
        return found
