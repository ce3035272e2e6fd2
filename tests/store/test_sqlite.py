"""The SQLite store's own guarantees, beyond the contract every store keeps.

The decisions appended during one turn of the event loop commit together in one transaction, each
refused or accepted on its own. A caller cancelled while it waits for its write never loses track of it:
cancelled before the commit, its insert is withdrawn; cancelled once the write has run, its coroutine
still returns (so that the game applies the decision it stored) and the cancellation arrives at the
caller's next wait. Both hold for the event loop's own connection (synchronous NORMAL, the default) and
for the worker thread (FULL).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kutnahora import engine
from kutnahora.bench.hub_games import joined_game
from kutnahora.server import logs, sqlite_store
from kutnahora.server.config import ClockConfig, ServerConfig
from kutnahora.server.hub import GameHub
from kutnahora.server.metrics import Metrics
from kutnahora.server.records import ListedIndex
from kutnahora.server.sqlite_store import SqliteStore
from kutnahora.server.store import DuplicateDecision
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


@pytest.fixture(params=["NORMAL", "FULL"])
async def opened(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[SqliteStore, Commits]]:
    """A store that makes every append wait: for its turn's transaction (NORMAL, grouping from the start)
    or for the worker thread (FULL)."""
    commits = Commits()
    store = SqliteStore(tmp_path / "store.db", request.param, on_commit=commits, group_appends=True)
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
    """Whether appending decision ``seq`` commits it without waiting for the event loop's next turn."""
    appending = store.append_decision(game_id, decision(seq))
    try:
        appending.send(None)
    except StopIteration:
        return True
    appending.close()
    return False


async def test_decisions_commit_at_once_until_a_turn_brings_several_which_then_commit_together(
    tmp_path: Path,
) -> None:
    commits = Commits()
    store = SqliteStore(tmp_path / "store.db", on_commit=commits)
    await store.open()
    try:
        games = await new_games(store, commits, 5)
        assert committed_at_once(store, games[0], 0)  # a quiet server: no wait for the next turn
        assert commits.writes == [1]
        await asyncio.sleep(0)
        # five games move in one turn: the first commits at once, the others together in the next turn
        await asyncio.gather(*(store.append_decision(g, decision(1 if g == games[0] else 0)) for g in games))
        assert commits.writes == [1, 1, 4]
        await asyncio.gather(*(store.append_decision(g, decision(2 if g == games[0] else 1)) for g in games))
        assert commits.writes == [1, 1, 4, 5]
        # once LONE_TURNS turns in a row have brought one decision each, each commits at once again
        lone = sqlite_store.LONE_TURNS
        for seq in range(2, 2 + lone):
            await store.append_decision(games[1], decision(seq))
        assert commits.writes[4:] == [1] * lone
        await asyncio.sleep(0)
        assert committed_at_once(store, games[1], 2 + lone)
        assert await logged(store, games[0]) == [0, 1, 2]
        assert await logged(store, games[1]) == list(range(3 + lone))
        assert [await logged(store, game_id) for game_id in games[2:]] == [[0, 1]] * 3
    finally:
        await store.close()


async def test_a_refused_decision_does_not_sink_the_others_of_its_transaction(tmp_path: Path) -> None:
    commits = Commits()
    store = SqliteStore(tmp_path / "store.db", on_commit=commits, group_appends=True)
    await store.open()
    try:
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
        assert commits.writes == [1]
        assert await logged(store, first) == [0] and await logged(store, second) == [0]
        stored = await store.load_game(first)
        assert stored is not None and stored.decisions[0].option == "skip"
    finally:
        await store.close()


async def test_an_append_cancelled_before_its_commit_writes_nothing(
    opened: tuple[SqliteStore, Commits],
) -> None:
    store, commits = opened
    (game_id,) = await new_games(store, commits, 1)
    appending = asyncio.create_task(store.append_decision(game_id, decision(0)))
    await asyncio.sleep(0)  # the append is queued and waits for its commit
    appending.cancel()
    if store.synchronous == "NORMAL":
        with pytest.raises(asyncio.CancelledError):
            await appending
        assert await logged(store, game_id) == []
        assert commits.writes == []
    else:  # the worker may hold the write already: it is waited for, then the cancellation takes effect
        with pytest.raises(asyncio.CancelledError):
            await appending
        assert await logged(store, game_id) == [0]
    # either way the store knows where the log stands: the next decision is the one after it
    following = len(await logged(store, game_id))
    await store.append_decision(game_id, decision(following))
    assert await logged(store, game_id) == list(range(following + 1))


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


async def test_a_game_applies_every_decision_it_stored_even_when_its_submitter_is_cancelled(
    tmp_path: Path,
) -> None:
    """The game's side of the guarantee: a Play stream that closes while its decision waits for the commit
    either leaves the game as it was or leaves it with the decision applied, and the store agrees."""
    store = SqliteStore(tmp_path / "games.db", group_appends=True)
    config = ServerConfig(clock=ClockConfig(enabled=False), idle_timeout_seconds=0)
    hub = GameHub(config, store, Metrics(), engine.default_components(), logs.get_logger())
    await store.open()
    commits = Commits()
    store._on_commit = commits
    try:
        game = await joined_game(hub, 2, seed=11)
        commits.done.clear()

        async def stored() -> int:
            row = await store.load_game(game.game_id)
            assert row is not None
            return len(row.decisions)

        def submit() -> asyncio.Task[object]:
            pending = game.state.pending
            assert pending is not None
            return asyncio.create_task(game.submit(pending.seat, game.version, ListedIndex(0)))

        # cancelled before the commit: nothing stored, nothing applied
        submitting = submit()
        await asyncio.sleep(0)
        assert not commits.done.is_set()
        submitting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await submitting
        assert game.version == 0 and await stored() == 0

        # cancelled once the insert has committed: applied, and stored
        submitting = submit()
        while not commits.done.is_set():
            await asyncio.sleep(0)
        submitting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await submitting
        assert game.version == 1 and await stored() == 1

        # the game goes on from there
        pending = game.state.pending
        assert pending is not None
        await game.submit(pending.seat, 1, ListedIndex(0))
        assert game.version == 2 and await stored() == 2
    finally:
        await store.close()
