"""A real server on an ephemeral port, and a small client to drive it, for the server tests.

``server`` starts a server in this process (memory store, no clock unless a test asks for one) bound to
``127.0.0.1:0``; ``client`` talks to it over a real gRPC channel. ``play_random`` plays one seat over the
Play stream with uniformly random legal options, the way a bot would.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import grpc
import grpc.aio
import pytest

from kutnahora.server.app import GameServer, create_server
from kutnahora.server.config import ClockConfig, ServerConfig
from kutnahora.v1 import (
    admin_service_pb2_grpc,
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    play_service_pb2,
    play_service_pb2_grpc,
    replay_service_pb2_grpc,
)

NO_CLOCK = ClockConfig(enabled=False)


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    """Call metadata carrying a token."""
    return (("authorization", f"Bearer {token}"),)


@dataclass
class Client:
    """Stubs of every service on one channel."""

    channel: grpc.aio.Channel
    games: game_service_pb2_grpc.GameServiceStub = field(init=False)
    play: play_service_pb2_grpc.PlayServiceStub = field(init=False)
    replay: replay_service_pb2_grpc.ReplayServiceStub = field(init=False)
    admin: admin_service_pb2_grpc.AdminServiceStub = field(init=False)

    def __post_init__(self) -> None:
        self.games = game_service_pb2_grpc.GameServiceStub(self.channel)
        self.play = play_service_pb2_grpc.PlayServiceStub(self.channel)
        self.replay = replay_service_pb2_grpc.ReplayServiceStub(self.channel)
        self.admin = admin_service_pb2_grpc.AdminServiceStub(self.channel)

    async def new_game(
        self, players: int = 2, seed: int = 1, join: bool = True, **clock: Any
    ) -> tuple[str, dict[int, str], str]:
        """Create a game (and join every seat): its id, the seat tokens, and the game token."""
        request = game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=players), seed=seed)
        if clock:
            request.clock.CopyFrom(game_pb2.ClockSettings(**clock))
        created = await self.games.CreateGame(request)
        game_id = created.game.game_id
        tokens: dict[int, str] = {}
        if join:
            for seat in range(players):
                joined = await self.games.JoinGame(
                    game_service_pb2.JoinGameRequest(game_id=game_id, seat=seat, name=f"bot{seat}")
                )
                tokens[joined.seat] = joined.seat_token
        return game_id, tokens, created.game_token

    async def observe(self, game_id: str, seat: int | None = None, token: str = "") -> game_pb2.Observation:
        """The current observation, as a seat or a spectator."""
        if seat is None:
            response = await self.play.GetObservation(play_service_pb2.GetObservationRequest(game_id=game_id))
        else:
            response = await self.play.GetObservation(
                play_service_pb2.GetObservationRequest(game_id=game_id, seat=seat), metadata=bearer(token)
            )
        return response.observation

    async def submit(
        self, game_id: str, seat: int, token: str, version: int, **answer: Any
    ) -> play_service_pb2.SubmitDecisionResponse:
        """Submit one answer (option_index=…, decision=… or option_text=…)."""
        request = play_service_pb2.SubmitDecisionRequest(
            game_id=game_id, seat=seat, version=version, answer=game_pb2.Answer(**answer)
        )
        response: play_service_pb2.SubmitDecisionResponse = await self.play.SubmitDecision(
            request, metadata=bearer(token)
        )
        return response


async def play_random(
    client: Client,
    game_id: str,
    seat: int,
    token: str,
    seed: int,
    on_turn: Callable[[Any], None] | None = None,
) -> play_service_pb2.GameEnded:
    """Play one seat to the end over the Play stream with random legal options."""
    rng = random.Random(seed)
    call = client.play.Play(metadata=bearer(token))
    await call.write(
        play_service_pb2.PlayRequest(start=play_service_pb2.PlayStart(game_id=game_id, seat=seat))
    )
    while True:
        response = await call.read()
        assert response is not grpc.aio.EOF, "the stream ended before the game did"  # type: ignore[attr-defined]
        kind = response.WhichOneof("message")
        if kind == "your_turn":
            observation = response.your_turn.observation
            if on_turn is not None:
                on_turn(response.your_turn)
            index = rng.randrange(len(observation.pending.options))
            await call.write(
                play_service_pb2.PlayRequest(
                    decision=play_service_pb2.PlayDecision(
                        version=observation.version, answer=game_pb2.Answer(option_index=index)
                    )
                )
            )
        elif kind == "game_ended":
            await call.done_writing()
            ended: play_service_pb2.GameEnded = response.game_ended
            return ended
        elif kind == "rejected":
            # Another seat's stream cannot move this seat's decisions, so a refusal is a bug.
            raise AssertionError(f"decision refused: {response.rejected.message}")


async def play_game(client: Client, game_id: str, tokens: dict[int, str], seed: int = 0) -> list[Any]:
    """Play every seat of a game concurrently over Play streams until it ends."""
    return list(
        await asyncio.gather(
            *(play_random(client, game_id, seat, token, seed * 10 + seat) for seat, token in tokens.items())
        )
    )


StartServer = Callable[..., Awaitable[tuple[GameServer, Client]]]


@pytest.fixture
async def start_server() -> AsyncIterator[StartServer]:
    """Start servers with a given configuration; every one is stopped at the end of the test."""
    running: list[tuple[GameServer, grpc.aio.Channel]] = []

    async def start(config: ServerConfig | None = None, **changes: Any) -> tuple[GameServer, Client]:
        config = replace(config or ServerConfig.in_memory(clock=NO_CLOCK), **changes)
        server, port = await create_server("127.0.0.1:0", config)
        await server.start()
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        running.append((server, channel))
        return server, Client(channel)

    yield start
    for server, channel in running:
        await channel.close()
        await server.stop(0.5)


@pytest.fixture
async def served(start_server: StartServer) -> tuple[GameServer, Client]:
    """One server with default settings (memory store, no clock)."""
    return await start_server()


@pytest.fixture
def client(served: tuple[GameServer, Client]) -> Client:
    """The client of the default server."""
    return served[1]
