"""HTTP/2 pings on the services' connections, both ways, as gRPC's channel arguments.

Bots hold streams open through long, quiet stretches, their connections kept alive by their own pings
(the SDK's every 20 s): a server accepts them, at most one every 10 s, rather than closing the connection
after two (:data:`ACCEPT_PINGS`). And a server pings its clients (:func:`server_pings`): gRPC's server
sends no pings by default (its keepalive time is two hours), so the streams of a client that vanished
without closing its connection (a frozen process, a machine gone, a cable pulled) would hold their places,
and their caller's share of them, until the operating system gave up on the socket, which for a stopped
process whose kernel still answers for it is never. And a connection that never completes its opening
(silent, or sending its HTTP/2 preface a byte at a time) is closed after :data:`DEFAULT_HANDSHAKE_SECONDS`
(:func:`handshake`), not gRPC's two minutes, so that a stranger cannot hold the server's sockets by the
thousand with connections that say nothing. A connection that opened but holds no call for
:data:`DEFAULT_IDLE_SECONDS` is closed too (:func:`idle`): a client's channel opens a new one for its next
call, while connections opened and left (by the thousand, pinging to stay alive) would hold their sockets.
"""

from __future__ import annotations

ACCEPT_PINGS: list[tuple[str, int]] = [
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
]
"""Clients may keep an idle connection alive with pings, at most one every 10 s (a client that pings more
often is disconnected with ``ENHANCE_YOUR_CALM``)."""

DEFAULT_SECONDS = 60.0
"""Seconds between a server's pings on each connection, by default."""

DEFAULT_TIMEOUT_SECONDS = 20.0
"""Seconds a server waits for the answer to its ping, by default."""


DEFAULT_HANDSHAKE_SECONDS = 10.0
"""Seconds a new connection has to complete its opening (TLS, and HTTP/2's preface and settings)."""


def handshake(seconds: float) -> list[tuple[str, int]]:
    """The channel argument that closes a connection whose opening is not complete ``seconds`` after it
    was accepted."""
    return [("grpc.server_handshake_timeout_ms", max(1, int(seconds * 1000)))]


DEFAULT_IDLE_SECONDS = 300.0
"""Seconds a connection may hold no call before the server closes it, by default."""


def idle(seconds: float) -> list[tuple[str, int]]:
    """The channel argument that closes a connection, with HTTP/2's GOAWAY, once it has held no call for
    ``seconds`` (none for 0: a connection may idle for ever). A call under way, a bot's quiet stream
    included, keeps its connection; a channel reconnects for its next call."""
    if seconds <= 0:
        return []
    return [("grpc.max_connection_idle_ms", max(1, int(seconds * 1000)))]


def server_pings(seconds: float, timeout_seconds: float) -> list[tuple[str, int]]:
    """The channel arguments of a server that pings each connection every ``seconds`` and closes one whose
    ping goes unanswered for ``timeout_seconds``, cancelling its calls (none for 0 seconds: gRPC's two
    hours). Pings go on while a stream stays quiet: gRPC would otherwise stop after two pings without
    data."""
    if seconds <= 0:
        return []
    timeout_ms = max(1, int(timeout_seconds * 1000))
    return [
        ("grpc.keepalive_time_ms", max(1, int(seconds * 1000))),
        ("grpc.keepalive_timeout_ms", timeout_ms),
        # gRPC core times the answer to a ping by this argument too: with the keepalive timeout alone, a
        # stopped client's connection was still open 40 s later.
        ("grpc.http2.ping_timeout_ms", timeout_ms),
        ("grpc.http2.max_pings_without_data", 0),
    ]
