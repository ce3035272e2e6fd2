"""The arena store on SQLite and on PostgreSQL: migrations, accounts, one-transaction results, restart."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from kutnahora.arena import accounts, game_events, placements, standings
from kutnahora.arena.accounts import NameTaken
from kutnahora.arena.ratings import RatedGame, rate, recompute
from kutnahora.arena.schema import SCHEMA_VERSION
from kutnahora.arena.store import ArenaStore
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


async def test_a_profile_lists_the_games_in_play_first_then_the_last_ended_first(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long game begun before shorter ones that have since ended is listed first while it is played;
    the ended ones follow, the one that ended last first (whether rated or abandoned)."""
    clock = iter(range(1000, 2000))
    for module in (accounts, game_events, placements, standings):  # one clock for every table's writes
        monkeypatch.setattr(module, "time", SimpleNamespace(time=lambda: float(next(clock))))
    store = ArenaStore(db)
    await store.open()
    try:
        names = ("alice", "bob", "carol", "dave")
        alice, bob, carol, dave = [(await store.register(name, f"hash-{name}")).account_id for name in names]
        await store.record_game("long", "4", "s:1", [alice, bob, carol, dave])
        await store.record_game("first", "2", "s:1", [alice, bob])
        await store.record_game("second", "2", "s:1", [bob, alice])
        assert await store.rate_game("second", "2", [bob, alice], [1, 2], lambda b: rate(b, [1, 2]))
        assert await store.rate_game("first", "2", [alice, bob], [1, 2], lambda b: rate(b, [1, 2]))
        await store.record_game("lost", "2", "s:1", [alice, bob])
        assert await store.abandon_game("lost")
        await store.record_game("playing", "2", "s:1", [alice, bob])
        _, _, games = await store.profile(alice)
        assert [(g.game_id, g.status) for g in games] == [
            ("playing", "active"),
            ("long", "active"),
            ("lost", "abandoned"),
            ("first", "finished"),
            ("second", "finished"),
        ]
        assert await store.rate_game(
            "long", "4", [alice, bob, carol, dave], [1, 2, 3, 4], lambda b: rate(b, [1, 2, 3, 4])
        )
        _, _, games = await store.profile(alice)
        assert [g.game_id for g in games] == ["playing", "long", "lost", "first", "second"]
    finally:
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


async def test_a_ticket_handed_over_leaves_no_row_to_refuse_the_next_seek(db: str) -> None:
    """The heartbeat that reads a ticket's match deletes its row in the same transaction: the account
    may seek again in the pool the moment its bot holds the seat, on any replica; a ticket still waiting
    (not matched) keeps refusing a second one, and the next heartbeat no longer lists the one taken."""
    store = ArenaStore(db)
    await store.open()
    try:
        alice = await store.register("alice", "hash-a")
        bob = await store.register("bob", "hash-b")
        assert await store.add_ticket("t-a", alice.account_id, "2")
        assert await store.add_ticket("t-b", bob.account_id, "2")
        assert not await store.add_ticket("t-a2", alice.account_id, "2"), "one waiting ticket per pool"
        await store.match_ticket("t-a", "s:1", "g1", 0, "token-a", "alice\nbob")
        taken = await store.heartbeat(["t-a", "t-b"])
        assert taken == [("t-a", "s:1", "g1", 0, "token-a", "alice\nbob")]
        assert await store.add_ticket("t-a2", alice.account_id, "2"), "the matched row refused a rematch"
        assert await store.heartbeat(["t-a", "t-b"]) == []
        assert {row[0] for row in await store.open_tickets()} == {"t-a2", "t-b"}
        assert not await store.add_ticket("t-b2", bob.account_id, "2")
    finally:
        await store.close()


async def test_arenas_on_two_schemas_of_one_database_each_run_their_matchmaker() -> None:
    """The matchmaker's advisory lock is per schema: an arena on one schema never waits for another's."""
    from kutnahora.arena.store import MatchmakerLock, matchmaker_lock_key

    assert matchmaker_lock_key("a") != matchmaker_lock_key("b")
    with fresh_schema("kh_arena_lock_a") as first_url, fresh_schema("kh_arena_lock_b") as second_url:
        stores = [ArenaStore(first_url), ArenaStore(second_url), ArenaStore(first_url)]
        locks = [MatchmakerLock(store) for store in stores]
        try:
            for store in stores:
                await store.open()
            assert [await lock.held() for lock in locks] == [True, True, False]
            await locks[0].close()
            for _ in range(50):  # the server frees it as the closed connection's backend ends
                if await locks[2].held():
                    break
                await asyncio.sleep(0.1)
            assert await locks[2].held(), "the lock of a replica that stops passes to the next"
        finally:
            for lock in locks:
                await lock.close()
            for store in stores:
                await store.close()


async def test_active_games_are_every_unfinished_game_with_its_accounts_by_seat(db: str) -> None:
    store = ArenaStore(db)
    await store.open()
    try:
        a, b, c, d = [(await store.register(name, f"hash-{name}")).account_id for name in "abcd"]
        await store.record_game("g2", "2", "s:1", [b, a])
        await store.record_game("g4", "4", "s:2", [d, c, a, b])
        await store.record_game("rated", "2", "s:1", [c, d])
        await store.rate_game("rated", "2", [c, d], [1, 2], lambda before: rate(before, [1, 2]))
        await store.record_game("lost", "2", "s:2", [a, c])
        assert await store.abandon_game("lost", "game_server_lost", "the server went away")
        assert sorted(await store.active_games()) == [
            ("g2", "2", "s:1", [b, a]),
            ("g4", "4", "s:2", [d, c, a, b]),
        ]
    finally:
        await store.close()
