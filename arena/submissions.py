"""Hosted bots' code and settings (tables ``arena_archives``, ``arena_versions`` and ``arena_hosting``):
keeping a submitted archive as a new version (or finding the version it already is), an account's
versions with their builds, its hosting settings (pools, paused and why), and the version each hosted
account plays.

A version is ``building`` until a worker reports its build, then ``ready`` or ``failed``; the newest ready
version of an account that is not paused is the one played. An archive is stored once per digest, however
many accounts submit it.

Each function runs in the caller's transaction (:meth:`kutnahora.arena.store.ArenaStore._run`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kutnahora.arena.sql import Sql

DAY_SECONDS = 86_400.0
"""The window of the daily allowance of versions: the last 24 hours."""

BUILDING, READY, FAILED = "building", "ready", "failed"

VERSION_COLUMNS = (
    "v.version, v.digest, v.size_bytes, v.language, v.submitted_at, v.state, v.reason, "
    "(SELECT count(*) FROM arena_seat_logs s JOIN arena_games g ON g.game_id = s.game_id "
    "WHERE s.account_id = v.account_id AND s.version = v.version AND g.status = 'finished')"
)


@dataclass(frozen=True, slots=True)
class Version:
    """One version of an account's hosted code; ``games`` counts the rated games it played."""

    version: int
    digest: str
    size_bytes: int
    language: str
    submitted_at: float
    state: str
    reason: str
    games: int


@dataclass(frozen=True, slots=True)
class Hosting:
    """An account's hosting settings: its pools (empty: every pool), whether it is paused and why, and its
    failed seats in a row."""

    pools: tuple[str, ...] = ()
    paused: bool = False
    paused_reason: str = ""
    failures: int = 0


class OverAllowance(Exception):
    """The account submitted its daily allowance of versions; ``retry_after`` seconds until one is free."""

    def __init__(self, count: int, retry_after: float) -> None:
        super().__init__(f"{count} versions in the last 24 hours")
        self.count = count
        self.retry_after = retry_after


def _version(row: Sequence[Any]) -> Version:
    return Version(
        int(row[0]),
        str(row[1]),
        int(row[2]),
        str(row[3]),
        float(row[4]),
        str(row[5]),
        str(row[6]),
        int(row[7]),
    )


def join_pools(pools: Sequence[str]) -> str:
    """Pools as ``arena_hosting.pools`` holds them."""
    return ",".join(pools)


def split_pools(text: str) -> tuple[str, ...]:
    """Pools from ``arena_hosting.pools``."""
    return tuple(p for p in text.split(",") if p)


def submit(
    sql: Sql,
    conn: Any,
    account_id: int,
    archive: bytes,
    digest: str,
    language: str,
    pools: Sequence[str],
    per_day: int,
    now: float,
) -> tuple[Version, bool]:
    """Keep an archive as the account's next version, and its pools as the account's: the version and
    True; or the account's version of that digest and False (its pools are set all the same);
    :class:`OverAllowance` (nothing written) when the account submitted ``per_day`` versions in the last
    24 hours."""
    existing = sql.execute(
        conn,
        f"SELECT {VERSION_COLUMNS} FROM arena_versions v WHERE v.account_id = ? AND v.digest = ?",
        (account_id, digest),
    ).fetchone()
    if existing is not None:
        set_pools(sql, conn, account_id, pools)
        return _version(existing), False
    count, oldest = sql.execute(
        conn,
        "SELECT count(*), min(submitted_at) FROM arena_versions WHERE account_id = ? AND submitted_at > ?",
        (account_id, now - DAY_SECONDS),
    ).fetchone()
    if int(count) >= per_day:
        raise OverAllowance(int(count), max(1.0, float(oldest) + DAY_SECONDS - now))
    sql.execute(
        conn,
        "INSERT INTO arena_archives (digest, archive, size_bytes, stored_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (digest) DO NOTHING",
        (digest, archive, len(archive), now),
    )
    (number,) = sql.execute(
        conn, "SELECT COALESCE(max(version), 0) + 1 FROM arena_versions WHERE account_id = ?", (account_id,)
    ).fetchone()
    sql.execute(
        conn,
        "INSERT INTO arena_versions (account_id, version, digest, state, language, size_bytes, submitted_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (account_id, int(number), digest, BUILDING, language, len(archive), now),
    )
    set_pools(sql, conn, account_id, pools)
    return Version(int(number), digest, len(archive), language, now, BUILDING, "", 0), True


def set_pools(sql: Sql, conn: Any, account_id: int, pools: Sequence[str]) -> None:
    """Set the pools the account's hosted games are sought in (empty: every pool)."""
    sql.execute(
        conn,
        "INSERT INTO arena_hosting (account_id, pools) VALUES (?, ?) "
        "ON CONFLICT (account_id) DO UPDATE SET pools = excluded.pools",
        (account_id, join_pools(pools)),
    )


def versions(sql: Sql, conn: Any, account_id: int) -> list[Version]:
    """The account's versions, newest first."""
    rows = sql.execute(
        conn,
        f"SELECT {VERSION_COLUMNS} FROM arena_versions v WHERE v.account_id = ? ORDER BY v.version DESC",
        (account_id,),
    ).fetchall()
    return [_version(row) for row in rows]


def version(sql: Sql, conn: Any, account_id: int, number: int) -> tuple[Version, str] | None:
    """One of the account's versions and its build log, or None."""
    row = sql.execute(
        conn,
        f"SELECT {VERSION_COLUMNS}, v.build_log FROM arena_versions v "
        "WHERE v.account_id = ? AND v.version = ?",
        (account_id, number),
    ).fetchone()
    return None if row is None else (_version(row), str(row[8]))


def hosting(sql: Sql, conn: Any, account_id: int) -> Hosting:
    """The account's hosting settings (the defaults when it never submitted)."""
    row = sql.execute(
        conn,
        "SELECT pools, paused, paused_reason, failures FROM arena_hosting WHERE account_id = ?",
        (account_id,),
    ).fetchone()
    if row is None:
        return Hosting()
    return Hosting(split_pools(str(row[0])), bool(row[1]), str(row[2]), int(row[3]))


def set_paused(sql: Sql, conn: Any, account_id: int, paused: bool, reason: str) -> None:
    """Pause (with ``reason``) or resume the account's hosted play; resuming clears its failures in a
    row. Pausing a paused account keeps the reason it has."""
    if paused:
        sql.execute(
            conn,
            "INSERT INTO arena_hosting (account_id, paused, paused_reason) VALUES (?, 1, ?) "
            "ON CONFLICT (account_id) DO UPDATE SET paused_reason = CASE WHEN arena_hosting.paused = 1 "
            "THEN arena_hosting.paused_reason ELSE excluded.paused_reason END, paused = 1",
            (account_id, reason),
        )
    else:
        sql.execute(
            conn,
            "INSERT INTO arena_hosting (account_id) VALUES (?) ON CONFLICT (account_id) DO UPDATE SET "
            "paused = 0, paused_reason = '', failures = 0",
            (account_id,),
        )


def playing_versions(sql: Sql, conn: Any, account_ids: Sequence[int]) -> dict[int, int]:
    """The version each of these accounts plays now: its newest ready version, for an account that is
    not paused, revoked or a house bot (the others are not listed)."""
    if not account_ids:
        return {}
    marks = ", ".join("?" for _ in account_ids)
    rows = sql.execute(
        conn,
        "SELECT v.account_id, max(v.version) FROM arena_versions v "
        "JOIN arena_accounts a ON a.account_id = v.account_id "
        "LEFT JOIN arena_hosting h ON h.account_id = v.account_id "
        f"WHERE v.state = 'ready' AND a.revoked = 0 AND a.house = 0 AND COALESCE(h.paused, 0) = 0 "
        f"AND v.account_id IN ({marks}) GROUP BY v.account_id",
        tuple(account_ids),
    ).fetchall()
    return {int(r[0]): int(r[1]) for r in rows}


def archive(sql: Sql, conn: Any, digest: str) -> bytes | None:
    """The archive of this digest, or None."""
    row = sql.execute(conn, "SELECT archive FROM arena_archives WHERE digest = ?", (digest,)).fetchone()
    return None if row is None else bytes(row[0])
