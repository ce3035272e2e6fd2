"""The HTML pages of the lobby and of a game, their templates, and the page for a game there is not."""

from __future__ import annotations

from pathlib import Path

import grpc
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from kutnahora.clients.sdk import ClientError
from kutnahora.web import arena_pages, seats
from kutnahora.web.state import Web

HERE = Path(__file__).resolve().parent

templates = Jinja2Templates(directory=str(HERE / "templates"))
arena_pages.add_menu(templates)


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
