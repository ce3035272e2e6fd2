"""Matchmaking tickets shared by replicas on one PostgreSQL database (table ``arena_tickets``): each
replica writes its own tickets and keeps them alive, the one replica running the matchmaker fills in a
ticket's match (seat token included), and the owner takes the match, hands it to its bot and deletes the
row in one step.

Each function runs in the caller's transaction (:meth:`kutnahora.arena.store.ArenaStore._run`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from kutnahora.arena.sql import Sql

TICKET_STALE_SECONDS = 5.0
"""A shared ticket whose replica has not renewed it for this long is dead (its replica is gone)."""


def add_ticket(sql: Sql, conn: Any, ticket_id: str, account_id: int, pool: str) -> bool:
    """Store a ticket; False (nothing written) when the account holds one in the pool already."""
    now = time.time()
    held = sql.execute(
        conn,
        "SELECT heartbeat FROM arena_tickets WHERE account_id = ? AND pool = ?",
        (account_id, pool),
    ).fetchone()
    if held is not None:
        if float(held[0]) > now - TICKET_STALE_SECONDS:
            return False
        sql.execute(  # left behind by a replica that died
            conn, "DELETE FROM arena_tickets WHERE account_id = ? AND pool = ?", (account_id, pool)
        )
    sql.execute(
        conn,
        "INSERT INTO arena_tickets (ticket_id, account_id, pool, opened_at, heartbeat) "
        "VALUES (?, ?, ?, ?, ?)",
        (ticket_id, account_id, pool, now, now),
    )
    return True


def heartbeat(sql: Sql, conn: Any, ticket_ids: Sequence[str]) -> list[tuple[str, str, str, int, str, str]]:
    """Mark these tickets alive, and take those matched: (ticket, server, game, seat, token, names).

    A matched ticket's row is deleted in the same transaction that reads its match (``DELETE …
    RETURNING``), before the replica hands the seat to its bot: once a bot holds its seat, no row of
    that ticket is left to refuse the bot's next Seek, on this replica or any other. A match written
    by the matchmaker between two heartbeats is taken whole by the next one."""
    marks = ", ".join("?" for _ in ticket_ids)
    sql.execute(
        conn,
        f"UPDATE arena_tickets SET heartbeat = ? WHERE ticket_id IN ({marks})",
        (time.time(), *ticket_ids),
    )
    rows = sql.execute(
        conn,
        f"DELETE FROM arena_tickets WHERE game_id IS NOT NULL AND ticket_id IN ({marks}) "
        "RETURNING ticket_id, server, game_id, seat, seat_token, seat_names",
        tuple(ticket_ids),
    ).fetchall()
    return [(str(r[0]), str(r[1]), str(r[2]), int(r[3]), str(r[4]), str(r[5])) for r in rows]


def open_tickets(sql: Sql, conn: Any) -> list[tuple[str, int, str, float, bool, str]]:
    """Every live, unmatched ticket: (ticket, account, pool, opened at, house, account name)."""
    rows = sql.execute(
        conn,
        "SELECT t.ticket_id, t.account_id, t.pool, t.opened_at, a.house, a.name FROM arena_tickets t "
        "JOIN arena_accounts a ON a.account_id = t.account_id "
        "WHERE t.game_id IS NULL AND t.heartbeat > ?",
        (time.time() - TICKET_STALE_SECONDS,),
    ).fetchall()
    return [(str(r[0]), int(r[1]), str(r[2]), float(r[3]), bool(r[4]), str(r[5])) for r in rows]


def remove_ticket(sql: Sql, conn: Any, ticket_id: str) -> None:
    """Delete a ticket (withdrawn, or its match delivered)."""
    sql.execute(conn, "DELETE FROM arena_tickets WHERE ticket_id = ?", (ticket_id,))


def match_ticket(
    sql: Sql, conn: Any, ticket_id: str, server: str, game_id: str, seat: int, token: str, names: str
) -> None:
    """Write a ticket's match for its replica to deliver."""
    sql.execute(
        conn,
        "UPDATE arena_tickets SET server = ?, game_id = ?, seat = ?, seat_token = ?, seat_names = ? "
        "WHERE ticket_id = ?",
        (server, game_id, seat, token, names, ticket_id),
    )
