"""Connections from a public port: each address's open connections bounded, each request's head due in time.

uvicorn keeps a connection for as long as its client likes until a request's head (its line and headers)
is complete: a client that opens connections and sends nothing, or a few bytes of a head now and then, holds
a socket and some memory with each, and a few thousand of them take the process's file descriptors, so
that nobody else is served. :class:`GuardedH11Protocol` (uvicorn's h11 protocol, with two checks) closes
them:

- **a head is due** :data:`HEAD_SECONDS` after the connection opened, or after the first byte of a next
  request on a connection kept alive (between requests uvicorn's own keep-alive timeout closes an idle
  one); a connection whose head is late is closed;
- **a visitor's open connections** are at most ``Limits.connections`` (``--visitor-connections``; 0: no
  limit): one past it is answered at once with 429, ``Retry-After`` and a sentence, and closed. A visitor
  here is the connection's address (an IPv4 address, an IPv6 /64), as for the other limits; connections
  from ``--trusted-proxies`` are not counted (each carries many visitors, whom the proxy bounds).

Each is counted in ``kutnahora_web_refusals_total`` (``connections``, ``heads``) and logged within the
refusal log's budget. A request's body is bounded apart (:func:`kutnahora.web.requests.json_body`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from kutnahora.plumbing.callers import address_key, host_address
from kutnahora.plumbing.holds import Holds
from kutnahora.web.refusals import RefusalLog
from kutnahora.web.visitors import Visitors

HEAD_SECONDS = 10.0
"""Seconds a connection has to send a request's whole head (from its opening, or from a next request's
first byte)."""
CONNECTIONS_RETRY_SECONDS = 5
"""The Retry-After of a visitor that holds its connections: a browser's close as its pages load."""


class ConnectionGuard:
    """The open connections of every visitor, and the refusal log both checks report to."""

    def __init__(self, most: int, visitors: Visitors, refusals: RefusalLog, head_seconds: float) -> None:
        self.holds: Holds[str] = Holds(most)
        self.visitors = visitors
        self.refusals = refusals
        self.head_seconds = head_seconds

    def visitor(self, client: tuple[str, int] | None) -> str | None:
        """The visitor a connection from ``client`` counts against; None for one not counted (a trusted
        proxy's, or a peer that is no IP address, such as a Unix socket's)."""
        address = host_address(str(client[0])) if client else None
        if address is None or any(address in network for network in self.visitors.trusted):
            return None
        return address_key(address)

    def refusal(self) -> bytes:
        """The whole HTTP answer to a connection past its visitor's limit."""
        sentence = (
            f"Too many connections from your address: at most {self.holds.most} open at once; "
            "close some pages, then try again."
        )
        body = json.dumps({"error": sentence}).encode()
        head = (
            "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nretry-after: {CONNECTIONS_RETRY_SECONDS}\r\n"
            "connection: close\r\n\r\n"
        )
        return head.encode() + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with :class:`ConnectionGuard`'s checks; :func:`guarded` makes one bound to
    a guard, to give uvicorn as its ``http`` protocol."""

    guard: ClassVar[ConnectionGuard]

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._counted: str | None = None
        self._head_due: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        visitor = self.guard.visitor(self.client)
        if visitor is not None:
            if not self.guard.holds.take(visitor):
                self.guard.refusals.refused(visitor, "connections", CONNECTIONS_RETRY_SECONDS)
                transport.write(self.guard.refusal())
                transport.close()
                return
            self._counted = visitor
        self._await_head()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:  # a head begun and not complete (or none yet)
            self._await_head()
        else:
            self._head_arrived()

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_arrived()
        if self._counted is not None:
            self.guard.holds.give(self._counted)
            self._counted = None
        super().connection_lost(exc)

    def _await_head(self) -> None:
        if self._head_due is None and not self.transport.is_closing():
            self._head_due = self.loop.call_later(self.guard.head_seconds, self._head_late)

    def _head_arrived(self) -> None:
        if self._head_due is not None:
            self._head_due.cancel()
            self._head_due = None

    def _head_late(self) -> None:
        self._head_due = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            visitor = self._counted or self.guard.visitor(self.client) or "unknown"
            self.guard.refusals.refused(visitor, "heads", 0)
            self.transport.close()


def guarded(guard: ConnectionGuard) -> type[GuardedH11Protocol]:
    """A :class:`GuardedH11Protocol` class bound to ``guard`` (uvicorn makes the instances)."""
    attributes: dict[str, Any] = {"guard": guard}
    return type("BoundGuardedH11Protocol", (GuardedH11Protocol,), attributes)
