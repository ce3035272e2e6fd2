"""The games the arena placed and their seats (tables ``arena_games`` and ``arena_seats``): recording a
placed game, the games still active, abandoning one, and how often each account played each seat (what
the matchmaker balances). Finishing a game with its places is the standings'
(:func:`kutnahora.arena.standings.rate_game`), since it rates the game in the same transaction.

Each function runs in the caller's transaction (:meth:`kutnahora.arena.store.ArenaStore._run`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from kutnahora.arena.game_events import add_events
from kutnahora.arena.sql import Sql


def record_game(
    sql: Sql, conn: Any, game_id: str, pool: str, server: str, account_ids: Sequence[int]
) -> None:
    """Store a placed game with its seats (account by seat), as active."""
    sql.execute(
        conn,
        "INSERT INTO arena_games (game_id, pool, server, status, created_at) VALUES (?, ?, ?, ?, ?)",
        (game_id, pool, server, "active", time.time()),
    )
    for seat, account_id in enumerate(account_ids):
        sql.execute(
            conn,
            "INSERT INTO arena_seats (game_id, seat, account_id) VALUES (?, ?, ?)",
            (game_id, seat, account_id),
        )
    add_events(sql, conn, game_id, "started", lambda seat: {})


def active_games(sql: Sql, conn: Any) -> list[tuple[str, str, str, list[int]]]:
    """Every game still active: (game id, pool, server, account ids by seat)."""
    rows = sql.execute(
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


def abandon_game(
    sql: Sql, conn: Any, game_id: str, cause: str = "abandoned_on_server", message: str = ""
) -> bool:
    """Mark an active game abandoned (unrated), with an event per seat saying ``cause`` (an
    ``AbandonCause`` name in lower case) and ``message``; False (nothing written) when it was no longer
    active."""
    cursor = sql.execute(
        conn,
        "UPDATE arena_games SET status = 'abandoned', ended_at = ? WHERE game_id = ? AND status = 'active'",
        (time.time(), game_id),
    )
    if not cursor.rowcount:
        return False
    add_events(sql, conn, game_id, "abandoned", lambda seat: {"cause": cause, "message": message})
    return True


def seat_counts(sql: Sql, conn: Any, pool: str, account_ids: Sequence[int]) -> dict[int, list[int]]:
    """How often each account played each seat in the pool (games placed, whatever their end)."""
    marks = ", ".join("?" for _ in account_ids)
    rows = sql.execute(
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
