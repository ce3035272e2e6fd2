"""The bot's event stream (``ArenaService.StreamEvents``): the games it plays on opening, then each game
started, finished with its rating change, or abandoned with its cause; refusals; old events pruned."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import grpc
import pytest

from kutnahora.arena.app import Arena
from kutnahora.arena.ratings import rate
from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import ClientError
from kutnahora.v1 import arena_service_pb2 as pb


async def next_event(events: AsyncIterator[pb.StreamEventsResponse]) -> pb.StreamEventsResponse:
    return await asyncio.wait_for(events.__anext__(), 10)


async def test_games_started_finished_and_abandoned_reach_their_bots(
    arena: Arena, arena_client: ArenaClient
) -> None:
    keys = {name: await arena_client.register_bot(name) for name in ("north", "south", "east")}
    ids = {name: (await arena.store.account_by_name(name)).account_id for name in keys}  # type: ignore[union-attr]
    await arena.store.record_game("g-before", "2", "127.0.0.1:1", [ids["north"], ids["south"]])

    opened = asyncio.Event()
    north = arena_client.events(keys["north"], opened=opened)
    first = await next_event(north)  # the game it plays already
    assert opened.is_set() and arena.metrics.event_streams._value.get() == 1
    assert first.WhichOneof("event") == "started"
    assert (first.started.game_id, first.started.seat, list(first.started.seat_names)) == (
        "g-before",
        0,
        ["north", "south"],
    )
    assert first.started.server_address == "127.0.0.1:1" and first.started.pool == "2"

    await arena.store.record_game("g-three", "3", "127.0.0.1:2", [ids["east"], ids["south"], ids["north"]])
    started = await next_event(north)
    assert started.started.game_id == "g-three" and started.started.seat == 2, "told once, as it starts"

    places = [2, 1]
    await arena.store.rate_game(
        "g-before", "2", [ids["north"], ids["south"]], places, lambda before: rate(before, places)
    )
    finished = await next_event(north)
    assert finished.WhichOneof("event") == "finished"
    done = finished.finished
    assert (done.game_id, done.seat, done.place, done.pool) == ("g-before", 0, 2, "2")
    assert (done.rating_before.mu, done.rating_before.games) == (25.0, 0)
    assert done.rating_after.mu < 25.0 and done.rating_after.games == 1 and done.rating_after.wins == 0
    stored = await arena.store.ratings("2", [ids["north"]])
    assert stored[ids["north"]].mu == done.rating_after.mu, "the event tells the stored rating"
    assert abs(done.rating_after.conservative - (done.rating_after.mu - 3 * done.rating_after.sigma)) < 1e-9

    assert await arena.store.abandon_game("g-three", "game_server_lost", "the game server went away")
    abandoned = await next_event(north)
    assert abandoned.WhichOneof("event") == "abandoned"
    assert abandoned.abandoned.cause == pb.ABANDON_CAUSE_GAME_SERVER_LOST
    assert (abandoned.abandoned.game_id, abandoned.abandoned.seat) == ("g-three", 2)
    assert abandoned.abandoned.message == "the game server went away"
    assert not await arena.store.abandon_game("g-three", "game_server_lost", "again"), "ruled once"
    assert abandoned.recorded_at.seconds > 0

    # Another bot's stream hears only its own games; opened now, no game is in play any more.
    east = arena_client.events(keys["east"])
    await arena.store.record_game("g-east", "2", "127.0.0.1:1", [ids["east"], ids["south"]])
    only = await next_event(east)
    assert only.started.game_id == "g-east"
    await north.aclose()
    await east.aclose()
    for _ in range(100):
        if arena.metrics.event_streams._value.get() == 0:
            break
        await asyncio.sleep(0.05)
    assert arena.metrics.event_streams._value.get() == 0 and not arena.lobby._watchers


async def test_the_stream_needs_a_valid_key_and_ends_when_it_is_revoked(
    arena: Arena, arena_client: ArenaClient
) -> None:
    for key in ("", "not-a-key"):
        with pytest.raises(ClientError) as caught:
            await next_event(arena_client.events(key))
        assert (
            caught.value.code == grpc.StatusCode.UNAUTHENTICATED and caught.value.reason == "UNAUTHENTICATED"
        )
    key = await arena_client.register_bot("fleeting")
    opened = asyncio.Event()
    events = arena_client.events(key, opened=opened)
    reading = asyncio.ensure_future(next_event(events))
    await asyncio.wait_for(opened.wait(), 10)
    await arena_client.revoke_key(key)
    with pytest.raises(ClientError) as caught:
        await reading
    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED and caught.value.reason == "KEY_REVOKED"


async def test_old_events_are_pruned_but_not_the_start_of_a_game_in_play(arena: Arena) -> None:
    store = arena.store
    ids = [(await store.register(name, name * 8)).account_id for name in ("old", "new")]
    await store.record_game("ended", "2", "127.0.0.1:1", ids)
    await store.abandon_game("ended", "game_server_lost", "gone")
    await store.record_game("playing", "2", "127.0.0.1:1", ids)
    assert len(await store.events_after(0)) == 6
    assert await store.prune_events(keep_seconds=-1) == 4
    left = await store.events_after(0)
    assert {(e.game_id, e.kind) for e in left} == {("playing", "started")}
    assert [e.game_id for e in await store.started_events(ids[0])] == ["playing"]
    assert await store.last_event_id() == max(e.event_id for e in left) and left[0].recorded_at <= time.time()
