"""The arena's per-caller limits across replicas: two arenas on one shared store (Redis), and one caller
alternating between them, get exactly the calls, registrations and open streams of one arena."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc
import grpc.aio
import pytest

from kutnahora.arena.app import Arena
from kutnahora.v1 import arena_service_pb2 as pb
from tests.arena.conftest import StartArena, stub
from tests.arena.test_caller_floods import ATTACKER, bearer
from tests.redis_store import URL, fresh_prefix
from tests.status_details import refusal
from tests.store.pg import fresh_schema


async def outcomes(stubs: list[Any], times: int, call: Any) -> list[str]:
    """``call(stub, n)`` ``times`` times, on each arena in turn: each outcome, OK or the refusal's reason."""
    said = []
    for n in range(times):
        try:
            await call(stubs[n % len(stubs)], n)
            said.append("OK")
        except grpc.aio.AioRpcError as error:
            said.append(refusal(error)[0].reason)
    return said


async def two_arenas(start_arena: StartArena, prefix: str, db: str, *flags: str) -> list[Arena]:
    """Two replicas of one arena: one database, one quota store."""
    shared = ("--db", db, "--quota-store", URL, "--quota-store-prefix", prefix, "--quota-exempt", "none")
    return [await start_arena(*shared, *flags) for _ in range(2)]


async def test_one_caller_over_two_arenas_has_the_calls_and_registrations_of_one(
    start_arena: StartArena,
) -> None:
    async with fresh_prefix() as prefix:
        with fresh_schema() as db:
            arenas = await two_arenas(
                start_arena,
                prefix,
                db,
                "--caller-rate",
                "0.01",
                "--caller-burst",
                "5",
                "--register-burst",
                "3",
            )
            async with connected(arenas) as stubs:
                calls = await outcomes(stubs, 12, lambda s, n: s.ListPools(pb.ListPoolsRequest()))
                assert calls == ["OK"] * 5 + ["RATE_LIMITED"] * 7
                registered = await outcomes(
                    stubs, 8, lambda s, n: s.RegisterBot(pb.RegisterBotRequest(name=f"bot-{n}"))
                )
                assert registered == ["OK"] * 3 + ["RATE_LIMITED"] * 5


async def test_one_caller_over_two_arenas_holds_the_streams_of_one(start_arena: StartArena) -> None:
    async with fresh_prefix() as prefix:
        with fresh_schema() as db:  # the replicas' one database, where the bot's key is
            arenas = await two_arenas(start_arena, prefix, db, "--caller-streams", "2")
            async with connected(arenas) as stubs:
                await hold_streams(arenas, stubs)


@asynccontextmanager
async def connected(arenas: list[Arena]) -> AsyncIterator[list[Any]]:
    """A stub of each arena, each on a TCP channel of its own: one caller, ``ipv4:127.0.0.1``."""
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{arena.port}") for arena in arenas]
    try:
        yield [stub(channel) for channel in channels]
    finally:
        for channel in channels:
            await channel.close()


async def hold_streams(arenas: list[Arena], stubs: list[Any]) -> None:
    key = (await stubs[0].RegisterBot(pb.RegisterBotRequest(name="watcher"))).api_key
    streams = []
    for client in stubs:  # one event stream on each arena: the caller's two
        call = client.StreamEvents(pb.StreamEventsRequest(), metadata=bearer(key))
        await asyncio.wait_for(call.initial_metadata(), 5)
        streams.append(call)
    assert [arena.servicer.quotas.streams(ATTACKER) for arena in arenas] == [1, 1]
    for client in stubs:
        call = client.StreamEvents(pb.StreamEventsRequest(), metadata=bearer(key))
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await asyncio.wait_for(call.read(), 5)
        assert refusal(caught.value)[0].metadata["quota"] == "caller_streams"
    streams[1].cancel()
    for _ in range(200):
        call = stubs[0].StreamEvents(pb.StreamEventsRequest(), metadata=bearer(key))
        try:
            await asyncio.wait_for(call.initial_metadata(), 5)
            await asyncio.sleep(0.05)
            if call.done():
                await call.read()  # the refusal
            streams.append(call)
            break
        except grpc.aio.AioRpcError:
            await asyncio.sleep(0.02)
    else:
        pytest.fail("the stream closed on the second arena was never given back")
    assert arenas[0].servicer.quotas.streams(ATTACKER) == 2
    for call in streams:
        call.cancel()
