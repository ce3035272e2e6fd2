"""A seat has one Play stream, a rate of stream openings and a rate of calls (server/seats.py).

The attacker test holds the scenario a hosted bot once played: many connections, each with many Play
streams of its own seat, on a server with a small ``--max-players``; an innocent game beside it still
plays to its end.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import grpc
import grpc.aio
import pytest

from kutnahora.plumbing.callers import RateLimiter
from kutnahora.server.config import Limits, ServerConfig
from kutnahora.v1 import admin_service_pb2, game_pb2, game_service_pb2, play_service_pb2

from ..status_details import refusal
from .conftest import NO_CLOCK, Client, StartServer, bearer, play_game


def _config(**limits: object) -> ServerConfig:
    config = ServerConfig.in_memory(clock=NO_CLOCK)
    return replace(config, limits=replace(Limits(), **limits))


def _start(game_id: str, seat: int) -> play_service_pb2.PlayRequest:
    return play_service_pb2.PlayRequest(start=play_service_pb2.PlayStart(game_id=game_id, seat=seat))


async def _first(call: grpc.aio.StreamStreamCall) -> play_service_pb2.PlayResponse:  # type: ignore[type-arg]
    response = await asyncio.wait_for(call.read(), 5)
    assert response is not grpc.aio.EOF  # type: ignore[attr-defined]
    return response  # type: ignore[no-any-return]


async def _ended_with(call: grpc.aio.StreamStreamCall) -> grpc.aio.AioRpcError:  # type: ignore[type-arg]
    """The error that ends a stream, reading whatever comes first."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async with asyncio.timeout(5):
            while await call.read() is not grpc.aio.EOF:  # type: ignore[attr-defined]
                pass
    return caught.value


async def test_a_newer_play_stream_takes_the_seat_over(start_server: StartServer) -> None:
    _server, client = await start_server(_config())
    game_id, tokens, _ = await client.new_game(2)
    seat = (await client.observe(game_id)).pending.seat
    older = client.play.Play(metadata=bearer(tokens[seat]))
    await older.write(_start(game_id, seat))
    assert (await _first(older)).WhichOneof("message") == "your_turn"
    newer = client.play.Play(metadata=bearer(tokens[seat]))
    await newer.write(_start(game_id, seat))
    assert (await _first(newer)).WhichOneof("message") == "your_turn"

    error = await _ended_with(older)
    assert error.code() == grpc.StatusCode.ABORTED
    assert f"another Play stream for seat {seat} of game {game_id} took over" in (error.details() or "")
    info, _ = refusal(error)
    assert info.reason == "STREAM_REPLACED"
    assert info.metadata["seat"] == str(seat)

    # The newer stream plays the seat: a decision on it is accepted, and the server counts one stream.
    observation = (await client.observe(game_id, seat, tokens[seat])).version
    await newer.write(
        play_service_pb2.PlayRequest(
            decision=play_service_pb2.PlayDecision(
                version=observation, answer=game_pb2.Answer(option_index=0)
            )
        )
    )
    async with asyncio.timeout(5):
        while (await client.observe(game_id, None)).version != observation + 1:
            await asyncio.sleep(0.02)
    info_response = await client.admin.GetServerInfo(admin_service_pb2.GetServerInfoRequest())
    assert info_response.players == 1
    newer.cancel()


async def test_a_stream_its_client_does_not_read_is_taken_over_at_once(start_server: StartServer) -> None:
    """The older stream's client reads nothing (half dead): it is ended all the same, and the newer
    plays."""
    server, client = await start_server(_config())
    game_id, tokens, _ = await client.new_game(2)
    seat = (await client.observe(game_id)).pending.seat
    stuck = client.play.Play(metadata=bearer(tokens[seat]))
    await stuck.write(_start(game_id, seat))
    await asyncio.sleep(0.2)  # its turn is written; nobody reads it
    newer = client.play.Play(metadata=bearer(tokens[seat]))
    await newer.write(_start(game_id, seat))
    assert (await _first(newer)).WhichOneof("message") == "your_turn"
    async with asyncio.timeout(5):
        while server.service.players != 1:
            await asyncio.sleep(0.02)
    stuck.cancel()
    newer.cancel()


async def test_seat_stream_openings_have_a_rate(start_server: StartServer) -> None:
    server, client = await start_server(_config(seat_stream_rate=0.1, seat_stream_burst=2))
    game_id, tokens, _ = await client.new_game(2)
    calls = []
    for _ in range(2):
        call = client.play.Play(metadata=bearer(tokens[0]))
        await call.write(_start(game_id, 0))
        calls.append(call)
    async with asyncio.timeout(5):
        while not server.service.seats.holds_stream(game_id, 0) or server.service.players != 1:
            await asyncio.sleep(0.02)
    third = client.play.Play(metadata=bearer(tokens[0]))
    await third.write(_start(game_id, 0))
    error = await _ended_with(third)
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info, delay = refusal(error)
    assert info.reason == "RATE_LIMITED" and info.metadata["quota"] == "seat_streams"
    assert delay is not None and 0 < delay <= 10
    # The refused opening took nothing over: the second stream still holds the seat.
    assert server.service.seats.holds_stream(game_id, 0)
    assert server.service.players == 1
    # The other seat has a bucket of its own.
    other = client.play.Play(metadata=bearer(tokens[1]))
    await other.write(_start(game_id, 1))
    await asyncio.sleep(0.1)
    assert server.service.players == 2
    for call in [*calls, other]:
        call.cancel()


async def test_a_seats_reads_have_a_rate_and_its_accepted_decisions_cost_nothing(
    start_server: StartServer,
) -> None:
    _server, client = await start_server(_config(seat_rate=1.0, seat_burst=5))
    game_id, tokens, _ = await client.new_game(2)
    # Decisions accepted over unary calls are not counted: far more than the burst go through.
    for _ in range(20):
        observation = await client.observe(game_id)
        seat = observation.pending.seat
        await client.submit(game_id, seat, tokens[seat], observation.version, option_index=0)
    for _ in range(5):
        await client.observe(game_id, 0, tokens[0])
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.observe(game_id, 0, tokens[0])
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info, delay = refusal(caught.value)
    assert info.reason == "RATE_LIMITED" and info.metadata["quota"] == "seat_rate"
    assert delay is not None and 0 < delay <= 1.0
    assert f"seat 0 of game {game_id}" in (caught.value.details() or "")
    # GetGame carrying the seat's token counts for the seat too; without it, it is no seat's call.
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.games.GetGame(
            game_service_pb2.GetGameRequest(game_id=game_id), metadata=bearer(tokens[0])
        )
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))
    # The other seat has its own rate.
    await client.observe(game_id, 1, tokens[1])


def test_a_bucket_refills_and_gives_back() -> None:
    now = [0.0]
    buckets = RateLimiter(2.0, 2, clock=lambda: now[0])
    assert buckets.take("g/0") == 0.0 and buckets.take("g/0") == 0.0
    assert buckets.take("g/0") == pytest.approx(0.5)
    buckets.give_back("g/0")
    assert buckets.take("g/0") == 0.0
    now[0] = 0.5
    assert buckets.take("g/0") == 0.0
    assert buckets.take("g/1") == 0.0  # another seat


async def _hold_streams(client: Client, game_id: str, seat: int, token: str, streams: int) -> list[object]:
    """Open ``streams`` Play streams for one seat on one connection, as a flooding bot would."""
    calls = []
    for _ in range(streams):
        call = client.play.Play(metadata=bearer(token))
        await call.write(_start(game_id, seat))
        calls.append(call)
    return calls


async def test_one_seat_cannot_take_every_play_place(start_server: StartServer) -> None:
    """Attacker: 5 connections x 15 Play streams of one seat against --max-players 16; an innocent game
    on the same server still plays to its end, and the attacker's seat holds one place."""
    server, client = await start_server(_config(max_players=16))
    game_id, tokens, _ = await client.new_game(2)
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") for _ in range(5)]
    try:
        held = []
        for channel in channels:
            held.extend(await _hold_streams(Client(channel), game_id, 0, tokens[0], 15))
        await asyncio.sleep(0.5)
        assert server.service.players <= 1
        innocent, innocent_tokens, _ = await client.new_game(3, seed=5)
        ended = await asyncio.wait_for(play_game(client, innocent, innocent_tokens, seed=3), 60)
        assert all(e.status == game_pb2.GAME_STATUS_FINISHED for e in ended)
        for call in held:
            call.cancel()  # type: ignore[attr-defined]
    finally:
        for channel in channels:
            await channel.close()
