"""The process signals (event-loop lag, collector pauses) and the overload guard built on the lag.

The lag is injected, never waited for: the sampler runs on a fake clock whose sleeps wake late by chosen
amounts, and the server's overload guard is fed samples directly, so nothing here depends on how busy
the machine is.
"""

from __future__ import annotations

import asyncio
import gc
import time
from pathlib import Path

import grpc
import grpc.aio
import pytest
from prometheus_client import CollectorRegistry

from kutnahora.arena.app import ArenaConfig, create_arena
from kutnahora.plumbing.signals import LoopLag, Signals
from kutnahora.server.config import Limits
from kutnahora.server.overload import Overload
from kutnahora.v1 import game_pb2, game_service_pb2
from tests.server.conftest import StartServer, play_game
from tests.server.test_quotas import create_request, refusal


def lag_count(registry: CollectorRegistry) -> float:
    return registry.get_sample_value("kutnahora_event_loop_lag_seconds_count") or 0.0


async def test_the_lag_is_how_late_the_sampler_woke() -> None:
    registry = CollectorRegistry()
    signals = Signals(registry)
    now = [1000.0]
    late = iter([0.0, 0.003, 0.4, 2.0])

    async def sleep(seconds: float) -> None:
        now[0] += seconds + next(late)

    sampler = LoopLag(signals.lag.histogram, interval=0.1, clock=lambda: now[0], sleep=sleep)
    heard: list[tuple[float, float]] = []
    sampler.listen(lambda at, lag: heard.append((at, lag)))
    await sampler.run(samples=4)
    assert [round(lag, 6) for _, lag in heard] == [0.0, 0.003, 0.4, 2.0]
    assert heard[-1][0] == pytest.approx(now[0])
    assert lag_count(registry) == 4
    assert registry.get_sample_value("kutnahora_event_loop_lag_seconds_sum") == pytest.approx(2.403)
    assert registry.get_sample_value("kutnahora_event_loop_lag_seconds_bucket", {"le": "0.001"}) == 1
    assert registry.get_sample_value("kutnahora_event_loop_lag_seconds_bucket", {"le": "0.5"}) == 3
    assert registry.get_sample_value("kutnahora_event_loop_lag_seconds_bucket", {"le": "2.5"}) == 4


def test_collector_pauses_are_timed_by_generation() -> None:
    registry = CollectorRegistry()
    signals = Signals(registry)
    signals.gc.start()
    try:
        gc.collect(0)
        gc.collect(2)
    finally:
        signals.gc.stop()

    def count(generation: str) -> float:
        return registry.get_sample_value("kutnahora_gc_pause_seconds_count", {"generation": generation}) or 0

    assert count("0") >= 1 and count("2") >= 1
    seen = count("2")
    gc.collect(2)  # stopped: not observed
    assert count("2") == seen
    assert (registry.get_sample_value("kutnahora_gc_pause_seconds_sum", {"generation": "2"}) or 0) > 0


def test_overload_needs_most_of_a_window_past_the_threshold() -> None:
    overload = Overload(threshold=0.1, window=1.0)
    for step in range(11):  # one long stall among quick samples refuses nothing
        overload.observe(step * 0.1, 3.0 if step == 5 else 0.002)
    assert not overload.overloaded()
    for step in range(3):  # lagging, but most of the window was quick
        overload.observe(1.1 + step * 0.1, 0.3)
    assert not overload.overloaded()
    for step in range(3, 10):  # lagging for most of a window
        overload.observe(1.1 + step * 0.1, 0.3)
    assert overload.overloaded() and overload.lag() == pytest.approx(0.3)
    for step in range(4):  # a few quick samples: most of the window still lags
        overload.observe(2.1 + step * 0.1, 0.001)
    assert overload.overloaded()
    for step in range(4, 8):  # most of the window quick again
        overload.observe(2.1 + step * 0.1, 0.001)
    assert not overload.overloaded()
    off = Overload(threshold=0, window=1.0)
    for step in range(30):
        off.observe(step * 0.1, 10.0)
    assert not off.overloaded()


async def test_the_server_exports_both_signals(start_server: StartServer) -> None:
    server, _ = await start_server()
    registry = server.metrics.registry
    deadline = time.monotonic() + 10
    while lag_count(registry) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert lag_count(registry) >= 2
    gc.collect(1)
    assert (registry.get_sample_value("kutnahora_gc_pause_seconds_count", {"generation": "1"}) or 0) >= 1


async def test_an_overloaded_server_refuses_new_games_while_games_under_way_go_on(
    start_server: StartServer,
) -> None:
    limits = Limits(overload_lag_ms=100, overload_seconds=1.0)
    server, client = await start_server(limits=limits)
    await server.metrics.signals.lag.stop()  # the samples below are the only ones
    overload = server.service.overload
    game_id, tokens, _ = await client.new_game(players=2, seed=5)
    waiting = (await client.games.CreateGame(create_request())).game.game_id
    base = time.monotonic() + 100  # after every sample the sampler took before it stopped
    for step in range(12):  # 1.1 s of samples 300 ms late
        overload.observe(base + step * 0.1, 0.3)
    assert overload.overloaded()
    for call in ("CreateGame", "JoinGame"):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            if call == "CreateGame":
                await client.games.CreateGame(create_request())
            else:
                await client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=waiting, name="late"))
        error = caught.value
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "overloaded" in (error.details() or "") and "300 ms" in (error.details() or "")
        info, delay = refusal(error)
        assert info.reason == "OVERLOADED" and delay == pytest.approx(1.0)
    registry = server.metrics.registry
    assert registry.get_sample_value("kutnahora_limit_refusals_total", {"limit": "overloaded"}) == 2
    listed = await client.games.ListGames(game_service_pb2.ListGamesRequest())
    assert len(listed.games) == 2, "a refused CreateGame stored a game"
    # The game under way is played to its end while new games are refused.
    await play_game(client, game_id, tokens, seed=5)
    game = (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
    assert game.status == game_pb2.GAME_STATUS_FINISHED
    for step in range(12):  # the loop keeps up again
        overload.observe(base + 1.2 + step * 0.1, 0.001)
    assert not overload.overloaded()
    await client.games.CreateGame(create_request())
    await client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=waiting, name="now"))


async def test_the_arena_exports_both_signals(tmp_path: Path) -> None:
    arena, _ = await create_arena("127.0.0.1:0", ArenaConfig(servers=[], db=str(tmp_path / "arena.db")))
    await arena.start()
    try:
        registry = arena.metrics.registry
        deadline = time.monotonic() + 10
        while lag_count(registry) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert lag_count(registry) >= 2
        gc.collect(0)
        assert (registry.get_sample_value("kutnahora_gc_pause_seconds_count", {"generation": "0"}) or 0) >= 1
    finally:
        await arena.stop(0.5)
