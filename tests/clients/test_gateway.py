"""The seat gateway as a hostile bot meets it: its own game plays, everything else is PERMISSION_DENIED.

A real ``kutnahora-server`` (the session's) stands behind a :class:`SeatGateway` for one seat of one game.
Through the gateway, as a bot would: the seat is played to the end with the SDK; every call a seat does
not need (creating, joining, listing, resigning, abandoning, watching, replays, another game, the admin,
arena, health and reflection services, a method that does not exist, bytes that do not decode) is refused
with ``PERMISSION_DENIED`` and the ErrorInfo reason ``OUTSIDE_SEAT`` and never reaches the server; the
server's own refusals (a wrong token) come back unchanged with their reason; ``GetServerInfo`` shows only
its public part; a deadline and a cancelled stream reach the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from grpc_status import rpc_status

from kutnahora.clients.bots import make_bot
from kutnahora.clients.sdk import Client, SeatCredentials, error_info
from kutnahora.hosting.gateway import REASON, SeatGateway
from kutnahora.hosting.gateway_limits import GatewayLimits
from kutnahora.v1 import (
    admin_service_pb2,
    arena_service_pb2,
    game_service_pb2,
    play_service_pb2,
    replay_service_pb2,
)


async def seated(address: str) -> tuple[Client, str, list[SeatCredentials]]:
    client = await Client.connect(address)
    created = await client.create_game(2, seed=3)
    game_id = created.game.game_id
    seats = [await client.join_game(game_id, seat, f"s{seat}") for seat in range(2)]
    return client, game_id, seats


@pytest.fixture
async def setup(
    server_address: str, tmp_path: Path
) -> AsyncIterator[tuple[Client, SeatGateway, list[SeatCredentials]]]:
    client, game_id, seats = await seated(server_address)
    gateway = SeatGateway(tmp_path / "seat.sock", server_address, [game_id])
    await gateway.start()
    try:
        yield client, gateway, seats
    finally:
        await gateway.stop()
        await client.close()


def raw(gateway: SeatGateway) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(f"unix:{gateway.socket}")


async def refused(call: object) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    return caught.value


def assert_denied(error: grpc.aio.AioRpcError) -> None:
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED, error
    info = error_info(error)
    assert info is not None and info.reason == REASON and info.domain == "kutnahora.v1"
    assert "may only play its own seat" in (error.details() or "")


async def test_a_seat_is_played_to_the_end_through_the_gateway(
    setup: tuple[Client, SeatGateway, list[SeatCredentials]],
) -> None:
    client, gateway, seats = setup
    async with await Client.connect(f"unix:{gateway.socket}") as through:
        outcomes = await asyncio.gather(
            through.play(make_bot("greedy", 1), seats[0]), client.play(make_bot("greedy", 2), seats[1])
        )
    assert all(o.finished for o in outcomes)
    assert gateway.refused == 0 and gateway.forwarded >= 3


async def test_everything_but_its_seat_is_denied_and_never_reaches_the_server(
    setup: tuple[Client, SeatGateway, list[SeatCredentials]], server_address: str
) -> None:
    client, gateway, seats = setup
    other, other_id, _ = await seated(server_address)
    await other.close()
    before = len(await client.list_games())
    token = seats[0].metadata()
    async with raw(gateway) as channel:

        def unary(method: str) -> grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]:
            return channel.unary_unary(method)

        attempts = {
            "CreateGame": unary("/kutnahora.v1.GameService/CreateGame")(
                game_service_pb2.CreateGameRequest(options={"players": 2}).SerializeToString()
            ),
            "JoinGame": unary("/kutnahora.v1.GameService/JoinGame")(
                game_service_pb2.JoinGameRequest(game_id=other_id).SerializeToString()
            ),
            "ListGames": unary("/kutnahora.v1.GameService/ListGames")(b""),
            "ResignSeat": unary("/kutnahora.v1.GameService/ResignSeat")(b"", metadata=token),
            "AbandonGame": unary("/kutnahora.v1.GameService/AbandonGame")(b""),
            "GetReplay": unary("/kutnahora.v1.ReplayService/GetReplay")(
                replay_service_pb2.GetReplayRequest(game_id=seats[0].game_id).SerializeToString()
            ),
            "other game's GetGame": unary("/kutnahora.v1.GameService/GetGame")(
                game_service_pb2.GetGameRequest(game_id=other_id).SerializeToString()
            ),
            "other game's GetObservation": unary("/kutnahora.v1.PlayService/GetObservation")(
                play_service_pb2.GetObservationRequest(game_id=other_id).SerializeToString()
            ),
            "other game's SubmitDecision": unary("/kutnahora.v1.PlayService/SubmitDecision")(
                play_service_pb2.SubmitDecisionRequest(game_id=other_id, seat=0).SerializeToString()
            ),
            "no game's GetGame": unary("/kutnahora.v1.GameService/GetGame")(b""),
            "RegisterBot": unary("/kutnahora.v1.ArenaService/RegisterBot")(
                arena_service_pb2.RegisterBotRequest(name="x").SerializeToString()
            ),
            "health": unary("/grpc.health.v1.Health/Check")(b""),
            "unknown": unary("/no.such.Service/Method")(b"\x00\x01"),
        }
        for name, call in attempts.items():
            error = await refused(call)
            assert_denied(error)
            if name.startswith("other game"):
                assert other_id in (error.details() or "")
        watch = channel.unary_stream("/kutnahora.v1.PlayService/WatchGame")(
            play_service_pb2.WatchGameRequest(game_id=seats[0].game_id).SerializeToString()
        )
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _ in watch:
                pass
        assert_denied(caught.value)
        # a denied stream may end before the first message is written: the write raises the denial then
        reflection = channel.stream_stream("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo")()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await reflection.write(b"\x3a\x00")
            async for _ in reflection:
                pass
        assert_denied(caught.value)
        play = channel.stream_stream("/kutnahora.v1.PlayService/Play")(metadata=token)
        start = play_service_pb2.PlayStart(game_id=other_id, seat=0)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await play.write(play_service_pb2.PlayRequest(start=start).SerializeToString())
            async for _ in play:
                pass
        assert_denied(caught.value)
        assert other_id in (caught.value.details() or "")
        play = channel.stream_stream("/kutnahora.v1.PlayService/Play")(metadata=token)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await play.write(play_service_pb2.PlayRequest(decision={"version": 1}).SerializeToString())
            async for _ in play:
                pass
        assert_denied(caught.value)
        garbage = await refused(unary("/kutnahora.v1.GameService/GetGame")(b"\xff\xff\xff"))
        assert garbage.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert gateway.forwarded == 0, "a refused call reached the server"
    assert len(await client.list_games()) == before  # nothing was created


async def test_the_servers_refusals_and_the_public_server_info_come_back(
    setup: tuple[Client, SeatGateway, list[SeatCredentials]],
) -> None:
    client, gateway, seats = setup
    async with raw(gateway) as channel:
        observe = channel.unary_unary("/kutnahora.v1.PlayService/GetObservation")
        request = play_service_pb2.GetObservationRequest(game_id=seats[0].game_id, seat=0).SerializeToString()
        wrong = await refused(observe(request, metadata=(("authorization", "Bearer not-a-token"),)))
        assert wrong.code() == grpc.StatusCode.UNAUTHENTICATED
        status = rpc_status.from_call(wrong)  # type: ignore[arg-type]
        assert status is not None and error_info(wrong) is not None  # the server's ErrorInfo, as it sent it
        answer = play_service_pb2.GetObservationResponse.FromString(
            await observe(request, metadata=seats[0].metadata())
        )
        assert answer.observation.version >= 0 and answer.observation.viewer == 0
        info = admin_service_pb2.GetServerInfoResponse.FromString(
            await channel.unary_unary("/kutnahora.v1.AdminService/GetServerInfo")(b"")
        )
    direct = await client.server_info()
    assert info.server_version == direct.server_version and info.limits == direct.limits
    assert info.rules_version == direct.rules_version
    assert not info.games and not info.HasField("uptime") and not info.store and not info.players


async def test_a_deadline_and_a_cancellation_reach_the_server(
    setup: tuple[Client, SeatGateway, list[SeatCredentials]],
) -> None:
    client, gateway, seats = setup
    async with raw(gateway) as channel:
        # Seat 1 owes nothing at first: its Play stream waits; the bot's deadline ends it through the gateway.
        play = channel.stream_stream("/kutnahora.v1.PlayService/Play")(
            metadata=seats[1].metadata(), timeout=1.0
        )
        start = play_service_pb2.PlayStart(game_id=seats[1].game_id, seat=1)
        await play.write(play_service_pb2.PlayRequest(start=start).SerializeToString())
        started = asyncio.get_running_loop().time()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _ in play:
                pass
        assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert asyncio.get_running_loop().time() - started < 5
        # A stream the bot cancels is closed at the server too: its count of open Play streams drops.
        for _ in range(100):  # the stream above is closed at the server too (its count may lag a moment)
            if (await client.server_info()).players == 0:
                break
            await asyncio.sleep(0.05)
        baseline = (await client.server_info()).players
        play = channel.stream_stream("/kutnahora.v1.PlayService/Play")(metadata=seats[1].metadata())
        await play.write(play_service_pb2.PlayRequest(start=start).SerializeToString())
        for _ in range(100):
            if (await client.server_info()).players > baseline:
                break
            await asyncio.sleep(0.05)
        assert (await client.server_info()).players == baseline + 1
        play.cancel()
        for _ in range(100):
            if (await client.server_info()).players == baseline:
                break
            await asyncio.sleep(0.05)
        assert (await client.server_info()).players == baseline


async def test_a_bot_hammering_refused_calls_is_paced(
    setup: tuple[Client, SeatGateway, list[SeatCredentials]],
) -> None:
    _, gateway, _ = setup
    async with raw(gateway) as channel:
        create = channel.unary_unary("/kutnahora.v1.GameService/CreateGame")
        for _ in range(GatewayLimits().free_refusals):
            assert_denied(await refused(create(b"")))
        started = asyncio.get_running_loop().time()
        errors = await asyncio.gather(*(refused(create(b"")) for _ in range(10)))
        waited = asyncio.get_running_loop().time() - started
    for error in errors:
        assert_denied(error)
    assert (
        waited >= 10 * GatewayLimits().refusal_pace * 0.9
    )  # one at a time, paced (a lower bound only: sleeps are kept)
