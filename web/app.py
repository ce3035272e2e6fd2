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
========================================  ==============================================================

A browser's seat token lives only in its cookie (:mod:`.seats`); every POST must come from this site's
own pages. A spectator's page and event stream are built from the server's spectator view only. Each
visitor (:mod:`.visitors`) is held to its own limits (:mod:`.limits`): creations and joins a minute,
unfinished games, requests a second and open event streams; past one it gets 429, and nothing is created,
joined, listed or watched for it. Requests and refusals are counted (:mod:`.metrics`; ``/metrics`` is not
one of these routes) and refusals logged, a few (:mod:`.refusals`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders, UploadFile
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kutnahora.clients.render import Names
from kutnahora.clients.sdk import Client, ClientError, SeatCredentials
from kutnahora.clients.tournament.results import FORMAT, GameRecord
from kutnahora.plumbing.callers import Network
from kutnahora.v1 import game_pb2
from kutnahora.web import arena_pages, lobby, replays, seats, wire
from kutnahora.web.bots import BotPlayers
from kutnahora.web.connection import Connection
from kutnahora.web.hosts import AllowedHosts
from kutnahora.web.limits import STATE_KEY, Limits, Refused, Releasing, VisitorGate, VisitorLimits
from kutnahora.web.metrics import RequestMetrics, WebMetrics
from kutnahora.web.replays import ReplayError, replay_onto
from kutnahora.web.standings import ResultsError, Tournament, from_records, read
from kutnahora.web.visitors import Visitors

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
SEAT_KINDS = ("you", "greedy", "mcts", "random", "open")
LOBBY_OBSERVATIONS = 40  # active games whose round and scores the lobby reads at most, per listing

HTTP_STATUS = {
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.UNAUTHENTICATED: 403,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503,
}

SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
}


class BadRequest(Exception):
    """A request the page should not have sent; the message says what is wrong."""

    status = 400


class TooLarge(BadRequest):
    """A request body longer than :data:`MAX_BODY_BYTES` (refused before the rest of it is read)."""

    status = 413


class TooSlow(BadRequest):
    """A request body that did not arrive within :data:`BODY_SECONDS`."""

    status = 408


BODY_SECONDS = 5.0
"""How long the API waits for a request's body to arrive in full: a client that sends it a few bytes at a
time would otherwise hold its connection, and a coroutine here, for as long as it liked."""

MAX_UPLOAD_BYTES = 17 * 1024 * 1024
"""The longest upload of the tournament page read: a results file of 16 MiB and its form's envelope."""


MAX_BODY_BYTES = 16 * 1024
"""The longest request body the API reads: its own pages send a few dozen bytes (a seat list, a decision's
index); a longer body is refused with 413 as soon as it is seen to be longer, not buffered in memory."""


@dataclass
class Web:
    """What the routes share: the game server's connection, its components, the bots, the tournament.

    The components are read on each new connection (:meth:`connected`); until the first, the routes that
    need them or the game server answer "game server unavailable" (503).
    """

    connection: Connection
    bots: BotPlayers
    limits: VisitorLimits = field(default_factory=lambda: VisitorLimits(Limits.off()))
    names: Names | None = None
    components: dict[str, Any] | None = None
    tournament: Tournament | None = None
    results: Path | None = None
    tls: bool = False
    ca_cert: str | None = None
    quota_token: str | None = None  # the game server's --quota-token, sent with the games created here
    lobby_cache: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    replayed: dict[str, asyncio.Task[str]] = field(default_factory=dict)

    @property
    def client(self) -> Client:
        """The game server's client; a ClientError (UNAVAILABLE) while it cannot be reached."""
        return self.connection.client

    @property
    def address(self) -> str:
        return self.connection.address

    def component_names(self) -> Names:
        """The component set's names; unavailable until the game server was first reached."""
        self.connection.client  # noqa: B018  (raises "unavailable" while there is no connection)
        if self.names is None:
            raise ClientError("The game server's components are not read yet.", grpc.StatusCode.UNAVAILABLE)
        return self.names

    async def connected(self, client: Client) -> None:
        """Read the components of a newly connected game server."""
        component_set = await client.components()
        self.names = Names(component_set)
        self.components = {**wire.to_json(component_set), "words": wire.words(self.names)}


def error_response(error: Exception) -> JSONResponse:
    """A JSON ``{"error": sentence}`` with the HTTP status that matches the gRPC one."""
    if isinstance(error, ClientError):
        status = HTTP_STATUS.get(error.code, 502) if error.code is not None else 502
        return JSONResponse({"error": str(error)}, status_code=status)
    return JSONResponse(
        {"error": str(error)}, status_code=error.status if isinstance(error, BadRequest) else 400
    )


def api(
    handler: Callable[[Request, Web], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    """Wrap an API route: POSTs must come from this site, errors become sentences with a status."""

    async def route(request: Request) -> Response:
        if request.method != "GET" and not seats.same_origin(request):
            return JSONResponse(
                {"error": "Refused: this request did not come from this site's own pages."}, status_code=403
            )
        try:
            return await handler(request, request.app.state.web)
        except (ClientError, BadRequest) as error:
            return error_response(error)
        except Refused as refused:
            return refused.response()

    return route


def visitor(request: Request) -> str:
    """Who sent the request, as :class:`VisitorGate` named them."""
    return str(request.scope.get("state", {}).get(STATE_KEY, "unknown"))


def bounded_body(request: Request, most: int, sentence: str) -> Request:
    """``request`` as one whose body :class:`TooLarge` (saying ``sentence``) ends once more than ``most``
    bytes have come (at once when its ``Content-Length`` says so), so that whatever reads it (a form's
    parser, which spools files to disk) never takes more."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > most:
        raise TooLarge(sentence)
    seen = 0

    async def receive() -> Message:
        nonlocal seen
        message = await request.receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > most:
                raise TooLarge(sentence)
        return message

    return Request(request.scope, receive)


async def json_body(request: Request) -> dict[str, Any]:
    """The request's body, a JSON object of at most :data:`MAX_BODY_BYTES`; :class:`BadRequest` (or
    :class:`TooLarge`) with a sentence otherwise. The body is read as it comes, and no further than the
    bound: a client that announces or sends more is answered at once."""
    bounded = bounded_body(
        request,
        MAX_BODY_BYTES,
        f"The request body is longer than {MAX_BODY_BYTES:,} bytes; this API takes short JSON.",
    )
    try:
        async with asyncio.timeout(BODY_SECONDS):
            body = await bounded.body()
    except TimeoutError:
        raise TooSlow(f"The request body did not arrive within {BODY_SECONDS:g} s.") from None
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):  # nested past the parser's depth
        raise BadRequest("The request body is not JSON.") from None
    if not isinstance(data, dict):
        raise BadRequest("The request body must be a JSON object.")
    return data


def integer(data: dict[str, Any], key: str, low: int, high: int, default: int | None = None) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadRequest(f"'{key}' must be a whole number from {low} to {high}.")
    return value


def text(data: dict[str, Any], key: str, default: str, most: int = 100) -> str:
    value = data.get(key, default)
    if not isinstance(value, str) or len(value) > most:
        raise BadRequest(f"'{key}' must be a text of at most {most} characters.")
    return value.strip() or default


# Pages.


async def lobby_page(request: Request) -> Response:
    web: Web = request.app.state.web
    return templates.TemplateResponse(
        request,
        "lobby.html",
        {
            "server": web.address,
            "available": web.connection.available,
            "tournament": web.tournament is not None,
        },
    )


async def game_page(request: Request) -> Response:
    web: Web = request.app.state.web
    game_id = request.path_params["game_id"]
    if not seats.GAME_ID.match(game_id):
        return not_found(request, f"There is no game {game_id[:64]!r}: a game id is letters and digits.")
    try:
        await web.client.get_game(game_id)
    except ClientError as error:
        if error.code == grpc.StatusCode.NOT_FOUND:
            return not_found(request, f"The game server {web.address} has no game {game_id}.")
        # Unavailable or failing: the page says so itself, and keeps trying.
    return templates.TemplateResponse(request, "game.html", {"game_id": game_id})


def not_found(request: Request, message: str) -> Response:
    return templates.TemplateResponse(request, "not_found.html", {"message": message}, status_code=404)


async def tournament_page(request: Request) -> Response:
    web: Web = request.app.state.web
    error = ""
    shown = web.tournament
    if request.method == "POST":
        if not seats.same_origin(request):
            return Response("Refused: this request did not come from this site's own pages.", status_code=403)
        status = 400
        try:
            upload_body = bounded_body(request, MAX_UPLOAD_BYTES, "The results file is larger than 16 MiB.")
            async with upload_body.form(max_files=1) as form:
                upload = form.get("results")
                if not isinstance(upload, UploadFile):
                    error = "Choose a results file (results.json) to upload."
                else:
                    shown, error = await _read_upload(upload)
                    shown = shown or web.tournament
        except TooLarge as too_large:
            error, status = str(too_large), 413
    return templates.TemplateResponse(
        request,
        "tournament.html",
        {"tournament": shown, "error": error},
        status_code=status if error else 200,
    )


async def _read_upload(upload: UploadFile) -> tuple[Tournament | None, str]:
    """An uploaded results file, shown to the browser that sent it only; or an error sentence."""
    raw = await upload.read(16 * 1024 * 1024 + 1)
    if len(raw) > 16 * 1024 * 1024:
        return None, "The results file is larger than 16 MiB."
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ResultsError(f"it is not a {FORMAT} results file")
        records = [GameRecord.from_json(g) for g in data.get("games", [])]
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None, f"{upload.filename} is not JSON."
    except (KeyError, TypeError, ValueError, ResultsError) as error:
        return None, f"{upload.filename} cannot be read: {error}."
    return from_records(upload.filename or "upload", dict(data.get("config", {})), records), ""


async def tournament_game(request: Request) -> Response:
    """A tournament game's replay: on the game server already, or played again there from its saved file.

    Playing a game again creates it on the game server, so it is counted as a creation of the visitor who
    asks first (the creation rate, and a place among its unfinished games until the replay has ended); a
    game played again here, or being played, is shown to anyone who asks for it without counting again.
    """
    web: Web = request.app.state.web
    game_id = request.path_params["game_id"]
    if not seats.GAME_ID.match(game_id):
        return Response("No such game.", status_code=404)
    if request.method == "POST" and not seats.same_origin(request):
        return Response("Refused: this request did not come from this site's own pages.", status_code=403)
    done = _replay_task(web, game_id)
    if done is not None and done.done():
        return RedirectResponse(f"/games/{done.result()}", status_code=303)
    try:
        await web.client.get_game(game_id)
        return RedirectResponse(f"/games/{game_id}", status_code=303)
    except ClientError as error:
        if error.code != grpc.StatusCode.NOT_FOUND:
            return _replay_page(request, game_id, None, str(error), 502)
    path = _saved_replay(web, game_id)
    if path is None:
        message = (
            f"Game {game_id} is not on the game server {web.address}, and this web server has no "
            "saved replay of it: start kutnahora-web with --results FILE (the tournament's results, beside "
            "its replays), or run the tournament with --server pointing at this game server."
        )
        return _replay_page(request, game_id, None, message, 404)
    if request.method == "GET":
        return _replay_page(request, game_id, path, "", 200)
    if done is None:
        try:
            done = await _start_replay(web, visitor(request), game_id, path)
        except Refused as refused:
            page = _replay_page(request, game_id, path, str(refused), 429)
            page.headers.update(refused.headers)
            return page
    try:
        new_id = await asyncio.shield(done)
    except (ReplayError, ClientError) as error:
        web.replayed.pop(game_id, None)
        return _replay_page(request, game_id, path, f"{error}.", 409)
    return RedirectResponse(f"/games/{new_id}", status_code=303)


def _replay_task(web: Web, game_id: str) -> asyncio.Task[str] | None:
    """The playing again of a tournament game that has succeeded here or is under way; None if there is
    none (never started, or failed)."""
    task = web.replayed.get(game_id)
    if task is None or not task.done():
        return task
    return task if not task.cancelled() and task.exception() is None else None


async def _start_replay(web: Web, who: str, game_id: str, path: Path) -> asyncio.Task[str]:
    """Play a tournament game again, as the visitor's creation: :class:`Refused` past its creation rate or
    its unfinished games; the place it takes is freed when the replay has ended, however it ends."""
    web.limits.create_or_join(who)
    await _reserve_game(web, who)
    started = _replay_task(web, game_id)  # another visitor's, started while this one's games were read
    if started is not None:
        web.limits.games.unreserve(who)
        return started
    task = asyncio.create_task(_play_again(web, path))
    task.add_done_callback(lambda _: web.limits.games.unreserve(who))
    web.replayed[game_id] = task
    return task


async def _play_again(web: Web, path: Path) -> str:
    async with await Client.connect(
        web.address, tls=web.tls, ca_cert=web.ca_cert, quota_token=web.quota_token
    ) as client:
        return await replay_onto(client, replays.load(path))


def _saved_replay(web: Web, game_id: str) -> Path | None:
    """The saved replay of a game of the --results tournament, where the runner wrote it."""
    if web.tournament is None or web.results is None:
        return None
    record = next((r for r in web.tournament.games if r.game_id == game_id), None)
    if record is None:
        return None
    folder = web.results.parent
    candidates = [folder / f"{web.results.stem}.replays" / f"{game_id}.json"]
    if record.replay and not record.replay.startswith("kutnahora://"):
        saved = Path(record.replay)
        candidates = [saved, folder / saved, folder / saved.name, *candidates]
    return next((c for c in candidates if c.is_file()), None)


def _replay_page(request: Request, game_id: str, path: Path | None, error: str, status: int) -> Response:
    return templates.TemplateResponse(
        request,
        "replay.html",
        {"game_id": game_id, "path": path, "error": error},
        status_code=status,
    )


# The API.


async def components(request: Request, web: Web) -> Response:
    web.component_names()
    return JSONResponse(web.components, headers={"cache-control": "max-age=3600"})


async def list_games(request: Request, web: Web) -> Response:
    """Every waiting and active game, and a page of the finished and abandoned ones (:mod:`.lobby`)."""
    try:
        wanted = lobby.Wanted.parse(dict(request.query_params))
        answer = await lobby.listing(web.client, wanted)
    except lobby.ListingError as error:
        raise BadRequest(str(error)) from None
    active = [row for row in answer["games"] if row["status"] == "active"][:LOBBY_OBSERVATIONS]
    await asyncio.gather(*(_add_position(web, row) for row in active))
    return JSONResponse({**answer, "server": web.address})


async def _add_position(web: Web, row: dict[str, Any]) -> None:
    """Round and scores of an active game, from its spectator observation (cached by version)."""
    cached = web.lobby_cache.get(row["game_id"])
    if cached is None or cached[0] != row["version"]:
        try:
            response = await web.client.observe(row["game_id"])
        except ClientError:
            return
        obs = response.observation
        position = {"round": obs.round, "rounds": obs.rounds, "scores": list(obs.scores)}
        cached = (row["version"], position)
        web.lobby_cache[row["game_id"]] = cached
        if len(web.lobby_cache) > 4 * LOBBY_OBSERVATIONS:
            web.lobby_cache.pop(next(iter(web.lobby_cache)))
    row.update(cached[1])


async def get_game(request: Request, web: Web) -> Response:
    game_id = request.path_params["game_id"]
    summary = await web.client.get_game(game_id)
    seat = seats.seat_of(request, game_id)
    running = None
    if not summary.clock.disabled and summary.status == game_pb2.GAME_STATUS_ACTIVE:
        running = wire.clock(await web.client.observe(game_id))
    return JSONResponse(
        {"game": wire.summary(summary), "seat": None if seat is None else seat.seat, "clock": running}
    )


async def game_events(request: Request, web: Web) -> Response:
    """Every version of a game from ``from`` on (or after the browser's Last-Event-ID), then ``end``."""
    game_id = request.path_params["game_id"]
    seat = seats.seat_of(request, game_id)
    start = request.headers.get("last-event-id", "")
    if start.isdigit():
        first = int(start) + 1
    else:
        raw = request.query_params.get("from", "0")
        first = int(raw) if raw.isdigit() else 0
    who = visitor(request)
    web.limits.open_stream(who)
    try:
        summary = await web.client.get_game(game_id)
        names = Names(web.component_names().components, wire.seat_names(summary))
    except BaseException:
        web.limits.streams.close(who)
        raise
    stream = EventSourceResponse(_relay(web, game_id, seat, first, names), ping=15)
    return Releasing(stream, lambda: web.limits.streams.close(who))


async def _relay(
    web: Web, game_id: str, seat: SeatCredentials | None, first: int, names: Names
) -> AsyncIterator[dict[str, str]]:
    """Relay WatchGame: a ``version`` event per message, ``seats`` when seats are taken, then ``end``.

    A message that tells of the seats repeats the current version (its status may have changed: the last
    seat taken starts the game); the page keeps one entry per version, so the repeat replaces it.
    """
    try:
        async for message in web.client.watch(game_id, seat, first):
            if message.seats:
                # Who holds the seats (a game waiting for players); it repeats the current version.
                names = Names(web.component_names().components, [s.name for s in message.seats])
                yield {"event": "seats", "data": json.dumps(wire.seats_message(message))}
            data = wire.watch_message(message, names)
            yield {"event": "version", "id": str(data["version"]), "data": json.dumps(data)}
            if message.status in wire.ENDED:
                break
        yield {"event": "end", "data": "{}"}
    except ClientError as error:
        yield {"event": "failure", "data": json.dumps({"error": str(error)})}


async def create_game(request: Request, web: Web) -> Response:
    who = visitor(request)
    # The rate is taken before the body is read, so that malformed requests count too.
    web.limits.create_or_join(who)
    data = await json_body(request)
    players = integer(data, "players", 2, 4)
    kinds = data.get("seats")
    if not isinstance(kinds, list) or len(kinds) != players or any(k not in SEAT_KINDS for k in kinds):
        raise BadRequest(f"'seats' must name each of the {players} seats: {', '.join(SEAT_KINDS)}.")
    if kinds.count("you") > 1:
        raise BadRequest("You can take only one seat of a game.")
    name = text(data, "name", "person")
    delay = data.get("delay", 0.5)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or not 0 <= delay <= 10:
        raise BadRequest("'delay' must be a number of seconds from 0 to 10.")
    per_move = data.get("clock", 0)
    if isinstance(per_move, bool) or not isinstance(per_move, int) or not 0 <= per_move <= 3600:
        raise BadRequest("'clock' must be whole seconds a decision, from 0 (no clock) to 3600.")
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or abs(seed) >= 2**62):
        raise BadRequest("'seed' must be a whole number.")
    settings = game_pb2.ClockSettings(disabled=True)
    if per_move:
        # Each decision may take per_move seconds; beyond that, a bank of ten times as much for the game.
        settings = game_pb2.ClockSettings()
        settings.decision_time.FromSeconds(per_move)
        settings.time_bank.FromSeconds(10 * per_move)
    await _reserve_game(web, who)
    try:
        created = await web.client.create_game(players, seed=seed, clock=settings, label="kutnahora-web")
    except BaseException:
        web.limits.games.unreserve(who)
        raise
    game_id = created.game.game_id
    web.limits.games.bind(who, game_id)
    response = JSONResponse({"game_id": game_id})
    if "you" in kinds:
        mine = await web.client.join_game(game_id, kinds.index("you"), name)
        seats.remember(response, request, mine)
    bots = [(seat, kind) for seat, kind in enumerate(kinds) if kind in ("greedy", "mcts", "random")]
    if bots:
        await web.bots.seat(
            game_id, bots, float(delay), seed if seed is not None else random.randrange(2**31)
        )
    return response


async def _reserve_game(web: Web, who: str) -> None:
    """Take a place among the visitor's unfinished games for a game about to be created, freeing first
    those of its games that have ended if it holds its limit; :class:`Refused` if it still does."""
    if web.limits.games.full(who):
        await _forget_ended(web, who)
    web.limits.reserve_game(who)


async def _forget_ended(web: Web, who: str) -> None:
    """Free the places of the visitor's games that have ended (or that the game server no longer has),
    asking the game server about each; one it cannot answer about keeps its place."""
    for game_id in web.limits.games.games(who):
        try:
            summary = await web.client.get_game(game_id)
        except ClientError as error:
            if error.code == grpc.StatusCode.NOT_FOUND:
                web.limits.games.ended(who, game_id)
            continue
        if summary.status in wire.ENDED:
            web.limits.games.ended(who, game_id)


async def join_game(request: Request, web: Web) -> Response:
    game_id = request.path_params["game_id"]
    web.limits.create_or_join(visitor(request))
    data = await json_body(request)
    seat = data.get("seat")
    if seat is not None:
        seat = integer(data, "seat", 0, 3)
    held = seats.seat_of(request, game_id)
    if held is not None:
        raise BadRequest(f"This browser already holds seat {held.seat} of this game.")
    joined = await web.client.join_game(game_id, seat, text(data, "name", "person"))
    response = JSONResponse({"game_id": game_id, "seat": joined.seat})
    seats.remember(response, request, joined)
    return response


def _seat(request: Request) -> SeatCredentials:
    game_id = request.path_params["game_id"]
    seat = seats.seat_of(request, game_id)
    if seat is None:
        raise BadRequest("This browser holds no seat in this game.")
    return seat


async def decide(request: Request, web: Web) -> Response:
    seat = _seat(request)
    data = await json_body(request)
    version = integer(data, "version", 0, 2**62)
    index = integer(data, "index", 0, 10_000)
    current = await web.client.observe(seat.game_id, seat)
    obs = current.observation
    if obs.version != version:
        return JSONResponse(
            {"error": f"The game has moved on to version {obs.version}; choose again."}, status_code=409
        )
    if obs.pending.seat != seat.seat or not obs.pending.options:
        return JSONResponse({"error": "It is not your turn."}, status_code=409)
    if index >= len(obs.pending.options):
        raise BadRequest(f"There is no option {index}; the options are 0 to {len(obs.pending.options) - 1}.")
    answer = await web.client.submit(seat, obs, index)
    return JSONResponse({"version": int(answer.version), "game_over": answer.game_over})


async def resign(request: Request, web: Web) -> Response:
    seat = _seat(request)
    before = await web.client.get_game(seat.game_id)
    held = next((s for s in before.seats if s.seat == seat.seat), None)
    if held is not None and (held.resigned or held.replaced):
        return JSONResponse(
            {"error": f"You have already resigned seat {seat.seat}; the server plays it to the end."},
            status_code=409,
        )
    summary = await web.client.resign(seat)
    return JSONResponse({"game": wire.summary(summary)})


class SecurityHeaders:
    """Every answer forbids framing, sniffing and scripts from elsewhere (a plain ASGI middleware, so
    that event streams pass through unbuffered)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in SECURITY_HEADERS.items():
                    headers.setdefault(key, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)


templates = Jinja2Templates(directory=str(HERE / "templates"))
arena_pages.add_menu(templates)


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
    """
    tournament = read(results) if results is not None else None
    metrics = metrics if metrics is not None else WebMetrics()
    visitor_limits = VisitorLimits(
        limits if limits is not None else Limits(), Visitors(trusted_proxies), metrics=metrics
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
        connecting = asyncio.create_task(connection.run(), name="game server connection")
        try:
            yield
            await web.bots.close()
            for task in web.replayed.values():
                task.cancel()
        finally:
            connecting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await connecting

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
