"""Failures the server survives: a store that fails (every change is stored before it is made, so a failed
write changes nothing and the caller gets UNAVAILABLE with a sentence), and a rules-engine fault (the game
is abandoned with its reason)."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from kutnahora.server.config import ServerConfig
from kutnahora.server.store import StoreError
from kutnahora.v1 import game_pb2, game_service_pb2
from tests.server.conftest import NO_CLOCK, StartServer, bearer
from tests.server.test_errors import refused

Code = grpc.StatusCode


def failing(what: str) -> Any:
    async def fail(*args: Any, **kwargs: Any) -> None:
        raise StoreError(f"the store could not {what}: the disk is full")

    return fail


async def test_a_failed_join_takes_no_seat(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, client = await start_server()
    game_id, _, _ = await client.new_game(players=2, join=False)
    monkeypatch.setattr(server.hub.store, "save_seat", failing("save a seat"))
    join = client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=game_id, seat=0, name="ann"))
    details = await refused(join, Code.UNAVAILABLE, "could not be reached", "changed nothing")
    assert "disk" not in details, "the store's own error is for the operator's log, not for the client"
    monkeypatch.undo()
    game = (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
    assert not game.seats[0].joined
    joined = await client.games.JoinGame(
        game_service_pb2.JoinGameRequest(game_id=game_id, seat=0, name="ann")
    )
    assert joined.seat == 0


async def test_a_failed_resignation_leaves_the_seat_to_its_player(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, client = await start_server()
    game_id, tokens, _ = await client.new_game(players=2)
    monkeypatch.setattr(server.hub.store, "save_seat", failing("save a seat"))
    resign = client.games.ResignSeat(
        game_service_pb2.ResignSeatRequest(game_id=game_id, seat=1), metadata=bearer(tokens[1])
    )
    await refused(resign, Code.UNAVAILABLE, "changed nothing")
    assert not server.hub.games[game_id].seats[1].resigned
    assert not server.hub.games[game_id].replaced(1)
    monkeypatch.undo()
    await client.games.ResignSeat(
        game_service_pb2.ResignSeatRequest(game_id=game_id, seat=1), metadata=bearer(tokens[1])
    )
    assert server.hub.games[game_id].seats[1].resigned


async def test_a_failed_abandonment_leaves_the_game_running(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, client = await start_server()
    game_id, _, game_token = await client.new_game(players=2)
    monkeypatch.setattr(server.hub.store, "set_status", failing("set a status"))
    abandon = client.games.AbandonGame(
        game_service_pb2.AbandonGameRequest(game_id=game_id, reason="enough"), metadata=bearer(game_token)
    )
    await refused(abandon, Code.UNAVAILABLE, "changed nothing")
    game = (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
    assert game.status == game_pb2.GAME_STATUS_ACTIVE
    monkeypatch.undo()
    abandoned = await client.games.AbandonGame(
        game_service_pb2.AbandonGameRequest(game_id=game_id, reason="enough"), metadata=bearer(game_token)
    )
    assert abandoned.game.status == game_pb2.GAME_STATUS_ABANDONED
    registry = server.metrics.registry
    assert registry.get_sample_value("kutnahora_games_abandoned_total", {"reason": "request"}) == 1
    assert registry.get_sample_value("kutnahora_games_ended_total", {"status": "abandoned"}) == 1
    again = client.games.AbandonGame(
        game_service_pb2.AbandonGameRequest(game_id=game_id, reason="twice"), metadata=bearer(game_token)
    )
    await refused(again, Code.FAILED_PRECONDITION, "already abandoned")


async def test_a_game_starts_when_its_last_seat_is_stored_even_if_its_start_is_not(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """The last join is stored but storing that the game started fails: the game starts all the same,
    and a server that loads it again finds it started (every seat taken means started)."""
    config = ServerConfig.in_memory(db=str(tmp_path / "start.db"), clock=NO_CLOCK)
    server, client = await start_server(config)
    game_id, _, _ = await client.new_game(players=2, join=False)
    tokens = {}
    first = await client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=game_id, seat=0, name="ann"))
    tokens[0] = first.seat_token
    monkeypatch.setattr(server.hub.store, "set_status", failing("set a status"))
    last = await client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=game_id, seat=1, name="bob"))
    tokens[1] = last.seat_token
    monkeypatch.undo()
    game = (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
    assert game.status == game_pb2.GAME_STATUS_ACTIVE
    await server.stop(0.5)
    _, again = await start_server(config)
    reloaded = (await again.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
    assert reloaded.status == game_pb2.GAME_STATUS_ACTIVE
    seat = (await again.observe(game_id)).pending.seat
    await again.submit(game_id, seat, tokens[seat], 0, option_index=0)
    assert (await again.observe(game_id)).version == 1


async def test_an_engine_fault_abandons_the_game_and_says_so(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listed option that the rules engine fails to apply is a fault, not the player's: the game is
    abandoned with the reason, the caller gets INTERNAL with a sentence, and the metrics count it."""
    server, client = await start_server()
    game_id, tokens, _ = await client.new_game(players=2)
    seat = (await client.observe(game_id)).pending.seat

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("a rule is missing")

    monkeypatch.setattr("kutnahora.server.game.engine.apply", broken)
    submit = client.submit(game_id, seat, tokens[seat], 0, option_index=0)
    await refused(submit, Code.INTERNAL, "rules engine failed", "the game was abandoned")
    game = (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
    assert game.status == game_pb2.GAME_STATUS_ABANDONED
    assert game.abandon_reason == "engine error at version 0: a rule is missing"
    registry = server.metrics.registry
    assert registry.get_sample_value("kutnahora_games_abandoned_total", {"reason": "engine_error"}) == 1
    assert registry.get_sample_value("kutnahora_games_ended_total", {"status": "abandoned"}) == 1


async def test_a_store_that_cannot_be_read_is_unavailable_not_missing(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game the server must load, or a listing, while the store cannot be read: UNAVAILABLE (try
    again), never NOT_FOUND, and the store's own error stays in the log."""
    server, client = await start_server()
    monkeypatch.setattr(server.hub.store, "load_game", failing("load a game"))
    monkeypatch.setattr(server.hub.store, "list_games", failing("list games"))
    get = client.games.GetGame(game_service_pb2.GetGameRequest(game_id="elsewhere"))
    details = await refused(get, Code.UNAVAILABLE, "game elsewhere could not be read", "try again")
    assert "disk" not in details
    listing = client.games.ListGames(game_service_pb2.ListGamesRequest())
    details = await refused(listing, Code.UNAVAILABLE, "could not be read", "try again")
    assert "disk" not in details
