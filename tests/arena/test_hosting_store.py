"""The hosted bots' tables on SQLite and on PostgreSQL: an arena store of schema 3 migrated with its
accounts kept, two stores (two replicas) that never lease one job twice, and the failures in a row that a
finished seat clears and that pause a bot at the limit."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from kutnahora.arena import schema
from kutnahora.arena.host_leases import BuildWork, HostWork, NotItsSeat, ReportedSeat
from kutnahora.arena.store import ArenaStore
from kutnahora.plumbing.migrations import Schema
from tests.store.pg import fresh_schema

POOLS = ("2", "3")


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "arena.db")
    else:
        with fresh_schema("kh_arena_hosted") as url:
            yield url


async def lease(store: ArenaStore, lease_id: str, *, build: bool, host: bool) -> BuildWork | HostWork | None:
    return await store.lease_work(
        lease_id,
        "worker",
        build=build,
        host=host,
        seek_key_hash=f"hash-{lease_id}",
        lease_time=30,
        per_hour=60,
        pools=POOLS,
    )


def test_a_store_of_schema_3_is_migrated_with_its_accounts(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    old = Schema(
        table="arena_schema_version",
        steps=schema.MIGRATIONS[:3],
        lock_key=schema.MIGRATION_LOCK_KEY,
        refusal="{found} {known}",
    )
    old.migrate(
        conn, postgres=False, statement=lambda t: t.replace("{ID}", "INTEGER PRIMARY KEY AUTOINCREMENT")
    )
    conn.execute(
        "INSERT INTO arena_accounts (name, key_hash, revoked, house, created_at) VALUES ('old', 'h', 0, 0, 1)"
    )
    conn.commit()
    conn.close()

    async def reopen() -> None:
        store = ArenaStore(str(path))
        await store.open()
        try:
            account = await store.account_by_name("old")
            assert account is not None
            version, created = await store.submit(account.account_id, b"archive", "d" * 64, "c", [], 5)
            assert created and version.version == 1
        finally:
            await store.close()

    asyncio.run(reopen())
    versions = sqlite3.connect(path).execute("SELECT max(version) FROM arena_schema_version").fetchone()
    assert versions == (schema.SCHEMA_VERSION,) and schema.SCHEMA_VERSION == 5


async def test_two_stores_never_lease_one_job_twice(db: str) -> None:
    """Replicas on PostgreSQL lease at once through their own connections; one SQLite arena (a file for
    one process) leases through its one connection, the calls at once all the same."""
    one = ArenaStore(db)
    stores = [one, ArenaStore(db) if one.postgres else one]
    for store in set(stores):
        await store.open()
    try:
        first, second = stores
        alice = await first.register("alice", "hash-a")
        await first.submit(alice.account_id, b"one", "1" * 64, "python", [], 5)
        builds = await asyncio.gather(
            *(lease(stores[n % 2], f"build-{n}", build=True, host=False) for n in range(10))
        )
        taken = [work for work in builds if work is not None]
        assert len(taken) == 1 and isinstance(taken[0], BuildWork) and taken[0].version == 1
        winner = next(f"build-{n}" for n, work in enumerate(builds) if work is not None)
        held, recorded = await second.report_build(winner, True, "", "log")
        assert recorded and held.version == 1
        hosts = await asyncio.gather(
            *(lease(stores[n % 2], f"host-{n}", build=True, host=True) for n in range(10))
        )
        taken = [work for work in hosts if work is not None]
        assert len(taken) == 1 and isinstance(taken[0], HostWork)
        assert taken[0].pools == POOLS and taken[0].games_left == 60
        assert await first.live_leases() == {"build": 0, "host": 1}
        host_id = next(f"host-{n}" for n, work in enumerate(hosts) if work is not None)
        found = await second.seek_key_account(f"hash-{host_id}")
        assert found is not None and found[0].name == "alice" and found[1]
    finally:
        for store in set(stores):
            await store.close()


async def test_a_finished_seat_clears_the_failures_in_a_row(db: str) -> None:
    store = ArenaStore(db)
    await store.open()
    try:
        bot = await store.register("bot", "hash-b")
        rival = await store.register("rival", "hash-r")
        await store.submit(bot.account_id, b"code", "2" * 64, "go", ["2"], 5)
        assert isinstance(await lease(store, "b", build=True, host=False), BuildWork)
        await store.report_build("b", True, "", "")
        assert isinstance(await lease(store, "h", build=False, host=True), HostWork)
        outcomes = [None, "crash 1", "crash 2", None, "crash 3", "crash 4", "crash 5"]
        paused = []
        for n, failure in enumerate(outcomes):
            game = f"game-{n}"
            await store.record_game(game, "2", "s:1", [rival.account_id, bot.account_id])
            await store.report_started("h", ReportedSeat("s:1", game, 1, "token"))
            _, new, now_paused = await store.report_ended("h", game, 1, failure, "log", False, 3)
            assert new
            paused.append(now_paused)
        assert paused == [False, False, False, False, False, False, True]
        hosting = await store.hosting(bot.account_id)
        assert hosting.paused_reason == "paused after 3 failures in a row; the last: crash 5"
        assert hosting.pools == ("2",)
        _, new, _ = await store.report_ended("h", "game-6", 1, "crash 5", "log", False, 3)
        assert not new, "a report sent twice is counted once"
        await store.record_game("not-its", "2", "s:1", [rival.account_id, rival.account_id])
        with pytest.raises(NotItsSeat):
            await store.report_started("h", ReportedSeat("s:1", "not-its", 1, "token"))
        resumed = await store.set_paused(bot.account_id, False)
        assert not resumed.paused and resumed.failures == 0 and resumed.paused_reason == ""
    finally:
        await store.close()
