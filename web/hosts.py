"""The Host header check: requests must name this web server by one of its allowed names.

A page on another site can point its own host name at 127.0.0.1 (DNS rebinding) and then post to this
server as if it were that site: the Origin check passes, since Origin and Host agree. Checking the Host header
against the names this server is reached by (``--allowed-hosts``; by default the address it serves, and the
loopback names when that is a loopback address) refuses such requests before anything is done.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def host_name(header: str) -> str:
    """The name in a Host header, without its port: ``[::1]:8080`` is ``::1``, ``Example.org:80`` is
    ``example.org``."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    if header.count(":") == 1:
        return header.partition(":")[0]
    return header


def default_hosts(host: str) -> list[str]:
    """The names a server bound to ``host`` answers to by default."""
    names = [host.strip("[]").lower()]
    try:
        address = ipaddress.ip_address(names[0])
    except ValueError:
        address = None
    if names[0] == "localhost" or (address is not None and address.is_loopback):
        names += LOOPBACK_NAMES
    elif address is not None and address.is_unspecified:
        # Every interface: the loopback names and this machine's own names.
        names = [*LOOPBACK_NAMES, socket.gethostname().lower(), socket.getfqdn().lower()]
    return list(dict.fromkeys(names))


class AllowedHosts:
    """Refuse (400) a request whose Host header names none of ``hosts`` (``*`` allows every name)."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str]) -> None:
        self.app = app
        self.hosts = frozenset(host_name(h) if h != "*" else "*" for h in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or "*" in self.hosts:
            await self.app(scope, receive, send)
            return
        name = host_name(Headers(scope=scope).get("host", ""))
        if name in self.hosts:
            await self.app(scope, receive, send)
            return
        response = PlainTextResponse(
            f"Refused: this web server does not answer to the host name {name or '(none)'!r}; "
            "start it with --allowed-hosts to add a name.",
            status_code=400,
        )
        await response(scope, receive, send)
