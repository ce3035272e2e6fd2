"""A stranger's connection that says nothing, or begins HTTP/2's preface and stops, for the tests that the
servers close such connections (``--handshake-timeout``) instead of holding their sockets for minutes."""

from __future__ import annotations

import asyncio
import socket
import time

PREFACE_BEGUN = b"PRI * HTTP/2.0\r\n"
"""The first line of HTTP/2's connection preface, without the rest of it."""


async def closed_after(port: int, sent: bytes, most: float, host: str = "127.0.0.1") -> float | None:
    """Open a connection, send ``sent`` and nothing more; the seconds until the server closed it, or None
    when it was still open after ``most`` seconds."""
    sock = socket.create_connection((host, port), timeout=5)
    try:
        sock.sendall(sent)
        sock.setblocking(False)
        started = time.monotonic()
        while time.monotonic() - started < most:
            try:
                if sock.recv(4096) == b"":
                    return time.monotonic() - started
            except BlockingIOError:
                pass
            except ConnectionResetError:
                return time.monotonic() - started
            await asyncio.sleep(0.05)
        return None
    finally:
        sock.close()
