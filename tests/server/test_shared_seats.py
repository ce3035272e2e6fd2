"""Per-seat limits across replicas: two servers on one PostgreSQL database (any replica serves any game)
sharing one Redis as their quota store. A seat's Play stream on one replica is taken over by one opened on
the other; a seat alternating its reads between them gets the allowance of one server, and its refused
decisions settle in the shared bucket; with each replica's memory the same seat gets one stream and one
allowance on each; with Redis unreachable each replica counts for itself and the games go on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

import grpc
import grpc.aio
import pytest

from kutnahora.plumbing.quota_store import QuotaStore
from kutnahora.server.app import GameServer
from kutnahora.server.config import Limits, Quotas, ServerConfig
from kutnahora.server.seats import Holder, SeatLimits
from kutnahora.v1 import game_pb2, play_service_pb2
from tests.redis_store import URL, fresh_prefix
from tests.server.conftest import NO_CLOCK, Client, StartServer, bearer, play_game
from tests.status_details import refusal
from tests.store.pg import fresh_schema

UNREACHABLE = "redis://127.0.0.1:1/0"

Replicas = Callable[..., Awaitable[tuple[list[GameServer], list[Client]]]]


@pytest.fixture
async def replicas(start_server: StartServer) -> AsyncIterator[Replicas]:
    """Start two servers on a fresh PostgreSQL schema, their quota store ``store`` (a fresh key prefix)."""
    with fresh_schema("kh_seats") as database:
        async with fresh_prefix() as prefix:

            async def start(store: str, **limits: Any) -> tuple[list[GameServer], list[Client]]:
                config = ServerConfig.in_memory(
                    db=database,
                    clock=NO_CLOCK,
                    limits=replace(Limits(), **limits),
                    quotas=Quotas(store=store, store_prefix=prefix),
                )
                servers, clients = [], []
                for _ in range(2):
                    server, client = await start_server(config)
                    servers.append(server)
                    clients.append(client)
                return servers, clients

            yield start


def _start(game_id: str, seat: int) -> play_service_pb2.PlayRequest:
    return play_service_pb2.PlayRequest(start=play_service_pb2.PlayStart(game_id=game_id, seat=seat))


async def _open(client: Client, game_id: str, seat: int, token: str) -> Any:
    """A Play stream of the seat, once it has told the seat its turn."""
    call = client.play.Play(metadata=bearer(token))
    await call.write(_start(game_id, seat))
    response = await asyncio.wait_for(call.read(), 5)
    assert response.WhichOneof("message") == "your_turn"
    return call


async def _ended_within(call: Any, seconds: float) -> grpc.aio.AioRpcError:
    """The error that ends a stream within ``seconds``, reading whatever comes first."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async with asyncio.timeout(seconds):
            while await call.read() is not grpc.aio.EOF:  # type: ignore[attr-defined]
                pass
    return caught.value


def _taken_over(server: GameServer) -> float:
    return float(server.metrics.streams_taken_over._value.get())


def _store_errors(server: GameServer) -> float:
    return float(server.metrics.quota_store_errors._value.get())


async def test_a_seat_s_stream_on_one_replica_ends_when_it_opens_one_on_another(replicas: Replicas) -> None:
    servers, clients = await replicas(URL)
    game_id, tokens, _ = await clients[0].new_game(2)
    seat = (await clients[0].observe(game_id)).pending.seat
    older = await _open(clients[0], game_id, seat, tokens[seat])
    started = time.monotonic()
    newer = await _open(clients[1], game_id, seat, tokens[seat])
    error = await _ended_within(older, 1.0)
    assert time.monotonic() - started < 1.0
    assert error.code() == grpc.StatusCode.ABORTED
    assert f"another Play stream for seat {seat} of game {game_id} took over" in (error.details() or "")
    info, _ = refusal(error)
    assert info.reason == "STREAM_REPLACED" and info.metadata == {"game_id": game_id, "seat": str(seat)}
    assert not servers[0].service.seats.holds_stream(game_id, seat)
    assert servers[1].service.seats.holds_stream(game_id, seat)
    assert _taken_over(servers[0]) == 1 and _taken_over(servers[1]) == 0

    # The newer stream plays the seat: its decision applies, and the first replica hears of it.
    version = (await clients[1].observe(game_id)).version
    await newer.write(
        play_service_pb2.PlayRequest(
            decision=play_service_pb2.PlayDecision(version=version, answer=game_pb2.Answer(option_index=0))
        )
    )
    async with asyncio.timeout(5):
        while (await clients[0].observe(game_id)).version != version + 1:
            await asyncio.sleep(0.02)

    # And back: a stream of the other seat opened on the first replica takes that seat from the second.
    other = 1 - seat
    pending = (await clients[0].observe(game_id)).pending.seat
    if pending == other:
        second = await _open(clients[1], game_id, other, tokens[other])
        third = await _open(clients[0], game_id, other, tokens[other])
        assert (await _ended_within(second, 1.0)).code() == grpc.StatusCode.ABORTED
        assert servers[0].service.seats.holds_stream(game_id, other)
        third.cancel()
    assert servers[0].service.players + servers[1].service.players <= 2
    newer.cancel()


async def test_on_each_replica_s_memory_a_seat_holds_a_stream_on_each(replicas: Replicas) -> None:
    servers, clients = await replicas("memory")
    game_id, tokens, _ = await clients[0].new_game(2)
    seat = (await clients[0].observe(game_id)).pending.seat
    first = await _open(clients[0], game_id, seat, tokens[seat])
    second = await _open(clients[1], game_id, seat, tokens[seat])
    await asyncio.sleep(1.0)
    assert all(server.service.seats.holds_stream(game_id, seat) for server in servers)
    assert not first.done() and not second.done()
    first.cancel()
    second.cancel()


async def _outcomes(clients: list[Client], times: int, call: Callable[[Client], Awaitable[Any]]) -> list[str]:
    """``call`` ``times`` times, on each client in turn: each outcome, OK or the refusal's reason and
    quota (RATE_LIMITED/seat_rate), or the status of another refusal."""
    outcomes = []
    for n in range(times):
        try:
            await call(clients[n % len(clients)])
            outcomes.append("OK")
        except grpc.aio.AioRpcError as error:
            info, _ = refusal(error)
            if info.reason == "RATE_LIMITED":
                outcomes.append(f"RATE_LIMITED/{info.metadata['quota']}")
            else:
                outcomes.append(error.code().name)
    return outcomes


@pytest.mark.parametrize("store", ["memory", "redis"])
async def test_a_seat_alternating_between_replicas_has_the_call_rate_of_one(
    replicas: Replicas, store: str
) -> None:
    _, clients = await replicas(URL if store == "redis" else "memory", seat_rate=0.01, seat_burst=6)
    game_id, tokens, _ = await clients[0].new_game(2)

    # Accepted decisions cost nothing, on either replica: far more than the burst go through.
    for n in range(16):
        client = clients[n % 2]
        observation = await client.observe(game_id)
        seat = observation.pending.seat
        await client.submit(game_id, seat, tokens[seat], observation.version, option_index=0)

    reads = await _outcomes(clients, 14, lambda c: c.observe(game_id, 0, tokens[0]))
    if store == "memory":  # each replica counts for itself: twice the allowance
        assert reads == ["OK"] * 12 + ["RATE_LIMITED/seat_rate"] * 2, reads
        return
    assert reads == ["OK"] * 6 + ["RATE_LIMITED/seat_rate"] * 8, reads
    # The other seat has its own bucket.
    assert await _outcomes(clients, 2, lambda c: c.observe(game_id, 1, tokens[1])) == ["OK", "OK"]


@pytest.mark.parametrize("store", ["memory", "redis"])
async def test_a_seat_s_refused_decisions_settle_in_the_shared_bucket(replicas: Replicas, store: str) -> None:
    """Decisions that are not accepted pass on each replica's own bucket and are charged to the shared one
    after: a bot that waits for each answer, alternating between two replicas, gets the burst and at most
    one more call per replica through, and then nothing on either, reads included."""
    _, clients = await replicas(URL if store == "redis" else "memory", seat_rate=0.01, seat_burst=4)
    game_id, tokens, _ = await clients[0].new_game(2)
    observation = await clients[0].observe(game_id)
    seat = observation.pending.seat

    def wrong(client: Client) -> Awaitable[Any]:
        return client.submit(game_id, seat, tokens[seat], observation.version, option_index=999)

    outcomes = await _outcomes(clients, 12, wrong)
    if store == "memory":
        assert outcomes == ["FAILED_PRECONDITION"] * 8 + ["RATE_LIMITED/seat_rate"] * 4, outcomes
        return
    # Four charged on a full bucket; the fifth passes on the first replica, which last heard the bucket
    # hold a token, and its charge leaves the bucket owing one; then both replicas know it is spent.
    assert outcomes == ["FAILED_PRECONDITION"] * 5 + ["RATE_LIMITED/seat_rate"] * 7, outcomes
    reads = await _outcomes(clients, 2, lambda c: c.observe(game_id, seat, tokens[seat]))
    assert reads == ["RATE_LIMITED/seat_rate"] * 2
    # An accepted decision is refused too while the seat owes its bucket (as on one replica).
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await clients[1].submit(game_id, seat, tokens[seat], observation.version, option_index=0)
    assert refusal(caught.value)[0].metadata["quota"] == "seat_rate"


async def test_a_seat_s_stream_openings_have_one_rate_across_replicas(replicas: Replicas) -> None:
    servers, clients = await replicas(URL, seat_stream_rate=0.01, seat_stream_burst=3)
    game_id, tokens, _ = await clients[0].new_game(2)
    seat = (await clients[0].observe(game_id)).pending.seat
    calls = [await _open(clients[n % 2], game_id, seat, tokens[seat]) for n in range(3)]
    refused = clients[1].play.Play(metadata=bearer(tokens[seat]))
    await refused.write(_start(game_id, seat))
    error = await _ended_within(refused, 5)
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert refusal(error)[0].metadata["quota"] == "seat_streams"
    # The third opening (on the first replica) still holds the seat; the first two were taken over.
    assert servers[0].service.seats.holds_stream(game_id, seat)
    assert not servers[1].service.seats.holds_stream(game_id, seat)
    for call in calls[:2]:
        assert (await _ended_within(call, 1.0)).code() == grpc.StatusCode.ABORTED
    calls[2].cancel()


async def test_with_redis_unreachable_each_replica_keeps_its_own_seat_limits(replicas: Replicas) -> None:
    servers, clients = await replicas(UNREACHABLE, seat_rate=0.01, seat_burst=3)
    game_id, tokens, _ = await clients[0].new_game(2)
    seat = (await clients[0].observe(game_id)).pending.seat
    first = await _open(clients[0], game_id, seat, tokens[seat])
    second = await _open(clients[1], game_id, seat, tokens[seat])
    await asyncio.sleep(0.5)
    assert all(server.service.seats.holds_stream(game_id, seat) for server in servers)
    # A newer stream on the same replica still takes the seat over there.
    third = await _open(clients[1], game_id, seat, tokens[seat])
    assert (await _ended_within(second, 1.0)).code() == grpc.StatusCode.ABORTED
    assert not first.done()
    for call in (first, third):
        call.cancel()
    reads = await _outcomes(clients, 8, lambda c: c.observe(game_id, 1 - seat, tokens[1 - seat]))
    assert reads == ["OK"] * 6 + ["RATE_LIMITED/seat_rate"] * 2, reads
    assert all(_store_errors(server) >= 1 for server in servers)
    # Games go on: one played to its end over Play streams on each replica.
    for client in clients:
        other, other_tokens, _ = await client.new_game(3, seed=7)
        ended = await asyncio.wait_for(play_game(client, other, other_tokens, seed=2), 60)
        assert all(e.status == game_pb2.GAME_STATUS_FINISHED for e in ended)


class _Stream(Holder):
    def __init__(self) -> None:
        self.over = False

    def take_over(self) -> None:
        self.over = True


async def _limits(prefix: str) -> SeatLimits:
    limits = SeatLimits(0, 1, 0, 1, store=QuotaStore(URL, prefix))
    await limits.start()
    return limits


async def test_openings_racing_on_two_replicas_leave_one_stream() -> None:
    """Openings of one seat made at once on two replicas, again and again: exactly one stream is left,
    wherever the announcements and the openings' own awaits interleave."""
    async with fresh_prefix() as prefix:
        one, two = await _limits(prefix), await _limits(prefix)
        try:
            streams: list[tuple[SeatLimits, _Stream]] = []
            for _ in range(20):
                pair = [(one, _Stream()), (two, _Stream()), (one, _Stream()), (two, _Stream())]
                await asyncio.gather(*(limits.open_stream("g", 0, stream) for limits, stream in pair))
                streams.extend(pair)
            async with asyncio.timeout(2):
                while sum(not stream.over for _, stream in streams) != 1:
                    await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)  # no late announcement ends the last one
            left = [(limits, stream) for limits, stream in streams if not stream.over]
            assert len(left) == 1
            limits, _ = left[0]
            assert limits.holds_stream("g", 0)
            assert not (two if limits is one else one).holds_stream("g", 0)
        finally:
            for limits in (one, two):
                await limits.close()
                await limits.store.close()


async def test_a_replica_that_missed_an_opening_ends_its_stream_once_it_listens_again() -> None:
    async with fresh_prefix() as prefix:
        one, two = await _limits(prefix), await _limits(prefix)
        try:
            older, newer = _Stream(), _Stream()
            await one.open_stream("g", 1, older)
            await one.takeovers.close()  # the first replica hears nothing for a while
            await two.open_stream("g", 1, newer)
            await asyncio.sleep(0.2)
            assert not older.over
            await one.start()  # subscribed again: it reads the seats' holders
            assert older.over and not newer.over
            assert not one.holds_stream("g", 1) and two.holds_stream("g", 1)
        finally:
            for limits in (one, two):
                await limits.close()
                await limits.store.close()
