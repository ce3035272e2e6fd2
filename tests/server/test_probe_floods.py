"""Floods of the standard services, tried as an attacker would, on the game server and on the arena:
``Health.Check`` in a tight loop, health ``Watch`` streams opened by the hundred, reflection requests
without end on one stream. Past the bounds (:mod:`kutnahora.plumbing.probes`) each is refused
RESOURCE_EXHAUSTED with a sentence, its ErrorInfo and (for the rate) a RetryInfo, and counted; another
connection's probe is answered all the while, and a place given back is another's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from kutnahora.arena.app import Arena, ArenaConfig, create_arena
from kutnahora.plumbing.probes import BURST, MAX_STREAMS
from kutnahora.server.app import GameServer
from tests.server.conftest import StartServer
from tests.status_details import refusal

OWN_CONNECTION = (("grpc.use_local_subchannel_pool", 1),)
"""A channel's option that gives it a connection of its own (gRPC shares one among a process's channels
to the same address otherwise), so that it is another connection to the server."""


@pytest.fixture
async def arena(tmp_path: Path) -> AsyncIterator[Arena]:
    """An arena with no game servers: its health and reflection are served all the same."""
    started, _ = await create_arena("127.0.0.1:0", ArenaConfig(servers=[], db=str(tmp_path / "arena.db")))
    await started.start()
    yield started
    await started.stop(0.5)


def server_refusals(server: GameServer, limit: str) -> float:
    value = server.metrics.registry.get_sample_value("kutnahora_limit_refusals_total", {"limit": limit})
    return value or 0.0


def arena_refusals(arena: Arena, reason: str) -> float:
    value = arena.metrics.registry.get_sample_value("kutnahora_arena_refusals_total", {"reason": reason})
    return value or 0.0


async def flood_checks(address: str, calls: int) -> list[grpc.aio.AioRpcError | None]:
    """``calls`` Health.Check calls at once on one connection: None for each answered, else its error."""
    async with grpc.aio.insecure_channel(address, options=OWN_CONNECTION) as channel:
        stub = health_pb2_grpc.HealthStub(channel)

        async def one() -> grpc.aio.AioRpcError | None:
            try:
                await stub.Check(health_pb2.HealthCheckRequest())
            except grpc.aio.AioRpcError as error:
                return error
            return None

        return await asyncio.gather(*(one() for _ in range(calls)))


async def answered_elsewhere(address: str) -> str:
    """A Check on a connection of its own: the serving status's name."""
    async with grpc.aio.insecure_channel(address, options=OWN_CONNECTION) as channel:
        response = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))


def assert_rate_refusals(results: list[grpc.aio.AioRpcError | None]) -> int:
    """The refusals among ``results`` are the rate's, with a sentence, an ErrorInfo and a RetryInfo; how
    many there were."""
    refused = [r for r in results if r is not None]
    assert BURST <= len(results) - len(refused) < len(results), "the burst is answered, the rest refused"
    for error in refused:
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "health and reflection requests per second" in (error.details() or "")
        info, delay = refusal(error)
        assert info.reason == "RATE_LIMITED" and delay is not None and delay > 0
    return len(refused)


async def test_a_check_flood_is_refused_past_the_burst_while_another_connection_is_answered(
    start_server: StartServer,
) -> None:
    server, _ = await start_server()
    address = f"127.0.0.1:{server.port}"
    refused = assert_rate_refusals(await flood_checks(address, 3 * BURST))
    assert await answered_elsewhere(address) == "SERVING"
    assert server_refusals(server, "probe_rate") == refused


async def watches(channel: grpc.aio.Channel, count: int) -> list[Any]:
    """``count`` health Watch streams opened on ``channel``."""
    stub = health_pb2_grpc.HealthStub(channel)
    return [stub.Watch(health_pb2.HealthCheckRequest()) for _ in range(count)]


async def opened(call: Any) -> grpc.StatusCode | None:
    """None once the Watch stream sent its first status; its code when it ended instead."""
    try:
        await call.read()
    except grpc.aio.AioRpcError as error:
        return error.code()
    return None


@pytest.mark.parametrize("service", ["server", "arena"])
async def test_watch_streams_past_the_cap_are_refused_until_one_closes(
    service: str, start_server: StartServer, arena: Arena
) -> None:
    server, _ = await start_server()
    port = server.port if service == "server" else arena.port
    address = f"127.0.0.1:{port}"
    extra = 10
    # From three connections, so that no connection's rate refuses any of them: only the cap does.
    channels = [grpc.aio.insecure_channel(address, options=OWN_CONNECTION) for _ in range(3)]
    try:
        share = (MAX_STREAMS + extra) // 3 + 1
        calls = [call for channel in channels for call in await watches(channel, share)]
        codes = await asyncio.gather(*(opened(call) for call in calls))
        assert codes.count(None) == MAX_STREAMS, "the cap of open streams, no more"
        assert set(codes) - {None} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
        refused = next(call for call, code in zip(calls, codes, strict=True) if code is not None)
        info, _ = refusal(await refused_error(refused))
        assert (info.reason, info.metadata["limit"]) == ("LIMIT_REACHED", "probe_streams")
        count = (
            server_refusals(server, "probe_streams")
            if service == "server"
            else arena_refusals(arena, "probe_streams")
        )
        assert count == len(calls) - MAX_STREAMS
        # One closed: its place is another's.
        next(call for call, code in zip(calls, codes, strict=True) if code is None).cancel()
        for _ in range(50):
            another = (await watches(channels[0], 1))[0]
            if await opened(another) is None:
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the place given back was never another's")
    finally:
        for channel in channels:
            await channel.close()


async def refused_error(call: Any) -> grpc.aio.AioRpcError:
    """The error a refused stream ended with."""
    try:
        await call.read()
    except grpc.aio.AioRpcError as error:
        return error
    raise AssertionError("the stream was not refused")


async def reflect_until_refused(port: int) -> tuple[int, grpc.aio.Call]:
    """Send reflection requests one after another on one stream until it ends: how many were answered,
    and the call."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=OWN_CONNECTION) as channel:
        call = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo()
        answered = 0
        for _ in range(5 * BURST):
            try:
                await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
                if await call.read() is grpc.aio.EOF:  # type: ignore[attr-defined]
                    break
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                break
            answered += 1
        await call.code()
        return answered, call


async def test_endless_reflection_requests_end_the_stream_past_the_rate(
    start_server: StartServer, arena: Arena
) -> None:
    server, _ = await start_server()
    for port in (server.port, arena.port):
        answered, call = await reflect_until_refused(port)
        assert await call.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "(a reflection request)" in (await call.details() or "")
        assert BURST - 1 <= answered <= 2 * BURST, "the burst is answered, then the stream ends"
    assert server_refusals(server, "probe_rate") == 1 and arena_refusals(arena, "probe_rate") == 1
    arena_address = f"127.0.0.1:{arena.port}"
    assert_rate_refusals(await flood_checks(arena_address, 3 * BURST))
    assert await answered_elsewhere(arena_address) == "SERVING"
