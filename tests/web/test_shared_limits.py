"""Per-visitor limits across web replicas: two web applications in this process, in front of the session's
game server, sharing the machine's Redis (``--quota-store``) under a key prefix of the test's own. A
visitor that alternates between them gets one allowance of requests, creations, unfinished games and
open event streams, not one per replica; with the store unreachable each replica counts for itself again
and the failures are counted.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx
import pytest
from structlog.testing import capture_logs

from kutnahora.web.limits import Limits
from tests.redis_store import URL, fresh_prefix
from tests.web.conftest import Servers, runs_on_own_loop
from tests.web.test_visitor_limits import OPEN_GAME, Site, Stream, refused, serve

UNREACHABLE = "redis://127.0.0.1:1/0"


@contextlib.asynccontextmanager
async def replicas(
    servers: Servers, limits: Limits, monkeypatch: pytest.MonkeyPatch, store: str
) -> AsyncIterator[tuple[Site, Site]]:
    """Two web replicas counting in ``store``: ``redis`` (the test's Redis, a fresh prefix), ``memory``,
    or ``unreachable`` (a Redis URL nothing answers at)."""
    async with contextlib.AsyncExitStack() as stack:
        url, prefix = "memory", "kutnahora"
        if store == "redis":
            url, prefix = URL, await stack.enter_async_context(fresh_prefix("kh-web"))
        elif store == "unreachable":
            url = UNREACHABLE
        first = await stack.enter_async_context(serve(servers, limits, monkeypatch, None, url, prefix))
        second = await stack.enter_async_context(serve(servers, limits, monkeypatch, None, url, prefix))
        yield first, second


async def ask(clients: tuple[httpx.AsyncClient, httpx.AsyncClient], times: int) -> list[httpx.Response]:
    """``GET /api/components`` ``times`` times, alternating between the two replicas."""
    return [await clients[i % 2].get("/api/components") for i in range(times)]


@pytest.mark.parametrize(("store", "allowed"), [("redis", 6), ("memory", 12), ("unreachable", 12)])
@runs_on_own_loop
async def test_a_visitor_alternating_between_replicas_has_one_allowance_of_requests_with_redis(
    servers: Servers, monkeypatch: pytest.MonkeyPatch, store: str, allowed: int
) -> None:
    limits = Limits(creations=0, games=0, requests=0.001, request_burst=6, streams=0)
    async with (
        replicas(servers, limits, monkeypatch, store) as (first, second),
        first.visitor("198.51.100.70") as at_first,
        second.visitor("198.51.100.70") as at_second,
        first.visitor("198.51.100.71") as other,
    ):
        answers = await ask((at_first, at_second), 16)
        assert [a.status_code for a in answers[:allowed]] == [200] * allowed
        for answer in answers[allowed:]:
            refused(answer, "Too many requests from your address")
        refusals = [site.sample("kutnahora_web_refusals_total", limit="requests") for site in (first, second)]
        assert refusals == [(16 - allowed) / 2] * 2  # refused at both replicas
        # Another visitor is not held by this one's requests.
        assert (await other.get("/api/components")).status_code == 200
        errors = [site.sample("kutnahora_web_quota_store_errors_total") for site in (first, second)]
        if store == "unreachable":
            assert all(count >= 1 for count in errors)
        else:
            assert errors == [0.0, 0.0]


@pytest.mark.parametrize(("store", "allowed"), [("redis", 3), ("memory", 6)])
@runs_on_own_loop
async def test_a_visitor_alternating_between_replicas_has_one_allowance_of_creations_with_redis(
    servers: Servers, monkeypatch: pytest.MonkeyPatch, store: str, allowed: int
) -> None:
    limits = Limits(creations=0.001, creation_burst=3, games=0, requests=0, streams=0)
    async with (
        replicas(servers, limits, monkeypatch, store) as (first, second),
        first.visitor("198.51.100.72") as at_first,
        second.visitor("198.51.100.72") as at_second,
    ):
        clients = (at_first, at_second)
        answers = [await clients[i % 2].post("/api/games", json=OPEN_GAME) for i in range(8)]
        assert [a.status_code for a in answers[:allowed]] == [200] * allowed
        for answer in answers[allowed:]:
            refused(answer, "Too many games created or joined from your address")
        assert len(first.created) + len(second.created) == allowed  # the refused never reached the server
        # Joins share the bucket, across replicas too.
        game_id = answers[0].json()["game_id"]
        refused(await at_second.post(f"/api/games/{game_id}/join", json={}), "Too many games")


async def end(game_id: str, creator: httpx.AsyncClient, other: httpx.AsyncClient) -> None:
    """Another visitor joins the creator's game, both resign, and the game server finishes it."""
    assert (await other.post(f"/api/games/{game_id}/join", json={"name": "Bob"})).status_code == 200
    for player in (creator, other):
        assert (await player.post(f"/api/games/{game_id}/resign")).status_code == 200
    for _ in range(600):
        status = (await other.get(f"/api/games/{game_id}")).json()["game"]["status"]
        if status in ("finished", "abandoned"):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"game {game_id} did not end")


@runs_on_own_loop
async def test_a_visitors_unfinished_games_count_across_replicas_and_free_when_they_end(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kutnahora.web.api.SWEEP_SECONDS", 0.2)
    limits = Limits(creations=0, games=2, requests=0, streams=0)
    mine = {"players": 2, "seats": ["you", "open"], "name": "Ann"}
    async with (
        replicas(servers, limits, monkeypatch, "redis") as (first, second),
        first.visitor("203.0.113.70") as at_first,
        second.visitor("203.0.113.70") as at_second,
        first.visitor("203.0.113.71") as other,
    ):
        game = (await at_first.post("/api/games", json=mine)).json()["game_id"]
        assert (await at_second.post("/api/games", json=mine)).status_code == 200
        for client in (at_first, at_second):
            answer = await client.post("/api/games", json=mine)
            refused(answer, "You already have 2 unfinished games created here")
            assert answer.headers["retry-after"] == "30"
        assert len(first.created) + len(second.created) == 2
        assert (
            first.web.limits.games.count("ipv4:203.0.113.70"),
            second.web.limits.games.count("ipv4:203.0.113.70"),
        ) == (1, 1)

        # The game created through the first replica ends: its place frees for a creation through the
        # second, which holds none of the visitor's ended games (the first replica's sweep frees it).
        await end(game, at_first, other)
        for _ in range(100):
            if first.web.limits.games.count("ipv4:203.0.113.70") == 0:
                break
            await asyncio.sleep(0.05)
        again = await at_second.post("/api/games", json=mine)
        assert again.status_code == 200, again.text
        refused(await at_first.post("/api/games", json=mine), "You already have 2 unfinished games")


@runs_on_own_loop
async def test_a_visitors_open_event_streams_count_across_replicas(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = Limits(creations=0, games=0, requests=0, streams=2)
    address = "198.51.100.73"
    async with replicas(servers, limits, monkeypatch, "redis") as (first, second):
        async with first.visitor(address) as creator:
            game_id = (await creator.post("/api/games", json=OPEN_GAME)).json()["game_id"]
        path = f"/api/games/{game_id}/events"
        held = [Stream(first.app, address, path), Stream(second.app, address, path)]
        try:
            assert [await stream.open() for stream in held] == [200, 200]
            for site in (first, second):
                third = Stream(site.app, address, path)
                assert await third.open() == 429
                await third.close()
                assert b"You already follow 2 games live at once" in third.body
                assert site.sample("kutnahora_web_refusals_total", limit="streams") == 1
                assert site.sample("kutnahora_web_event_streams") == 1  # each replica's own
            # One page closes on the first replica: the visitor may open one more, on the second.
            await held.pop(0).close()
            for _ in range(100):  # the place is given back in the background
                again = Stream(second.app, address, path)
                if await again.open() == 200:
                    break
                await again.close()
                await asyncio.sleep(0.05)
            held.append(again)
            assert second.web.limits.streams.held(f"ipv4:{address}") == 2
        finally:
            for stream in held:
                await stream.close()
        for site in (first, second):
            assert site.web.limits.streams.held(f"ipv4:{address}") == 0
            assert site.sample("kutnahora_web_event_streams") == 0


@runs_on_own_loop
async def test_with_redis_unreachable_each_replica_keeps_its_own_streams_and_games(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Redis is asked at every count (no pause after a failure): every count fails, each is counted, and
    # each replica logs one line in the minute.
    monkeypatch.setattr("kutnahora.plumbing.quota_store.RETRY_SECONDS", 0.0)
    limits = Limits(creations=0, games=1, requests=0, streams=1)
    address = "198.51.100.74"
    with capture_logs() as logs:
        async with (
            replicas(servers, limits, monkeypatch, "unreachable") as (first, second),
            first.visitor(address) as at_first,
            second.visitor(address) as at_second,
        ):
            games = [await client.post("/api/games", json=OPEN_GAME) for client in (at_first, at_second)]
            assert [a.status_code for a in games] == [200, 200]  # one each: per-replica counts
            refused(await at_first.post("/api/games", json=OPEN_GAME), "You already have 1 unfinished game")
            path = f"/api/games/{games[0].json()['game_id']}/events"
            held = [Stream(first.app, address, path), Stream(second.app, address, path)]
            try:
                assert [await stream.open() for stream in held] == [200, 200]
                third = Stream(first.app, address, path)
                assert await third.open() == 429
                await third.close()
            finally:
                for stream in held:
                    await stream.close()
            errors = [site.sample("kutnahora_web_quota_store_errors_total") for site in (first, second)]
    # first: the check at start, the games' counts and places of three creations, two stream places
    assert errors[0] >= 6 and errors[1] >= 4, errors
    lines = [line for line in logs if line["event"].startswith("quota store unreachable")]
    assert len(lines) == 2, lines  # one a replica
    assert all(line["log_level"] == "warning" and line["store"] == UNREACHABLE for line in lines)
