"""What operators rely on: metrics, JSON logs with request context, health checks, reflection, server info."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from kutnahora.native import native_available
from kutnahora.plumbing import logs
from kutnahora.server.config import ServerConfig
from kutnahora.v1 import admin_service_pb2, game_pb2, play_service_pb2
from tests.server.conftest import NO_CLOCK, StartServer, play_game


@pytest.fixture
def captured_logs() -> Iterator[io.StringIO]:
    """The server's log lines, as JSON, for one test."""
    stream = io.StringIO()
    logs.configure("json", "info", stream=stream)
    yield stream
    logs.reset()


async def test_metrics_are_served_on_their_own_port(start_server: StartServer, tmp_path: Path) -> None:
    server, client = await start_server(
        ServerConfig.in_memory(db=str(tmp_path / "m.db"), clock=NO_CLOCK, metrics_port=0)
    )
    assert server.metrics_port
    game_id, tokens, _ = await client.new_game(players=2, seed=4)
    watch = client.play.WatchGame(play_service_pb2.WatchGameRequest(game_id=game_id))
    await watch.read()
    url = f"http://127.0.0.1:{server.metrics_port}/metrics"
    during = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read().decode())
    assert "kutnahora_watch_streams 1.0" in during
    seat = (await client.observe(game_id)).pending.seat
    with pytest.raises(grpc.aio.AioRpcError):
        await client.submit(game_id, seat, tokens[seat], 0, option_index=999)
    await play_game(client, game_id, tokens)
    text = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read().decode())
    watch.cancel()
    for name in (
        "kutnahora_games_created_total 1.0",
        'kutnahora_games_ended_total{status="finished"} 1.0',
        'kutnahora_games{status="finished"} 1.0',
        'kutnahora_games{status="active"} 0.0',
        'kutnahora_decisions_applied_total{source="seat"}',
        'kutnahora_submission_latency_seconds_bucket{le="0.005",path="stream"}',
        'kutnahora_submission_latency_seconds_count{path="unary"}',
        'kutnahora_submissions_rejected_total{reason="not_an_option"} 1.0',
        'kutnahora_submissions_rejected_total{reason="stale_version"} 0.0',
        "kutnahora_clock_timeouts_total 0.0",
        "kutnahora_watch_streams 0.0",
        "kutnahora_play_streams 0.0",
        "kutnahora_store_write_seconds_bucket",
        "kutnahora_store_commits_total",
        "kutnahora_observation_build_seconds_count",
        'kutnahora_rpc_requests_total{code="OK",rpc="CreateGame"} 1.0',
        "process_cpu_seconds_total",
        "python_info",
        "python_gc_collections_total",
    ):
        assert name in text, name


def test_library_logs_are_json_lines_too(captured_logs: io.StringIO) -> None:
    """What a library logs through the standard logging module (the PostgreSQL pool, asyncio) comes out
    as the server's own lines do: one JSON object a line, with its logger's name, filtered by level."""
    logging.getLogger("psycopg.pool").warning("error connecting in %r: refused", "kutnahora-store")
    logging.getLogger("psycopg.pool").debug("connection added")
    lines = captured_logs.getvalue().splitlines()
    assert len(lines) == 1
    line = json.loads(lines[0])
    assert line["event"] == "error connecting in 'kutnahora-store': refused"
    assert line["logger"] == "psycopg.pool" and line["level"] == "warning" and "timestamp" in line


async def test_logs_are_json_with_request_context_and_no_token(
    start_server: StartServer, captured_logs: io.StringIO
) -> None:
    _, client = await start_server()
    game_id, tokens, game_token = await client.new_game(players=2, seed=4)
    seat = (await client.observe(game_id)).pending.seat
    with pytest.raises(grpc.aio.AioRpcError):
        await client.submit(game_id, 1 - seat, tokens[1 - seat], 0, option_index=0)
    lines = [json.loads(line) for line in captured_logs.getvalue().splitlines() if line.strip()]
    assert lines, "nothing was logged"
    created = next(line for line in lines if line["event"] == "game created")
    assert created["game_id"] == game_id
    assert created["rpc"] == "CreateGame"
    assert created["level"] == "info"
    assert created["request_id"]
    joined = [line for line in lines if line["event"] == "seat joined"]
    assert {line["seat"] for line in joined} == {0, 1}
    refused = next(line for line in lines if line["event"] == "submission refused")
    assert refused["level"] == "warning"
    assert refused["reason"] == "not_your_turn"
    assert refused["game_id"] == game_id
    assert refused["seat"] == 1 - seat
    assert refused["rpc"] == "SubmitDecision"
    text = captured_logs.getvalue()
    for secret in (*tokens.values(), game_token):
        assert secret not in text


async def test_health_and_reflection(served: tuple[object, object]) -> None:
    _, client = served
    channel = client.channel  # type: ignore[attr-defined]
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "kutnahora.v1.PlayService"):
        response = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert response.status == health_pb2.HealthCheckResponse.SERVING
    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
    call = reflection.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
    names = set()
    async for response in call:
        names |= {service.name for service in response.list_services_response.service}
    assert {
        "kutnahora.v1.GameService",
        "kutnahora.v1.PlayService",
        "kutnahora.v1.ReplayService",
        "kutnahora.v1.AdminService",
        "grpc.health.v1.Health",
    } <= names


async def test_health_watch_says_serving_and_an_unknown_service_is_not_found_with_a_sentence(
    served: tuple[object, object],
) -> None:
    _, client = served
    health = health_pb2_grpc.HealthStub(client.channel)  # type: ignore[attr-defined]
    watch = health.Watch(health_pb2.HealthCheckRequest(service="kutnahora.v1.GameService"))
    first = await watch.read()
    assert first.status == health_pb2.HealthCheckResponse.SERVING
    watch.cancel()
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await health.Check(health_pb2.HealthCheckRequest(service="no.such.Service"))
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert "no.such.Service" in (caught.value.details() or "")


async def test_server_info(served: tuple[object, object]) -> None:
    _, client = served
    await client.new_game(players=2)  # type: ignore[attr-defined]
    info = await client.admin.GetServerInfo(admin_service_pb2.GetServerInfoRequest())  # type: ignore[attr-defined]
    assert info.rules_version >= 1
    assert info.store == "memory"
    assert info.limits.max_games > 0
    assert info.rules_engine == "python"  # the server plays with the reference engine, core built or not
    assert info.native_core == native_available()
    counts = {count.status: count.count for count in info.games}
    assert sum(counts.values()) == 1


async def test_a_failure_to_build_the_next_observation_does_not_undo_or_fail_an_applied_decision(
    start_server: StartServer, captured_logs: io.StringIO
) -> None:
    """The server builds the next seat's observation right after a decision, for a waiting Play stream.
    Should that fail, the decision stands and its submitter gets its answer; the error is logged."""
    from kutnahora import engine
    from kutnahora.server.feed import feed as feed_of
    from kutnahora.server.records import ListedIndex

    server, _ = await start_server()
    game, _, _ = await server.hub.create(engine.GameOptions(players=2), 5, NO_CLOCK, "")
    for seat in (0, 1):
        await game.join(seat, f"seat {seat}")
    pending = game.state.pending
    assert pending is not None
    wakes = [game.subscribe(seat) for seat in (0, 1)]  # as both seats' Play streams do
    view = feed_of(game)

    class BrokenView:
        """The game's feed, failing as an encoder fault would (the feed may run compiled,
        where its own functions cannot be replaced, so the whole listener is)."""

        def changed(self, new_version: bool, waiting_seat: int | None) -> None:
            raise RuntimeError("encoder broke")

        def ended(self, playing: Sequence[int]) -> None:
            view.ended(playing)

    game.listener = BrokenView()
    record = await game.submit(pending.seat, 0, ListedIndex(0))
    assert record.version == 0 and game.version == 1
    following = game.state.pending
    assert following is not None and wakes[following.seat].is_set()  # its stream is woken all the same
    lines = [json.loads(line) for line in captured_logs.getvalue().splitlines() if line.strip()]
    assert any(line["event"] == "observation could not be built" for line in lines)
    game.listener = view
    assert view.observation(following.seat)  # the stream builds it when it writes
    for wake in wakes:
        game.unsubscribe(wake)


async def test_an_ending_game_builds_the_last_observations_of_its_playing_seats_first(
    start_server: StartServer,
) -> None:
    """When a game ends, the seats with a Play stream get their last observation from the parts cached
    during play (building it afresh costs several times more): it is built as the game ends, before the
    encoder's caches are dropped, so the streams' GameEnded messages build nothing; and it is exactly the
    observation a fresh encoder builds."""
    import random

    from kutnahora import engine
    from kutnahora.server.feed import feed as feed_of
    from kutnahora.server.records import ListedIndex
    from kutnahora.wire import seat_observation
    from kutnahora.wire.encoder import ObservationEncoder

    server, _ = await start_server()
    game, _, _ = await server.hub.create(engine.GameOptions(players=3), 8, NO_CLOCK, "")
    for seat in range(3):
        await game.join(seat, f"seat {seat}")
    for seat in (0, 2):  # seats 0 and 2 play over Play streams; seat 1 over unary calls
        game.subscribe(seat)
    view = feed_of(game)
    registry = server.metrics.registry
    rng = random.Random(8)
    while not game.ended:
        pending = game.state.pending
        assert pending is not None
        await game.submit(pending.seat, game.version, ListedIndex(rng.randrange(len(pending.options))))

    def built() -> float | None:
        return registry.get_sample_value("kutnahora_observation_build_seconds_count")

    ready = built()
    for seat in (0, 2):
        ended = play_service_pb2.PlayResponse.FromString(view.game_ended(seat)).game_ended
        fresh = seat_observation.encode_observation(game.state, seat, ObservationEncoder(game.game_id))
        assert ended.observation == game_pb2.Observation.FromString(fresh)
        assert ended.observation.over and ended.observation.viewer == seat
    assert built() == ready  # both were built as the game ended
    view.game_ended(1)
    assert built() == ready + 1  # no stream waited for seat 1's: built when asked
