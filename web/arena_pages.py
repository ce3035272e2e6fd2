"""The arena's pages: a leaderboard per pool, and each bot's page with its rating over time.

They read a ``kutnahora-arena`` through its public ``ArenaService`` (the SDK's
:class:`~kutnahora.clients.arena_client.ArenaClient`), named by ``$KUTNAHORA_WEB_ARENA``
(``host:port``; over TLS when ``$KUTNAHORA_WEB_ARENA_TLS`` is 1 or ``$KUTNAHORA_WEB_ARENA_CA_CERT`` names
the PEM file of the CA to trust, as an arena off this machine needs: the author's pages send a bot's API
key); without it the pages say that no arena is configured. The site's menu links the leaderboards when
it is set, and each leaderboard links the other pools'. A bot whose games its hosted code plays in the
arena's sandbox is marked "hosted vN" (the version played). The rating chart is drawn on the server as
inline SVG (:mod:`.rating_plot`), so the pages need no script. A bot's games link to their replays on
this site (``/games/ID``), which shows them when the arena places games on the game server this site
talks to.

========================================  ==============================================================
``GET /arena[?pool=P&page=N]``            a pool's leaderboard (the first pool by default)
``GET /arena/bots/NAME``                  a bot's ratings, rating chart and recent games
========================================  ==============================================================

Both link the author's area (:mod:`.author_pages`), whose calls act for a bot with its API key: the
client these pages share is an :class:`~kutnahora.clients.arena_client.ArenaClient`.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import grpc
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import ClientError
from kutnahora.web.rating_plot import plot

ENV_ARENA = "KUTNAHORA_WEB_ARENA"
ENV_ARENA_TLS = "KUTNAHORA_WEB_ARENA_TLS"
ENV_ARENA_CA_CERT = "KUTNAHORA_WEB_ARENA_CA_CERT"
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


async def client() -> ArenaClient | None:
    """The client of the arena this site shows (one connection for every page), or None without one."""
    address = arena_address()
    if not address:
        return None
    tls = os.environ.get(ENV_ARENA_TLS, "").strip() not in ("", "0")
    ca_cert = os.environ.get(ENV_ARENA_CA_CERT, "").strip() or None
    async with _lock:
        if address not in _clients:
            _clients[address] = await ArenaClient.connect(address, tls=tls, ca_cert=ca_cert)
        return _clients[address]


async def leaderboard_page(request: Request) -> Response:
    """A pool's leaderboard, one page of it."""
    try:
        arena = await client()
        if arena is None:
            return templates.TemplateResponse(request, "arena_board.html", {"missing": True}, status_code=503)
        pools = [p.name for p in await arena.pools()]
        pool = request.query_params.get("pool") or (pools[0] if pools else "")
        page = max(0, int(request.query_params.get("page", "0") or 0))
        board = await arena.leaderboard(pool, page, PAGE_SIZE)
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
        arena = await client()
        if arena is None:
            return templates.TemplateResponse(request, "arena_board.html", {"missing": True}, status_code=503)
        profile = await arena.bot_profile(request.path_params["name"])
    except ClientError as error:
        status = 404 if error.code == grpc.StatusCode.NOT_FOUND else 503
        return templates.TemplateResponse(
            request, "arena_bot.html", {"error": str(error)}, status_code=status
        )
    context = {"profile": profile, "plot": plot(profile.history)}
    return templates.TemplateResponse(request, "arena_bot.html", context)


def routes() -> list[Route]:
    """The arena pages' routes, for the web application's route list."""
    return [Route("/arena", leaderboard_page), Route("/arena/bots/{name}", bot_page)]
