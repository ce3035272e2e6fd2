"""Built folders (tables ``arena_built`` and ``arena_built_chunks``): a version built once, for every worker.

The worker that builds a version uploads the folder it built (a gzip'd tar) under its build lease; the
arena keeps it by its own SHA-256, once however often it is uploaded, with the digest of the archive it
was built from and the platform it was built on (the worker's description: a worker on another platform
builds the version itself), its bytes in chunks of at most :data:`CHUNK_BYTES`, in order. The build's
report then names it (``arena_versions.built_digest``), and every host lease of that version carries it.

Each function runs in the caller's transaction (:meth:`kutnahora.arena.store.ArenaStore._run`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kutnahora.arena.sql import Sql

BUILT_MAX_BYTES = 256 << 20
"""The default of the arena's ``--built-max-bytes``: the largest built folder kept."""
CHUNK_BYTES = 1 << 20
"""The most bytes of one stored chunk (and of one message of PutBuilt and GetBuilt)."""


@dataclass(frozen=True, slots=True)
class Built:
    """A built folder as kept: its digest, the archive it was built from, its platform, size and chunks."""

    digest: str
    source_digest: str
    platform: str
    size_bytes: int
    chunks: int


COLUMNS = "digest, source_digest, platform, size_bytes, chunks"


def _built(row: Any) -> Built:
    return Built(str(row[0]), str(row[1]), str(row[2]), int(row[3]), int(row[4]))


def find(sql: Sql, conn: Any, digest: str) -> Built | None:
    """The built folder of this digest, or None."""
    row = sql.execute(conn, f"SELECT {COLUMNS} FROM arena_built WHERE digest = ?", (digest,)).fetchone()
    return None if row is None else _built(row)


def put(
    sql: Sql,
    conn: Any,
    digest: str,
    source_digest: str,
    platform: str,
    size_bytes: int,
    chunks: Iterable[bytes],
    now: float,
) -> bool:
    """Keep a built folder's bytes (``chunks``, in order); False when that digest is kept already
    (nothing written)."""
    if find(sql, conn, digest) is not None:
        return False
    sql.execute(
        conn,
        "INSERT INTO arena_built (digest, source_digest, platform, size_bytes, chunks, stored_at) "
        "VALUES (?, ?, ?, ?, 0, ?)",
        (digest, source_digest, platform, size_bytes, now),
    )
    count = 0
    for data in chunks:
        sql.execute(
            conn,
            "INSERT INTO arena_built_chunks (digest, seq, data) VALUES (?, ?, ?)",
            (digest, count, data),
        )
        count += 1
    sql.execute(conn, "UPDATE arena_built SET chunks = ? WHERE digest = ?", (count, digest))
    return True


def chunk(sql: Sql, conn: Any, digest: str, seq: int) -> bytes | None:
    """The ``seq``-th chunk of a built folder (from 0), or None."""
    row = sql.execute(
        conn, "SELECT data FROM arena_built_chunks WHERE digest = ? AND seq = ?", (digest, seq)
    ).fetchone()
    return None if row is None else bytes(row[0])


def of_version(sql: Sql, conn: Any, account_id: int, version: int) -> Built | None:
    """The built folder a version's build reported, or None."""
    row = sql.execute(
        conn,
        f"SELECT {', '.join('b.' + c for c in COLUMNS.split(', '))} FROM arena_versions v "
        "JOIN arena_built b ON b.digest = v.built_digest WHERE v.account_id = ? AND v.version = ?",
        (account_id, version),
    ).fetchone()
    return None if row is None else _built(row)
