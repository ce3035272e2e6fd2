"""Games the server lets go of are freed at once by reference counting, not left to the cycle collector.

The server runs the cycle collector rarely (:mod:`kutnahora.server.collector`), so a game that left the hub
inside a reference cycle would stay in memory until a full collection, and a server ending games steadily
would grow by every game it evicted since the last one.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from kutnahora import engine
from kutnahora.bench.hub_games import joined_game
from kutnahora.plumbing import logs
from kutnahora.server.config import ClockConfig, ServerConfig
from kutnahora.server.feed import feed as feed_of
from kutnahora.server.game import LiveGame
from kutnahora.server.hub import GameHub
from kutnahora.server.metrics import Metrics
from kutnahora.server.records import ListedIndex
from kutnahora.server.store import MemoryStore


@pytest.fixture
def no_cycle_collector() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def played_to_its_end(hub: GameHub, seed: int) -> weakref.ref[LiveGame]:
    """A two-player game played to its end with its feed answering every turn, as Play streams use it."""
    game = await joined_game(hub, 2, seed=seed)
    feed = feed_of(game)
    woken = game.subscribe(0)
    turn = 0
    while (pending := game.state.pending) is not None and not game.ended:
        feed.your_turn(pending.seat)
        await game.submit(pending.seat, game.version, ListedIndex(turn % len(pending.options)))
        turn += 1
    feed.game_ended(0)
    game.unsubscribe(woken)
    assert game.ended
    return weakref.ref(game)


async def test_an_evicted_game_is_freed_without_the_cycle_collector(no_cycle_collector: None) -> None:
    config = ServerConfig(clock=ClockConfig(enabled=False), idle_timeout_seconds=0, ended_games_in_memory=1)
    hub = GameHub(
        config, MemoryStore(), Metrics(), engine.default_components(), logs.get_logger("kutnahora.server")
    )
    first = await played_to_its_end(hub, seed=3)
    assert first() is not None  # the one ended game kept loaded
    second = await played_to_its_end(hub, seed=4)
    assert second() is not None and first() is None  # evicted by the next one, and gone at once
