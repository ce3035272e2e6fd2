"""Games nobody plays are abandoned after ``--idle-timeout``, so that they do not hold places for ever."""

from __future__ import annotations

import asyncio
import time

import pytest
from google.protobuf import duration_pb2

from kutnahora.server.main import build_parser, config_from_args
from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2
from tests.server.conftest import Client, StartServer, bearer

IDLE = 0.4  # seconds: the servers below sweep every 0.1 s


def ms(milliseconds: int) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=milliseconds // 1000, nanos=(milliseconds % 1000) * 1_000_000)


async def status(client: Client, game_id: str) -> game_pb2.GameSummary:
    return (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game


async def wait_until_ended(client: Client, game_id: str, within: float) -> game_pb2.GameSummary:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        game = await status(client, game_id)
        if game.status == game_pb2.GAME_STATUS_ABANDONED:
            return game
        await asyncio.sleep(0.05)
    raise AssertionError(f"game {game_id} was not abandoned within {within} s")


async def test_a_game_nobody_joins_is_abandoned_and_its_place_freed(start_server: StartServer) -> None:
    # --waiting-timeout 0: the idle timeout applies to waiting games too
    server, client = await start_server(idle_timeout_seconds=IDLE, waiting_timeout_seconds=0)
    started = time.monotonic()
    game_id, _, _ = await client.new_game(players=3, join=False)
    await client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=game_id, seat=0, name="early"))
    game = await wait_until_ended(client, game_id, within=5)
    assert time.monotonic() - started >= IDLE, "abandoned before it was idle for the timeout"
    assert "waited" in game.abandon_reason and "players to join" in game.abandon_reason
    assert server.hub.unfinished() == 0
    registry = server.metrics.registry
    assert registry.get_sample_value("kutnahora_games_abandoned_total", {"reason": "idle"}) == 1
    assert registry.get_sample_value("kutnahora_games_ended_total", {"status": "abandoned"}) == 1


async def test_a_game_without_a_clock_that_stops_being_played_is_abandoned(start_server: StartServer) -> None:
    """Decisions keep the game alive; once they stop, it ends, and the seat's stream is told so."""
    _, client = await start_server(idle_timeout_seconds=IDLE)
    game_id, tokens, _ = await client.new_game(players=2)
    for _ in range(6):  # longer in all than the timeout, but never a pause as long
        observation = await client.observe(game_id)
        seat = observation.pending.seat
        await client.submit(game_id, seat, tokens[seat], observation.version, option_index=0)
        await asyncio.sleep(IDLE / 4)
    assert (await status(client, game_id)).status == game_pb2.GAME_STATUS_ACTIVE
    seat = (await client.observe(game_id)).pending.seat
    stream = client.play.Play(metadata=bearer(tokens[seat]))
    await stream.write(
        play_service_pb2.PlayRequest(start=play_service_pb2.PlayStart(game_id=game_id, seat=seat))
    )
    assert (await stream.read()).WhichOneof("message") == "your_turn"
    ended = await asyncio.wait_for(stream.read(), timeout=5)
    assert ended.WhichOneof("message") == "game_ended"
    assert ended.game_ended.status == game_pb2.GAME_STATUS_ABANDONED
    game = await status(client, game_id)
    assert "for a decision" in game.abandon_reason


async def test_a_game_with_a_clock_is_never_idle(start_server: StartServer) -> None:
    """Its clock plays for absent seats, so it is left to the clock even when nobody answers."""
    _, client = await start_server(idle_timeout_seconds=IDLE)
    game_id, _, _ = await client.new_game(players=2, decision_time=ms(30_000), time_bank=ms(0))
    await asyncio.sleep(IDLE * 3)
    assert (await status(client, game_id)).status == game_pb2.GAME_STATUS_ACTIVE


async def test_no_idle_timeout_keeps_idle_games(start_server: StartServer) -> None:
    _, client = await start_server(idle_timeout_seconds=0, waiting_timeout_seconds=0)
    game_id, _, _ = await client.new_game(players=2, join=False)
    await asyncio.sleep(0.5)
    assert (await status(client, game_id)).status == game_pb2.GAME_STATUS_WAITING


def test_the_idle_timeout_is_a_flag_and_a_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert config_from_args(build_parser().parse_args([])).idle_timeout_seconds == 3600
    assert config_from_args(build_parser().parse_args(["--idle-timeout", "0"])).idle_timeout_seconds == 0
    monkeypatch.setenv("KUTNAHORA_IDLE_TIMEOUT", "90")
    assert config_from_args(build_parser().parse_args([])).idle_timeout_seconds == 90
    with pytest.raises(SystemExit, match="--idle-timeout must be 0"):
        config_from_args(build_parser().parse_args(["--idle-timeout", "-1"]))
