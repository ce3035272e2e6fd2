"""The lobby's listing: every game waiting for players and every game being played, asked of the game server
status by status, and one page of the finished and of the abandoned games.

The game server lists games newest first, a page at a time, optionally of one status (``ListGames``). The
lobby asks for the waiting and the active games by their status and follows their pages to the end (up to
:data:`LIVE_MOST` of each), so however many games have ended, none that is live is hidden behind them. Ended
games are many and only grow: the lobby shows one page of each ended status (:data:`PAGE_SIZE` rows unless
the page asks for another size up to :data:`PAGE_MOST`) and hands the page the server's token for the next,
older page, which the page sends back to go on. The tokens are the server's own, passed through unread.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import grpc

from kutnahora.clients.sdk import Client, ClientError
from kutnahora.v1 import game_pb2
from kutnahora.web import wire

LIVE_STATUSES = {"waiting": game_pb2.GAME_STATUS_WAITING, "active": game_pb2.GAME_STATUS_ACTIVE}
ENDED_STATUSES = {"finished": game_pb2.GAME_STATUS_FINISHED, "abandoned": game_pb2.GAME_STATUS_ABANDONED}
LIVE_PAGE = 500  # the most the game server returns in one page
LIVE_MOST = 2000  # waiting (or active) games the lobby lists at most; beyond that it says how many it shows
PAGE_SIZE = 20  # rows of finished (or abandoned) games on a page, unless the page asks for another size
PAGE_MOST = 100
TOKEN_MOST = 200  # characters in a page token the lobby passes on


class ListingError(ValueError):
    """A listing request the lobby's page should not have sent; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class Wanted:
    """What a lobby listing asks for: the page token of each ended status ("" for the newest page) and the
    number of rows on those pages."""

    tokens: dict[str, str]
    size: int = PAGE_SIZE

    @classmethod
    def parse(cls, query: dict[str, str]) -> Wanted:
        """The request in a query string: ``finished=TOKEN``, ``abandoned=TOKEN``, ``size=N``."""
        raw = query.get("size", "")
        if raw and (not raw.isdigit() or not 1 <= int(raw) <= PAGE_MOST):
            raise ListingError(f"'size' must be a whole number from 1 to {PAGE_MOST}.")
        tokens = {}
        for status in ENDED_STATUSES:
            token = query.get(status, "")
            if len(token) > TOKEN_MOST or not token.isascii() or not token.isprintable():
                raise ListingError(f"'{status}' is not a page token this lobby gave.")
            tokens[status] = token
        return cls(tokens, int(raw) if raw else PAGE_SIZE)


async def every(client: Client, status: int) -> tuple[list[game_pb2.GameSummary], bool]:
    """Every game of a status, newest first (at most :data:`LIVE_MOST`), and whether there were more."""
    games: list[game_pb2.GameSummary] = []
    token = ""
    while True:
        page, token = await client.list_games_page(status, page_size=LIVE_PAGE, page_token=token)
        games.extend(page)
        if not token:
            return games, False
        if len(games) >= LIVE_MOST:
            return games[:LIVE_MOST], True


async def page(client: Client, status: str, token: str, size: int) -> tuple[list[game_pb2.GameSummary], str]:
    """One page of the games of an ended status from ``token`` on, and the token of the next page."""
    try:
        return await client.list_games_page(ENDED_STATUSES[status], page_size=size, page_token=token)
    except ClientError as error:
        if token and error.code == grpc.StatusCode.INVALID_ARGUMENT:
            raise ListingError(
                f"'{status}' is not a page token this game server gave; start again from the newest page."
            ) from None
        raise


async def listing(client: Client, wanted: Wanted) -> dict[str, Any]:
    """The lobby's rows: every waiting and active game, and a page of the finished and abandoned ones.

    ``games`` holds the rows (each with its ``status``); ``next`` the token of each ended status's next,
    older page ("" on its last page); ``more`` whether a live status had more games than are listed.
    """
    waiting, active, finished, abandoned = await asyncio.gather(
        every(client, LIVE_STATUSES["waiting"]),
        every(client, LIVE_STATUSES["active"]),
        page(client, "finished", wanted.tokens["finished"], wanted.size),
        page(client, "abandoned", wanted.tokens["abandoned"], wanted.size),
    )
    # A game that started between two of the calls may be in two lists; it is shown once.
    games: dict[str, game_pb2.GameSummary] = {}
    for game in [*waiting[0], *active[0], *finished[0], *abandoned[0]]:
        games.setdefault(game.game_id, game)
    return {
        "games": [wire.summary(game) for game in games.values()],
        "next": {"finished": finished[1], "abandoned": abandoned[1]},
        "size": wanted.size,
        "more": {"waiting": waiting[1], "active": active[1]},
        "most": LIVE_MOST,
    }
