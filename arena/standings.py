"""The arena's standings (tables ``arena_ratings`` and ``arena_rating_history``): each account's rating
by pool, finishing and rating a game in one transaction, the leaderboard, and the rated games in order
with the stored ratings (what a recomputation of every rating reads and replaces).

Each function runs in the caller's transaction (:meth:`kutnahora.arena.store.ArenaStore._run`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from kutnahora.arena.accounts import ACCOUNT_COLUMNS, Account, account_from_row
from kutnahora.arena.game_events import add_events
from kutnahora.arena.ratings import RatedGame, Rating
from kutnahora.arena.sql import Sql


def rating_fields(rating: Rating) -> list[float]:
    """A rating as an event's detail holds it: mu, sigma, games, wins."""
    return [rating.mu, rating.sigma, rating.games, rating.wins]


def upsert_rating(sql: Sql, conn: Any, account_id: int, pool: str, rating: Rating) -> None:
    """Store an account's rating in a pool, replacing the one it had."""
    sql.execute(
        conn,
        "INSERT INTO arena_ratings (account_id, pool, mu, sigma, games, wins) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (account_id, pool) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma, "
        "games = excluded.games, wins = excluded.wins",
        (account_id, pool, rating.mu, rating.sigma, rating.games, rating.wins),
    )


def ratings(sql: Sql, conn: Any, pool: str, account_ids: Sequence[int]) -> dict[int, Rating]:
    """The ratings of these accounts in the pool (an account without a game has none here)."""
    marks = ", ".join("?" for _ in account_ids)
    rows = sql.execute(
        conn,
        f"SELECT account_id, mu, sigma, games, wins FROM arena_ratings "
        f"WHERE pool = ? AND account_id IN ({marks})",
        (pool, *account_ids),
    ).fetchall()
    return {int(r[0]): Rating(float(r[1]), float(r[2]), int(r[3]), int(r[4])) for r in rows}


def rate_game(
    sql: Sql,
    conn: Any,
    game_id: str,
    pool: str,
    account_ids: Sequence[int],
    seat_places: Sequence[int],
    rate: Callable[[list[Rating]], list[Rating]],
) -> list[Rating] | None:
    """Finish an active game with these places and rate it, in the caller's transaction: ``rate`` turns the
    seats' current ratings into their new ones. None (nothing written) when the game is not active."""
    now = time.time()
    row = sql.execute(conn, "SELECT COALESCE(max(rated_seq), 0) + 1 FROM arena_games", ()).fetchone()
    cursor = sql.execute(
        conn,
        "UPDATE arena_games SET status = 'finished', ended_at = ?, rated_seq = ? "
        "WHERE game_id = ? AND status = 'active'",
        (now, int(row[0]), game_id),
    )
    if not cursor.rowcount:
        return None
    before = []
    for account_id in account_ids:
        found = sql.execute(
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
    for seat, (account_id, place, rating) in enumerate(zip(account_ids, seat_places, after, strict=True)):
        sql.execute(
            conn,
            "UPDATE arena_seats SET place = ? WHERE game_id = ? AND seat = ?",
            (place, game_id, seat),
        )
        upsert_rating(sql, conn, account_id, pool, rating)
        sql.execute(
            conn,
            "INSERT INTO arena_rating_history (account_id, pool, game_id, mu, sigma, rated_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (account_id, pool, game_id, rating.mu, rating.sigma, now),
        )

    def change(seat: int) -> dict[str, Any]:
        return {
            "place": int(seat_places[seat]),
            "before": rating_fields(before[seat]),
            "after": rating_fields(after[seat]),
        }

    add_events(sql, conn, game_id, "finished", change)
    return after


def rated_games(sql: Sql, conn: Any) -> list[RatedGame]:
    """Every rated game in the order it was rated, seats as (account name, place)."""
    rows = sql.execute(
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


def stored_ratings(sql: Sql, conn: Any) -> dict[tuple[str, str], Rating]:
    """Every stored rating by (account name, pool)."""
    rows = sql.execute(
        conn,
        "SELECT a.name, r.pool, r.mu, r.sigma, r.games, r.wins FROM arena_ratings r "
        "JOIN arena_accounts a ON a.account_id = r.account_id",
    ).fetchall()
    return {(str(r[0]), str(r[1])): Rating(float(r[2]), float(r[3]), int(r[4]), int(r[5])) for r in rows}


def replace_ratings(sql: Sql, conn: Any, ratings: dict[tuple[str, str], Rating]) -> None:
    """Overwrite the stored ratings with these (by account name and pool), in the caller's transaction."""
    sql.execute(conn, "DELETE FROM arena_ratings")
    for (name, pool), rating in ratings.items():
        row = sql.execute(conn, "SELECT account_id FROM arena_accounts WHERE name = ?", (name,)).fetchone()
        upsert_rating(sql, conn, int(row[0]), pool, rating)


def leaderboard(
    sql: Sql, conn: Any, pool: str, offset: int, limit: int
) -> tuple[list[tuple[Account, Rating]], int]:
    """One page of the pool's ratings, best conservative rating first, and how many there are."""
    columns = ", ".join(f"a.{c.strip()}" for c in ACCOUNT_COLUMNS.split(","))
    rows = sql.execute(
        conn,
        f"SELECT {columns}, r.mu, r.sigma, r.games, r.wins FROM arena_ratings r "
        "JOIN arena_accounts a ON a.account_id = r.account_id WHERE r.pool = ? "
        "ORDER BY r.mu - 3 * r.sigma DESC, a.name LIMIT ? OFFSET ?",
        (pool, limit, offset),
    ).fetchall()
    total = sql.execute(conn, "SELECT count(*) FROM arena_ratings WHERE pool = ?", (pool,)).fetchone()
    entries = [
        (account_from_row(r[:6]), Rating(float(r[6]), float(r[7]), int(r[8]), int(r[9]))) for r in rows
    ]
    return entries, int(total[0])
