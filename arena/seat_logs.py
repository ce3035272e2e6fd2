"""What each hosted seat's code wrote (table ``arena_seat_logs``), per game and account: written when a
worker reports the seat started (outcome ``playing``) and again when it ended (``finished``, or why it
failed, with the log's tail), read only by the seat's own account.

Each function runs in the caller's transaction (:meth:`kutnahora.arena.store.ArenaStore._run`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kutnahora.arena.sql import Sql

PLAYING = "playing"
FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class SeatLog:
    """One hosted seat: the version that played it, how it ended (``playing`` while it plays,
    ``finished``, or why it failed) and what its code wrote."""

    game_id: str
    seat: int
    version: int
    outcome: str
    log: str
    truncated: bool


def is_seat_of(sql: Sql, conn: Any, game_id: str, seat: int, account_id: int) -> bool:
    """Whether the account plays ``seat`` of the game the arena placed."""
    row = sql.execute(
        conn,
        "SELECT 1 FROM arena_seats WHERE game_id = ? AND seat = ? AND account_id = ?",
        (game_id, seat, account_id),
    ).fetchone()
    return row is not None


def started(sql: Sql, conn: Any, game_id: str, account_id: int, seat: int, version: int, now: float) -> None:
    """Record that the account's hosted code plays its seat of the game (again, when it is handed over)."""
    sql.execute(
        conn,
        "INSERT INTO arena_seat_logs (game_id, account_id, seat, version, outcome, started_at) "
        "VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (game_id, account_id) DO UPDATE SET version = excluded.version",
        (game_id, account_id, seat, version, PLAYING, now),
    )


def ended(
    sql: Sql,
    conn: Any,
    game_id: str,
    account_id: int,
    seat: int,
    version: int,
    outcome: str,
    failed: bool,
    log: str,
    truncated: bool,
    now: float,
) -> bool:
    """Record how the seat ended, with its log; False (nothing written) when its end was recorded already
    (a report sent twice)."""
    row = sql.execute(
        conn,
        "SELECT ended_at FROM arena_seat_logs WHERE game_id = ? AND account_id = ?",
        (game_id, account_id),
    ).fetchone()
    if row is not None and row[0] is not None:
        return False
    if row is None:
        started(sql, conn, game_id, account_id, seat, version, now)
    sql.execute(
        conn,
        "UPDATE arena_seat_logs SET version = ?, outcome = ?, failed = ?, log = ?, truncated = ?, "
        "ended_at = ? "
        "WHERE game_id = ? AND account_id = ?",
        (version, outcome, int(failed), log, int(truncated), now, game_id, account_id),
    )
    return True


def seat_log(sql: Sql, conn: Any, account_id: int, game_id: str) -> SeatLog | None:
    """The account's hosted seat of the game, or None (not its game, or not played by its hosted code)."""
    row = sql.execute(
        conn,
        "SELECT seat, version, outcome, log, truncated FROM arena_seat_logs "
        "WHERE game_id = ? AND account_id = ?",
        (game_id, account_id),
    ).fetchone()
    if row is None:
        return None
    return SeatLog(game_id, int(row[0]), int(row[1]), str(row[2]), str(row[3]), bool(row[4]))


def started_since(sql: Sql, conn: Any, account_id: int, since: float) -> int:
    """How many hosted games of the account started after ``since``."""
    row = sql.execute(
        conn,
        "SELECT count(*) FROM arena_seat_logs WHERE account_id = ? AND started_at > ?",
        (account_id, since),
    ).fetchone()
    return int(row[0])
