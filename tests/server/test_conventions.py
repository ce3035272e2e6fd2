"""What operators expect of a gRPC service: a build-info metric, one version everywhere, and connections
that do not live for ever when a deployment is scaled out."""

from __future__ import annotations

import asyncio
import importlib.metadata
import urllib.request

import grpc
import grpc.aio
import pytest

import kutnahora
from kutnahora import engine
from kutnahora.server.config import Limits, ServerConfig
from kutnahora.server.main import build_parser, config_from_args
from kutnahora.v1 import admin_service_pb2, play_service_pb2
from tests.frozen_client import FROZEN_WATCHER, frozen
from tests.server.conftest import NO_CLOCK, Client, StartServer
from tests.silent_connection import OPENED, PREFACE_BEGUN, closed_after


async def test_build_info_and_the_server_version_come_from_the_package(start_server: StartServer) -> None:
    installed = importlib.metadata.version("kutnahora")
    assert kutnahora.__version__ == installed
    server, client = await start_server(ServerConfig.in_memory(clock=NO_CLOCK, metrics_port=0))
    info = await client.admin.GetServerInfo(admin_service_pb2.GetServerInfoRequest())
    assert info.server_version == installed
    url = f"http://127.0.0.1:{server.metrics_port}/metrics"
    text = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read().decode())
    components = engine.components_hash(engine.default_components())
    compiled = "true" if kutnahora.compiled_modules() == kutnahora.COMPILABLE else "false"
    line = (
        f'kutnahora_build_info{{compiled="{compiled}",components="{components}",'
        f'rules_version="{engine.RULES_VERSION}",version="{installed}"}} 1.0'
    )
    assert line in text.splitlines()


async def test_a_connection_past_its_age_is_ended_after_the_grace(start_server: StartServer) -> None:
    """A watch stream on a game that does not move would stay open for ever; past the connection's age
    and its grace, the server ends it, and the client reconnects for its next call."""
    config = ServerConfig.in_memory(
        clock=NO_CLOCK, max_connection_age_seconds=0.5, max_connection_age_grace_seconds=0.5
    )
    _, client = await start_server(config)
    game_id, _, _ = await client.new_game(players=2, seed=5)
    watch = client.play.WatchGame(play_service_pb2.WatchGameRequest(game_id=game_id))
    await watch.read()  # version 0
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        await asyncio.wait_for(watch.read(), 10)
    assert ended.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
    await client.observe(game_id)  # a new connection serves the next call


async def test_without_an_age_a_quiet_stream_stays_open(start_server: StartServer) -> None:
    _, client = await start_server(ServerConfig.in_memory(clock=NO_CLOCK))
    game_id, _, _ = await client.new_game(players=2, seed=5)
    watch = client.play.WatchGame(play_service_pb2.WatchGameRequest(game_id=game_id))
    await watch.read()
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(watch.read(), 2.0)
    watch.cancel()


async def watch_refused(client: Client, game_id: str) -> bool:
    """Whether a new watch stream on ``game_id`` is refused for want of a place (else it is opened and
    closed again)."""
    watch = client.play.WatchGame(play_service_pb2.WatchGameRequest(game_id=game_id))
    try:
        await watch.read()
    except grpc.aio.AioRpcError as error:
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error.details()
        return True
    watch.cancel()
    return False


@pytest.mark.parametrize("keepalive", [1.0, 0.0])
async def test_a_frozen_watcher_gives_back_its_place_when_it_misses_a_ping(
    start_server: StartServer, keepalive: float
) -> None:
    """A watcher whose process stops (SIGSTOP, as a crash under a debugger or a suspended laptop leaves
    it: its kernel still answers for the socket) holds the server's only watch place; the server's pings
    find it gone and close its connection, and the place is another's. Without pings it holds the place."""
    config = ServerConfig.in_memory(
        clock=NO_CLOCK,
        limits=Limits(max_watchers=1),
        keepalive_seconds=keepalive,
        keepalive_timeout_seconds=1.0,
    )
    server, client = await start_server(config)
    game_id, _, _ = await client.new_game(players=2, seed=5)
    async with frozen(FROZEN_WATCHER, f"127.0.0.1:{server.port}", game_id):
        assert await watch_refused(client, game_id), "the frozen watcher holds the only place"
        for _ in range(12):
            await asyncio.sleep(0.5)
            if not await watch_refused(client, game_id):
                break
        freed = not await watch_refused(client, game_id)
    assert freed == (keepalive > 0), "the place is freed by the pings, and only by them"


async def test_a_connection_that_holds_no_call_is_closed_and_its_client_reconnects(
    start_server: StartServer,
) -> None:
    """With --max-connection-idle 1, a connection opened without a call is closed after about a second; a
    client's connection holding a quiet watch stream is kept past that, closed once the stream ends, and the
    client's next call is served on a new one. With the default (300 s) the opened connection is still
    open two seconds in."""
    quick, client = await start_server(max_connection_idle_seconds=1.0)
    took = await closed_after(quick.port, OPENED, 5)
    assert took is not None and 0.8 <= took < 4
    game_id, _, _ = await client.new_game(players=2, seed=5)
    watch = client.play.WatchGame(play_service_pb2.WatchGameRequest(game_id=game_id))
    await watch.read()  # version 0
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(watch.read(), 2.5)  # the stream's connection outlived the idle limit
    assert client.channel.get_state() == grpc.ChannelConnectivity.READY
    watch.cancel()
    for _ in range(50):  # closed (GOAWAY) about a second after the stream ended: the channel idles
        await asyncio.sleep(0.1)
        if client.channel.get_state() != grpc.ChannelConnectivity.READY:
            break
    assert client.channel.get_state() == grpc.ChannelConnectivity.IDLE
    assert (await client.observe(game_id)).version == 0  # a new connection serves the next call
    patient, _ = await start_server()
    assert await closed_after(patient.port, OPENED, 2) is None


def test_the_connection_age_flags_and_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    config = config_from_args(build_parser().parse_args([]))
    assert config.max_connection_age_seconds == 0
    config = config_from_args(
        build_parser().parse_args(["--max-connection-age", "600", "--max-connection-age-grace", "60"])
    )
    assert (config.max_connection_age_seconds, config.max_connection_age_grace_seconds) == (600, 60)
    monkeypatch.setenv("KUTNAHORA_MAX_CONNECTION_AGE", "900")
    assert config_from_args(build_parser().parse_args([])).max_connection_age_seconds == 900
    with pytest.raises(SystemExit, match="must not be negative"):
        config_from_args(build_parser().parse_args(["--max-connection-age", "-1"]))
    assert config.max_connection_idle_seconds == 300
    refused = r"--max-connection-idle must be 0 \(never\) or more seconds, not -1"
    with pytest.raises(SystemExit, match=refused):
        config_from_args(build_parser().parse_args(["--max-connection-idle", "-1"]))


@pytest.mark.parametrize("sent", [b"", PREFACE_BEGUN], ids=["silent", "preface-begun"])
async def test_a_connection_that_never_completes_its_opening_is_closed(
    start_server: StartServer, sent: bytes
) -> None:
    """With --handshake-timeout 1 a connection that says nothing, or begins HTTP/2's preface and stops, is
    closed after about a second, while a client that speaks is served; with the default (10 s) the same
    connection is still open two seconds in (gRPC's own default would hold it for two minutes)."""
    quick, client = await start_server(handshake_timeout_seconds=1.0)
    took = await closed_after(quick.port, sent, 5)
    assert took is not None and 0.8 <= took < 4
    info = await client.admin.GetServerInfo(admin_service_pb2.GetServerInfoRequest())
    assert info.server_version == kutnahora.__version__
    patient, _ = await start_server()
    assert await closed_after(patient.port, sent, 2) is None
