"""The stores: where games live durably, as an append-only log of decisions per game.

A game is its creation record (options, seed, clock, label), its seats (name, token hash, resigned) and
its decision log (one row per applied decision, numbered from 0, never changed). The server rebuilds any
game by replaying its log through the engine, so the log is the only game state that must survive.

Modules: :mod:`~kutnahora.server.store.base` holds what every store shares (the rows, :class:`Store`, the
protocol the server uses, its errors and helpers); :mod:`~kutnahora.server.store.memory` the store in
this process's memory (:class:`MemoryStore`, ``--db :memory:``), :mod:`~kutnahora.server.store.sqlite` a
SQLite file (:class:`SqliteStore`, the default), and :mod:`~kutnahora.server.store.postgres` a PostgreSQL
database that several replicas share (:class:`PostgresStore`, ``--db postgresql://…``). Import the names
from this package.
"""

from __future__ import annotations

from kutnahora.plumbing.databases import is_postgres_url, redact_url
from kutnahora.plumbing.errors import StoreError
from kutnahora.server.store.base import (
    WRITE_GRACE,
    DecisionRow,
    DuplicateDecision,
    GameQuery,
    GameRow,
    SeatRow,
    Store,
    StoredGame,
    result_from_json,
    result_to_json,
    to_the_end,
)
from kutnahora.server.store.memory import MemoryStore
from kutnahora.server.store.postgres import PostgresStore
from kutnahora.server.store.sqlite import SqliteStore

__all__ = [
    "WRITE_GRACE",
    "DecisionRow",
    "DuplicateDecision",
    "GameQuery",
    "GameRow",
    "MemoryStore",
    "PostgresStore",
    "SeatRow",
    "SqliteStore",
    "Store",
    "StoreError",
    "StoredGame",
    "is_postgres_url",
    "redact_url",
    "result_from_json",
    "result_to_json",
    "to_the_end",
]
