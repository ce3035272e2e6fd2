"""Per-caller quotas: how many unfinished games one caller may have created, and how often it may call
CreateGame and JoinGame, so that no caller can fill a server that others use.

Who a caller is (:meth:`CallerQuotas.caller`):

- a TCP caller is its address without the port: an IPv4 address, or an IPv6 address's /64 (one host
  commonly holds a whole /64, so counting single IPv6 addresses would let it count as billions);
  an IPv4 address mapped into IPv6 counts as that IPv4 address;
- every caller of the Unix socket is one caller, ``unix``: gRPC says nothing about who is at the other
  end of a Unix socket, and the socket is the one the tournament runner hands to hosted bots, which play
  the seats they are given and need no new games;
- a call carrying the admin token or the quota token (``--quota-token``) is not counted at all, nor one
  from an exempt address (``--quota-exempt``: ``loopback`` by default, the server's own host, where the
  runner, the benchmarks and an arena beside the server run).

Behind a proxy every caller has the proxy's address: exempt it only if it does its own limiting, else
raise the quotas (docs/operations.md#quotas).

The count of unfinished games is kept per replica in memory, for the games this replica created: it
starts empty when the server starts (the games it recovers count against nobody), and each game frees
its creator's place when it ends (finished, or abandoned: by request, idle or never filled within
``--waiting-timeout``). Both tables are bounded: the counts hold only callers that hold a game (so at
most ``--max-games`` of them), the rate buckets at most :data:`MAX_CALLERS` callers.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

from prometheus_client import Counter

from kutnahora.plumbing import auth
from kutnahora.plumbing.errors import ServiceError, exhausted
from kutnahora.server.limits import RateLimiter

DEFAULT_EXEMPT = ("loopback",)
"""The callers no quota counts unless the operator says otherwise: the server's own host."""

KEYWORDS = ("loopback", "unix")
"""The names ``--quota-exempt`` takes besides addresses and networks."""

MAX_CALLERS = 10_000
"""Most callers whose CreateGame/JoinGame rate is remembered at once."""

GAMES_RETRY_SECONDS = 30.0
"""The RetryInfo delay of a caller that holds its quota of games: games end, or wait to be abandoned."""

IPV6_PREFIX = 64

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_exempt(text: str) -> tuple[str, ...]:
    """``--quota-exempt``: comma-separated ``loopback``, ``unix``, addresses or networks; ``none`` for
    nobody. Raises ValueError, with a sentence, for anything else."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if items in (["none"], []):
        return ()
    for item in items:
        if item in KEYWORDS:
            continue
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise ValueError(
                f"{item!r} is not loopback, unix, an IP address or a network such as 10.0.0.0/8"
            ) from None
    return tuple(items)


def show_exempt(value: tuple[str, ...]) -> str:
    """``--quota-exempt`` as ``--help`` and the guide write it."""
    return ",".join(value) or "none"


@dataclass(frozen=True, slots=True)
class Caller:
    """Who made a call, as the quotas count it: ``key`` names it in refusals and tables."""

    key: str
    exempt: bool


def peer_address(peer: str) -> Address | None:
    """The IP address of a gRPC peer (``ipv4:1.2.3.4:5``, ``ipv6:%5B::1%5D:5``), or None (a Unix socket,
    or a peer gRPC names some other way)."""
    kind, _, rest = peer.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return None
    host = unquote(rest).rpartition(":")[0].strip("[]").partition("%")[0]
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


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
    ) -> None:
        self.max_games = max_games
        self.rate = rate
        self._limiter = RateLimiter(rate, burst, clock, max_keys=max_callers)
        self._loopback = "loopback" in exempt
        self._unix = "unix" in exempt
        self._networks: list[Network] = [
            ipaddress.ip_network(item, strict=False) for item in exempt if item not in KEYWORDS
        ]
        self._token_hashes = [auth.token_hash(token) for token in tokens if token]
        self._refused = refused
        self._held: dict[str, int] = {}  # caller key -> unfinished games it created here (only those > 0)
        self._creators: dict[str, str] = {}  # game id -> its creator's key, while the game is unfinished

    # --- who calls ------------------------------------------------------------------------------------

    def caller(self, peer: str, token: str | None) -> Caller:
        """The caller of a call from ``peer`` carrying ``token`` (or none)."""
        if token and any(auth.matches(token, stored) for stored in self._token_hashes):
            return Caller("token", True)
        address = peer_address(peer)
        if address is None:
            if peer.startswith("unix:"):
                return Caller("unix", self._unix)
            return Caller(peer[:100], False)
        exempt = (self._loopback and address.is_loopback) or any(
            address in network for network in self._networks
        )
        if isinstance(address, ipaddress.IPv6Address):
            network = ipaddress.IPv6Network((address, IPV6_PREFIX), strict=False)
            return Caller(f"ipv6:{network}", exempt)
        return Caller(f"ipv4:{address}", exempt)

    # --- the rate of CreateGame and JoinGame ----------------------------------------------------------

    def check_rate(self, caller: Caller, rpc: str) -> None:
        """Count one CreateGame or JoinGame call (``rpc``); RESOURCE_EXHAUSTED (RATE_LIMITED, with the
        delay until the caller's bucket holds a call again) when the caller has none left."""
        if caller.exempt:
            return
        wait = self._limiter.take(caller.key)
        if wait > 0:
            self._refused.labels(limit="caller_rate").inc()
            raise exhausted(
                f"{rpc} refused: {caller.key} made more CreateGame and JoinGame calls than its "
                f"{self.rate:g} per second allow; try again in {wait:.2f} s",
                "caller_rate",
                retry_after=wait,
                metadata={"quota": "caller_rate", "caller": caller.key},
            )

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
