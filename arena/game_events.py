"""What happened to each account's games (table ``arena_events``): started, finished with its rating
change, abandoned with the cause. Events are written in the transaction that records the change itself
(:func:`add_events`), read by every replica to tell the bots on their StreamEvents streams, and pruned
after :data:`EVENT_KEEP_SECONDS`.

Each function runs in the caller's transaction (:meth:`kutnahora.arena.store.ArenaStore._run`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kutnahora.arena.sql import Sql

EVENT_KEEP_SECONDS = 600.0
"""Events older than this are pruned: every replica has long read them by then."""


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


def add_events(sql: Sql, conn: Any, game_id: str, kind: str, detail: Callable[[int], dict[str, Any]]) -> None:
    """One event per seat of a game (in the caller's transaction): the game's pool, server, the seat and
    every seat's name, with ``detail(seat)`` added."""
    game = sql.execute(conn, "SELECT pool, server FROM arena_games WHERE game_id = ?", (game_id,)).fetchone()
    seats = sql.execute(
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
        sql.execute(
            conn,
            "INSERT INTO arena_events (account_id, game_id, kind, detail, recorded_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (int(account_id), game_id, kind, json.dumps(body), now),
        )


def events_after(sql: Sql, conn: Any, event_id: int, limit: int = 1000) -> list[GameEvent]:
    """The events recorded after ``event_id``, oldest first (at most ``limit``)."""
    rows = sql.execute(
        conn,
        "SELECT event_id, account_id, game_id, kind, detail, recorded_at FROM arena_events "
        "WHERE event_id > ? ORDER BY event_id LIMIT ?",
        (event_id, limit),
    ).fetchall()
    return [
        GameEvent(int(r[0]), int(r[1]), str(r[2]), str(r[3]), json.loads(r[4]), float(r[5])) for r in rows
    ]


def started_events(sql: Sql, conn: Any, account_id: int) -> list[GameEvent]:
    """The ``started`` events of the account's games still active, oldest first."""
    rows = sql.execute(
        conn,
        "SELECT e.event_id, e.account_id, e.game_id, e.kind, e.detail, e.recorded_at "
        "FROM arena_events e JOIN arena_games g ON g.game_id = e.game_id "
        "WHERE e.account_id = ? AND e.kind = 'started' AND g.status = 'active' ORDER BY e.event_id",
        (account_id,),
    ).fetchall()
    return [
        GameEvent(int(r[0]), int(r[1]), str(r[2]), str(r[3]), json.loads(r[4]), float(r[5])) for r in rows
    ]


def prune_events(sql: Sql, conn: Any, keep_seconds: float = EVENT_KEEP_SECONDS) -> int:
    """Delete the events older than ``keep_seconds``, but never a started event of an active game;
    returns how many were deleted."""
    cursor = sql.execute(
        conn,
        "DELETE FROM arena_events WHERE recorded_at < ? AND NOT (kind = 'started' AND game_id IN "
        "(SELECT game_id FROM arena_games WHERE status = 'active'))",
        (time.time() - keep_seconds,),
    )
    return int(cursor.rowcount)


def last_event_id(sql: Sql, conn: Any) -> int:
    """The id of the newest event (0 without any)."""
    return int(sql.execute(conn, "SELECT COALESCE(max(event_id), 0) FROM arena_events").fetchone()[0])
