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

The count of unfinished games is kept per replica in memory, for the games this replica created: it
starts empty when the server starts (the games it recovers count against nobody), and each game frees
its creator's place when it ends (finished, or abandoned: by request, idle or never filled within
``--waiting-timeout``). The read rate and the open streams count a call from an exempt address, or
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
from kutnahora.plumbing.callers import (
    Caller,
    Callers,
    Network,
    RateLimiter,
    by_credential,
    credited,
    rate_refusal,
)
from kutnahora.plumbing.errors import ServiceError, exhausted
from kutnahora.plumbing.holds import Holds

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
    """The per-caller quotas of one server: who a caller is, its rate, and the games it holds."""

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
    ) -> None:
        self.max_games = max_games
        self.rate = rate
        self.reads = reads
        self.max_streams = streams
        self._limiter = RateLimiter(rate, burst, clock, max_keys=max_callers)
        self._reads = RateLimiter(reads, read_burst, clock, max_keys=max_callers)
        self._streams: Holds[str] = Holds(streams)
        self._callers = Callers(exempt, tokens, trusted_proxies)
        self._refused = refused
        self._held: dict[str, int] = {}  # caller key -> unfinished games it created here (only those > 0)
        self._creators: dict[str, str] = {}  # game id -> its creator's key, while the game is unfinished

    # --- who calls ------------------------------------------------------------------------------------

    def caller(self, peer: str, token: str | None, forwarded: Iterable[str] = ()) -> Caller:
        """The caller of a call from ``peer`` carrying ``token`` (or none) and, from a trusted proxy, the
        ``x-forwarded-for`` values ``forwarded``."""
        return self._callers.caller(peer, token, forwarded)

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
    ) -> Caller:
        """The caller that reads and streams count a call of game ``game_id`` carrying ``token`` as."""
        if not by_credential(caller):
            return caller
        return credited(caller, credential(game_id, token, game_token_hash, seat_hashes))

    # --- reads and open streams -----------------------------------------------------------------------

    async def check_read(self, caller: Caller, rpc: str) -> None:
        """Count one read (``rpc``); RESOURCE_EXHAUSTED (RATE_LIMITED, with the delay until the caller's
        bucket holds a read again) when the caller has none left."""
        refusal = rate_refusal(
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

    async def open_stream(self, caller: Caller, rpc: str) -> None:
        """Take one of the caller's open streams for a Play or WatchGame stream (``rpc``), given back by
        :meth:`close_stream`; RESOURCE_EXHAUSTED (QUOTA_EXCEEDED) when it holds its limit already."""
        if caller.exempt:
            return
        if not self._streams.take(caller.key):
            self._refused.labels(limit="caller_streams").inc()
            limit = self.max_streams
            raise exhausted(
                f"{rpc} refused: {caller.key} already holds {limit} open Play and WatchGame streams on this "
                "server, as many as one caller may; close one, then try again",
                "caller_streams",
                retry_after=STREAMS_RETRY_SECONDS,
                metadata={"quota": "caller_streams", "limit": str(limit), "caller": caller.key},
            )

    async def close_stream(self, caller: Caller) -> None:
        """Give back the open stream :meth:`open_stream` took."""
        if not caller.exempt:
            self._streams.give(caller.key)

    def streams(self, key: str) -> int:
        """The streams the caller ``key`` holds open on this server."""
        return self._streams.held(key)

    # --- the rate of CreateGame and JoinGame ----------------------------------------------------------

    def check_rate(self, caller: Caller, rpc: str) -> None:
        """Count one CreateGame or JoinGame call (``rpc``); RESOURCE_EXHAUSTED (RATE_LIMITED, with the
        delay until the caller's bucket holds a call again) when the caller has none left."""
        refusal = rate_refusal(
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
        """The unfinished games the caller ``key`` created here."""
        return self._held.get(key, 0)

    def callers(self) -> tuple[int, int]:
        """How many callers the tables remember: those holding games, and those whose rate is kept."""
        return len(self._held), len(self._limiter)

    def reserve(self, caller: Caller) -> None:
        """Take a place for a game the caller is creating (give it back with :meth:`unreserve`, or tie it
        to the game with :meth:`bind`); RESOURCE_EXHAUSTED (QUOTA_EXCEEDED) when it holds its quota."""
        if caller.exempt:
            return
        held = self._held.get(caller.key, 0)
        if self.max_games > 0 and held >= self.max_games:
            self._refused.labels(limit="caller_games").inc()
            raise _games_refusal(caller.key, self.max_games)
        self._held[caller.key] = held + 1

    def unreserve(self, caller: Caller) -> None:
        """Give back a place :meth:`reserve` took, for a game that was not created."""
        if not caller.exempt:
            self._drop(caller.key)

    def bind(self, caller: Caller, game_id: str) -> None:
        """Tie a reserved place to the game created with it: the game gives it back when it ends."""
        if not caller.exempt:
            self._creators[game_id] = caller.key

    def release(self, game_id: str) -> None:
        """A game ended: its creator's place is free again (nothing when no caller holds it)."""
        key = self._creators.pop(game_id, None)
        if key is not None:
            self._drop(key)

    def _drop(self, key: str) -> None:
        held = self._held.get(key, 0) - 1
        if held > 0:
            self._held[key] = held
        else:
            self._held.pop(key, None)


def _games_refusal(key: str, limit: int) -> ServiceError:
    return exhausted(
        f"{key} already holds {limit} unfinished games it created on this server, as many as one caller "
        "may; finish or abandon some (a game nobody joins is abandoned after --waiting-timeout), then "
        "try again",
        "caller_games",
        retry_after=GAMES_RETRY_SECONDS,
        metadata={"quota": "caller_games", "limit": str(limit), "caller": key},
    )
