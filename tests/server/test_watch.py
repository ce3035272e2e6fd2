"""Watch streams: every version, in order, from any version on, for spectators and seats."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2
from tests.server.conftest import Client, bearer, play_game


async def collect(
    client: Client, request: play_service_pb2.WatchGameRequest, token: str = ""
) -> list[play_service_pb2.WatchGameResponse]:
    """Every message of a watch stream until the server ends it."""
    metadata = bearer(token) if token else None
    return [message async for message in client.play.WatchGame(request, metadata=metadata)]


def check_sequence(messages: list[play_service_pb2.WatchGameResponse], first: int) -> None:
    """Versions first, first + 1, …; each with the decision that led to it; a result on the last."""
    versions = [m.observation.version for m in messages]
    assert versions == list(range(first, first + len(messages)))
    for message in messages:
        version = message.observation.version
        if version == 0:
            assert not message.HasField("decision")
        else:
            assert message.decision.version == version - 1
            assert message.decision.text
    last = messages[-1]
    assert last.observation.over
    assert last.status == game_pb2.GAME_STATUS_FINISHED
    assert len(last.result.seats) > 0
    assert all(not m.observation.over for m in messages[:-1])


async def test_spectators_and_seats_see_every_version_live(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=3, seed=31)
    spectator = asyncio.create_task(collect(client, play_service_pb2.WatchGameRequest(game_id=game_id)))
    seat_watch = asyncio.create_task(
        collect(client, play_service_pb2.WatchGameRequest(game_id=game_id, seat=1), tokens[1])
    )
    await asyncio.sleep(0.05)
    await play_game(client, game_id, tokens, seed=31)
    watched = await spectator
    as_seat = await seat_watch
    check_sequence(watched, 0)
    check_sequence(as_seat, 0)
    assert len(watched) == len(as_seat) == watched[-1].observation.version + 1
    for message in watched:
        assert not message.observation.HasField("viewer")
        assert len(message.observation.pending.options) == 0
        assert len(message.observation.drawn) == 0
    for message in as_seat:
        assert message.observation.viewer == 1
        owes = message.observation.HasField("pending") and message.observation.pending.seat == 1
        assert (len(message.observation.pending.options) > 0) == owes
    # Every seat's decisions appear, and events describe them.
    assert {m.decision.seat for m in watched[1:]} == {0, 1, 2}
    assert any(len(m.events) > 0 for m in watched)


async def test_a_finished_game_is_replayed_from_any_version(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=2, seed=32)
    await play_game(client, game_id, tokens, seed=2)
    everything = await collect(client, play_service_pb2.WatchGameRequest(game_id=game_id))
    check_sequence(everything, 0)
    resumed = await collect(client, play_service_pb2.WatchGameRequest(game_id=game_id, from_version=40))
    check_sequence(resumed, 40)
    for old, new in zip(everything[40:], resumed, strict=True):
        assert old == new
    beyond = await collect(
        client,
        play_service_pb2.WatchGameRequest(
            game_id=game_id, from_version=everything[-1].observation.version + 5
        ),
    )
    assert beyond == []


async def test_a_watch_from_a_future_version_waits_for_it(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=2, seed=33)
    stream = client.play.WatchGame(play_service_pb2.WatchGameRequest(game_id=game_id, from_version=3))
    first = asyncio.create_task(stream.read())
    await asyncio.sleep(0.1)
    assert not first.done()
    for _ in range(3):
        observation = await client.observe(game_id)
        seat = observation.pending.seat
        await client.submit(game_id, seat, tokens[seat], observation.version, option_index=0)
    message = await asyncio.wait_for(first, 5)
    assert message.observation.version == 3
    assert message.decision.version == 2
    stream.cancel()


async def test_a_watch_ends_when_the_game_is_abandoned(client: Client) -> None:
    game_id, _, game_token = await client.new_game(players=2, seed=34)
    stream = client.play.WatchGame(play_service_pb2.WatchGameRequest(game_id=game_id))
    first = await stream.read()
    assert first.observation.version == 0
    await client.games.AbandonGame(
        game_service_pb2.AbandonGameRequest(game_id=game_id, reason="stop"), metadata=bearer(game_token)
    )
    last = await asyncio.wait_for(stream.read(), 5)
    assert last.status == game_pb2.GAME_STATUS_ABANDONED
    assert last.observation.version == 0
    assert await stream.read() is grpc.aio.EOF  # type: ignore[attr-defined]


async def test_a_slow_watcher_catches_up_by_replay(client: Client) -> None:
    """A watcher that starts far behind the live game still gets every version, in order."""
    game_id, tokens, _ = await client.new_game(players=4, seed=35)
    player = asyncio.create_task(play_game(client, game_id, tokens, seed=5))
    await asyncio.sleep(0.3)
    watched = await collect(client, play_service_pb2.WatchGameRequest(game_id=game_id))
    await player
    check_sequence(watched, 0)


@pytest.mark.parametrize("from_version", [-1])
async def test_a_negative_version_is_malformed(client: Client, from_version: int) -> None:
    game_id, _, _ = await client.new_game(players=2)
    stream = client.play.WatchGame(
        play_service_pb2.WatchGameRequest(game_id=game_id, from_version=from_version)
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.read()
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
