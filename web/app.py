"""The web application: pages, a JSON API over the game server, and live games as server-sent events.

:func:`create_app` builds a Starlette application that talks to one game server through
:class:`kutnahora.clients.sdk.Client`, as any bot does:

========================================  ==============================================================
``GET /``                                 the lobby: games waiting, active and finished; create or join
``GET /games/ID[?v=N]``                   a game drawn as a board, live or replayed at version N
``GET /tournament``                       a tournament's standings (``--results FILE``, or an upload)
``GET /tournament/games/ID``              a tournament game's replay (played again here from its file)
``GET /api/games``                        the lobby's rows: every live game, a page of the ended ones
``GET /api/games/ID``                     one game's summary, and which seat this browser holds in it
``GET /api/games/ID/events``              every version of the game from ``?from=N`` on, as SSE, live
``POST /api/games``                       create a game; seat bots and this browser's player
``POST /api/games/ID/join``               take a waiting seat
``POST /api/games/ID/decide``             answer the pending decision with a listed option's index
``POST /api/games/ID/resign``             resign this browser's seat
``GET /arena…``                           the arena's leaderboards and bots' pages (:mod:`.arena_pages`)
``GET|POST /arena/author…``               a bot's author's area, with its API key (:mod:`.author_pages`)
========================================  ==============================================================

A browser's seat token lives only in its cookie (:mod:`.seats`); every POST must come from this site's
own pages. A spectator's page and event stream are built from the server's spectator view only. Each
visitor (:mod:`.visitors`) is held to its own limits (:mod:`.limits`): creations and joins a minute,
unfinished games, requests a second and open event streams; past one it gets 429, and nothing is created,
joined, listed or watched for it. Requests and refusals are counted (:mod:`.metrics`; ``/metrics`` is not
one of these routes) and refusals logged, a few (:mod:`.refusals`).

The routes live in modules of their own, all sharing :class:`~kutnahora.web.state.Web`: the pages in
:mod:`.pages`, the JSON API in :mod:`.api` (each route wrapped by :func:`~kutnahora.web.requests.api`, which
reads requests and turns refusals into sentences, :mod:`.requests`), the event streams in :mod:`.events`,
the tournament page and its games' replays in :mod:`.tournament_replays`; every answer carries
:mod:`.headers`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import structlog
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from kutnahora.plumbing.callers import Network
from kutnahora.plumbing.quota_store import MEMORY, QuotaStore
from kutnahora.web import arena_pages, author_pages
from kutnahora.web.api import (
    components,
    create_game,
    decide,
    get_game,
    join_game,
    list_games,
    resign,
    sweep_ended,
)
from kutnahora.web.bots import BotPlayers
from kutnahora.web.connection import Connection
from kutnahora.web.events import game_events
from kutnahora.web.headers import SecurityHeaders
from kutnahora.web.hosts import AllowedHosts
from kutnahora.web.limits import Limits, VisitorGate, VisitorLimits
from kutnahora.web.metrics import RequestMetrics, WebMetrics
from kutnahora.web.pages import HERE, game_page, lobby_page
from kutnahora.web.requests import api
from kutnahora.web.standings import read
from kutnahora.web.state import Web
from kutnahora.web.tournament_replays import tournament_game, tournament_page
from kutnahora.web.visitors import Visitors


def create_app(
    address: str,
    *,
    tls: bool = False,
    ca_cert: str | None = None,
    quota_token: str | None = None,
    results: Path | None = None,
    allowed_hosts: Sequence[str] = ("*",),
    limits: Limits | None = None,
    trusted_proxies: Sequence[Network] = (),
    metrics: WebMetrics | None = None,
    quota_store: str = MEMORY,
    quota_store_prefix: str = "kutnahora",
) -> Starlette:
    """The application for the game server at ``address``; it connects in the background when it starts,
    and again whenever the connection drops (:mod:`.connection`).

    ``results`` is a tournament results file to show at ``/tournament``; it is read at once, so a bad file
    is reported before the server starts (:class:`ResultsError`). ``allowed_hosts`` are the names a request's
    Host header may give (:mod:`.hosts`; ``*`` allows any). ``limits`` are what one visitor may do
    (:class:`Limits`; by default its defaults), and a request from one of ``trusted_proxies`` is the
    visitor's its ``X-Forwarded-For`` names (:mod:`.visitors`). The requests and refusals are counted in
    ``metrics`` (a new :class:`WebMetrics` if none is given; ``app.state.metrics``), which this application
    never serves: :class:`~kutnahora.web.metrics.MetricsEndpoint` does, on a port of its own.

    The per-visitor counts live in ``quota_store`` (:mod:`kutnahora.plumbing.quota_store`): ``memory``,
    each replica's own, or a ``redis://`` URL every web replica shares, its keys starting with
    ``quota_store_prefix`` then ``:web``; ValueError for anything else.
    """
    tournament = read(results) if results is not None else None
    metrics = metrics if metrics is not None else WebMetrics()
    store = QuotaStore(
        quota_store,
        f"{quota_store_prefix}:web",
        log=structlog.get_logger("kutnahora.web"),
        on_error=metrics.quota_store_errors.inc,
    )
    visitor_limits = VisitorLimits(
        limits if limits is not None else Limits(), Visitors(trusted_proxies), metrics=metrics, store=store
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        connection = Connection(address, tls=tls, ca_cert=ca_cert, quota_token=quota_token)
        web = Web(
            connection=connection,
            bots=BotPlayers(address, tls=tls, ca_cert=ca_cert, quota_token=quota_token),
            limits=visitor_limits,
            tournament=tournament,
            results=results,
            tls=tls,
            ca_cert=ca_cert,
            quota_token=quota_token,
        )
        connection.on_connect = web.connected
        app.state.web = web
        await store.check()
        connecting = asyncio.create_task(connection.run(), name="game server connection")
        sweeping = asyncio.create_task(sweep_ended(web), name="ended games") if store.shared else None
        try:
            yield
            await web.bots.close()
            for replay in web.replayed.values():
                replay.cancel()
        finally:
            for task in (connecting, sweeping):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            await store.close()

    routes = [
        Route("/", lobby_page),
        Route("/games/{game_id}", game_page),
        Route("/tournament", tournament_page, methods=["GET", "POST"]),
        Route("/tournament/games/{game_id}", tournament_game, methods=["GET", "POST"]),
        Route("/api/components", api(components)),
        Route("/api/games", api(list_games), methods=["GET"]),
        Route("/api/games", api(create_game), methods=["POST"]),
        Route("/api/games/{game_id}", api(get_game)),
        Route("/api/games/{game_id}/events", api(game_events)),
        Route("/api/games/{game_id}/join", api(join_game), methods=["POST"]),
        Route("/api/games/{game_id}/decide", api(decide), methods=["POST"]),
        Route("/api/games/{game_id}/resign", api(resign), methods=["POST"]),
        *arena_pages.routes(),
        *author_pages.routes(),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    middleware = [
        Middleware(RequestMetrics, metrics=metrics, routes=routes),
        Middleware(SecurityHeaders),
        Middleware(AllowedHosts, hosts=allowed_hosts),
        Middleware(VisitorGate, limits=visitor_limits),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, middleware=middleware)
    app.state.metrics = metrics
    app.state.limits = visitor_limits  # the per-visitor limits, the connections' too (kutnahora.web.cli)
    return app
