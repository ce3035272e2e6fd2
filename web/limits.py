"""Per-visitor limits: what one visitor (:mod:`.visitors`) may ask of this web server, and so of the game
server behind it.

The game server counts this web server as one caller, so without limits of its own one visitor with a
script could create games until the game server is full for everybody, spend the web host's quota so that
nobody else can start a game, or have this server list games as fast as it can send requests. Each
visitor has (:class:`Limits`, ``kutnahora-web --visitor-*``; 0 turns one off):

- a rate of game creations and joins (a token bucket: ``creations`` a minute, ``creation_burst`` at once);
  playing a tournament game again from its saved replay is a creation;
- a number of unfinished games it created through this web server (``games``): a place is freed when the
  game ends (finished or abandoned), which this server asks the game server about only when the visitor
  would otherwise be refused;
- a rate of every other request but the static files (``requests`` a second, ``request_burst`` at once);
- a number of event streams open at once (``streams``).

A refusal is :class:`Refused`: HTTP 429 with ``Retry-After`` and ``{"error": sentence}``, given before
the game server is asked to create, join, list or watch anything (a visitor at its games' limit has their
status read first, to free the places of those that ended). Every refusal is counted by its limit, and
the first of each visitor and limit in a while is logged (:mod:`.refusals`).

The tables are bounded: the buckets hold at most :data:`MAX_VISITORS` visitors (the one heard from least
recently is forgotten, and starts full again if it comes back), the counts of games and streams only
visitors that hold some (games: at most :data:`MAX_VISITORS` of them).

**Across replicas.** The counts live where ``--quota-store`` says (:mod:`kutnahora.plumbing.quota_store`,
the game server's and the arena's too): with ``memory`` (the default) each web replica counts for itself,
so a visitor spread over N replicas gets N times its allowance; with a ``redis://`` URL every replica
counts the creation and request rates (:class:`~kutnahora.plumbing.quota_store.Buckets`) and the
unfinished games and open streams (:class:`~kutnahora.plumbing.quota_store.Places`, leased: a dead
replica's places are free again within a lease) in the same Redis, so a visitor's allowance is the same
whether it reaches one replica or several. While the store cannot be reached each replica counts in its
memory again; the failures are counted (``kutnahora_web_quota_store_errors_total``) and logged once a
minute. With a shared store each replica also asks the game server, every :data:`SWEEP_SECONDS`, about
the unfinished games it holds places for, so that a game's place is freed when it ends even though its
visitor now reaches another replica.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from kutnahora.plumbing.quota_store import LEASE_SECONDS, Buckets, Places, QuotaStore
from kutnahora.web.metrics import WebMetrics
from kutnahora.web.refusals import RefusalLog
from kutnahora.web.visitors import Visitors

MAX_VISITORS = 10_000
GAMES_RETRY_SECONDS = 30
"""The Retry-After of a visitor that holds its games: games end, or are abandoned when nobody joins."""
STREAMS_RETRY_SECONDS = 10
"""The Retry-After of a visitor that holds its event streams: one closes when its page does."""
SWEEP_SECONDS = LEASE_SECONDS / 3
"""With a shared store, how often each replica asks the game server which of its visitors' games ended."""
STATE_KEY = "visitor"
"""Where :class:`VisitorGate` leaves the request's visitor, in ``request.state``."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one visitor may do; 0 turns a limit off."""

    creations: float = 6.0  # game creations and joins a minute, on average
    creation_burst: int = 10  # ... and at once
    games: int = 5  # unfinished games created through this web server
    requests: float = 20.0  # other requests a second, on average
    request_burst: int = 40  # ... and at once
    streams: int = 8  # event streams open at once
    connections: int = 32  # connections open at once (kutnahora.web.connections)

    @classmethod
    def off(cls) -> Limits:
        """No limit at all."""
        return cls(0, 0, 0, 0, 0, 0, 0)


class Refused(Exception):
    """A request over one of its visitor's limits: a sentence, the seconds to wait before asking again,
    and the limit (a :class:`Limits` field's name without its ``_burst``: ``creations``, ``games``,
    ``requests`` or ``streams``)."""

    def __init__(self, message: str, retry_after: float, limit: str) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.limit = limit

    @property
    def headers(self) -> dict[str, str]:
        """``Retry-After``, in whole seconds, at least 1."""
        return {"retry-after": str(max(1, math.ceil(self.retry_after)))}

    def response(self) -> JSONResponse:
        """HTTP 429 with ``Retry-After`` and ``{"error": sentence}``."""
        return JSONResponse({"error": str(self)}, status_code=429, headers=self.headers)


class GamesHeld:
    """The unfinished games each visitor created, and the creations it has under way: each one a place of
    ``places`` (in this replica's memory, or in the store the replicas share), named by the member
    :meth:`reserve` returns; this replica remembers which of its games hold which place."""

    def __init__(self, places: Places, visitors_most: int = MAX_VISITORS) -> None:
        self.places = places
        self._visitors_most = visitors_most
        # visitor -> its games created through this replica not known to have ended, and their places
        self._games: OrderedDict[str, dict[str, str]] = OrderedDict()

    @property
    def most(self) -> int:
        return self.places.most

    def count(self, visitor: str) -> int:
        """The visitor's games and creations under way held through this replica."""
        return self.places.held(visitor)

    async def full(self, visitor: str) -> bool:
        """Whether the visitor holds its limit, through every replica when the store is shared."""
        return self.most > 0 and await self.places.count(visitor) >= self.most

    def games(self, visitor: str) -> list[str]:
        """The games the visitor created through this replica that are not known to have ended."""
        return sorted(self._games.get(visitor, ()))

    def visitors(self) -> list[str]:
        """The visitors that hold an unfinished game created through this replica."""
        return list(self._games)

    async def reserve(self, visitor: str) -> str | None:
        """Take a place for a game the visitor is creating: the member naming it (None with the limit off);
        :class:`Refused` when the visitor holds its limit."""
        if self.most <= 0:
            return None
        member = await self.places.take(visitor)
        if member is None:
            raise Refused(
                f"You already have {self.most} unfinished games created here, as many as one visitor may; "
                "finish or leave one (a game nobody joins is abandoned after a while), then try again.",
                GAMES_RETRY_SECONDS,
                "games",
            )
        return member

    def unreserve(self, member: str | None) -> None:
        """Give back a place :meth:`reserve` took, for a game that was not created."""
        if member is not None:
            self.places.give(member)

    def bind(self, visitor: str, member: str | None, game_id: str) -> None:
        """Tie a reserved place to the game created with it, until :meth:`ended` frees it."""
        if member is None:
            return
        games = self._games.pop(visitor, None)
        if games is None:
            while len(self._games) >= self._visitors_most:
                for forgotten in self._games.popitem(last=False)[1].values():
                    self.places.give(forgotten)
            games = {}
        games[game_id] = member
        self._games[visitor] = games

    def __len__(self) -> int:
        """The visitors that hold an unfinished game through this replica."""
        return len(self._games)

    def ended(self, visitor: str, game_id: str) -> None:
        """A game the visitor created has ended: its place is free."""
        games = self._games.get(visitor)
        if games is not None:
            member = games.pop(game_id, None)
            if member is not None:
                self.places.give(member)
            if not games:
                del self._games[visitor]


class Streams:
    """The event streams each visitor has open, each a place of ``places`` (counted with the limit off too:
    the metrics show them); ``total`` is every visitor's through this replica, ``len`` the visitors that
    hold one here."""

    def __init__(self, places: Places) -> None:
        self.places = places
        self._open: set[str] = set()  # the members of the streams open through this replica

    @property
    def most(self) -> int:
        return self.places.most

    @property
    def total(self) -> int:
        return len(self._open)

    def held(self, visitor: str) -> int:
        """The streams the visitor holds open through this replica."""
        return self.places.held(visitor)

    def __len__(self) -> int:
        return len(self.places)

    async def open(self, visitor: str) -> str:
        """Count a stream the visitor opens: the member naming its place, for :meth:`close`;
        :class:`Refused` when it has its limit open."""
        member = await self.places.take(visitor)
        if member is None:
            raise Refused(
                f"You already follow {self.most} games live at once, as many as one visitor may; "
                "close another game's page, then reload this one.",
                STREAMS_RETRY_SECONDS,
                "streams",
            )
        self._open.add(member)
        return member

    def close(self, member: str) -> None:
        """A stream :meth:`open` counted has closed (nothing happens the second time)."""
        self._open.discard(member)
        self.places.give(member)


class VisitorLimits:
    """Every per-visitor limit of one web server, and who a visitor is; each refusal is counted in
    ``metrics`` and logged within a budget (:class:`~kutnahora.web.refusals.RefusalLog`). The counts live
    in ``store`` (by default this replica's memory)."""

    def __init__(
        self,
        limits: Limits,
        visitors: Visitors | None = None,
        clock: Callable[[], float] = time.monotonic,
        metrics: WebMetrics | None = None,
        store: QuotaStore | None = None,
    ) -> None:
        self.limits = limits
        self.visitors = visitors or Visitors()
        self.store = store if store is not None else QuotaStore()
        self.creation_rate = Buckets(
            self.store, "creations", limits.creations / 60, limits.creation_burst, clock, MAX_VISITORS
        )
        self.request_rate = Buckets(
            self.store, "requests", limits.requests, limits.request_burst, clock, MAX_VISITORS
        )
        self.games = GamesHeld(Places(self.store, "games", limits.games))
        self.streams = Streams(Places(self.store, "streams", limits.streams))
        self.refusals = RefusalLog(metrics, clock)
        if metrics is not None:
            metrics.watch(self)

    def _refuse(self, visitor: str, refused: Refused) -> Refused:
        """Count and log a refusal of the visitor's; returns it, to be raised."""
        self.refusals.refused(visitor, refused.limit, refused.retry_after)
        return refused

    async def create_or_join(self, visitor: str) -> None:
        """Count a game creation or join; :class:`Refused` when the visitor has made too many lately."""
        wait = await self.creation_rate.take(visitor)
        if wait > 0:
            message = (
                f"Too many games created or joined from your address: at most "
                f"{self.limits.creations:g} a minute; try again in {math.ceil(wait)} s."
            )
            raise self._refuse(visitor, Refused(message, wait, "creations"))

    def _requested(self, visitor: str, wait: float) -> None:
        if wait > 0:
            message = (
                f"Too many requests from your address: at most {self.limits.requests:g} a second; "
                "wait a moment and try again."
            )
            raise self._refuse(visitor, Refused(message, wait, "requests"))

    def request_here(self, visitor: str) -> None:
        """Count a request in this replica's memory; :class:`Refused` when the visitor has sent too many
        lately. With a memory store this is :meth:`request` without a coroutine, for every request."""
        wait = self.request_rate.local.take(visitor)
        if wait > 0:
            self._requested(visitor, wait)

    async def request(self, visitor: str) -> None:
        """Count a request where the store says; :class:`Refused` when the visitor has sent too many
        lately."""
        self._requested(visitor, await self.request_rate.take(visitor))

    async def reserve_game(self, visitor: str) -> str | None:
        """Take a place among the visitor's unfinished games (:meth:`GamesHeld.reserve`): the member naming
        it; :class:`Refused` when it holds its limit."""
        try:
            return await self.games.reserve(visitor)
        except Refused as refused:
            raise self._refuse(visitor, refused) from None

    async def open_stream(self, visitor: str) -> str:
        """Count an event stream the visitor opens (:meth:`Streams.open`): the member naming its place;
        :class:`Refused` when it has its limit open. :meth:`Streams.close` gives the place back."""
        try:
            return await self.streams.open(visitor)
        except Refused as refused:
            raise self._refuse(visitor, refused) from None

    def remembered(self) -> dict[str, int]:
        """The visitors each table holds, by table (for the metrics)."""
        return {
            "creations": len(self.creation_rate),
            "requests": len(self.request_rate),
            "games": len(self.games),
            "streams": len(self.streams),
        }

    def open_streams(self) -> int:
        """The event streams open now, every visitor's (for the metrics)."""
        return self.streams.total


class VisitorGate:
    """Name each request's visitor (``request.state.visitor``) and hold every request but the static
    files to the visitor's request rate (a plain ASGI middleware, so that event streams pass through
    unbuffered)."""

    def __init__(self, app: ASGIApp, limits: VisitorLimits) -> None:
        self.app = app
        self.limits = limits
        self.shared = limits.store.shared

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        visitor = self.limits.visitors.of(scope)
        scope.setdefault("state", {})[STATE_KEY] = visitor
        if not scope["path"].startswith("/static/"):
            try:
                if self.shared:
                    await self.limits.request(visitor)
                else:
                    self.limits.request_here(visitor)
            except Refused as refused:
                await refused.response()(scope, receive, send)
                return
        await self.app(scope, receive, send)


class Releasing(Response):
    """A response that calls ``release`` once it is over, however it ends (finished, or the visitor
    went away): an event stream's place among its visitor's open streams."""

    def __init__(self, inner: Response, release: Callable[[], None]) -> None:
        self.inner = inner
        self.release = release
        self.status_code = inner.status_code
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.inner(scope, receive, send)
        finally:
            self.release()
