"""A game's versions as server-sent events: the game server's WatchGame relayed to the browser, one open
stream counted against its visitor while it lasts."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from sse_starlette.sse import EventSourceResponse
from starlette.requests import Request
from starlette.responses import Response

from kutnahora.clients.render import Names
from kutnahora.clients.sdk import ClientError, SeatCredentials
from kutnahora.web import seats, wire
from kutnahora.web.limits import Releasing
from kutnahora.web.requests import visitor
from kutnahora.web.state import Web


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
    place = await web.limits.open_stream(who)
    try:
        summary = await web.client.get_game(game_id)
        names = Names(web.component_names().components, wire.seat_names(summary))
    except BaseException:
        web.limits.streams.close(place)
        raise
    stream = EventSourceResponse(_relay(web, game_id, seat, first, names), ping=15)
    return Releasing(stream, lambda: web.limits.streams.close(place))


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
