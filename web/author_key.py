"""An author's API key in their browser: kept in a cookie of that browser only, and nowhere else.

The author gives the key in a form (a POST, never a URL). The cookie ``kh_arena_key`` then holds it:
HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it), Secure over HTTPS, sent
only to the arena pages (``Path=/arena``), and gone when the browser closes (no ``Max-Age``). The web
server keeps no copy: each page of the author's area reads it from the request and sends it to the arena
as ``authorization: Bearer <key>``; no page, URL or log line holds it. ``kh_arena_bot`` holds the name of
the key's bot, as the arena named it when the key was given (its public profile, rating and games are read
by name). *Forget my key* deletes both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from starlette.requests import Request
from starlette.responses import Response

KEY_COOKIE: Final = "kh_arena_key"
BOT_COOKIE: Final = "kh_arena_bot"
PATH: Final = "/arena"
KEY: Final = re.compile(r"^[A-Za-z0-9_.~+/=-]{8,256}$")
"""What an API key may look like (the arena's are 43 URL-safe base64 characters)."""
NAME: Final = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")
"""A bot's name, as the arena's RegisterBot takes it."""


@dataclass(frozen=True, slots=True)
class Author:
    """The key this browser gave, and the name of its bot."""

    key: str
    bot: str

    def __repr__(self) -> str:
        return f"Author(bot={self.bot!r}, key=<hidden>)"


def author_of(request: Request) -> Author | None:
    """The author this browser says it is, from its cookies; None when it gave no key (or a malformed
    one)."""
    key = request.cookies.get(KEY_COOKIE, "")
    bot = request.cookies.get(BOT_COOKIE, "")
    if not KEY.match(key) or not NAME.match(bot):
        return None
    return Author(key, bot)


def remember(response: Response, request: Request, author: Author) -> None:
    """Keep the key and the bot's name in this browser's cookies, for the arena pages only."""
    for name, value in ((KEY_COOKIE, author.key), (BOT_COOKIE, author.bot)):
        response.set_cookie(
            name,
            value,
            path=PATH,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )


def forget(response: Response, request: Request) -> None:
    """Delete the key and the name from this browser."""
    for name in (KEY_COOKIE, BOT_COOKIE):
        response.delete_cookie(
            name, path=PATH, httponly=True, samesite="strict", secure=request.url.scheme == "https"
        )
