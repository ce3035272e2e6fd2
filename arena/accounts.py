"""The arena's accounts: registering a bot, finding it by name or by its key's hash, replacing or revoking
its key (table ``arena_accounts``).

Each function runs in the caller's transaction (:meth:`kutnahora.arena.store.ArenaStore._run`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kutnahora.arena.sql import Sql

ACCOUNT_COLUMNS = "account_id, name, key_hash, revoked, house, created_at"


class NameTaken(Exception):
    """Another account has the name."""


@dataclass(frozen=True, slots=True)
class Account:
    """A registered bot."""

    account_id: int
    name: str
    key_hash: str
    revoked: bool
    house: bool
    created_at: float


def account_from_row(row: Sequence[Any]) -> Account:
    """An account from the columns of :data:`ACCOUNT_COLUMNS`, in order."""
    return Account(int(row[0]), str(row[1]), str(row[2]), bool(row[3]), bool(row[4]), float(row[5]))


def register(sql: Sql, conn: Any, name: str, key_hash: str, house: bool = False) -> Account:
    """Create an account; :class:`NameTaken` when the name is taken (nothing is written then)."""
    taken = sql.execute(conn, "SELECT 1 FROM arena_accounts WHERE name = ?", (name,)).fetchone()
    if taken is not None:
        raise NameTaken(name)
    sql.execute(
        conn,
        "INSERT INTO arena_accounts (name, key_hash, revoked, house, created_at) VALUES (?, ?, 0, ?, ?)",
        (name, key_hash, int(house), time.time()),
    )
    row = sql.execute(
        conn, f"SELECT {ACCOUNT_COLUMNS} FROM arena_accounts WHERE name = ?", (name,)
    ).fetchone()
    return account_from_row(row)


def account_by_key_hash(sql: Sql, conn: Any, key_hash: str) -> Account | None:
    """The account whose key hashes to ``key_hash`` (revoked or not), or None."""
    row = sql.execute(
        conn, f"SELECT {ACCOUNT_COLUMNS} FROM arena_accounts WHERE key_hash = ?", (key_hash,)
    ).fetchone()
    return None if row is None else account_from_row(row)


def account_by_name(sql: Sql, conn: Any, name: str) -> Account | None:
    """The account with this name, or None."""
    row = sql.execute(
        conn, f"SELECT {ACCOUNT_COLUMNS} FROM arena_accounts WHERE name = ?", (name,)
    ).fetchone()
    return None if row is None else account_from_row(row)


def set_key(sql: Sql, conn: Any, account_id: int, key_hash: str) -> None:
    """Replace an account's key (a revoked account stays revoked)."""
    sql.execute(conn, "UPDATE arena_accounts SET key_hash = ? WHERE account_id = ?", (key_hash, account_id))


def revoke(sql: Sql, conn: Any, account_id: int) -> None:
    """Revoke an account's key for good."""
    sql.execute(conn, "UPDATE arena_accounts SET revoked = 1 WHERE account_id = ?", (account_id,))


def account_count(sql: Sql, conn: Any) -> int:
    """How many accounts exist."""
    return int(sql.execute(conn, "SELECT count(*) FROM arena_accounts").fetchone()[0])
