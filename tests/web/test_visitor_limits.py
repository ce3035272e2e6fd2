"""Per-visitor limits, tried as an attacker would: one visitor floods the web server's API and is refused
(429, Retry-After, a sentence) while another visitor goes on, and a refused request reaches the game server
not at all.

The web application runs in this process, in front of the session's game server, and each visitor is a
client of its own address (httpx's ASGI transport, or a raw ASGI call for the event streams, which httpx
would buffer to their end). Each async test runs on a thread and an event loop of its own
(:func:`tests.web.conftest.runs_on_own_loop`): the browser tests' Playwright owns this thread's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import ipaddress
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from kutnahora.web.app import create_app
from kutnahora.web.limits import Limits
from kutnahora.web.replays import replay_onto
from kutnahora.web.state import Web
from kutnahora.web.visitors import Visitors, parse_networks
from tests.web.conftest import Servers, runs_on_own_loop
from tests.web.games import tournament

ORIGIN = "http://testserver"
OPEN_GAME = {"players": 2, "seats": ["open", "open"]}
PROXIES = parse_networks("10.9.0.0/16")


@dataclass
class Site:
    """The web application, and the CreateGame and ListGames calls it made of the game server."""

    app: Starlette
    web: Web
    created: list[str] = field(default_factory=list)
    listed: int = 0
    replayed: list[str] = field(default_factory=list)  # tournament games played again, by their new ids

    def sample(self, name: str, **labels: str) -> float:
        """A sample of the application's metrics (0 when it has none yet)."""
        value = self.app.state.metrics.registry.get_sample_value(name, labels)
        return 0.0 if value is None else float(value)

    def visitor(self, address: str, **headers: str) -> httpx.AsyncClient:
        """A visitor at ``address`` (its own cookies), sending ``headers`` with every request."""
        transport = httpx.ASGITransport(app=self.app, client=(address, 40000))
        return httpx.AsyncClient(
            transport=transport, base_url=ORIGIN, headers={"origin": ORIGIN, **headers}, timeout=20
        )


@contextlib.asynccontextmanager
async def serve(
    servers: Servers,
    limits: Limits,
    monkeypatch: pytest.MonkeyPatch,
    results: Path | None = None,
    quota_store: str = "memory",
    quota_store_prefix: str = "kutnahora",
) -> AsyncIterator[Site]:
    app = create_app(
        servers.grpc,
        limits=limits,
        trusted_proxies=PROXIES,
        results=results,
        quota_store=quota_store,
        quota_store_prefix=quota_store_prefix,
    )
    async with app.router.lifespan_context(app):
        web: Web = app.state.web
        await asyncio.wait_for(web.connection.connected.wait(), 20)
        while web.components is None:
            await asyncio.sleep(0.01)
        site = Site(app, web)
        client = web.client
        create, listing = client.create_game, client.list_games_page

        async def counted_create(*args: Any, **kwargs: Any) -> Any:
            created = await create(*args, **kwargs)
            site.created.append(created.game.game_id)
            return created

        async def counted_listing(*args: Any, **kwargs: Any) -> Any:
            site.listed += 1
            return await listing(*args, **kwargs)

        async def counted_replay(*args: Any, **kwargs: Any) -> str:
            site.replayed.append(await replay_onto(*args, **kwargs))
            return site.replayed[-1]

        monkeypatch.setattr(client, "create_game", counted_create)
        monkeypatch.setattr(client, "list_games_page", counted_listing)
        monkeypatch.setattr("kutnahora.web.tournament_replays.replay_onto", counted_replay)
        yield site


def refused(answer: httpx.Response, words: str) -> None:
    assert answer.status_code == 429, answer.text
    assert int(answer.headers["retry-after"]) >= 1
    assert words in answer.json()["error"]


def refused_page(answer: httpx.Response, words: str) -> None:
    """A page's refusal: 429 and Retry-After, the sentence shown on the page."""
    assert answer.status_code == 429, answer.text
    assert int(answer.headers["retry-after"]) >= 1
    assert answer.headers["content-type"].startswith("text/html")
    assert words in html.unescape(answer.text)


@pytest.fixture(scope="module")
def saved_games(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A tournament's results and the ids of its games, played on a game server of its own that is gone:
    each can be played again on the session's game server from its saved replay."""
    results = tournament(tmp_path_factory.mktemp("tournament") / "results.json")
    return results, [game["game_id"] for game in json.loads(results.read_text())["games"]]


@runs_on_own_loop
async def test_a_flood_of_creations_is_refused_and_another_visitor_still_creates(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = Limits(creations=0.001, creation_burst=3, games=0, requests=0, streams=0)
    async with (
        serve(servers, limits, monkeypatch) as site,
        site.visitor("198.51.100.7") as attacker,
        site.visitor("198.51.100.8") as other,
    ):
        answers = [await attacker.post("/api/games", json=OPEN_GAME) for _ in range(6)]
        assert [a.status_code for a in answers[:3]] == [200, 200, 200]
        for answer in answers[3:]:
            refused(answer, "Too many games created or joined from your address")
        assert len(site.created) == 3  # the refused ones never reached the game server
        # Joins share the bucket: the attacker cannot join either; the other visitor can.
        game_id = answers[0].json()["game_id"]
        refused(await attacker.post(f"/api/games/{game_id}/join", json={}), "Too many games")
        assert len(site.created) == 3
        joined = await other.post(f"/api/games/{game_id}/join", json={"name": "Bob"})
        assert joined.status_code == 200, joined.text
        mine = await other.post("/api/games", json=OPEN_GAME)
        assert mine.status_code == 200, mine.text
        assert site.created[-1] == mine.json()["game_id"]


@runs_on_own_loop
async def test_a_malformed_creation_counts_against_the_rate(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = Limits(creations=0.001, creation_burst=2, games=0, requests=0, streams=0)
    async with serve(servers, limits, monkeypatch) as site, site.visitor("198.51.100.9") as attacker:
        for _ in range(2):
            assert (await attacker.post("/api/games", content=b"{not json")).status_code == 400
        refused(await attacker.post("/api/games", json=OPEN_GAME), "Too many games")
        assert site.created == []


@runs_on_own_loop
async def test_a_visitor_holds_so_many_unfinished_games_until_one_ends(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = Limits(creations=0, games=2, requests=0, streams=0)
    mine = {"players": 2, "seats": ["you", "open"], "name": "Ann"}
    async with (
        serve(servers, limits, monkeypatch) as site,
        site.visitor("203.0.113.20") as attacker,
        site.visitor("203.0.113.21") as other,
    ):
        first = (await attacker.post("/api/games", json=mine)).json()["game_id"]
        assert (await attacker.post("/api/games", json=mine)).status_code == 200
        answer = await attacker.post("/api/games", json=mine)
        refused(answer, "You already have 2 unfinished games created here")
        assert answer.headers["retry-after"] == "30"
        assert len(site.created) == 2
        assert site.sample("kutnahora_web_refusals_total", limit="games") == 1
        # Another visitor is not held by the attacker's games.
        assert (await other.post("/api/games", json=OPEN_GAME)).status_code == 200

        # The first game ends: the other visitor joins it and both resign, the server plays it out.
        assert (await other.post(f"/api/games/{first}/join", json={"name": "Bob"})).status_code == 200
        for player in (attacker, other):
            assert (await player.post(f"/api/games/{first}/resign")).status_code == 200
        for _ in range(600):
            status = (await other.get(f"/api/games/{first}")).json()["game"]["status"]
            if status in ("finished", "abandoned"):
                break
            await asyncio.sleep(0.05)
        assert status == "finished"
        again = await attacker.post("/api/games", json=mine)
        assert again.status_code == 200, again.text
        refused(await attacker.post("/api/games", json=mine), "You already have 2 unfinished games")
        assert len(site.created) == 4


@runs_on_own_loop
async def test_a_flood_of_requests_is_refused_before_the_game_server_is_asked(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = Limits(creations=0, games=0, requests=0.001, request_burst=5, streams=0)
    async with (
        serve(servers, limits, monkeypatch) as site,
        site.visitor("198.51.100.30") as attacker,
        site.visitor("198.51.100.31") as other,
    ):
        answers = [await attacker.get("/api/games", params={"size": "100"}) for _ in range(12)]
        assert [a.status_code for a in answers[:5]] == [200] * 5
        for answer in answers[5:]:
            refused(answer, "Too many requests from your address")
        listed = site.listed
        refused(await attacker.get("/api/games"), "Too many requests")
        refused(await attacker.get("/games/0123456789abcdef"), "Too many requests")
        assert site.listed == listed
        # The static files are not counted; another visitor is served.
        assert (await attacker.get("/static/common.js")).status_code == 200
        assert (await other.get("/api/games")).status_code == 200
        assert site.listed > listed


@runs_on_own_loop
async def test_playing_a_tournament_game_again_is_a_creation_and_counts_as_one(
    servers: Servers, monkeypatch: pytest.MonkeyPatch, saved_games: tuple[Path, list[str]]
) -> None:
    results, (first, second, *_) = saved_games
    limits = Limits(creations=0.001, creation_burst=1, games=0, requests=0, streams=0)
    async with (
        serve(servers, limits, monkeypatch, results) as site,
        site.visitor("198.51.100.50") as attacker,
        site.visitor("198.51.100.51") as other,
    ):
        answer = await attacker.post(f"/tournament/games/{first}")
        assert answer.status_code == 303, answer.text
        assert site.replayed and answer.headers["location"] == f"/games/{site.replayed[0]}"
        # Asked again, the game played here is shown: nothing is created, nothing counted.
        again = await attacker.post(f"/tournament/games/{first}")
        assert (again.status_code, again.headers["location"]) == (303, answer.headers["location"])
        # Another game would be a second creation: refused, as a game from the lobby now is.
        refused_page(await attacker.post(f"/tournament/games/{second}"), "Too many games created or joined")
        refused(await attacker.post("/api/games", json=OPEN_GAME), "Too many games created or joined")
        assert (await attacker.get(f"/tournament/games/{second}")).status_code == 200
        assert len(site.replayed) == 1 and site.created == []
        # Another visitor has a bucket of its own.
        theirs = await other.post(f"/tournament/games/{second}")
        assert theirs.status_code == 303, theirs.text
        assert len(site.replayed) == 2


@runs_on_own_loop
async def test_playing_a_tournament_game_again_takes_a_place_among_the_visitors_games(
    servers: Servers, monkeypatch: pytest.MonkeyPatch, saved_games: tuple[Path, list[str]]
) -> None:
    results, (first, *_) = saved_games
    limits = Limits(creations=0, games=1, requests=0, streams=0)
    async with (
        serve(servers, limits, monkeypatch, results) as site,
        site.visitor("198.51.100.52") as attacker,
        site.visitor("198.51.100.53") as other,
    ):
        assert (await attacker.post("/api/games", json=OPEN_GAME)).status_code == 200  # held: nobody joins
        answer = await attacker.post(f"/tournament/games/{first}")
        refused_page(answer, "You already have 1 unfinished games created here")
        assert answer.headers["retry-after"] == "30"
        assert site.replayed == []
        # The replay holds its visitor's place only while it is played: it ends finished, the place free.
        assert (await other.post(f"/tournament/games/{first}")).status_code == 303
        assert len(site.replayed) == 1
        assert site.web.limits.games.count("ipv4:198.51.100.53") == 0
        assert (await other.post("/api/games", json=OPEN_GAME)).status_code == 200


class Stream:
    """An event stream opened by a raw ASGI call, held open until :meth:`close` (the visitor leaves)."""

    def __init__(self, app: Starlette, address: str, path: str) -> None:
        self.app = app
        self.address = address
        self.path = path
        self.started: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.body = b""
        self.gone = asyncio.Event()
        self.asked = False
        self.task: asyncio.Task[None] | None = None

    async def open(self) -> int:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": self.path,
            "raw_path": self.path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(b"host", b"testserver"), (b"accept", b"text/event-stream")],
            "client": (self.address, 40000),
            "server": ("testserver", 80),
        }

        async def receive() -> dict[str, Any]:
            if not self.asked:
                self.asked = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await self.gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and not self.started.done():
                self.started.set_result(message)
            elif message["type"] == "http.response.body":
                self.body += message.get("body", b"")

        self.task = asyncio.create_task(self.app(scope, receive, send))
        message = await asyncio.wait_for(self.started, 20)
        return int(message["status"])

    def header(self, name: str) -> str:
        headers = dict(self.started.result()["headers"])
        return bytes(headers[name.encode()]).decode()

    async def close(self) -> None:
        self.gone.set()
        assert self.task is not None
        await asyncio.wait_for(self.task, 20)


@runs_on_own_loop
async def test_event_streams_past_the_limit_are_refused_until_one_closes(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = Limits(creations=0, games=0, requests=0, streams=2)
    async with serve(servers, limits, monkeypatch) as site, site.visitor("198.51.100.40") as attacker:
        game_id = (await attacker.post("/api/games", json=OPEN_GAME)).json()["game_id"]
        path = f"/api/games/{game_id}/events"
        held = [Stream(site.app, "198.51.100.40", path) for _ in range(2)]
        try:
            assert [await stream.open() for stream in held] == [200, 200]
            third = Stream(site.app, "198.51.100.40", path)
            assert await third.open() == 429
            await third.close()
            assert int(third.header("retry-after")) >= 1
            assert b"You already follow 2 games live at once" in third.body
            assert site.sample("kutnahora_web_refusals_total", limit="streams") == 1
            assert site.sample("kutnahora_web_event_streams") == 2
            # Another visitor follows the game; once one of the attacker's pages closes, it may again.
            other = Stream(site.app, "198.51.100.41", path)
            assert await other.open() == 200
            await other.close()
            await held.pop().close()
            again = Stream(site.app, "198.51.100.40", path)
            assert await again.open() == 200
            held.append(again)
        finally:
            for stream in held:
                await stream.close()
        assert site.web.limits.streams.held("ipv4:198.51.100.40") == 0
        assert site.sample("kutnahora_web_event_streams") == 0


@runs_on_own_loop
async def test_x_forwarded_for_is_believed_from_a_trusted_proxy_only(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = Limits(creations=0.001, creation_burst=1, games=0, requests=0, streams=0)
    async with serve(servers, limits, monkeypatch) as site:
        # Not from a trusted proxy: whatever X-Forwarded-For says, it is one visitor.
        for forged in ("203.0.113.50", "203.0.113.51", "203.0.113.52"):
            async with site.visitor("198.51.100.60", **{"x-forwarded-for": forged}) as attacker:
                answer = await attacker.post("/api/games", json=OPEN_GAME)
                assert answer.status_code == (200 if forged.endswith("50") else 429)
        assert len(site.created) == 1
        # Through the trusted proxy: the address it appended is the visitor, not one the visitor wrote.
        async with site.visitor("10.9.0.1", **{"x-forwarded-for": "203.0.113.70"}) as first:
            assert (await first.post("/api/games", json=OPEN_GAME)).status_code == 200
        async with site.visitor("10.9.0.1", **{"x-forwarded-for": "203.0.113.99, 203.0.113.70"}) as forger:
            refused(await forger.post("/api/games", json=OPEN_GAME), "Too many games")
        async with site.visitor("10.9.0.1", **{"x-forwarded-for": "203.0.113.71, 10.9.0.2"}) as second:
            assert (await second.post("/api/games", json=OPEN_GAME)).status_code == 200
        assert len(site.created) == 3


@runs_on_own_loop
async def test_one_ipv6_64_is_one_visitor(servers: Servers, monkeypatch: pytest.MonkeyPatch) -> None:
    limits = Limits(creations=0.001, creation_burst=2, games=0, requests=0, streams=0)
    async with serve(servers, limits, monkeypatch) as site:
        for address, status in (
            ("2001:db8:5:6::1", 200),
            ("2001:db8:5:6:ffff:1:2:3", 200),
            ("2001:db8:5:6::abcd", 429),
            ("2001:db8:5:7::1", 200),
        ):
            async with site.visitor(address) as visitor:
                answer = await visitor.post("/api/games", json=OPEN_GAME)
                assert answer.status_code == status, address
        assert len(site.created) == 3


def scope(client: str, *forwarded: str) -> dict[str, Any]:
    return {"client": (client, 1), "headers": [(b"x-forwarded-for", f.encode()) for f in forwarded]}


def test_who_a_visitor_is() -> None:
    plain = Visitors()
    assert plain.of(scope("203.0.113.7")) == "ipv4:203.0.113.7"
    assert plain.of(scope("::ffff:203.0.113.7")) == "ipv4:203.0.113.7"
    assert plain.of(scope("2001:db8:1:2:3:4:5:6")) == "ipv6:2001:db8:1:2::/64"
    assert plain.of(scope("127.0.0.1", "203.0.113.9")) == "ipv4:127.0.0.1"
    behind = Visitors(parse_networks("127.0.0.1,10.0.0.0/8,fd00::/8"))
    assert behind.of(scope("127.0.0.1", "203.0.113.9")) == "ipv4:203.0.113.9"
    assert behind.of(scope("127.0.0.1", "198.51.100.1, 203.0.113.9, 10.1.2.3")) == "ipv4:203.0.113.9"
    # Two headers are one list; the visitor's own entries (left of the proxy's) are never believed.
    assert behind.of(scope("127.0.0.1", "1.2.3.4", "2001:db8::7, fd00::1")) == "ipv6:2001:db8::/64"
    assert behind.of(scope("127.0.0.1")) == "ipv4:127.0.0.1"
    assert behind.of(scope("127.0.0.1", "not an address")) == "ipv4:127.0.0.1"
    assert behind.of(scope("203.0.113.5", "10.1.1.1")) == "ipv4:203.0.113.5"
    assert ipaddress.ip_network("10.0.0.0/8") in behind.trusted


def test_trusted_proxies_must_be_addresses() -> None:
    assert parse_networks("none") == ()
    with pytest.raises(ValueError, match=r"'proxy\.example' is not an IP address or a network"):
        parse_networks("10.0.0.1,proxy.example")


@runs_on_own_loop
async def test_with_the_server_token_visitors_games_do_not_count_as_one_callers() -> None:
    """The game server counts the web server as one caller; given its --quota-token (--server-token), the
    games created here for many visitors are not held against that one caller's quota."""
    from kutnahora.server.app import create_server
    from kutnahora.server.config import Quotas, ServerConfig

    quotas = Quotas(caller_games=1, exempt=(), token="web-quota-token")
    server, port = await create_server("127.0.0.1:0", ServerConfig.in_memory(quotas=quotas))
    await server.start()
    try:
        for token, second in (("web-quota-token", 200), (None, 429)):
            app = create_app(f"127.0.0.1:{port}", limits=Limits.off(), quota_token=token)
            async with app.router.lifespan_context(app):
                web: Web = app.state.web
                await asyncio.wait_for(web.connection.connected.wait(), 20)
                site = Site(app, web)
                async with site.visitor("203.0.113.30") as ann, site.visitor("203.0.113.31") as bob:
                    assert (await ann.post("/api/games", json=OPEN_GAME)).status_code == 200
                    answer = await bob.post("/api/games", json=OPEN_GAME)
                    assert answer.status_code == second, answer.text
                    if token is None:  # without it, the second visitor meets the first one's quota
                        assert "unfinished games" in answer.json()["error"]
    finally:
        await server.stop(0)
