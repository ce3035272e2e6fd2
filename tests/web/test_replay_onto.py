"""A saved replay played again on a game server: every seat taken in one call, the same end reached."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

from kutnahora.clients.bots import RandomBot
from kutnahora.clients.sdk import Client
from kutnahora.server.app import create_server
from kutnahora.server.config import ClockConfig, ServerConfig
from kutnahora.v1 import game_pb2, replay_service_pb2
from kutnahora.web.replays import ReplayError, replay_onto
from tests.web.conftest import run

T = TypeVar("T")
Replays = tuple[replay_service_pb2.GetReplayResponse, str, replay_service_pb2.GetReplayResponse]


def with_server(body: Callable[[Client], Awaitable[T]]) -> T:
    """Run ``body`` with a client of a game server of its own (memory store, no clock), on a thread of its
    own: Playwright's sync API owns the test thread's event loop."""

    async def served() -> T:
        server, port = await create_server(
            "127.0.0.1:0", ServerConfig.in_memory(clock=ClockConfig(enabled=False))
        )
        await server.start()
        try:
            async with await Client.connect(f"127.0.0.1:{port}") as client:
                return await body(client)
        finally:
            await server.stop(0.5)

    return run(served())


async def played(client: Client, names: list[str], seed: int) -> replay_service_pb2.GetReplayResponse:
    """The replay of a game of random bots, created with its seats named."""
    created, seats = await client.create_seated_game(names, seed=seed)
    await asyncio.gather(*(client.play(RandomBot(seat.seat), seat) for seat in seats))
    return await client.replay(created.game.game_id)


def test_a_replay_is_played_again_with_its_seats_names_and_ends_in_the_same_state() -> None:
    async def body(client: Client) -> Replays:
        original = await played(client, ["ann", "bob", "cy"], seed=21)
        game_id = await replay_onto(client, original)
        return original, game_id, await client.replay(game_id)

    original, game_id, again = with_server(body)
    assert game_id != original.game.game_id
    assert again.game.status == game_pb2.GAME_STATUS_FINISHED
    assert [seat.name for seat in again.game.seats] == ["ann", "bob", "cy"]
    assert [record.text for record in again.decisions] == [record.text for record in original.decisions]
    assert again.state_hash == original.state_hash


def test_a_replay_whose_seats_do_not_match_its_players_is_refused_before_any_game_is_made() -> None:
    async def body(client: Client) -> int:
        broken = await played(client, ["ann", "bob"], seed=22)
        del broken.game.seats[1]
        with pytest.raises(ReplayError, match="lists 1 seats for a 2-player game"):
            await replay_onto(client, broken)
        return len(await client.list_games())

    assert with_server(body) == 1
