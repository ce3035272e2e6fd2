"""WatchGame tells of seats being taken, so a creator or a watcher sees "waiting for 1 more player" change."""

from __future__ import annotations

import asyncio

from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2
from tests.server.conftest import Client


async def test_a_watcher_hears_each_seat_taken(client: Client) -> None:
    game_id, _, _ = await client.new_game(players=2, join=False)
    stream = client.play.WatchGame(play_service_pb2.WatchGameRequest(game_id=game_id))
    messages = stream.__aiter__()

    first = await asyncio.wait_for(messages.__anext__(), 10)
    assert first.observation.version == 0 and first.status == game_pb2.GAME_STATUS_WAITING
    seats = await asyncio.wait_for(messages.__anext__(), 10)
    assert not seats.HasField("joined_seat") and not seats.HasField("decision")
    assert [s.joined for s in seats.seats] == [False, False]

    await client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=game_id, seat=1, name="ana"))
    joined = await asyncio.wait_for(messages.__anext__(), 10)
    assert joined.joined_seat == 1 and joined.status == game_pb2.GAME_STATUS_WAITING
    assert [(s.joined, s.name) for s in joined.seats] == [(False, ""), (True, "ana")]
    assert joined.observation.version == 0 and not joined.HasField("decision")

    await client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=game_id, seat=0, name="bo"))
    last = await asyncio.wait_for(messages.__anext__(), 10)
    assert last.joined_seat == 0 and last.status == game_pb2.GAME_STATUS_ACTIVE
    assert all(s.joined for s in last.seats)
    stream.cancel()


async def test_a_watch_of_a_started_game_has_no_seat_messages(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=2)
    stream = client.play.WatchGame(play_service_pb2.WatchGameRequest(game_id=game_id))
    messages = stream.__aiter__()
    first = await asyncio.wait_for(messages.__anext__(), 10)
    assert first.status == game_pb2.GAME_STATUS_ACTIVE and not first.seats
    observation = await client.observe(
        game_id, first.observation.pending.seat, tokens[first.observation.pending.seat]
    )
    await client.submit(
        game_id, observation.pending.seat, tokens[observation.pending.seat], 0, option_index=0
    )
    second = await asyncio.wait_for(messages.__anext__(), 10)
    assert second.observation.version == 1 and second.HasField("decision") and not second.seats
    stream.cancel()
