"""The arena's pages: a leaderboard per pool, and each bot's page with its rating over time.

They read a ``kutnahora-arena`` through its public ``ArenaService`` (the SDK's
:class:`~kutnahora.clients.arena_client.ArenaClient`), named by ``$KUTNAHORA_WEB_ARENA``
(``host:port``); without it the pages say that no arena is configured. The site's menu links the
leaderboards when it is set, and each leaderboard links the other pools'. The rating chart is drawn on
the server as inline SVG, so the pages need no script. A bot's games link to their replays on this site
(``/games/ID``), which shows them when the arena places games on the game server this site talks to.

========================================  ==============================================================
``GET /arena[?pool=P&page=N]``            a pool's leaderboard (the first pool by default)
``GET /arena/bots/NAME``                  a bot's ratings, rating chart and recent games
========================================  ==============================================================
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

import grpc
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import ClientError
from kutnahora.v1 import arena_service_pb2

ENV_ARENA = "KUTNAHORA_WEB_ARENA"
PAGE_SIZE = 50
templates = Jinja2Templates(directory=str(Path(__file__).resolve().parent / "templates"))

_clients: dict[str, ArenaClient] = {}
_lock = asyncio.Lock()


def arena_address() -> str:
    """The arena this site shows (``$KUTNAHORA_WEB_ARENA``), or "" when it shows none."""
    return os.environ.get(ENV_ARENA, "").strip()


def add_menu(environment: Jinja2Templates) -> None:
    """Let ``base.html``'s menu link the arena's leaderboards when the site shows an arena."""
    environment.env.globals["arena_address"] = arena_address


add_menu(templates)


async def _client() -> ArenaClient | None:
    address = arena_address()
    if not address:
        return None
    async with _lock:
        if address not in _clients:
            _clients[address] = await ArenaClient.connect(address)
        return _clients[address]


@dataclass(frozen=True, slots=True)
class Chart:
    """A rating-over-time chart: one SVG polyline per pool, in a 600 × 200 box."""

    width: int
    height: int
    lines: list[tuple[str, str]]  # (pool, "x,y x,y ...")
    low: float
    high: float


def chart(history: list[arena_service_pb2.RatingPoint]) -> Chart | None:
    """The chart of a bot's μ after each rated game, or None without history."""
    if not history:
        return None
    width, height = 600, 200
    values = [p.mu for p in history]
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    by_pool: dict[str, list[tuple[int, float]]] = {}
    for index, point in enumerate(history):
        by_pool.setdefault(point.pool, []).append((index, point.mu))
    steps = max(1, len(history) - 1)
    lines = []
    for pool, points in sorted(by_pool.items()):
        coords = " ".join(
            f"{10 + (width - 20) * i / steps:.1f},{10 + (height - 20) * (1 - (mu - low) / span):.1f}"
            for i, mu in points
        )
        lines.append((pool, coords))
    return Chart(width, height, lines, low, high)


async def leaderboard_page(request: Request) -> Response:
    """A pool's leaderboard, one page of it."""
    try:
        client = await _client()
        if client is None:
            return templates.TemplateResponse(request, "arena_board.html", {"missing": True}, status_code=503)
        pools = [p.name for p in await client.pools()]
        pool = request.query_params.get("pool") or (pools[0] if pools else "")
        page = max(0, int(request.query_params.get("page", "0") or 0))
        board = await client.leaderboard(pool, page, PAGE_SIZE)
    except ValueError:
        return Response("page must be a number", status_code=400)
    except ClientError as error:
        status = 404 if error.code == grpc.StatusCode.INVALID_ARGUMENT else 503
        return templates.TemplateResponse(
            request, "arena_board.html", {"error": str(error), "pools": []}, status_code=status
        )
    pages = max(1, (board.total + PAGE_SIZE - 1) // PAGE_SIZE)
    context = {"pools": pools, "pool": pool, "board": board, "page": page, "pages": pages}
    return templates.TemplateResponse(request, "arena_board.html", context)


async def bot_page(request: Request) -> Response:
    """A bot's ratings, rating chart and recent games."""
    try:
        client = await _client()
        if client is None:
            return templates.TemplateResponse(request, "arena_board.html", {"missing": True}, status_code=503)
        profile = await client.bot_profile(request.path_params["name"])
    except ClientError as error:
        status = 404 if error.code == grpc.StatusCode.NOT_FOUND else 503
        return templates.TemplateResponse(
            request, "arena_bot.html", {"error": str(error)}, status_code=status
        )
    context = {"profile": profile, "chart": chart(list(profile.history))}
    return templates.TemplateResponse(request, "arena_bot.html", context)


def routes() -> list[Route]:
    """The arena pages' routes, for the web application's route list."""
    return [Route("/arena", leaderboard_page), Route("/arena/bots/{name}", bot_page)]
