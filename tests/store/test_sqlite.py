"""The SQLite store's own guarantees, beyond the contract every store keeps.

A write on the event loop's own connection (synchronous NORMAL, the default) commits before its coroutine
first waits, so nothing can cancel it half-way. A write handed to the worker thread (FULL) may be under way
when its caller is cancelled (a Play stream closed): the caller still gets to the end of it, so that its
game applies the decision it stored, and the cancellation arrives at its next wait.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kutnahora import engine
from kutnahora.bench.hub_games import joined_game
from kutnahora.plumbing import logs
from kutnahora.server.config import ClockConfig, ServerConfig
from kutnahora.server.hub import GameHub
from kutnahora.server.metrics import Metrics
from kutnahora.server.records import ListedIndex
from kutnahora.server.store import DuplicateDecision, SqliteStore
from tests.store.test_contract import decision, empty_seats, make_game


class Commits:
    """What the store reported after each commit: the writes it held."""

    def __init__(self) -> None:
        self.writes: list[int] = []
        self.done = threading.Event()

    def __call__(self, seconds: float, writes: int) -> None:
        assert seconds >= 0
        self.writes.append(writes)
        self.done.set()


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncIterator[tuple[SqliteStore, Commits]]:
    """A store whose writes go to the worker thread (FULL), so that its callers wait for them."""
    commits = Commits()
    store = SqliteStore(tmp_path / "store.db", "FULL", on_commit=commits)
    await store.open()
    yield store, commits
    await store.close()


async def new_games(store: SqliteStore, commits: Commits, count: int) -> list[str]:
    ids = [f"game-{n}" for n in range(count)]
    for game_id in ids:
        await store.create_game(make_game(game_id, players=2), empty_seats(2))
    commits.writes.clear()
    commits.done.clear()
    return ids


async def logged(store: SqliteStore, game_id: str) -> list[int]:
    stored = await store.load_game(game_id)
    assert stored is not None
    return [row.seq for row in stored.decisions]


def committed_at_once(store: SqliteStore, game_id: str, seq: int) -> bool:
    """Whether appending decision ``seq`` commits it without ever waiting."""
    appending = store.append_decision(game_id, decision(seq))
    try:
        appending.send(None)
    except StopIteration:
        return True
    appending.close()
    return False


async def test_a_write_on_the_event_loops_connection_commits_without_waiting(tmp_path: Path) -> None:
    commits = Commits()
    store = SqliteStore(tmp_path / "store.db", on_commit=commits)
    await store.open()
    try:
        (game_id,) = await new_games(store, commits, 1)
        assert committed_at_once(store, game_id, 0) and committed_at_once(store, game_id, 1)
        assert commits.writes == [1, 1]
        assert await logged(store, game_id) == [0, 1]
    finally:
        await store.close()


async def test_a_refused_write_is_not_counted_as_committed(opened: tuple[SqliteStore, Commits]) -> None:
    store, commits = opened
    first, second = await new_games(store, commits, 2)
    await store.append_decision(first, decision(0))
    commits.writes.clear()
    outcomes = await asyncio.gather(
        store.append_decision(first, decision(0, option="again")),  # decision 0 is stored already
        store.append_decision(second, decision(0)),
        return_exceptions=True,
    )
    assert isinstance(outcomes[0], DuplicateDecision)
    assert outcomes[1] is None
    assert sum(commits.writes) == 1  # one transaction or two, one write committed
    assert await logged(store, first) == [0] and await logged(store, second) == [0]
    stored = await store.load_game(first)
    assert stored is not None and stored.decisions[0].option == "skip"


async def test_a_caller_cancelled_while_the_worker_has_its_write_waits_for_it_then_is_cancelled(
    opened: tuple[SqliteStore, Commits],
) -> None:
    store, commits = opened
    (game_id,) = await new_games(store, commits, 1)
    appending = asyncio.create_task(store.append_decision(game_id, decision(0)))
    await asyncio.sleep(0)  # the write is handed to the worker
    appending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await appending
    assert commits.writes == [1]
    assert await logged(store, game_id) == [0]
    await store.append_decision(game_id, decision(1))  # the store knows where the log stands
    assert await logged(store, game_id) == [0, 1]


async def test_a_caller_cancelled_once_its_write_ran_still_returns_and_is_cancelled_at_its_next_wait(
    opened: tuple[SqliteStore, Commits],
) -> None:
    store, commits = opened
    (game_id,) = await new_games(store, commits, 1)
    steps: list[str] = []

    async def submit() -> None:
        await store.append_decision(game_id, decision(0))
        steps.append("applied")  # what a game does with a stored decision, before it waits again
        await asyncio.sleep(5)
        steps.append("went on")

    submitting = asyncio.create_task(submit())
    while not commits.done.is_set():  # the write has run, its caller not yet resumed
        await asyncio.sleep(0)
    submitting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await submitting
    assert steps == ["applied"]
    assert await logged(store, game_id) == [0]
    await store.append_decision(game_id, decision(1))
    assert await logged(store, game_id) == [0, 1]


async def test_a_game_applies_the_decision_it_stored_even_when_its_submitter_is_cancelled(
    tmp_path: Path,
) -> None:
    """The game's side of the guarantee: a Play stream that closes while the worker stores its decision
    leaves the game with the decision applied, as the store holds it, and the game goes on from there."""
    commits = Commits()
    store = SqliteStore(tmp_path / "games.db", "FULL", on_commit=commits)
    config = ServerConfig.in_memory(clock=ClockConfig(enabled=False), idle_timeout_seconds=0)
    hub = GameHub(config, store, Metrics(), engine.default_components(), logs.get_logger("kutnahora.server"))
    await store.open()
    try:
        game = await joined_game(hub, 2, seed=11)

        async def stored() -> int:
            row = await store.load_game(game.game_id)
            assert row is not None
            return len(row.decisions)

        for version in range(3):
            pending = game.state.pending
            assert pending is not None and game.version == version
            submitting = asyncio.create_task(game.submit(pending.seat, version, ListedIndex(0)))
            await asyncio.sleep(0)  # the decision is handed to the worker
            submitting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await submitting
            assert game.version == version + 1 and await stored() == version + 1
        pending = game.state.pending
        assert pending is not None
        await game.submit(pending.seat, 3, ListedIndex(0))
        assert game.version == 4 and await stored() == 4
    finally:
        await store.close()


@pytest.mark.parametrize("every", [0, 40])
async def test_the_worker_thread_checkpoints_the_log_off_the_event_loop(tmp_path: Path, every: int) -> None:
    """With ``checkpoint_every`` the worker copies the log into the database file as decisions are written
    on the event loop; without, nothing reaches it before SQLite's own checkpoint at 1,000 log pages."""
    path = tmp_path / "store.db"
    store = SqliteStore(path, checkpoint_every=every)
    await store.open()
    try:
        await store.create_game(make_game("g", players=2), empty_seats(2))
        before = path.stat().st_size
        for seq in range(200):
            await store.append_decision("g", decision(seq, seat=seq % 2))
            await asyncio.sleep(0)
        assert await logged(store, "g") == list(range(200))  # read on the worker, after its checkpoints
        grown = path.stat().st_size > before
    finally:
        await store.close()
    assert grown == bool(every)
