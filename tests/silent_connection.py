"""A stranger's connection that says nothing, begins a protocol's opening and stops, or opens and makes no
call, for the tests that the servers close such connections (``--handshake-timeout``,
``--max-connection-idle``, the web's ``--head-timeout``) instead of holding their sockets for minutes."""

from __future__ import annotations

import asyncio
import socket
import time

PREFACE_BEGUN = b"PRI * HTTP/2.0\r\n"
"""The first line of HTTP/2's connection preface, without the rest of it."""

OPENED = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
"""HTTP/2's whole connection preface and an empty SETTINGS frame: a connection opened, that then makes
no call."""


def closed_within(sock: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closed ``sock`` (what it sends is read and dropped), or None when it was
    still open after ``seconds``."""
    started = time.monotonic()
    sock.settimeout(0.1)
    while time.monotonic() - started < seconds:
        try:
            if sock.recv(65536) == b"":
                return time.monotonic() - started
        except TimeoutError:
            continue
        except ConnectionResetError:
            return time.monotonic() - started
    return None


async def closed_after(port: int, sent: bytes, most: float, host: str = "127.0.0.1") -> float | None:
    """Open a connection, send ``sent`` and nothing more; the seconds until the server closed it, or None
    when it was still open after ``most`` seconds (waited for on a thread: the server may be this loop's)."""
    sock = socket.create_connection((host, port), timeout=5)
    try:
        sock.sendall(sent)
        return await asyncio.to_thread(closed_within, sock, most)
    finally:
        sock.close()
