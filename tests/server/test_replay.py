"""One replay of a stored log (``LiveGame.replay_stored``): a game loaded from the store and a game catching
up with another replica's writes both replay through it, and both refuse an illegal stored decision with the
same StoreError, naming the game and the version, never an INTERNAL fault reaching a client."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

import pytest

from kutnahora import engine
from kutnahora.bench.hub_games import joined_game
from kutnahora.engine.options import ChooseTile
from kutnahora.plumbing import logs
from kutnahora.plumbing.errors import ServiceError
from kutnahora.server.config import ClockConfig, ServerConfig
from kutnahora.server.game import LiveGame
from kutnahora.server.hub import GameHub
from kutnahora.server.metrics import Metrics
from kutnahora.server.notify import ChangeListener
from kutnahora.server.records import ListedIndex
from kutnahora.server.store import DecisionRow, MemoryStore, StoreError


class SharedMemoryStore(MemoryStore):
    """A memory store that claims a change feed, as a store shared by several replicas has: the games of
    a hub on it catch up with the store. Writes made straight into it stand for another replica's."""

    replica_id = "test"

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        return lambda: None


def new_hub(store: MemoryStore) -> GameHub:
    config = ServerConfig(clock=ClockConfig(enabled=False), idle_timeout_seconds=0)
    return GameHub(config, store, Metrics(), engine.default_components(), logs.get_logger("kutnahora.server"))


@pytest.fixture
def replays(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, int]]]:
    """Every call of ``LiveGame.replay_stored``: the game and how many rows it was handed."""
    calls: list[tuple[str, int]] = []
    original = LiveGame.replay_stored

    def counted(game: LiveGame, decisions: Sequence[DecisionRow]) -> int:
        calls.append((game.game_id, len(decisions)))
        return original(game, decisions)

    monkeypatch.setattr(LiveGame, "replay_stored", counted)
    yield calls


async def test_a_reload_and_a_catch_up_replay_the_same_log_to_the_same_state(
    replays: list[tuple[str, int]],
) -> None:
    store = SharedMemoryStore()
    here, elsewhere = new_hub(store), new_hub(store)
    game = await joined_game(here, 3, seed=4)
    other = await elsewhere.get(game.game_id)  # the same game, loaded by a second replica
    for version in range(5):
        pending = other.state.pending
        assert pending is not None
        await other.submit(pending.seat, version, ListedIndex(version % len(pending.options)))
    async with game.lock:
        assert await game.catch_up_locked("notification") == 5
    reloaded = await new_hub(store).get(game.game_id)
    hashes = {engine.state_hash(g.state) for g in (game, other, reloaded)}
    assert len(hashes) == 1
    assert [record.text for record in game.history] == [record.text for record in reloaded.history]
    assert [(game_id, rows) for game_id, rows in replays if rows] == [(game.game_id, 5)] * 2
    assert game.services.replicas is not None
    assert game.services.replicas.decisions._value.get() == 5  # counted as caught up, not as applied


async def test_an_illegal_stored_decision_is_refused_alike_by_a_reload_and_a_catch_up(
    replays: list[tuple[str, int]],
) -> None:
    store = SharedMemoryStore()
    hub = new_hub(store)
    game = await joined_game(hub, 2, seed=3)
    pending = game.state.pending
    assert pending is not None
    illegal = ChooseTile(9999)
    assert illegal not in pending.options
    # another replica's write that the engine refuses
    await store.append_decision(
        game.game_id, DecisionRow(0, pending.seat, engine.option_text(illegal), "seat", 0, time.time())
    )

    async with game.lock:
        with pytest.raises(StoreError) as caught_up:
            await game.catch_up_locked("notification")
    assert game.version == 0  # nothing applied
    message = str(caught_up.value)
    assert f"game {game.game_id}" in message and "stored decision 0" in message and "tile 9999" in message

    with pytest.raises(ServiceError) as loaded:
        await new_hub(store).get(game.game_id)
    assert loaded.value.reason == "rebuild_failed"
    assert message in loaded.value.message  # the same failure, in the same words
    assert [(game_id, rows) for game_id, rows in replays if rows] == [(game.game_id, 1)] * 2

    # A submission that makes the game catch up meets the failure as the log's, not as an engine fault:
    # it is logged, the game stays as it was, and the client hears that its version is ahead.
    with pytest.raises(ServiceError) as submitted:
        await game.submit(pending.seat, 1, ListedIndex(0))
    assert submitted.value.reason == "stale_version"
    assert game.version == 0


async def test_a_log_out_of_seat_order_is_refused_with_the_version(replays: list[tuple[str, int]]) -> None:
    store = MemoryStore()
    hub = new_hub(store)
    game = await joined_game(hub, 2, seed=5)
    pending = game.state.pending
    assert pending is not None
    wrong_seat = 1 - pending.seat
    await store.append_decision(
        game.game_id,
        DecisionRow(0, wrong_seat, engine.option_text(pending.options[0]), "seat", 0, time.time()),
    )
    with pytest.raises(ServiceError) as loaded:
        await new_hub(store).get(game.game_id)
    assert loaded.value.reason == "rebuild_failed"
    assert "stored decision 0" in loaded.value.message
    assert f"seat {pending.seat} owes the next decision" in loaded.value.message
