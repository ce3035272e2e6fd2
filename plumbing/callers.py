"""Who calls a service, and how often it may: the caller identity, the token buckets, and the refusal of a
caller past its rate, shared by the game server's per-caller quotas (:mod:`kutnahora.server.quotas`) and
the arena's (:mod:`kutnahora.arena.quotas`).

Who a caller is (:meth:`Callers.caller`):

- a TCP caller is its address without the port: an IPv4 address, or an IPv6 address's /64 (one host
  commonly holds a whole /64, so counting single IPv6 addresses would let it count as billions);
  an IPv4 address mapped into IPv6 counts as that IPv4 address;
- every caller of a Unix socket is one caller, ``unix``: gRPC says nothing about who is at the other
  end of a Unix socket;
- a call carrying an exempting token (the service's admin token, the game server's ``--quota-token``),
  in its ``authorization`` or beside another there in ``kutnahora-quota-token``, is the caller ``token``
  and is not counted at all, nor one from an exempt address (``--quota-exempt``:
  ``loopback`` by default, the service's own host, where the tournament runner, the benchmarks and a
  service beside it run).

- behind a reverse proxy, whose address every call would otherwise have: a call from a trusted proxy
  (``--trusted-proxies``; none by default) is the caller's that ``x-forwarded-for`` names, the right-most
  address there that is not itself a trusted proxy (:func:`forwarded_address`). Each proxy appends the
  address it was reached from, so the entries to the left of that one are the caller's own words and are
  never believed; without trusted proxies the header is ignored, as anyone can send one.

Where the address cannot tell callers apart, a credential can (:func:`credited`): a call from an exempt
address or from the Unix socket that proves a seat (its seat token) or a game (the game's token) counts as
that seat or game, ``seat:GAME/SEAT`` or ``game:GAME``, like any caller that is not exempt. The tournament
runner's seat gateways reach the server from its own host, where every hosted bot would otherwise be the
one exempt caller: each bot's calls carry its seat token, so each bot has its own limits.

Behind a proxy that does not forward addresses every caller has the proxy's address: exempt it only if it
does its own limiting, else raise the limits (docs/operations.md#quotas).

:class:`RateLimiter` holds a token bucket for each key (a connection, or a caller's key): each key may
spend ``rate`` tokens per second on average and ``burst`` at once. The table of buckets is bounded: it
holds at most ``max_keys`` buckets, and when a new key comes to a full table the bucket used least
recently is dropped. Dropping a bucket that has had time to fill up again loses nothing (a new key starts
full); dropping one that has not forgives its debt, which only a crowd of more than ``max_keys`` keys at
once can arrange.
"""

from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from kutnahora.plumbing import auth

DEFAULT_EXEMPT = ("loopback",)
"""The callers no limit counts unless the operator says otherwise: the service's own host."""

KEYWORDS = ("loopback", "unix")
"""The names ``--quota-exempt`` takes besides addresses and networks."""

IPV6_PREFIX = 64
"""The IPv6 network one caller is: a host commonly holds a whole /64."""

FORWARDED_FOR = "x-forwarded-for"
"""The header (HTTP) or metadata key (gRPC) a reverse proxy names the address it was reached from in."""

FORWARDED_MOST = 64
"""Entries of ``x-forwarded-for`` read at most, from the right."""

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


def parse_networks(text: str) -> tuple[Network, ...]:
    """``--trusted-proxies``: comma-separated addresses or networks (``10.0.0.5,10.1.0.0/16,::1``);
    ``none`` or nothing for none. Raises ValueError, with a sentence, for anything else."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if items in (["none"], []):
        return ()
    networks = []
    for item in items:
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"{item!r} is not an IP address or a network such as 10.0.0.0/8") from None
    return tuple(networks)


def show_networks(networks: Iterable[Network]) -> str:
    """``--trusted-proxies`` as ``--help`` and the guide write it."""
    return ",".join(str(network) for network in networks) or "none"


def show_exempt(value: tuple[str, ...]) -> str:
    """``--quota-exempt`` as ``--help`` and the guide write it."""
    return ",".join(value) or "none"


@dataclass(frozen=True, slots=True)
class Caller:
    """Who made a call, as the limits count it: ``key`` names it in refusals and tables."""

    key: str
    exempt: bool


def host_address(host: str) -> Address | None:
    """The IP address written in ``host`` (``1.2.3.4``, ``::1``, ``[::1]``, with a zone ``%eth0`` or
    not), an IPv4 address mapped into IPv6 as that IPv4 address; None when it is not an address."""
    host = host.strip().strip("[]").partition("%")[0]
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def address_key(address: Address) -> str:
    """Who an address is, as limits count it: ``ipv4:203.0.113.7``, or an IPv6 address's /64
    (``ipv6:2001:db8:1:2::/64``), since one host commonly holds a whole /64."""
    if isinstance(address, ipaddress.IPv6Address):
        return f"ipv6:{ipaddress.IPv6Network((address, IPV6_PREFIX), strict=False)}"
    return f"ipv4:{address}"


def peer_address(peer: str) -> Address | None:
    """The IP address of a gRPC peer (``ipv4:1.2.3.4:5``, ``ipv6:%5B::1%5D:5``), or None (a Unix socket,
    or a peer gRPC names some other way)."""
    kind, _, rest = peer.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return None
    return host_address(unquote(rest).rpartition(":")[0])


def forwarded_address(values: Iterable[str], trusted: Iterable[Network]) -> Address | None:
    """The address that the ``x-forwarded-for`` header's ``values`` (each a comma-separated list, in the
    order received) name as the caller's: the right-most entry that is in none of the ``trusted`` networks.
    When every entry read is a trusted proxy, the left-most one read. None when there is no entry, or when
    an entry read before reaching the caller's is not an address (a proxy writing something else: the
    call is then the proxy's own)."""
    networks = tuple(trusted)
    entries = [entry for value in values for entry in value.split(",")]
    last: Address | None = None
    for entry in reversed(entries[-FORWARDED_MOST:]):
        found = host_address(entry)
        if found is None:
            return None
        if not any(found in network for network in networks):
            return found
        last = found
    return last


def forwarded_values(metadata: Iterable[tuple[str, str | bytes]] | None) -> list[str]:
    """The ``x-forwarded-for`` values of a gRPC call's metadata, in the order received."""
    return [
        value.decode("latin-1") if isinstance(value, bytes) else value
        for key, value in metadata or ()
        if key.lower() == FORWARDED_FOR
    ]


class Callers:
    """Who a call's caller is, and whether it is exempt, for one service's exemptions and tokens."""

    def __init__(
        self, exempt: tuple[str, ...], tokens: Iterable[str], trusted_proxies: Iterable[Network] = ()
    ) -> None:
        self.trusted_proxies = tuple(trusted_proxies)
        self._loopback = "loopback" in exempt
        self._unix = "unix" in exempt
        self._networks: list[Network] = [
            ipaddress.ip_network(item, strict=False) for item in exempt if item not in KEYWORDS
        ]
        self._token_hashes = [auth.token_hash(token) for token in tokens if token]

    def caller(
        self, peer: str, token: str | None, forwarded: Iterable[str] = (), quota_token: str | None = None
    ) -> Caller:
        """The caller of a call from ``peer`` carrying ``token`` (or none) in its ``authorization`` and
        ``quota_token`` in its ``kutnahora-quota-token`` (:data:`kutnahora.plumbing.auth.QUOTA_KEY`);
        ``forwarded``, the call's ``x-forwarded-for`` values, is believed only from a trusted proxy."""
        for offered in (token, quota_token):
            if offered and any(auth.matches(offered, stored) for stored in self._token_hashes):
                return Caller(TOKEN_CALLER, True)
        address = peer_address(peer)
        if address is not None and any(address in network for network in self.trusted_proxies):
            named = forwarded_address(forwarded, self.trusted_proxies)
            if named is not None:
                address = named
        if address is None:
            if peer.startswith("unix:"):
                return Caller("unix", self._unix)
            return Caller(peer[:100], False)
        exempt = (self._loopback and address.is_loopback) or any(
            address in network for network in self._networks
        )
        return Caller(address_key(address), exempt)


TOKEN_CALLER = "token"
"""The key of every call carrying an exempting token: it is never counted, whatever it proves."""


def by_credential(caller: Caller) -> bool:
    """Whether the limits count ``caller``'s calls by the credential they prove (:func:`credited`): an
    exempt address, or the Unix socket's callers, whose address tells nobody apart."""
    return caller.key != TOKEN_CALLER and (caller.exempt or caller.key == "unix")


def credited(caller: Caller, credential: str | None) -> Caller:
    """The caller a limit counts a call as: the proven ``credential`` (``seat:GAME/SEAT``, ``game:GAME``;
    None when the call proves none) for a caller counted :func:`by_credential`, else ``caller`` itself."""
    if credential is None or not by_credential(caller):
        return caller
    return Caller(credential, False)


class _Bucket:
    __slots__ = ("stamp", "tokens")

    def __init__(self, tokens: float, stamp: float) -> None:
        self.tokens = tokens
        self.stamp = stamp


class RateLimiter:
    """Token buckets keyed by a text (a peer, a caller)."""

    def __init__(
        self,
        rate: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 10_000,
    ) -> None:
        self.rate = rate
        self.burst = float(max(1, burst))
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def _bucket(self, key: str, now: float) -> _Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            while len(self._buckets) >= self._max_keys:
                self._buckets.popitem(last=False)
            bucket = self._buckets[key] = _Bucket(self.burst, now)
        else:
            self._buckets.move_to_end(key)
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.stamp) * self.rate)
            bucket.stamp = now
        return bucket

    def allow(self, key: str, cost: float = 1.0) -> bool:
        """Take ``cost`` tokens from the key's bucket; False when it does not hold that many."""
        return self.take(key, cost) == 0.0

    def take(self, key: str, cost: float = 1.0) -> float:
        """Take ``cost`` tokens from the key's bucket and return 0.0; or, when it does not hold that many,
        take nothing and return the seconds after which it will."""
        if self.rate <= 0:
            return 0.0
        now = self._clock()
        bucket = self._bucket(key, now)
        if bucket.tokens < cost:
            return (min(cost, self.burst) - bucket.tokens) / self.rate
        bucket.tokens -= cost
        return 0.0

    def give_back(self, key: str, cost: float = 1.0) -> None:
        """Return tokens :meth:`take` took (up to the burst); nothing for a key no longer kept."""
        if self.rate <= 0:
            return
        bucket = self._buckets.get(key)
        if bucket is not None:
            bucket.tokens = min(self.burst, bucket.tokens + cost)
