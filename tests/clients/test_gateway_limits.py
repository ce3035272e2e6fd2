"""What a hosted bot may cost the runner through its seat gateway, tried as an attacker would.

Behind a :class:`SeatGateway` stands the session's ``kutnahora-server`` (whose largest request is 1 MiB).
Through the gateway: a flood of reads of the bot's own game is refused past the bot's rate with
``RESOURCE_EXHAUSTED``, ``RATE_LIMITED`` and a ``RetryInfo``; a 4 MiB request is refused by the gateway
itself (its message limit is lowered to the server's, whatever it was given); connections past the seat's
bound are not served; a second Play stream of the seat takes it over and the first ends ``ABORTED``,
``STREAM_REPLACED``; Play streams opened too fast are refused; and what the bot cost is counted.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from kutnahora.clients.sdk import Client, SeatCredentials, error_info
from kutnahora.hosting.gateway import SeatGateway
from kutnahora.hosting.gateway_limits import BotBudget, GatewayLimits, Refusal
from kutnahora.v1 import game_service_pb2, play_service_pb2

from .test_gateway import seated

GET_GAME = "/kutnahora.v1.GameService/GetGame"
OBSERVE = "/kutnahora.v1.PlayService/GetObservation"
PLAY = "/kutnahora.v1.PlayService/Play"
SERVER_INFO = "/kutnahora.v1.AdminService/GetServerInfo"


@contextlib.asynccontextmanager
async def gateway_for(
    server_address: str, folder: Path, limits: GatewayLimits
) -> AsyncIterator[tuple[Client, SeatGateway, list[SeatCredentials]]]:
    client, game_id, seats = await seated(server_address)
    gateway = SeatGateway(folder / "seat.sock", server_address, [game_id], budget=BotBudget("flood", limits))
    await gateway.start()
    try:
        yield client, gateway, seats
    finally:
        await gateway.stop()
        await client.close()


def retry_delay(error: grpc.aio.AioRpcError) -> float | None:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    for detail in status.details:
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            retry = error_details_pb2.RetryInfo()
            detail.Unpack(retry)
            return float(retry.retry_delay.ToTimedelta().total_seconds())
    return None


async def test_a_read_flood_of_its_own_game_is_refused_past_the_bots_rate(
    server_address: str, tmp_path: Path
) -> None:
    limits = replace(GatewayLimits(), rate=20.0, burst=20)
    async with gateway_for(server_address, tmp_path, limits) as (_, gateway, seats):
        seat = seats[0]
        get_game = game_service_pb2.GetGameRequest(game_id=seat.game_id).SerializeToString()
        observe = play_service_pb2.GetObservationRequest(game_id=seat.game_id, seat=0).SerializeToString()
        refusals: list[grpc.aio.AioRpcError] = []
        answered = 0
        async with grpc.aio.insecure_channel(f"unix:{gateway.socket}") as channel:
            loop = asyncio.get_running_loop()
            until = loop.time() + 1.5

            async def hammer(method: str, body: bytes) -> None:
                nonlocal answered
                call = channel.unary_unary(method)
                while loop.time() < until:
                    try:
                        await call(body, metadata=seat.metadata())
                        answered += 1
                    except grpc.aio.AioRpcError as error:
                        refusals.append(error)

            await asyncio.gather(
                *(hammer(GET_GAME if i % 2 else OBSERVE, get_game if i % 2 else observe) for i in range(15))
            )
        # The burst, then about 20 a second: far fewer than the flood asked for.
        assert 20 <= answered <= 20 + 20 * 2 + 5
        assert refusals, "the flood was never refused"
        error = refusals[-1]
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        info = error_info(error)
        assert info is not None and info.reason == "RATE_LIMITED" and info.metadata["quota"] == "gateway_rate"
        delay = retry_delay(error)
        assert delay is not None and 0 < delay <= 1
        usage = gateway.budget.usage
        assert usage.calls == answered and usage.refused["rate"] == len(refusals)
        assert usage.cpu_seconds > 0 and usage.bytes_down > 0


async def test_a_message_larger_than_the_server_takes_is_refused_by_the_gateway(
    server_address: str, tmp_path: Path
) -> None:
    limits = replace(GatewayLimits(), message_bytes=16 << 20)  # asked for more than the server takes
    async with gateway_for(server_address, tmp_path, limits) as (_, gateway, seats):
        assert gateway.message_bytes == 1 << 20  # the server's --max-message-bytes
        # Its own game's GetGame, with 4 MiB of an unknown field (100, length-delimited) after the id.
        padding = 4 << 20
        huge = game_service_pb2.GetGameRequest(game_id=seats[0].game_id).SerializeToString()
        huge += b"\xa2\x06" + _varint(padding) + b"x" * padding
        async with grpc.aio.insecure_channel(f"unix:{gateway.socket}") as channel:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await channel.unary_unary(GET_GAME)(huge)
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert gateway.forwarded == 0 and gateway.budget.usage.most_bytes == 0


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


async def test_connections_past_the_seats_bound_are_not_served(server_address: str, tmp_path: Path) -> None:
    limits = replace(GatewayLimits(), connections=2)
    async with gateway_for(server_address, tmp_path, limits) as (_, gateway, _seats):
        own = [("grpc.use_local_subchannel_pool", 1)]  # a connection each, as six processes would have
        channels = [grpc.aio.insecure_channel(f"unix:{gateway.socket}", options=own) for _ in range(6)]
        served = 0
        try:
            for channel in channels:
                try:
                    await channel.unary_unary(SERVER_INFO)(b"", timeout=2, wait_for_ready=False)
                    served += 1
                except grpc.aio.AioRpcError as error:
                    assert error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
        finally:
            for channel in channels:
                await channel.close()
        assert served == 2


async def _start(channel: grpc.aio.Channel, seat: SeatCredentials) -> grpc.aio.StreamStreamCall:  # type: ignore[type-arg]
    call = channel.stream_stream(PLAY)(metadata=seat.metadata())
    start = play_service_pb2.PlayStart(game_id=seat.game_id, seat=seat.seat)
    await call.write(play_service_pb2.PlayRequest(start=start).SerializeToString())
    return call


async def test_a_newer_play_stream_takes_the_seat_over_and_openings_have_a_rate(
    server_address: str, tmp_path: Path
) -> None:
    limits = replace(GatewayLimits(), stream_rate=0.1, stream_burst=2)
    async with gateway_for(server_address, tmp_path, limits) as (client, gateway, seats):
        seat = seats[0]
        async with grpc.aio.insecure_channel(f"unix:{gateway.socket}") as channel:
            older = await _start(channel, seat)
            await asyncio.sleep(0.3)
            newer = await _start(channel, seat)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                async with asyncio.timeout(5):
                    async for _ in older:
                        pass
            assert caught.value.code() == grpc.StatusCode.ABORTED
            info = error_info(caught.value)
            assert info is not None and info.reason == "STREAM_REPLACED"
            assert f"seat 0 of game {seat.game_id} took over" in (caught.value.details() or "")
            third = await _start(channel, seat)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                async with asyncio.timeout(5):
                    async for _ in third:
                        pass
            assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            info = error_info(caught.value)
            assert info is not None and info.metadata["quota"] == "gateway_streams"
            assert retry_delay(caught.value) is not None
            # The newer stream still plays: the server holds one Play stream for the seat.
            async with asyncio.timeout(5):
                while (await client.server_info()).players != 1:
                    await asyncio.sleep(0.05)
            assert gateway.budget.usage.streams_taken_over == 1
            newer.cancel()


def test_calls_and_bytes_in_flight_are_bounded() -> None:
    budget = BotBudget("b", replace(GatewayLimits(), calls=2, bytes_in_flight=1000, rate=0))
    budget.admit(GET_GAME, 100)
    budget.admit(GET_GAME, 100)
    with pytest.raises(Refusal) as caught:
        budget.admit(GET_GAME, 100)
    assert caught.value.limit == "gateway_calls" and caught.value.reason == "LIMIT_REACHED"
    budget.release(100)
    with pytest.raises(Refusal) as caught:
        budget.admit(GET_GAME, 950)
    assert caught.value.limit == "gateway_bytes"
    budget.admit(GET_GAME, 800)
    assert budget.usage.most_calls == 2 and budget.usage.most_bytes == 900
    assert budget.usage.refused == {"calls": 1, "bytes": 1}


def test_a_bot_past_its_share_of_the_runners_cpu_waits() -> None:
    budget = BotBudget("b", replace(GatewayLimits(), cpu_share=0.25))
    assert budget.cpu.debt() == 0.0
    budget.spent(1.5)  # 1.5 s of the runner's CPU at once: a full bucket holds 1 s
    assert budget.cpu.debt() == pytest.approx(2.0, abs=0.05)  # the half second over it, at 0.25 a second
    assert budget.usage.cpu_seconds == pytest.approx(1.5)
