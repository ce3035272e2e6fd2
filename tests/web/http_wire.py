"""HTTP/1.1 answers read off a bare socket, for the tests that speak to the web server as an attacker's
client does (bodies never sent, heads trickled, too many connections), where an HTTP library would not."""

from __future__ import annotations

import socket


def read_answer(sock: socket.socket) -> tuple[bytes, dict[str, str], bytes]:
    """One answer: its status line, its headers (names lower-cased) and as much body as its
    Content-Length says; what came before the server closed, if it closed first (an empty status line
    when nothing came)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    top, _, body = data.partition(b"\r\n\r\n")
    status, *lines = top.split(b"\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    while len(body) < int(headers.get("content-length", 0)):
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body
