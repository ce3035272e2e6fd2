"""Per-caller quotas across replicas: two servers on one shared store (Redis), and one caller alternating
between them, get exactly the allowance of one server (games, CreateGame rate, reads, open streams); on
each replica's memory the same caller gets twice as much. A shared store that cannot be reached fails open
to each replica's memory, counted and logged once; a replica that dies frees its places within a lease.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import grpc.aio
import pytest
from prometheus_client import CollectorRegistry, Counter

from kutnahora.plumbing import quota_store
from kutnahora.plumbing.callers import Caller
from kutnahora.plumbing.quota_store import Buckets, Places, QuotaStore
from kutnahora.server.config import Quotas
from kutnahora.server.quotas import CallerQuotas
from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2
from tests.redis_store import URL, fresh_prefix
from tests.server.conftest import Client, StartServer
from tests.server.test_caller_reads import open_watch
from tests.server.test_quotas import refused_count
from tests.status_details import refusal

CALLER = "ipv4:127.0.0.1"  # the test's client, counted: exempt=()


async def alternate(clients: list[Client], times: int, call: Callable[[Client], Awaitable[Any]]) -> list[str]:
    """``call`` ``times`` times, on each client in turn: each outcome, OK or the refusal's reason."""
    outcomes = []
    for n in range(times):
        try:
            await call(clients[n % len(clients)])
            outcomes.append("OK")
        except grpc.aio.AioRpcError as error:
            outcomes.append(refusal(error)[0].reason)
    return outcomes


async def two_replicas(start_server: StartServer, quotas: Quotas) -> tuple[list[Any], list[Client]]:
    servers, clients = [], []
    for _ in range(2):
        server, client = await start_server(quotas=quotas)
        servers.append(server)
        clients.append(client)
    return servers, clients


def create(client: Client) -> Awaitable[Any]:
    return client.games.CreateGame(
        game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=2))
    )


@pytest.mark.parametrize("store", ["memory", "redis"])
async def test_one_caller_over_two_replicas_holds_the_games_of_one(
    start_server: StartServer, store: str
) -> None:
    async with fresh_prefix() as prefix:
        quotas = Quotas(
            caller_games=3,
            caller_rate=1000,
            caller_burst=1000,
            exempt=(),
            store=URL if store == "redis" else "memory",
            store_prefix=prefix,
        )
        servers, clients = await two_replicas(start_server, quotas)
        outcomes = await alternate(clients, 10, create)
        if store == "memory":  # each replica counts for itself: twice the allowance
            assert outcomes.count("OK") == 6, outcomes
            return
        assert outcomes == ["OK"] * 3 + ["QUOTA_EXCEEDED"] * 7, outcomes
        assert [server.hub.quotas.held(CALLER) for server in servers] == [2, 1]
        assert await servers[1].hub.quotas.held_everywhere(CALLER) == 3
        assert refused_count(servers[0], "caller_games") + refused_count(servers[1], "caller_games") == 7
        # A game that ends on the first replica frees its place for the second.
        game = next(iter(servers[0].hub.games.values()))
        await game.abandon("the test ends it")
        for _ in range(100):  # the place is given back in the background
            if await servers[1].hub.quotas.held_everywhere(CALLER) == 2:
                break
            await asyncio.sleep(0.01)
        assert await alternate(clients[1:], 2, create) == ["OK", "QUOTA_EXCEEDED"]


@pytest.mark.parametrize("store", ["memory", "redis"])
async def test_one_caller_over_two_replicas_has_the_rates_of_one(
    start_server: StartServer, store: str
) -> None:
    async with fresh_prefix() as prefix:
        quotas = Quotas(
            caller_games=0,
            caller_rate=0.01,
            caller_burst=4,
            caller_reads=0.01,
            caller_read_burst=6,
            exempt=(),
            store=URL if store == "redis" else "memory",
            store_prefix=prefix,
        )
        _, clients = await two_replicas(start_server, quotas)
        creations = await alternate(clients, 12, create)
        # each replica keeps its own games here: one of each, read on its own replica
        games = {}
        for client in clients:
            listed = await client.games.ListGames(game_service_pb2.ListGamesRequest())
            games[id(client)] = listed.games[0].game_id
        reads = await alternate(
            clients,
            16,
            lambda c: c.games.GetGame(game_service_pb2.GetGameRequest(game_id=games[id(c)])),
        )
        replicas = 1 if store == "redis" else 2
        assert creations.count("OK") == 4 * replicas, creations
        # the two ListGames above took a read each
        assert reads.count("OK") == 6 * replicas - 2, reads
        assert set(creations + reads) == {"OK", "RATE_LIMITED"}


async def test_one_caller_over_two_replicas_holds_the_streams_of_one(start_server: StartServer) -> None:
    async with fresh_prefix() as prefix:
        quotas = Quotas(caller_streams=2, exempt=(), store=URL, store_prefix=prefix)
        servers, clients = await two_replicas(start_server, quotas)
        games = [(await client.new_game())[0] for client in clients]  # a game on each replica
        first = await open_watch(clients[0], games[0])
        second = await open_watch(clients[1], games[1])
        for client, game_id in zip(clients, games, strict=True):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await open_watch(client, game_id)
            assert refusal(caught.value)[0].metadata["quota"] == "caller_streams"
        second.cancel()
        for _ in range(200):
            try:
                third = await open_watch(clients[0], games[0])
                break
            except grpc.aio.AioRpcError:
                await asyncio.sleep(0.02)
        else:
            pytest.fail("the stream closed on the second replica was never given back")
        assert servers[0].hub.quotas.streams(CALLER) == 2
        for call in (first, third):
            call.cancel()


def refused_counter() -> Counter:
    return Counter("refused_total", "refusals", ["limit"], registry=CollectorRegistry())


class Lines:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def warning(self, event: str, **fields: Any) -> None:
        self.lines.append({"event": event, **fields})


async def test_an_unreachable_store_fails_open_to_each_replica_s_memory() -> None:
    errors: list[int] = []
    log = Lines()
    store = QuotaStore(
        "redis://:secret@127.0.0.1:1/0", "kh", log=log, on_error=lambda: errors.append(1), timeout=0.2
    )
    assert not await store.check()  # the service starts all the same
    store._down_until = float("-inf")  # as if the pause after that failure had passed
    errors.clear()
    log.lines.clear()
    store._logged_at = float("-inf")
    quotas = CallerQuotas(2, 0.01, 3, (), (), refused_counter(), store=store, streams=1)
    caller = Caller("ipv4:203.0.113.7", False)
    outcomes = []
    for _ in range(5):
        try:
            await quotas.check_rate(caller, "CreateGame")
            outcomes.append("OK")
        except Exception as error:
            outcomes.append(getattr(error, "reason", "?"))
    assert outcomes == ["OK"] * 3 + ["caller_rate"] * 2  # memory still limits
    place = await quotas.reserve(caller)
    await quotas.reserve(caller)
    with pytest.raises(Exception, match="already holds 2"):
        await quotas.reserve(caller)
    quotas.unreserve(place)
    await quotas.reserve(caller)  # given back in memory, where it was taken
    assert errors == [1], "the store is asked again only after a pause"
    assert len(log.lines) == 1 and log.lines[0]["store"] == "redis://:***@127.0.0.1:1/0"
    assert "secret" not in str(log.lines)
    await store.close()


async def test_a_dead_replica_s_places_are_free_within_a_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quota_store, "LEASE_SECONDS", 0.3)
    async with fresh_prefix() as prefix:
        alive, dying = QuotaStore(URL, prefix), QuotaStore(URL, prefix)
        kept, lost = Places(alive, "streams", 1), Places(dying, "streams", 1)
        assert await kept.take("a") is not None
        assert await lost.take("b") is not None
        assert await lost.take("a") is None and await kept.take("b") is None
        await dying.stop_renewing()  # the replica dies: nobody renews "b"
        await asyncio.sleep(0.6)  # two leases; the living replica renewed "a" every 0.1 s
        assert await kept.count("a") == 1 and await kept.count("b") == 0
        assert await kept.take("b") is not None and await lost.take("a") is None
        await alive.close()
        await dying.close()


async def test_the_shared_bucket_says_when_to_ask_again() -> None:
    async with fresh_prefix() as prefix:
        one, two = QuotaStore(URL, prefix), QuotaStore(URL, prefix)
        first, second = Buckets(one, "reads", 2.0, 3), Buckets(two, "reads", 2.0, 3)
        waits = [await bucket.take("k") for bucket in (first, second, first, second)]
        assert waits[:3] == [0.0, 0.0, 0.0] and 0.4 < waits[3] <= 0.5
        await asyncio.sleep(waits[3] + 0.05)
        assert await second.take("k") == 0.0
        await one.close()
        await two.close()


def test_the_store_setting_is_memory_or_a_redis_url() -> None:
    assert quota_store.parse_url("memory") == "memory"
    assert quota_store.parse_url("rediss://h:6380/1") == "rediss://h:6380/1"
    with pytest.raises(ValueError, match="neither memory nor a redis"):
        quota_store.parse_url("postgres://h/db")
    assert quota_store.show_url("redis://user:pw@h:6379/0") == "redis://user:***@h:6379/0"
    assert quota_store.show_url("redis://h:6379/0") == "redis://h:6379/0"


async def test_a_seat_s_reads_from_a_counted_address_count_as_the_address_everywhere(
    start_server: StartServer,
) -> None:
    """GetObservation of a seat, from a counted address, counts as the address on every replica: a token
    cannot buy a caller more."""
    async with fresh_prefix() as prefix:
        quotas = Quotas(caller_reads=0.01, caller_read_burst=2, exempt=(), store=URL, store_prefix=prefix)
        _, clients = await two_replicas(start_server, quotas)
        seats = {}
        for client in clients:
            game_id, tokens, _ = await client.new_game()
            seats[id(client)] = (
                play_service_pb2.GetObservationRequest(game_id=game_id, seat=0),
                (("authorization", f"Bearer {tokens[0]}"),),
            )

        def observe(client: Client) -> Awaitable[Any]:
            request, metadata = seats[id(client)]
            return client.play.GetObservation(request, metadata=metadata)

        assert await alternate(clients, 4, observe) == ["OK", "OK", "RATE_LIMITED", "RATE_LIMITED"]


async def test_a_store_closes_at_once_whenever_it_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Closed at any moment, a renewal under way or not, a store closes within its timeout (a renewal
    cancelled inside a Redis call once kept it from ever closing)."""
    monkeypatch.setattr(quota_store, "LEASE_SECONDS", 0.15)
    async with fresh_prefix() as prefix:
        for n in range(12):
            store = QuotaStore(URL, prefix)
            assert await Places(store, "streams", 1).take(f"k{n}") is not None
            await asyncio.sleep(0.05 + n * 0.007)  # lands before, during and after renewals
            await asyncio.wait_for(store.close(), 2)
