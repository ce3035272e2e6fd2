"""A browser's seats: each seat token lives in an HttpOnly cookie of that browser, and nowhere else.

The cookie ``kh_seat_GAMEID`` holds ``SEAT.TOKEN``. It is HttpOnly (no script reads it), SameSite=Strict (no
other site's page sends it) and Secure over HTTPS; the web server keeps no copy, so the token is never in a
URL, a page or a log line. State-changing requests are accepted only from this site's own pages
(:func:`same_origin`): a request whose ``Origin`` (or, without one, ``Sec-Fetch-Site``) names another site is
refused before anything is done.
"""

from __future__ import annotations

import re
from typing import Final

from starlette.requests import Request
from starlette.responses import Response

from kutnahora.clients.sdk import SeatCredentials

COOKIE_PREFIX: Final = "kh_seat_"
GAME_ID: Final = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TOKEN: Final = re.compile(r"^[A-Za-z0-9_.~+/=-]{8,256}$")
MAX_AGE: Final = 7 * 24 * 3600


def cookie_name(game_id: str) -> str:
    """The cookie that holds this browser's seat in a game."""
    return f"{COOKIE_PREFIX}{game_id}"


def seat_of(request: Request, game_id: str) -> SeatCredentials | None:
    """This browser's seat in the game, from its cookie; None when it holds none (a spectator)."""
    value = request.cookies.get(cookie_name(game_id), "")
    seat, _, token = value.partition(".")
    if not seat.isdigit() or not TOKEN.match(token):
        return None
    return SeatCredentials(game_id, int(seat), token)


def remember(response: Response, request: Request, seat: SeatCredentials) -> None:
    """Give the browser its seat: an HttpOnly, SameSite=Strict cookie that only this site receives."""
    response.set_cookie(
        cookie_name(seat.game_id),
        f"{seat.seat}.{seat.token}",
        max_age=MAX_AGE,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def same_origin(request: Request) -> bool:
    """Whether a request comes from this site's own pages (the check against cross-site requests).

    Browsers send ``Origin`` with every POST; it must name this server. A client that sends no ``Origin``
    must say ``Sec-Fetch-Site: same-origin``. Anything else is refused.
    """
    origin = request.headers.get("origin")
    host = request.headers.get("host", "")
    if origin is not None:
        return origin in (f"http://{host}", f"https://{host}")
    return request.headers.get("sec-fetch-site") == "same-origin"
