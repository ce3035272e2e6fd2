"""The sandbox workers' leases (table ``arena_leases``): leasing a build or a bot to host, renewing and
releasing a lease, the reports that end a build or a hosted seat, and the seek key of a host lease.

One row per job: ``build:ACCOUNT:VERSION`` or ``host:ACCOUNT``. A worker takes a job by inserting its row
(``ON CONFLICT DO NOTHING``), or by taking over the row of an expired lease with one update conditioned on
the old lease's id and expiry, so replicas on one database never lease one job twice. A lease lives until
``expires_at``; a host lease keeps the seat of the game its worker reported started, which the next lease
of the bot carries (``resume``) while that game is active.

A build lease that expires (its worker was lost, or stopped renewing it: a build that hangs or kills its
worker) is counted against its version when the next worker takes the build over; at the arena's
``--hosted-max-failures`` such leases the version is failed for good, with a sentence its author reads.

Each function runs in the caller's transaction (:meth:`kutnahora.arena.store.ArenaStore._run`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kutnahora.arena import built, seat_logs, submissions
from kutnahora.arena.accounts import ACCOUNT_COLUMNS, Account, account_from_row
from kutnahora.arena.sql import Sql

BUILD, HOST = "build", "host"
HOUR_SECONDS = 3600.0


@dataclass(frozen=True, slots=True)
class ReportedSeat:
    """The seat of a game a host lease's worker reported started."""

    server: str
    game_id: str
    seat: int
    token: str


@dataclass(frozen=True, slots=True)
class Lease:
    """A lease as stored (live or expired)."""

    lease_id: str
    kind: str
    account_id: int
    bot_name: str
    version: int
    expires_at: float
    seat: ReportedSeat | None


@dataclass(frozen=True, slots=True)
class BuildWork:
    """A build leased."""

    bot_name: str
    version: int
    digest: str


@dataclass(frozen=True, slots=True)
class HostWork:
    """A bot leased to host."""

    bot_name: str
    version: int
    digest: str
    pools: tuple[str, ...]
    resume: ReportedSeat | None
    games_left: int
    built: built.Built | None = None


class LeaseGone(Exception):
    """The lease expired and was taken over, was released, or never existed."""


class NotItsSeat(Exception):
    """The game has no such seat of the lease's bot."""


class NotItsBuild(Exception):
    """A build's report names a built folder the arena does not keep for that version's archive."""


def expired_builds_reason(count: int) -> str:
    """The sentence a version failed after ``count`` expired build leases carries."""
    return (
        f"its build did not finish on {count} workers' leases: each worker was lost or stopped answering "
        "while it built (a build that hangs, or takes its worker down), so it is not built again"
    )


def _seat(row: Sequence[Any]) -> ReportedSeat | None:
    """The reported seat from (server, game, seat, token) columns."""
    if row[1] is None:
        return None
    return ReportedSeat(str(row[0]), str(row[1]), int(row[2]), str(row[3]))


def lease(sql: Sql, conn: Any, lease_id: str) -> Lease | None:
    """The lease with this id (live or expired), or None."""
    row = sql.execute(
        conn,
        "SELECT l.lease_id, l.kind, l.account_id, a.name, l.version, l.expires_at, l.server, l.game_id, "
        "l.seat, l.seat_token FROM arena_leases l JOIN arena_accounts a ON a.account_id = l.account_id "
        "WHERE l.lease_id = ?",
        (lease_id,),
    ).fetchone()
    if row is None:
        return None
    return Lease(
        str(row[0]), str(row[1]), int(row[2]), str(row[3]), int(row[4]), float(row[5]), _seat(row[6:])
    )


def _claim(
    sql: Sql,
    conn: Any,
    job: str,
    previous: str | None,
    values: dict[str, Any],
    now: float,
) -> bool:
    """Take a job: insert its row, or take over the expired lease ``previous``; False when another
    lease holds it."""
    if previous is None:
        columns = ", ".join(["job", *values])
        marks = ", ".join("?" for _ in range(len(values) + 1))
        cursor = sql.execute(
            conn,
            f"INSERT INTO arena_leases ({columns}) VALUES ({marks}) ON CONFLICT (job) DO NOTHING",
            (job, *values.values()),
        )
    else:
        assignments = ", ".join(f"{column} = ?" for column in values)
        cursor = sql.execute(
            conn,
            f"UPDATE arena_leases SET {assignments} WHERE job = ? AND lease_id = ? AND expires_at <= ?",
            (*values.values(), job, previous, now),
        )
    return int(cursor.rowcount) == 1


def lease_build(
    sql: Sql,
    conn: Any,
    lease_id: str,
    worker: str,
    now: float,
    lease_time: float,
    max_expiries: int = 0,
) -> BuildWork | None:
    """Lease the oldest version still to build that no live lease holds, or None. Taking over an
    expired build lease counts it against the version; at ``max_expiries`` (0: no limit) the version is
    failed instead (:func:`expired_builds_reason`) and the next one is tried."""
    rows = sql.execute(
        conn,
        "SELECT v.account_id, a.name, v.version, v.digest, l.lease_id FROM arena_versions v "
        "JOIN arena_accounts a ON a.account_id = v.account_id "
        "LEFT JOIN arena_leases l ON l.kind = 'build' AND l.account_id = v.account_id "
        "AND l.version = v.version WHERE v.state = 'building' AND (l.lease_id IS NULL OR l.expires_at <= ?) "
        "ORDER BY v.submitted_at, v.account_id, v.version LIMIT 20",
        (now,),
    ).fetchall()
    for account_id, name, version, digest, previous in rows:
        values = {
            "lease_id": lease_id,
            "kind": BUILD,
            "account_id": int(account_id),
            "version": int(version),
            "worker": worker,
            "seek_key_hash": None,
            "expires_at": now + lease_time,
        }
        job = f"build:{int(account_id)}:{int(version)}"
        if not _claim(sql, conn, job, None if previous is None else str(previous), values, now):
            continue
        if previous is not None:
            sql.execute(
                conn,
                "UPDATE arena_versions SET build_expiries = build_expiries + 1 "
                "WHERE account_id = ? AND version = ?",
                (int(account_id), int(version)),
            )
            (expiries,) = sql.execute(
                conn,
                "SELECT build_expiries FROM arena_versions WHERE account_id = ? AND version = ?",
                (int(account_id), int(version)),
            ).fetchone()
            if max_expiries and int(expiries) >= max_expiries:
                sql.execute(
                    conn,
                    "UPDATE arena_versions SET state = ?, reason = ?, built_at = ? "
                    "WHERE account_id = ? AND version = ? AND state = 'building'",
                    (
                        submissions.FAILED,
                        expired_builds_reason(int(expiries)),
                        now,
                        int(account_id),
                        int(version),
                    ),
                )
                sql.execute(conn, "DELETE FROM arena_leases WHERE lease_id = ?", (lease_id,))
                continue
        return BuildWork(str(name), int(version), str(digest))
    return None


def lease_host(
    sql: Sql,
    conn: Any,
    lease_id: str,
    worker: str,
    seek_key_hash: str,
    now: float,
    lease_time: float,
    per_hour: int,
    pools: Sequence[str],
) -> HostWork | None:
    """Lease a bot to host, or None: one with a ready version, not paused, revoked or a house bot,
    without a live host lease and with games left this hour, those with a seat to resume first (even
    with no games left: that game was counted when it started), then the one hosted least recently."""
    rows = sql.execute(
        conn,
        "SELECT a.account_id, a.name, h.pools, h.hosted_at, l.lease_id, l.server, l.game_id, l.seat, "
        "l.seat_token, (SELECT g.status FROM arena_games g WHERE g.game_id = l.game_id), "
        "(SELECT count(*) FROM arena_seat_logs s WHERE s.account_id = a.account_id AND s.started_at > ?), "
        "(SELECT max(v.version) FROM arena_versions v WHERE v.account_id = a.account_id "
        "AND v.state = 'ready') FROM arena_hosting h JOIN arena_accounts a ON a.account_id = h.account_id "
        "LEFT JOIN arena_leases l ON l.kind = 'host' AND l.account_id = a.account_id "
        "WHERE h.paused = 0 AND a.house = 0 AND a.revoked = 0 AND (l.lease_id IS NULL OR l.expires_at <= ?) "
        "AND EXISTS (SELECT 1 FROM arena_versions r WHERE r.account_id = a.account_id AND r.state = 'ready')",
        (now - HOUR_SECONDS, now),
    ).fetchall()
    candidates = []
    for row in rows:
        resume = _seat(row[5:9]) if row[9] == "active" else None
        games_left = max(0, per_hour - int(row[10]))
        stored = submissions.split_pools(str(row[2]))
        chosen = tuple(p for p in stored if p in pools) if stored else tuple(pools)
        if not chosen or (games_left == 0 and resume is None):
            continue
        candidates.append((resume is None, float(row[3]), int(row[0]), row, resume, games_left, chosen))
    for _, _, account_id, row, resume, games_left, chosen in sorted(candidates, key=lambda c: c[:3]):
        version = int(row[11])
        values = {
            "lease_id": lease_id,
            "kind": HOST,
            "account_id": account_id,
            "version": version,
            "worker": worker,
            "seek_key_hash": seek_key_hash,
            "expires_at": now + lease_time,
            "server": None if resume is None else resume.server,
            "game_id": None if resume is None else resume.game_id,
            "seat": None if resume is None else resume.seat,
            "seat_token": None if resume is None else resume.token,
        }
        if _claim(sql, conn, f"host:{account_id}", None if row[4] is None else str(row[4]), values, now):
            sql.execute(
                conn, "UPDATE arena_hosting SET hosted_at = ? WHERE account_id = ?", (now, account_id)
            )
            (digest,) = sql.execute(
                conn,
                "SELECT digest FROM arena_versions WHERE account_id = ? AND version = ?",
                (account_id, version),
            ).fetchone()
            found = built.of_version(sql, conn, account_id, version)
            return HostWork(str(row[1]), version, str(digest), chosen, resume, games_left, found)
    return None


def games_left(sql: Sql, conn: Any, account_id: int, per_hour: int, now: float) -> int:
    """The hosted games the account may still start this hour (the last 60 minutes)."""
    return max(0, per_hour - seat_logs.started_since(sql, conn, account_id, now - HOUR_SECONDS))


def wind_down_reason(sql: Sql, conn: Any, held: Lease, per_hour: int, now: float) -> str:
    """Why a host lease's worker should stop after its game in progress, or "" when it should go on."""
    row = sql.execute(
        conn,
        "SELECT a.revoked, COALESCE(h.paused, 0), COALESCE(h.paused_reason, ''), "
        "(SELECT max(v.version) FROM arena_versions v WHERE v.account_id = a.account_id "
        "AND v.state = 'ready') FROM arena_accounts a LEFT JOIN arena_hosting h "
        "ON h.account_id = a.account_id WHERE a.account_id = ?",
        (held.account_id,),
    ).fetchone()
    if row[0]:
        return f"the key of bot {held.bot_name!r} was revoked"
    if row[1]:
        return f"bot {held.bot_name!r} is paused ({row[2]})"
    if row[3] is not None and int(row[3]) > held.version:
        return f"version {int(row[3])} of bot {held.bot_name!r} is ready and plays from now on"
    if games_left(sql, conn, held.account_id, per_hour, now) == 0:
        return f"bot {held.bot_name!r} has started its {per_hour} hosted games of the hour"
    return ""


def renew(sql: Sql, conn: Any, lease_id: str, now: float, lease_time: float) -> Lease | None:
    """Extend a live lease by ``lease_time`` from now; None when it is no longer live."""
    cursor = sql.execute(
        conn,
        "UPDATE arena_leases SET expires_at = ? WHERE lease_id = ? AND expires_at > ?",
        (now + lease_time, lease_id, now),
    )
    if not cursor.rowcount:
        return None
    return lease(sql, conn, lease_id)


def live_build(sql: Sql, conn: Any, lease_id: str, now: float) -> tuple[Lease, str]:
    """A live build lease and the digest of its version's archive; :class:`LeaseGone` when the lease is
    not a live build lease."""
    held = lease(sql, conn, lease_id)
    if held is None or held.kind != BUILD or held.expires_at <= now:
        raise LeaseGone(lease_id)
    (source,) = sql.execute(
        conn,
        "SELECT digest FROM arena_versions WHERE account_id = ? AND version = ?",
        (held.account_id, held.version),
    ).fetchone()
    return held, str(source)


def report_build(
    sql: Sql,
    conn: Any,
    lease_id: str,
    ok: bool,
    reason: str,
    log: str,
    now: float,
    built_digest: str = "",
) -> tuple[Lease, bool]:
    """Record a build's result and log (and, when it built, the built folder ``built_digest`` its worker
    uploaded), and end its lease: the lease, and whether it was taken (False when the version was no
    longer building: a report sent twice); a version that built resumes its bot's hosted play.
    :class:`LeaseGone` when the lease is not a build lease the arena holds, :class:`NotItsBuild` (nothing
    written) when the arena keeps no built folder of that digest built from the version's archive."""
    held = lease(sql, conn, lease_id)
    if held is None or held.kind != BUILD:
        raise LeaseGone(lease_id)
    if ok and built_digest:
        found = built.find(sql, conn, built_digest)
        (source,) = sql.execute(
            conn,
            "SELECT digest FROM arena_versions WHERE account_id = ? AND version = ?",
            (held.account_id, held.version),
        ).fetchone()
        if found is None or found.source_digest != str(source):
            raise NotItsBuild(built_digest)
    cursor = sql.execute(
        conn,
        "UPDATE arena_versions SET state = ?, reason = ?, build_log = ?, built_at = ?, built_digest = ? "
        "WHERE account_id = ? AND version = ? AND state = 'building'",
        (
            submissions.READY if ok else submissions.FAILED,
            reason,
            log,
            now,
            built_digest if ok and built_digest else None,
            held.account_id,
            held.version,
        ),
    )
    taken = bool(cursor.rowcount)
    if taken and ok:
        submissions.set_paused(sql, conn, held.account_id, False, "")
    sql.execute(conn, "DELETE FROM arena_leases WHERE lease_id = ?", (lease_id,))
    return held, taken


def report_started(sql: Sql, conn: Any, lease_id: str, seat: ReportedSeat, now: float) -> Lease:
    """Record that a host lease's bot plays ``seat`` (kept for a handover); :class:`LeaseGone` unless the
    lease is a live host lease, :class:`NotItsSeat` unless the seat is its bot's."""
    held = lease(sql, conn, lease_id)
    if held is None or held.kind != HOST or held.expires_at <= now:
        raise LeaseGone(lease_id)
    if not seat_logs.is_seat_of(sql, conn, seat.game_id, seat.seat, held.account_id):
        raise NotItsSeat(seat.game_id)
    seat_logs.started(sql, conn, seat.game_id, held.account_id, seat.seat, held.version, now)
    sql.execute(
        conn,
        "UPDATE arena_leases SET server = ?, game_id = ?, seat = ?, seat_token = ? WHERE lease_id = ?",
        (seat.server, seat.game_id, seat.seat, seat.token, lease_id),
    )
    return held


def report_ended(
    sql: Sql,
    conn: Any,
    lease_id: str,
    game_id: str,
    seat: int,
    failure: str | None,
    log: str,
    truncated: bool,
    max_failures: int,
    now: float,
) -> tuple[Lease, bool, bool]:
    """Record how a hosted seat ended (``failure`` None: finished) with its log: a finished seat clears
    the bot's failures in a row, a failed one adds one and pauses the bot at ``max_failures``. The lease
    (live or expired, not taken over), whether the report was new (False: sent twice, nothing counted) and
    whether the bot is paused now. :class:`LeaseGone` and :class:`NotItsSeat` as
    :func:`report_started`."""
    held = lease(sql, conn, lease_id)
    if held is None or held.kind != HOST:
        raise LeaseGone(lease_id)
    if not seat_logs.is_seat_of(sql, conn, game_id, seat, held.account_id):
        raise NotItsSeat(game_id)
    outcome = seat_logs.FINISHED if failure is None else failure
    new = seat_logs.ended(
        sql,
        conn,
        game_id,
        held.account_id,
        seat,
        held.version,
        outcome,
        failure is not None,
        log,
        truncated,
        now,
    )
    if held.seat is not None and held.seat.game_id == game_id:
        sql.execute(
            conn,
            "UPDATE arena_leases SET server = NULL, game_id = NULL, seat = NULL, seat_token = NULL "
            "WHERE lease_id = ?",
            (lease_id,),
        )
    if new and failure is None:
        sql.execute(conn, "UPDATE arena_hosting SET failures = 0 WHERE account_id = ?", (held.account_id,))
    elif new:
        sql.execute(
            conn, "UPDATE arena_hosting SET failures = failures + 1 WHERE account_id = ?", (held.account_id,)
        )
        failures = submissions.hosting(sql, conn, held.account_id).failures
        if failures >= max_failures:
            why = f"paused after {failures} failures in a row; the last: {failure}"
            submissions.set_paused(sql, conn, held.account_id, True, why)
    return held, new, submissions.hosting(sql, conn, held.account_id).paused


def release(sql: Sql, conn: Any, lease_id: str, now: float) -> Lease | None:
    """End a lease (None when there was none). A host lease whose bot still plays a reported seat of an
    active game is kept as expired, without its seek key, so that the next lease of the bot resumes
    that seat."""
    held = lease(sql, conn, lease_id)
    if held is None:
        return None
    active = False
    if held.seat is not None:
        row = sql.execute(
            conn, "SELECT status FROM arena_games WHERE game_id = ?", (held.seat.game_id,)
        ).fetchone()
        active = row is not None and row[0] == "active"
    if active:
        sql.execute(
            conn,
            "UPDATE arena_leases SET expires_at = ?, seek_key_hash = NULL WHERE lease_id = ?",
            (min(now, held.expires_at), lease_id),
        )
    else:
        sql.execute(conn, "DELETE FROM arena_leases WHERE lease_id = ?", (lease_id,))
    return held


def seek_key_account(sql: Sql, conn: Any, key_hash: str, now: float) -> tuple[Account, bool] | None:
    """The account of the host lease whose seek key hashes to ``key_hash``, and whether the lease lives;
    None when no lease has that key."""
    columns = ", ".join(f"a.{c.strip()}" for c in ACCOUNT_COLUMNS.split(","))
    row = sql.execute(
        conn,
        f"SELECT {columns}, l.expires_at FROM arena_leases l "
        "JOIN arena_accounts a ON a.account_id = l.account_id WHERE l.seek_key_hash = ? AND l.kind = 'host'",
        (key_hash,),
    ).fetchone()
    if row is None:
        return None
    return account_from_row(row[:6]), float(row[6]) > now


def live_leases(sql: Sql, conn: Any, now: float) -> dict[str, int]:
    """How many leases of each kind live now."""
    rows = sql.execute(
        conn, "SELECT kind, count(*) FROM arena_leases WHERE expires_at > ? GROUP BY kind", (now,)
    ).fetchall()
    counts = {BUILD: 0, HOST: 0}
    counts.update({str(r[0]): int(r[1]) for r in rows})
    return counts
