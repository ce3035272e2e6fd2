"""kutnahora-web started before its game server, and its Host header check.

The web server serves its pages at once, saying "game server unavailable", reaches the game server when it
comes up, and reaches it again after it restarts, all without a restart of its own. A request naming a host
the web server does not answer to (a DNS-rebinding page) is refused before anything is done.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.web.conftest import Servers, start, stop


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def game_server(port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "kutnahora.server.main",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--db",
        ":memory:",
        "--metrics-port",
        "off",
        "--log-level",
        "warning",
    ]
    process, _ = start(command, r"listening on grpc://(\S+)", log)
    return process


def wait_for(check: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"not within {seconds} s")


@pytest.fixture
def late(tmp_path: Path) -> Iterator[tuple[str, int, Path]]:
    """A web server pointed at a game server port where nothing listens yet."""
    port = free_port()
    web, url = start(
        [sys.executable, "-m", "kutnahora.web.cli", "--server", f"127.0.0.1:{port}", "--port", "0"],
        r"serving (http://\S+)",
        tmp_path / "web.log",
    )
    try:
        yield url, port, tmp_path
    finally:
        stop(web)


def lobby_rows(web: httpx.Client) -> httpx.Response:
    return web.get("/api/games")


def test_the_web_server_waits_for_its_game_server_and_recovers_after_a_restart(
    late: tuple[str, int, Path],
) -> None:
    url, port, folder = late
    same = {"origin": url}
    with httpx.Client(base_url=url, timeout=10) as web:
        # No game server yet: the pages are served, and say so; the API answers 503 with a sentence.
        lobby = web.get("/")
        assert lobby.status_code == 200 and "is unavailable" in lobby.text
        answer = lobby_rows(web)
        assert answer.status_code == 503
        assert answer.json()["error"] == (
            f"The game server 127.0.0.1:{port} is unavailable; this web server keeps trying to reach it."
        )
        time.sleep(1.5)  # a few attempts fail meanwhile

        first = game_server(port, folder / "server-1.log")
        try:
            wait_for(lambda: lobby_rows(web).status_code == 200, 15)
            created = web.post("/api/games", json={"players": 2, "seats": ["greedy", "open"]}, headers=same)
            assert created.status_code == 200
            assert web.get(f"/api/games/{created.json()['game_id']}").status_code == 200
            # The lobby's banner is hidden once the game server answers.
            assert 'id="unavailable" role="alert" hidden' in web.get("/").text
        finally:
            stop(first)

        wait_for(lambda: lobby_rows(web).status_code == 503, 15)
        second = game_server(port, folder / "server-2.log")
        try:
            wait_for(lambda: lobby_rows(web).status_code == 200, 15)
            # The new game server's games (its store is new): none of the first one's.
            assert lobby_rows(web).json()["games"] == []
            created = web.post("/api/games", json={"players": 2, "seats": ["greedy", "open"]}, headers=same)
            assert created.status_code == 200
        finally:
            stop(second)


def test_a_request_for_another_host_name_is_refused(servers: Servers) -> None:
    body = {"players": 2, "seats": ["greedy", "greedy"], "delay": 0}
    with httpx.Client(base_url=servers.web, timeout=10) as web:
        before = len(web.get("/api/games").json()["games"])
        # A DNS-rebinding page: its own name resolves to this server, and its Origin matches its Host.
        rebound = {"host": "attacker.example:8080", "origin": "http://attacker.example:8080"}
        refused = web.post("/api/games", json=body, headers=rebound)
        assert refused.status_code == 400
        assert "does not answer to the host name 'attacker.example'" in refused.text
        assert web.get("/", headers={"host": "attacker.example"}).status_code == 400
        assert len(web.get("/api/games").json()["games"]) == before
        # The served address and the loopback names are answered.
        port = servers.web.rsplit(":", 1)[1]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            ok = web.post("/api/games", json=body, headers={"host": host, "origin": f"http://{host}"})
            assert ok.status_code == 200, (host, ok.text)
        assert len(web.get("/api/games").json()["games"]) == before + 2
