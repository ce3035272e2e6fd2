"""The arena store on SQLite and on PostgreSQL: migrations, accounts, one-transaction results, restart."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from kutnahora.arena.ratings import RatedGame, rate, recompute
from kutnahora.arena.store import SCHEMA_VERSION, ArenaStore, NameTaken
from kutnahora.plumbing.errors import StoreError
from tests.store.pg import fresh_schema


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "arena.db")
    else:
        with fresh_schema("kh_arena") as url:
            yield url


async def test_accounts_games_and_ratings_survive_reopening(db: str) -> None:
    store = ArenaStore(db)
    await store.open()
    alice = await store.register("alice", "hash-a")
    bob = await store.register("bob", "hash-b", house=True)
    with pytest.raises(NameTaken):
        await store.register("alice", "hash-c")
    assert await store.account_count() == 2
    await store.record_game("g1", "2", "s:1", [alice.account_id, bob.account_id])
    after = await store.rate_game(
        "g1", "2", [alice.account_id, bob.account_id], [2, 1], lambda b: rate(b, [2, 1])
    )
    assert after is not None and after[1].mu > after[0].mu
    assert await store.seat_counts("2", [alice.account_id]) == {alice.account_id: [1, 0, 0, 0]}
    await store.close()

    store = ArenaStore(db)
    await store.open()  # migrating again is a no-op
    found = await store.account_by_key_hash("hash-b")
    assert found is not None and found.name == "bob" and found.house
    assert await store.stored_ratings() == recompute([RatedGame("2", "g1", (("alice", 2), ("bob", 1)))])
    entries, total = await store.leaderboard("2", 0, 10)
    assert total == 2 and [a.name for a, _ in entries] == ["bob", "alice"]
    ratings, history, games = await store.profile(alice.account_id)
    assert ratings["2"].games == 1 and len(history) == 1 and games[0].seat_names == ("alice", "bob")
    await store.close()


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    store = ArenaStore(str(path))
    await store.open()
    await store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO arena_schema_version VALUES (?, 0)", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="newer than this arena knows"):
        await ArenaStore(str(path)).open()
