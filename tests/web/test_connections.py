"""A public port's connections, as an attacker uses them (kutnahora.web.connections): connections opened
and left silent, heads sent a byte at a time, and more connections from one address than a browser opens.

The web server here runs with ``--head-timeout 1`` and ``--visitor-connections 4``. A silent connection,
or one whose head is not complete a second after it began (however many bytes trickle in), is closed; a
request whose head came in time is answered, however long it then takes (an event stream stays open); a
fifth connection from one address is answered 429 with ``Retry-After`` and a sentence, and closed, while
the four stay; once one closes, a new one is served. Each refusal is logged with its limit."""

from __future__ import annotations

import json
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.silent_connection import closed_within
from tests.web.conftest import Servers, start, stop
from tests.web.http_wire import read_answer

HEAD_TIMEOUT = 1.0
MOST = 4


@pytest.fixture(scope="module")
def guarded_web(servers: Servers) -> Iterator[tuple[str, Path]]:
    folder = Path(tempfile.mkdtemp(prefix="kutnahora-web-guarded-"))
    log = folder / "web.log"
    process, url = start(
        [
            *(sys.executable, "-m", "kutnahora.web.cli", "--server", servers.grpc, "--port", "0"),
            *("--head-timeout", str(HEAD_TIMEOUT), "--visitor-connections", str(MOST)),
            *("--visitor-requests", "0", "--log-format", "json"),
        ],
        r"serving (http://\S+)",
        log,
    )
    try:
        yield url, log
    finally:
        stop(process)
        shutil.rmtree(folder, ignore_errors=True)


def connect(url: str) -> socket.socket:
    parsed = httpx.URL(url)
    sock = socket.create_connection((parsed.host, parsed.port or 80), timeout=10)
    return sock


def answered(sock: socket.socket) -> bytes:
    """One whole HTTP answer read from ``sock``; its status line."""
    return read_answer(sock)[0]


def refusals(log: Path, limit: str) -> bool:
    """Whether the web server logged a refusal of ``limit`` (within a few seconds: its log is written as
    it goes)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
        if any(line.get("event") == "visitor refused" and line.get("limit") == limit for line in lines):
            return True
        time.sleep(0.1)
    return False


def head(url: str, path: str = "/api/games") -> bytes:
    host = httpx.URL(url).netloc.decode()
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()


def test_a_silent_connection_is_closed_once_its_head_is_late(guarded_web: tuple[str, Path]) -> None:
    url, log = guarded_web
    with connect(url) as sock:
        took = closed_within(sock, 5)
    assert took is not None and HEAD_TIMEOUT - 0.2 <= took < 3
    assert refusals(log, "heads")


def test_a_head_trickled_a_byte_at_a_time_is_closed_at_its_deadline(guarded_web: tuple[str, Path]) -> None:
    """The deadline runs from the head's first byte: each byte that trickles in does not put it off."""
    url, _ = guarded_web
    with connect(url) as sock:
        started = time.monotonic()
        closed = False
        for byte in head(url)[:-2]:  # never the final blank line
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed = True
                break
            if closed_within(sock, 0.2) is not None:
                closed = True
                break
        took = time.monotonic() - started
    assert closed and took < HEAD_TIMEOUT + 2


def test_a_head_sent_in_time_is_answered_and_its_event_stream_outlives_the_deadline(
    guarded_web: tuple[str, Path], servers: Servers
) -> None:
    url, _ = guarded_web
    with connect(url) as sock:
        time.sleep(HEAD_TIMEOUT / 2)
        sock.sendall(head(url))
        assert answered(sock) == b"HTTP/1.1 200 OK"
        sock.sendall(head(url))  # a second request on the kept-alive connection
        assert answered(sock) == b"HTTP/1.1 200 OK"
    with httpx.Client(base_url=url, timeout=20) as client:
        body = {"players": 2, "seats": ["you", "greedy"], "delay": 0}
        created = client.post("/api/games", json=body, headers={"origin": url})
        assert created.status_code == 200, created.text
        game_id = created.json()["game_id"]
    with connect(url) as sock:
        sock.sendall(head(url, f"/api/games/{game_id}/events"))
        assert closed_within(sock, HEAD_TIMEOUT * 3) is None  # waiting for the seat: still streaming


def test_a_connection_past_an_addresss_limit_is_refused_with_a_sentence(
    guarded_web: tuple[str, Path],
) -> None:
    url, log = guarded_web
    held = [connect(url) for _ in range(MOST)]
    try:
        for sock in held:  # each sends a request in time, and keeps its connection
            sock.sendall(head(url))
            assert answered(sock) == b"HTTP/1.1 200 OK"
        with connect(url) as extra:
            status, headers, body = read_answer(extra)
            assert extra.recv(65536) == b"", "closed after its answer"
        assert status.startswith(b"HTTP/1.1 429") and headers["retry-after"] == "5"
        assert json.loads(body)["error"] == (
            f"Too many connections from your address: at most {MOST} open at once; "
            "close some pages, then try again."
        )
        for sock in held:  # the four were not touched
            sock.sendall(head(url))
            assert answered(sock) == b"HTTP/1.1 200 OK"
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.3)
    with connect(url) as sock:  # their places are free again
        sock.sendall(head(url))
        assert answered(sock) == b"HTTP/1.1 200 OK"
    assert refusals(log, "connections")
