"""The JSON API over the game server: the components, the lobby's rows, one game, and creating, joining,
deciding and resigning a seat (each route wrapped by :func:`kutnahora.web.requests.api`)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import grpc
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kutnahora.clients.sdk import ClientError, SeatCredentials
from kutnahora.v1 import game_pb2
from kutnahora.web import lobby, seats, wire
from kutnahora.web.limits import SWEEP_SECONDS
from kutnahora.web.requests import BadRequest, integer, json_body, text, visitor
from kutnahora.web.state import Web

SEAT_KINDS = ("you", "greedy", "mcts", "random", "open")
LOBBY_OBSERVATIONS = 40  # active games whose round and scores the lobby reads at most, per listing


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


async def create_game(request: Request, web: Web) -> Response:
    who = visitor(request)
    # The rate is taken before the body is read, so that malformed requests count too.
    await web.limits.create_or_join(who)
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
    place = await reserve_game(web, who)
    try:
        created = await web.client.create_game(players, seed=seed, clock=settings, label="kutnahora-web")
    except BaseException:
        web.limits.games.unreserve(place)
        raise
    game_id = created.game.game_id
    web.limits.games.bind(who, place, game_id)
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


async def reserve_game(web: Web, who: str) -> str | None:
    """Take a place among the visitor's unfinished games for a game about to be created, freeing first
    those of its games that have ended if it holds its limit: the member naming the place (None with the
    limit off); :class:`Refused` if it still holds its limit."""
    if await web.limits.games.full(who):
        await forget_ended(web, who)
    return await web.limits.reserve_game(who)


async def forget_ended(web: Web, who: str) -> None:
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


async def sweep_ended(web: Web) -> None:
    """Every :data:`~kutnahora.web.limits.SWEEP_SECONDS`, free the places of the games created through
    this replica that have ended, until cancelled: with a store the replicas share, a visitor that now
    reaches another replica would otherwise leave them held here (each replica renews its places)."""
    while True:
        await asyncio.sleep(SWEEP_SECONDS)
        for who in web.limits.games.visitors():
            await forget_ended(web, who)


async def join_game(request: Request, web: Web) -> Response:
    game_id = request.path_params["game_id"]
    await web.limits.create_or_join(visitor(request))
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
