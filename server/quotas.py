"""Per-caller quotas: how many unfinished games one caller may have created, how often it may call
CreateGame and JoinGame, how often it may read (GetGame, GetObservation, ListGames, GetComponents,
GetReplay, GetServerInfo) and how many Play and WatchGame streams it may hold open, so that no caller can
fill a server that others use or slow its games down.

Who a caller is and which callers are exempt is :mod:`kutnahora.plumbing.callers`, shared with the
arena, which also holds the rate buckets: a caller is an IPv4 address, an IPv6 /64, or ``unix`` for
every caller of the Unix socket, which the tournament runner hands to hosted bots (they play the seats
they are given and need no new games). A call carrying the admin token or the quota token
(``--quota-token``) is not counted at all, nor one from an exempt address (``--quota-exempt``,
``loopback`` by default). Behind a proxy every caller has the proxy's address: exempt it only if it
does its own limiting, else raise the quotas (docs/operations.md#quotas).

The counts live where ``--quota-store`` says (:mod:`kutnahora.plumbing.quota_store`): this replica's
memory by default, or a Redis every replica shares, so that a caller's allowance is the same however many
replicas it reaches. A replica ties each game it creates to its creator's place, which the game frees
when it ends (finished, or abandoned: by request, idle or never filled within ``--waiting-timeout``); the
games a replica recovers after a restart count against nobody (in Redis, the places of a replica that
died end with their lease). The read rate and the open streams count a call from an exempt address, or
from the Unix socket, that proves a seat or a game as that seat's or game's
(:func:`kutnahora.plumbing.callers.credited`): the tournament runner's seat gateways reach the server
from its own host, and each hosted bot's calls carry its seat token.

The tables are bounded: the counts hold only callers that hold a game (so at most ``--max-games`` of
them), the open streams only callers that hold some, the rate buckets at most :data:`MAX_CALLERS`
callers each.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

from prometheus_client import Counter

from kutnahora.plumbing import auth
from kutnahora.plumbing.callers import Caller, Callers, Network, by_credential, credited
from kutnahora.plumbing.errors import ServiceError, exhausted
from kutnahora.plumbing.quota_store import Buckets, Places, QuotaStore, rate_refusal

MAX_CALLERS = 10_000
"""Most callers whose CreateGame/JoinGame rate is remembered at once."""

GAMES_RETRY_SECONDS = 30.0
"""The RetryInfo delay of a caller that holds its quota of games: games end, or wait to be abandoned."""

STREAMS_RETRY_SECONDS = 10.0
"""The RetryInfo delay of a caller that holds its open streams: a stream ends with its game or its client."""


def credential(
    game_id: str, token: str | None, game_token_hash: str, seat_hashes: Sequence[str]
) -> str | None:
    """What ``token`` proves in game ``game_id``: ``seat:GAME/SEAT`` for a seat's token, ``game:GAME`` for
    the game's token, None for no token or any other."""
    if not token:
        return None
    seat = auth.matching_seat(token, seat_hashes)
    if seat is not None:
        return f"seat:{game_id}/{seat}"
    if auth.matches(token, game_token_hash):
        return f"game:{game_id}"
    return None


class CallerQuotas:
    """The per-caller quotas of one server: who a caller is, its rates, the games it holds and its open
    streams, counted in ``store`` (this replica's memory by default)."""

    def __init__(
        self,
        max_games: int,
        rate: float,
        burst: int,
        exempt: tuple[str, ...],
        tokens: tuple[str, ...],
        refused: Counter,
        clock: Callable[[], float] = time.monotonic,
        max_callers: int = MAX_CALLERS,
        trusted_proxies: tuple[Network, ...] = (),
        reads: float = 0.0,
        read_burst: int = 1,
        streams: int = 0,
        store: QuotaStore | None = None,
    ) -> None:
        self.max_games = max_games
        self.rate = rate
        self.reads = reads
        self.max_streams = streams
        self.store = store if store is not None else QuotaStore()
        self._limiter = Buckets(self.store, "caller_rate", rate, burst, clock, max_keys=max_callers)
        self._reads = Buckets(self.store, "caller_reads", reads, read_burst, clock, max_keys=max_callers)
        self._games = Places(self.store, "caller_games", max_games)
        self._streams = Places(self.store, "caller_streams", streams)
        self._callers = Callers(exempt, tokens, trusted_proxies)
        self._refused = refused
        self._creators: dict[str, str] = {}  # game id -> its creator's place, while the game is unfinished

    # --- who calls ------------------------------------------------------------------------------------

    def caller(
        self, peer: str, token: str | None, forwarded: Iterable[str] = (), quota_token: str | None = None
    ) -> Caller:
        """The caller of a call from ``peer`` carrying ``token`` (or none), ``quota_token`` beside it, and,
        from a trusted proxy, the ``x-forwarded-for`` values ``forwarded``."""
        return self._callers.caller(peer, token, forwarded, quota_token)

    def counts_by_credential(self, caller: Caller) -> bool:
        """Whether ``caller``'s reads and streams count as the seat or game they prove (an exempt address,
        or the Unix socket): then :meth:`credited` needs the game first."""
        return by_credential(caller)

    def credited(
        self,
        caller: Caller,
        token: str | None,
        game_id: str,
        game_token_hash: str,
        seat_hashes: Sequence[str],
        reading: bool = False,
    ) -> Caller:
        """The caller that reads (``reading``) and streams count a call of game ``game_id`` carrying
        ``token`` as. A call that proves nothing from an exempt address stays exempt (the server's own
        host: a web front end, the runner, benchmarks); a read that proves nothing from the Unix socket
        (not exempt by default) counts as ``anonymous:GAME``, so that the reads of one game that nobody
        proves share one allowance, and a bot behind a seat gateway on the socket that leaves its token out
        still reads its game only so often, without spending the other bots' allowance."""
        if not by_credential(caller):
            return caller
        found = credential(game_id, token, game_token_hash, seat_hashes)
        if found is None and reading and not caller.exempt:
            found = f"anonymous:{game_id}"
        return credited(caller, found)

    # --- reads and open streams -----------------------------------------------------------------------

    async def check_read(self, caller: Caller, rpc: str) -> None:
        """Count one read (``rpc``); RESOURCE_EXHAUSTED (RATE_LIMITED, with the delay until the caller's
        bucket holds a read again) when the caller has none left."""
        refusal = await rate_refusal(
            self._reads,
            caller,
            "caller_reads",
            lambda key, wait: (
                f"{rpc} refused: {key} made more reads than its {self.reads:g} per second allow; try "
                f"again in {wait:.2f} s"
            ),
        )
        if refusal is not None:
            self._refused.labels(limit="caller_reads").inc()
            raise refusal

    async def check_server_read(self, caller: Caller, rpc: str) -> None:
        """Count one read of no game (ListGames, GetComponents, GetServerInfo) as :meth:`check_read` does,
        except from a caller counted by credential, which such a read has none of: the seat gateways
        pass GetComponents and GetServerInfo on, and one bot's flood of them must not spend the
        allowance of every bot behind the same address (they are answered from bytes built once)."""
        if not by_credential(caller):
            await self.check_read(caller, rpc)

    async def open_stream(self, caller: Caller, rpc: str) -> str | None:
        """Take one of the caller's open streams for a Play or WatchGame stream (``rpc``): what to give
        :meth:`close_stream` when the stream ends (None for an exempt caller); RESOURCE_EXHAUSTED
        (QUOTA_EXCEEDED) when it holds its limit already."""
        if caller.exempt:
            return None
        place = await self._streams.take(caller.key)
        if place is None:
            self._refused.labels(limit="caller_streams").inc()
            limit = self.max_streams
            raise exhausted(
                f"{rpc} refused: {caller.key} already holds {limit} open Play and WatchGame streams, as "
                "many as one caller may; close one, then try again",
                "caller_streams",
                retry_after=STREAMS_RETRY_SECONDS,
                metadata={"quota": "caller_streams", "limit": str(limit), "caller": caller.key},
            )
        return place

    async def close_stream(self, place: str | None) -> None:
        """Give back the open stream :meth:`open_stream` took."""
        if place is not None:
            self._streams.give(place)

    def streams(self, key: str) -> int:
        """The streams the caller ``key`` holds open through this replica."""
        return self._streams.held(key)

    # --- the rate of CreateGame and JoinGame ----------------------------------------------------------

    async def check_rate(self, caller: Caller, rpc: str) -> None:
        """Count one CreateGame or JoinGame call (``rpc``); RESOURCE_EXHAUSTED (RATE_LIMITED, with the
        delay until the caller's bucket holds a call again) when the caller has none left."""
        refusal = await rate_refusal(
            self._limiter,
            caller,
            "caller_rate",
            lambda key, wait: (
                f"{rpc} refused: {key} made more CreateGame and JoinGame calls than its "
                f"{self.rate:g} per second allow; try again in {wait:.2f} s"
            ),
        )
        if refusal is not None:
            self._refused.labels(limit="caller_rate").inc()
            raise refusal

    # --- the unfinished games a caller created --------------------------------------------------------

    def held(self, key: str) -> int:
        """The unfinished games the caller ``key`` created through this replica."""
        return self._games.held(key)

    async def held_everywhere(self, key: str) -> int:
        """The unfinished games the caller ``key`` created through every replica that shares the store."""
        return await self._games.count(key)

    def callers(self) -> tuple[int, int]:
        """How many callers the tables remember: those holding games, and those whose rate is kept."""
        return len(self._games), len(self._limiter)

    async def reserve(self, caller: Caller) -> str | None:
        """Take a place for a game the caller is creating: what to give :meth:`unreserve`, or :meth:`bind`
        to the game (None for an exempt caller); RESOURCE_EXHAUSTED (QUOTA_EXCEEDED) when it holds its
        quota."""
        if caller.exempt:
            return None
        place = await self._games.take(caller.key)
        if place is None:
            self._refused.labels(limit="caller_games").inc()
            raise _games_refusal(caller.key, self.max_games)
        return place

    def unreserve(self, place: str | None) -> None:
        """Give back a place :meth:`reserve` took, for a game that was not created."""
        if place is not None:
            self._games.give(place)

    def bind(self, place: str | None, game_id: str) -> None:
        """Tie a reserved place to the game created with it: the game gives it back when it ends."""
        if place is not None:
            self._creators[game_id] = place

    def release(self, game_id: str) -> None:
        """A game ended: its creator's place is free again (nothing when no caller holds it)."""
        place = self._creators.pop(game_id, None)
        if place is not None:
            self._games.give(place)


def _games_refusal(key: str, limit: int) -> ServiceError:
    return exhausted(
        f"{key} already holds {limit} unfinished games it created, as many as one caller "
        "may; finish or abandon some (a game nobody joins is abandoned after --waiting-timeout), then "
        "try again",
        "caller_games",
        retry_after=GAMES_RETRY_SECONDS,
        metadata={"quota": "caller_games", "limit": str(limit), "caller": key},
    )
