"""The web front end's arena pages: a pool's leaderboard and a bot's page with its rating chart."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from starlette.applications import Starlette

from kutnahora.arena.app import Arena
from kutnahora.arena.ratings import rate
from kutnahora.plumbing import auth
from kutnahora.web import arena_pages


@pytest.fixture
def pages_app(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> Iterator[Starlette]:
    monkeypatch.setenv(arena_pages.ENV_ARENA, f"127.0.0.1:{arena.port}")
    yield Starlette(routes=arena_pages.routes())
    arena_pages._clients.clear()


async def test_leaderboard_and_bot_page(arena: Arena, pages_app: Starlette) -> None:
    store = arena.store
    ids = [(await store.register(name, auth.token_hash(name))).account_id for name in ("ace", "bee<i>")]
    await store.record_game("long-game", "2", "127.0.0.1:1", ids)  # begun first, still in play
    for number, seat_places in enumerate(([1, 2], [1, 2], [2, 1])):
        await store.record_game(f"game{number}", "2", "127.0.0.1:1", ids)
        await store.rate_game(f"game{number}", "2", ids, seat_places, lambda b, p=seat_places: rate(b, p))
    transport = httpx.ASGITransport(app=pages_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as web:
        board = await web.get("/arena?pool=2")
        assert board.status_code == 200
        text = board.text
        assert text.index(">ace</a>") < text.index(">bee&lt;i&gt;</a>"), "best first, names escaped"
        assert "<i>" not in text.split("<main>")[1]
        bot = await web.get("/arena/bots/ace")
        assert bot.status_code == 200
        assert bot.text.count('href="/games/game') == 3
        order = ("long-game", "game2", "game1", "game0")
        listed = [bot.text.index(f'href="/games/{game}"') for game in order]
        assert listed == sorted(listed), "the game in play first, then the last ended first"
        assert '<svg id="rating-chart"' in bot.text and "<polyline" in bot.text
        missing = await web.get("/arena/bots/nobody")
        assert missing.status_code == 404 and "there is no bot" in missing.text
        unknown = await web.get("/arena?pool=9")
        assert unknown.status_code == 404 and "there is no pool" in unknown.text


async def test_without_an_arena_the_pages_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(arena_pages.ENV_ARENA, raising=False)
    transport = httpx.ASGITransport(app=Starlette(routes=arena_pages.routes()))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as web:
        page = await web.get("/arena")
    assert page.status_code == 503 and "No arena is configured" in page.text
