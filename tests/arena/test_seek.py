"""Seeking: refusals, withdrawing by closing the stream, and two bots matched into a game they play."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import grpc
import pytest

from kutnahora.arena.app import Arena, create_arena
from kutnahora.arena.house import parse_house_bots
from kutnahora.arena.pools import parse_pools
from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.bots import make_bot
from kutnahora.clients.sdk import Client, ClientError
from kutnahora.plumbing import auth
from kutnahora.v1 import game_pb2
from tests.arena.conftest import arena_config
from tests.store.pg import fresh_schema

POOLS = ("2", "3", "4")


async def test_an_unknown_pool_is_refused(arena_client: ArenaClient) -> None:
    key = await arena_client.register_bot("seeker")
    for pool in ("5", "2-blitz", "", "x" * 500):
        with pytest.raises(ClientError) as caught:
            await arena_client.seek(key, pool)
        assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert caught.value.reason == "UNKNOWN_POOL"
        if len(pool) > 100:
            assert "(500 characters)" in str(caught.value), "the arena does not echo a long pool name whole"


async def test_a_second_ticket_in_one_pool_is_refused(arena: Arena, arena_client: ArenaClient) -> None:
    key = await arena_client.register_bot("twice")
    first = arena_client.seek_updates(key, "3")
    waiting = await first.__anext__()
    assert waiting.waiting.pool == "3" and waiting.waiting.tickets_waiting == 1
    second = arena_client.seek_updates(key, "3")
    with pytest.raises(ClientError) as caught:
        await second.__anext__()
    assert caught.value.code == grpc.StatusCode.ALREADY_EXISTS and caught.value.reason == "TICKET_EXISTS"
    other_pool = arena_client.seek_updates(key, "4")
    assert (await other_pool.__anext__()).waiting.pool == "4", "one ticket per pool, not per bot"
    await first.aclose()
    await other_pool.aclose()
    await _until(lambda: not arena.lobby.tickets)
    again = arena_client.seek_updates(key, "3")
    assert (await again.__anext__()).HasField("waiting"), "closing the stream withdrew the ticket"
    await again.aclose()


CHURN_BATCH = 200


@pytest.mark.parametrize(("store", "streams"), [("sqlite", 10_000), ("postgresql", 1_000)])
async def test_seek_streams_opened_and_closed_by_the_thousand_leave_nothing_behind(
    store: str, streams: int, tmp_path: Path, game_server: str
) -> None:
    """Seek streams opened and closed 10,000 times (with PostgreSQL, where every ticket is a row written
    and deleted on one connection, 1,000 times), 200 at once, by house accounts, which the matchmaker never
    matches only with each other, so that none of them is matched while it churns: no ticket is left, in
    memory, in the store or in the metric, nothing else is stored, and the arena matches afterwards."""
    with contextlib.ExitStack() as stack:
        db = tmp_path / "churn.db" if store == "sqlite" else stack.enter_context(fresh_schema("kh_churn"))
        arena, port = await create_arena("127.0.0.1:0", arena_config(db, game_server))
        await arena.start()
        try:
            async with await ArenaClient.connect(f"127.0.0.1:{port}") as arena_client:
                await _churn(arena, arena_client, streams)
        finally:
            await arena.stop(0)


async def _count(arena: Arena, table: str) -> int:
    query = f"SELECT count(*) FROM {table}"
    return int(await arena.store._run(lambda conn: conn.execute(query).fetchone()[0]))


async def _churn(arena: Arena, arena_client: ArenaClient, streams: int) -> None:
    accounts = []
    for number in range(CHURN_BATCH // len(POOLS)):
        key = f"churn-key-{number}"
        await arena.store.register(f"churn-{number}", auth.token_hash(key), house=True)
        accounts.append(key)
    slots = [(key, pool) for key in accounts for pool in POOLS]  # one ticket per account and pool at once

    async def flicker(key: str, pool: str, times: int) -> int:
        waiting = 0
        for _ in range(times):
            updates = arena_client.seek_updates(key, pool)
            waiting += (await updates.__anext__()).HasField("waiting")
            await updates.aclose()
        return waiting

    rounds = -(-streams // len(slots))
    counts = await asyncio.gather(*(flicker(key, pool, rounds) for key, pool in slots))
    assert sum(counts) == rounds * len(slots) >= streams, "every stream was answered with its status"
    await _until(lambda: not arena.lobby.tickets)
    for pool in POOLS:
        assert arena.lobby.waiting(pool) == 0
        assert arena.metrics.tickets_waiting.labels(pool=pool)._value.get() == 0
    assert not arena.lobby._held, "no account still holds a ticket"
    for _ in range(100):  # a withdrawn shared ticket's row is deleted a moment after its stream closes
        if await _count(arena, "arena_tickets") == 0:
            break
        await asyncio.sleep(0.1)
    for table in ("arena_tickets", "arena_games", "arena_seats", "arena_events", "arena_ratings"):
        assert await _count(arena, table) == 0, table

    keys = [await arena_client.register_bot(name) for name in ("after-1", "after-2")]
    seats = await asyncio.wait_for(asyncio.gather(*(arena_client.seek(key, "2") for key in keys)), 30)
    assert len({s.seat.game_id for s in seats}) == 1, "the arena still matches"


async def test_two_bots_are_matched_and_play_their_game(arena: Arena, arena_client: ArenaClient) -> None:
    keys = [await arena_client.register_bot(name) for name in ("left", "right")]
    seats = await asyncio.gather(*(arena_client.seek(key, "2") for key in keys))
    assert {s.seat.game_id for s in seats} == {seats[0].seat.game_id}
    assert sorted(s.seat.seat for s in seats) == [0, 1]
    assert set(seats[0].seat_names) == {"left", "right"}
    async with await Client.connect(seats[0].server_address) as client:
        outcomes = await asyncio.gather(*(client.play(make_bot("random", 1), s.seat) for s in seats))
    assert all(o.status == game_pb2.GAME_STATUS_FINISHED for o in outcomes)
    await _until_async(lambda: _games_rated(arena_client, "left"))
    profile = await arena_client.bot_profile("left")
    assert profile.ratings[0].games == 1 and len(profile.history) == 1
    assert profile.recent_games[0].status == "finished" and profile.recent_games[0].place in (1, 2)
    board = await arena_client.leaderboard("2")
    assert board.total == 2 and {e.name for e in board.entries} == {"left", "right"}
    winner = board.entries[0]
    assert winner.rating.conservative >= board.entries[1].rating.conservative
    assert (
        winner.rating.mu > 25.0 > board.entries[1].rating.mu or winner.rating.mu == board.entries[1].rating.mu
    )


async def test_a_lone_bot_meets_house_bots_within_seconds(tmp_path: Path, game_server: str) -> None:
    house = parse_house_bots("greedy,random", 4)
    assert [b.name for b in house] == ["house-greedy-1", "house-greedy-2", "house-random-1", "house-random-2"]
    config = arena_config(tmp_path / "h.db", game_server, house_bots=house[:1] + house[2:3])
    arena, port = await create_arena("127.0.0.1:0", config)
    await arena.start()
    try:
        async with await ArenaClient.connect(f"127.0.0.1:{port}") as client:
            key = await client.register_bot("loner")
            started = time.monotonic()
            seat = await asyncio.wait_for(client.seek(key, "2"), 30)
            waited = time.monotonic() - started
            assert waited < 15, f"a lone bot waited {waited:.1f} s"
            assert any(name.startswith("house-") for name in seat.seat_names)
            profile = await client.bot_profile(next(n for n in seat.seat_names if n.startswith("house-")))
            assert profile.house
    finally:
        await arena.stop(0)


async def test_a_lone_bot_plays_a_rated_game_against_a_search_house_bot(
    tmp_path: Path, game_server: str
) -> None:
    house = parse_house_bots("mcts:3", 2)
    assert [(b.name, b.kind, b.iterations) for b in house] == [("house-mcts3-1", "mcts", 3)]
    config = arena_config(tmp_path / "m.db", game_server, house_bots=house, pools=parse_pools("2"))
    arena, port = await create_arena("127.0.0.1:0", config)
    await arena.start()
    try:
        async with await ArenaClient.connect(f"127.0.0.1:{port}") as client:
            key = await client.register_bot("lonely")
            seat = await asyncio.wait_for(client.seek(key, "2"), 30)  # the house bot's process starts first
            assert set(seat.seat_names) == {"lonely", "house-mcts3-1"}
            async with await Client.connect(seat.server_address) as server:
                outcome = await asyncio.wait_for(server.play(make_bot("random", 3), seat.seat), 120)
            assert outcome.status == game_pb2.GAME_STATUS_FINISHED
            await _until_async(lambda: _games_rated(client, "house-mcts3-1"))
            house_profile = await client.bot_profile("house-mcts3-1")
            assert house_profile.house and house_profile.ratings[0].games == 1
            assert house_profile.recent_games[0].game_id == seat.seat.game_id
            assert (await client.bot_profile("lonely")).ratings[0].games == 1
    finally:
        await arena.stop(0)


async def _games_rated(client: ArenaClient, name: str) -> bool:
    try:
        profile = await client.bot_profile(name)
    except ClientError:
        return False
    return bool(profile.ratings) and profile.ratings[0].games > 0


async def _until(condition: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def _until_async(condition: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not await condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.1)
