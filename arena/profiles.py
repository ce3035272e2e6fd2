"""An account's profile: its ratings by pool, its rating history and its latest games with their seats'
names and its place in each.

Each function runs in the caller's transaction (:meth:`kutnahora.arena.store.ArenaStore._run`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kutnahora.arena.ratings import Rating
from kutnahora.arena.sql import Sql


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


def profile(
    sql: Sql, conn: Any, account_id: int
) -> tuple[dict[str, Rating], list[HistoryPoint], list[GameRecord]]:
    """An account's ratings by pool, its rating history (oldest first, the last 500) and 50 of its
    games: those in play first (the newest first), then the ended ones, the one that ended last first,
    so that a game under way is never listed below games that ended after it began."""
    ratings = {
        str(r[0]): Rating(float(r[1]), float(r[2]), int(r[3]), int(r[4]))
        for r in sql.execute(
            conn,
            "SELECT pool, mu, sigma, games, wins FROM arena_ratings WHERE account_id = ? ORDER BY pool",
            (account_id,),
        ).fetchall()
    }
    history = [
        HistoryPoint(str(r[0]), str(r[1]), float(r[2]), float(r[3]), float(r[4]))
        for r in sql.execute(
            conn,
            "SELECT pool, game_id, mu, sigma, rated_at FROM arena_rating_history "
            "WHERE account_id = ? "
            "ORDER BY rated_at DESC LIMIT 500",
            (account_id,),
        ).fetchall()
    ]
    history.reverse()
    games = []
    for game_id, pool, server, status, created_at, seat, place in sql.execute(
        conn,
        "SELECT g.game_id, g.pool, g.server, g.status, g.created_at, s.seat, s.place "
        "FROM arena_seats s JOIN arena_games g ON g.game_id = s.game_id WHERE s.account_id = ? "
        "ORDER BY CASE WHEN g.status = 'active' THEN 0 ELSE 1 END, "
        "COALESCE(g.ended_at, g.created_at) DESC, g.created_at DESC LIMIT 50",
        (account_id,),
    ).fetchall():
        names = sql.execute(
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
