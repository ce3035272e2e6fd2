"""The shipped nginx front (deploy/nginx/kutnahora-grpc.conf) before a real kutnahora-server, tried as a
stranger would: bots play a whole game through it (TLS, HTTP/2, Play streams), the server counts each
call as the address the proxy forwards and never as the header a client writes, one address holding its
limit of calls at once is refused the next until one of its calls ends, and a flood of calls from one
address is cut to the rate it may have.

nginx comes from Debian's ``nginx`` package (``.ci/run`` installs it); the tests skip without it. The
shipped file is used as written but for what a test must change: the listening port, the certificate,
the upstream's port and the per-address limits (each change checked to apply once).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import grpc.aio
import pytest

from kutnahora.clients.bots import make_bot
from kutnahora.clients.sdk import Client
from kutnahora.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc, play_service_pb2
from tests.certificates import make_certificate, needs_openssl
from tests.deploy.servers import ROOT, ServerProcess, start_server
from tests.status_details import refusal

CONFIG = ROOT / "deploy" / "nginx" / "kutnahora-grpc.conf"
PER_ADDRESS = 3  # the test's limit of calls one address holds at once (the shipped file says 64)
RATE, BURST = 20, 40  # the test's calls a second and at once from one address (the shipped: 50 and 500)

pytestmark = [needs_openssl]


def nginx() -> str:
    """The nginx binary, or a skip saying how to get it."""
    path = shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None
    )
    if path is None:
        pytest.skip("nginx is not installed (Debian: apt-get install -y nginx)")
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def replaced(text: str, old: str, new: str) -> str:
    """``text`` with the one line matching ``old`` (a regular expression) replaced by ``new``."""
    changed, count = re.subn(old, new, text, flags=re.MULTILINE)
    assert count == 1, f"the shipped nginx file no longer has one line matching {old!r}"
    return changed


def front_config(folder: Path, listen: int, upstream: str) -> Path:
    """The shipped file with the test's port, certificate, upstream and limit, inside a whole nginx.conf
    that keeps every file nginx writes in ``folder``."""
    key, cert = make_certificate(folder)
    site = CONFIG.read_text()
    site = replaced(site, r"^    listen 443 ssl http2;$", f"    listen 127.0.0.1:{listen} ssl http2;")
    site = replaced(site, r"^    ssl_certificate /etc/.*;$", f"    ssl_certificate {cert};")
    site = replaced(site, r"^    ssl_certificate_key /etc/.*;$", f"    ssl_certificate_key {key};")
    site = replaced(site, r"^    server 127\.0\.0\.1:50051;$", f"    server {upstream};")
    site = replaced(
        site,
        r"^    limit_conn kutnahora_addresses 64;$",
        f"    limit_conn kutnahora_addresses {PER_ADDRESS};",
    )
    site = replaced(site, r"rate=50r/s;$", f"rate={RATE}r/s;")
    burst = f"    limit_req zone=kutnahora_calls burst={BURST} nodelay;"
    site = replaced(site, r"^    limit_req zone=kutnahora_calls burst=500 nodelay;$", burst)
    (folder / "kutnahora-grpc.conf").write_text(site)
    temporary = folder / "temp"
    temporary.mkdir()
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers write the temp folder, owned by this user
    main = folder / "nginx.conf"
    main.write_text(
        f"""{user}daemon off;
worker_processes 1;
pid {folder / "nginx.pid"};
error_log {folder / "error.log"} info;
events {{ worker_connections 256; }}
http {{
    access_log {folder / "access.log"};
    client_body_temp_path {temporary / "body"};
    proxy_temp_path {temporary / "proxy"};
    fastcgi_temp_path {temporary / "fastcgi"};
    uwsgi_temp_path {temporary / "uwsgi"};
    scgi_temp_path {temporary / "scgi"};
    include {folder / "kutnahora-grpc.conf"};
}}
"""
    )
    return main


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"nginx ended (status {process.returncode}):\n{log.read_text()[-3000:]}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nginx did not listen on {port}:\n{log.read_text()[-3000:]}")


@pytest.fixture
def front(tmp_path: Path) -> Iterator[tuple[ServerProcess, str, bytes]]:
    """A server counting every caller (``--quota-exempt none``, one unfinished game each) and believing
    the proxy on loopback, behind nginx with the shipped file: (server, the proxy's address, its CA)."""
    binary = nginx()
    server = start_server(
        str(tmp_path / "games.db"),
        tmp_path,
        "behind-proxy",
        ["--quota-exempt", "none", "--caller-games", "1", "--trusted-proxies", "127.0.0.1"],
    )
    listen = free_port()
    main = front_config(tmp_path, listen, server.address)
    checked = subprocess.run([binary, "-t", "-c", str(main)], capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr
    process = subprocess.Popen([binary, "-c", str(main)], stderr=subprocess.DEVNULL)
    try:
        wait_for_port(listen, process, tmp_path / "error.log")
        yield server, f"127.0.0.1:{listen}", (tmp_path / "cert.pem").read_bytes()
    except BaseException:
        print(f"--- nginx error.log ---\n{(tmp_path / 'error.log').read_text()[-3000:]}")
        print(f"--- server log ---\n{server.log()}")
        raise
    finally:
        process.terminate()
        process.wait(timeout=15)
        server.stop()


def spoofing(address: str) -> tuple[tuple[str, str], ...]:
    return (("x-forwarded-for", address),)


async def test_bots_play_a_whole_game_through_the_front(front: tuple[ServerProcess, str, bytes]) -> None:
    """TLS, HTTP/2 and Play streams pass; the game, created by the one place the caller has, ends and
    frees it."""
    _, address, ca = front
    client = Client(address, root_certificates=ca, server_name="localhost", retry_refused=False)
    try:
        await client.wait_ready(10)
        _, seats = await client.create_seated_game(["a", "b"], seed=5)
        outcomes = await asyncio.gather(
            *(client.play(make_bot("random", seed=seat.seat), seat) for seat in seats)
        )
        assert [o.status for o in outcomes] == [game_pb2.GAME_STATUS_FINISHED] * 2, outcomes
        assert all(o.decisions > 10 and o.result is not None for o in outcomes), outcomes
        # The place is free again: the same caller creates another game.
        await client.create_game(2)
    finally:
        await client.close()


def test_the_server_counts_the_address_the_proxy_saw_not_the_one_a_client_writes(
    front: tuple[ServerProcess, str, bytes],
) -> None:
    """A client writes X-Forwarded-For to pass for another caller each time: the proxy replaces it with
    the address it was reached from, so its second game is refused as its own (ipv4:127.0.0.1)."""
    server, address, ca = front
    credentials = grpc.ssl_channel_credentials(root_certificates=ca)
    options = [("grpc.ssl_target_name_override", "localhost")]
    with grpc.secure_channel(address, credentials, options=options) as channel:
        games = game_service_pb2_grpc.GameServiceStub(channel)
        request = game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=2))
        games.CreateGame(request, metadata=spoofing("198.51.100.7"), timeout=10)
        with pytest.raises(grpc.RpcError) as caught:
            games.CreateGame(request, metadata=spoofing("198.51.100.8"), timeout=10)
    error = caught.value
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
    assert refusal(error)[0].metadata["caller"] == "ipv4:127.0.0.1", error.details()
    # Straight to the server, which trusts loopback as its proxy, the same header would have been believed:
    # the replacing is the front's, and it is what makes --trusted-proxies safe.
    server.games.CreateGame(request, metadata=spoofing("198.51.100.9"), timeout=10)


async def test_an_address_holding_its_limit_of_calls_is_refused_the_next(
    front: tuple[ServerProcess, str, bytes],
) -> None:
    """Watch streams held open up to the per-address limit; the next call is refused by the proxy
    (UNAVAILABLE, HTTP 429) and never reaches the server; once one stream ends, a call passes again."""
    _, address, ca = front
    client = Client(address, root_certificates=ca, server_name="localhost", retry_refused=False, retry_for=0)
    try:
        await client.wait_ready(10)
        created = await client.create_game(2)
        game = created.game
        request = play_service_pb2.WatchGameRequest(game_id=game.game_id)
        watchers = [client._play.WatchGame(request) for _ in range(PER_ADDRESS)]
        for watcher in watchers:
            await asyncio.wait_for(watcher.read(), 10)  # each holds its stream: the waiting game's state
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await client._games.GetGame(game_service_pb2.GetGameRequest(game_id=game.game_id), timeout=10)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "429" in (caught.value.details() or ""), caught.value.details()
        watchers.pop().cancel()
        await asyncio.sleep(0.5)
        answer = await client._games.GetGame(
            game_service_pb2.GetGameRequest(game_id=game.game_id), timeout=10
        )
        assert answer.game.game_id == game.game_id
        for watcher in watchers:
            watcher.cancel()
    finally:
        await client.close()


async def test_a_flood_of_calls_from_one_address_is_cut_to_its_rate(
    front: tuple[ServerProcess, str, bytes],
) -> None:
    """Reads are not counted by the server's per-caller quotas (those count CreateGame and JoinGame):
    three times the burst of GetGame as fast as they are answered pass the burst (and what the rate refills
    meanwhile), and the rest is refused by the proxy (HTTP 429, UNAVAILABLE to gRPC)."""
    _, address, ca = front
    client = Client(address, root_certificates=ca, server_name="localhost", retry_refused=False, retry_for=0)
    try:
        await client.wait_ready(10)
        await asyncio.sleep(BURST / RATE)  # the bucket full again after the fixture's and wait_ready's calls
        game = (await client.create_game(2)).game
        asked = game_service_pb2.GetGameRequest(game_id=game.game_id)
        started = time.monotonic()
        passed, refused = [], []
        for _ in range(3 * BURST):  # one after another, as fast as they are answered: never two at once
            try:
                passed.append(await client._games.GetGame(asked, timeout=10))
            except grpc.aio.AioRpcError as error:
                refused.append(error)
        elapsed = time.monotonic() - started
        assert BURST - 2 <= len(passed) <= BURST + RATE * elapsed + 1, (len(passed), elapsed)
        assert all(e.code() == grpc.StatusCode.UNAVAILABLE and "429" in (e.details() or "") for e in refused)
        await asyncio.sleep(2 / RATE)
        assert (await client._games.GetGame(asked, timeout=10)).game.game_id == game.game_id, "refilled"
    finally:
        await client.close()
