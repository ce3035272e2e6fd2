"""Who a visitor is: the address a request came from, as the web server's per-visitor limits count it.

Every visitor reaches the game server through this web server, as one gRPC caller, so the game server's
quotas cannot tell visitors apart; the web server counts them itself (:mod:`.limits`). A visitor is:

- the request's client address without its port: an IPv4 address, or an IPv6 address's /64 (one host
  commonly holds a whole /64, so counting single IPv6 addresses would let it count as billions); an IPv4
  address mapped into IPv6 counts as that IPv4 address;
- behind a reverse proxy, whose address every request would otherwise have: when the request comes from a
  trusted proxy (``--trusted-proxies``; none by default), the right-most address of ``X-Forwarded-For``
  that is not itself a trusted proxy. Each proxy appends the address it was reached from, so the entries
  to the left of that one are the visitor's own words and are never believed. Without trusted proxies the
  header is ignored: anyone can send one.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import Scope

from kutnahora.plumbing.callers import (
    FORWARDED_FOR,
    Address,
    Network,
    address_key,
    forwarded_address,
    host_address,
    parse_networks,
)

__all__ = ["Visitors", "parse_networks"]


class Visitors:
    """Tells who sent a request, believing ``X-Forwarded-For`` from the ``trusted`` proxies only."""

    def __init__(self, trusted: Iterable[Network] = ()) -> None:
        self.trusted = tuple(trusted)

    def _trusted(self, found: Address) -> bool:
        return any(found in network for network in self.trusted)

    def of(self, scope: Scope) -> str:
        """The visitor of an HTTP request's ``scope``: its key (``ipv4:203.0.113.7``, ``ipv6:…/64``:
        :func:`~kutnahora.plumbing.callers.address_key`), or, for a peer that is not an IP address (a Unix
        socket, a test client), the peer's name as given."""
        client = scope.get("client")
        peer_text = str(client[0]) if client else ""
        peer = host_address(peer_text)
        if peer is None:
            return peer_text[:100] or "unknown"
        if self.trusted and self._trusted(peer):
            forwarded = self._forwarded(scope)
            if forwarded is not None:
                return address_key(forwarded)
        return address_key(peer)

    def _forwarded(self, scope: Scope) -> Address | None:
        """The visitor's address that X-Forwarded-For names
        (:func:`~kutnahora.plumbing.callers.forwarded_address`); None when there is none to believe (the
        request is then the proxy's own)."""
        values = [
            value.decode("latin-1")
            for name, value in scope.get("headers", [])
            if name.lower() == FORWARDED_FOR.encode()
        ]
        return forwarded_address(values, self.trusted)
