"""A saved replay played again on a game server: every seat taken in one call, the same end reached."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from kutnahora.clients.bots import RandomBot
from kutnahora.clients.sdk import Client
from kutnahora.server.app import create_server
from kutnahora.server.config import ClockConfig, ServerConfig
from kutnahora.v1 import game_pb2
from kutnahora.web.replays import ReplayError, replay_onto


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    server, port = await create_server("127.0.0.1:0", ServerConfig(clock=ClockConfig(enabled=False)))
    await server.start()
    try:
        async with await Client.connect(f"127.0.0.1:{port}") as connected:
            yield connected
    finally:
        await server.stop(0.5)


async def test_a_replay_is_played_again_with_its_seats_names_and_ends_in_the_same_state(
    client: Client,
) -> None:
    created, seats = await client.create_seated_game(["ann", "bob", "cy"], seed=21)
    await asyncio.gather(*(client.play(RandomBot(seat.seat), seat) for seat in seats))
    original = await client.replay(created.game.game_id)

    game_id = await replay_onto(client, original)

    again = await client.replay(game_id)
    assert game_id != created.game.game_id
    assert again.game.status == game_pb2.GAME_STATUS_FINISHED
    assert [seat.name for seat in again.game.seats] == ["ann", "bob", "cy"]
    assert [record.text for record in again.decisions] == [record.text for record in original.decisions]
    assert again.state_hash == original.state_hash


async def test_a_replay_whose_seats_do_not_match_its_players_is_refused_before_any_game_is_made(
    client: Client,
) -> None:
    created, seats = await client.create_seated_game(["ann", "bob"], seed=22)
    await asyncio.gather(*(client.play(RandomBot(seat.seat), seat) for seat in seats))
    broken = await client.replay(created.game.game_id)
    del broken.game.seats[1]

    with pytest.raises(ReplayError, match="lists 1 seats for a 2-player game"):
        await replay_onto(client, broken)
    listed = await client.list_games()
    assert len(listed) == 1
