"""What operators see: health, reflection and Prometheus metrics of the arena, and its command line."""

from __future__ import annotations

import asyncio
import urllib.request
from pathlib import Path

import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2

from kutnahora.arena.app import create_arena
from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import ClientError
from tests.arena.conftest import arena_config
from tests.clients.helpers import ROOT, python_module

V1_METHOD = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"


async def test_health_reflection_and_metrics(tmp_path: Path, game_server: str) -> None:
    config = arena_config(tmp_path / "ops.db", game_server, metrics_port=0)
    arena, port = await create_arena("127.0.0.1:0", config)
    await arena.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            for service in ("", "kutnahora.v1.ArenaService"):
                answer = await health.Check(health_pb2.HealthCheckRequest(service=service))
                assert answer.status == health_pb2.HealthCheckResponse.SERVING
            call = channel.stream_stream(
                V1_METHOD,
                request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
            )(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
            names = {s.name async for r in call for s in r.list_services_response.service}
            assert "kutnahora.v1.ArenaService" in names
        async with await ArenaClient.connect(f"127.0.0.1:{port}") as client:
            assert [p.name for p in await client.pools()] == ["2", "3", "4"]
            keys = [await client.register_bot(f"m{n}") for n in range(2)]
            await asyncio.gather(*(client.seek(key, "2") for key in keys))
            with pytest.raises(ClientError):
                await client.seek("wrong", "2")
        assert arena.metrics_port is not None
        url = f"http://127.0.0.1:{arena.metrics_port}/metrics"
        text = (await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read())).decode()
        assert 'kutnahora_arena_matches_total{pool="2"} 1.0' in text
        assert 'kutnahora_arena_time_to_match_seconds_count{pool="2"} 2.0' in text
        assert 'kutnahora_arena_tickets_waiting{pool="2"} 0.0' in text
        assert 'kutnahora_arena_refusals_total{reason="unauthenticated"} 1.0' in text
        assert "kutnahora_arena_placement_failures_total" in text
    finally:
        await arena.stop(0)


async def test_a_dead_game_server_counts_as_a_placement_failure(tmp_path: Path) -> None:
    config = arena_config(tmp_path / "dead.db", "127.0.0.1:1")
    arena, port = await create_arena("127.0.0.1:0", config)
    await arena.start()
    try:
        async with await ArenaClient.connect(f"127.0.0.1:{port}") as client:
            keys = [await client.register_bot(f"d{n}") for n in range(2)]
            seeks = [asyncio.ensure_future(client.seek(key, "2")) for key in keys]
            for _ in range(100):
                if arena.metrics.placement_failures.labels(server="127.0.0.1:1")._value.get() >= 1:
                    break
                await asyncio.sleep(0.1)
            assert arena.metrics.placement_failures.labels(server="127.0.0.1:1")._value.get() >= 1
            assert arena.lobby.waiting("2") == 2, "the tickets wait again"
            for seek in seeks:
                seek.cancel()
    finally:
        await arena.stop(0)


def test_the_command_line_refuses_bad_flags() -> None:
    import subprocess

    for flags, message in (
        (["--registration", "closed"], "--registration must be open or admin"),
        (["--registration", "admin"], "needs --admin-token"),
        (["--pools", "5"], "player count of 2, 3 or 4"),
        (["--house-bots", "smart"], "the kinds are"),
        (["--pools", "2,2"], "listed twice"),
    ):
        done = subprocess.run(
            python_module("kutnahora.arena.main", *flags),
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
        )
        assert done.returncode != 0 and message in done.stderr, (flags, done.stderr)
