"""A game server that dies mid-game: the arena notices, stores the game as abandoned and rates nothing of it,
and tells the bots on their event streams; ``play_rated`` leaves the lost game at once and seeks again, and
the next game, placed on the game server still alive, is rated."""

from __future__ import annotations

import asyncio
import io
import sqlite3
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from kutnahora.arena.app import create_arena
from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.bots.arena import play_rated
from kutnahora.clients.bots.random_bot import RandomBot
from kutnahora.clients.sdk import Bot
from kutnahora.v1 import arena_service_pb2 as pb
from tests.arena.conftest import arena_config
from tests.arena.lost_server import SlowBot
from tests.clients.helpers import SERVER_FLAGS, start_process, stop_process


async def test_a_lost_game_server_is_told_to_the_bots_and_nothing_is_rated(tmp_path: Path) -> None:
    doomed, doomed_address = start_process("kutnahora.server.main", *SERVER_FLAGS)
    steady, steady_address = start_process("kutnahora.server.main", *SERVER_FLAGS)
    arena = None
    try:
        # The two servers are equally loaded, so the first game goes to the first one named: the doomed one.
        config = arena_config(tmp_path / "lost.db", doomed_address, lost_after_seconds=1.0)
        config.servers = [doomed_address, steady_address]
        arena, port = await create_arena("127.0.0.1:0", config)
        await arena.start()
        address = f"127.0.0.1:{port}"
        async with await ArenaClient.connect(address) as client:
            keys = {name: await client.register_bot(name) for name in ("stay", "put")}
        under_way = asyncio.Event()
        heard: dict[str, list[pb.StreamEventsResponse]] = {name: [] for name in keys}
        printed = {name: Console(record=True, file=io.StringIO(), width=200) for name in keys}

        def bots() -> Callable[[], Bot]:
            made: list[Bot] = []

            def make() -> Bot:
                made.append(SlowBot(under_way) if not made else RandomBot(2))
                return made[-1]

            return make

        loops = [
            asyncio.ensure_future(
                play_rated(address, keys[name], ["2"], 1, bots(), printed[name], on_event=heard[name].append)
            )
            for name in keys
        ]
        await asyncio.wait_for(under_way.wait(), 60)
        doomed.kill()  # mid-game, without a word
        doomed.wait(10)
        results = await asyncio.wait_for(asyncio.gather(*loops), 120)
        assert [len(outcomes) for outcomes in results] == [1, 1], "each bot played one more game, to its end"

        for name in keys:
            kinds = [m.WhichOneof("event") for m in heard[name]]
            assert kinds == ["started", "abandoned", "started", "finished"], (name, kinds)
            first, abandoned, second, finished = heard[name]
            assert first.started.server_address == doomed_address
            assert abandoned.abandoned.game_id == first.started.game_id
            assert abandoned.abandoned.cause == pb.ABANDON_CAUSE_GAME_SERVER_LOST
            assert (
                doomed_address in abandoned.abandoned.message and "not rated" in abandoned.abandoned.message
            )
            assert second.started.server_address == steady_address
            assert finished.finished.game_id == second.started.game_id
            assert finished.finished.rating_before.games == 0 and finished.finished.rating_after.games == 1
            before, after = finished.finished.rating_before, finished.finished.rating_after
            assert before.mu == 25.0 and after.sigma < before.sigma, "the rating moved from the default"
            output = printed[name].export_text()
            assert f"{second.started.game_id} rated, place {finished.finished.place}: μ 25.00 → " in output
            assert "abandoned, not rated" in output and "given up" not in output, (
                "the bot left the lost game when the arena said so, not when its own Play stream gave up"
            )
        lost_game = heard["stay"][0].started.game_id

        # Nothing of the lost game is rated, nothing is stored half-way, nothing waits.
        with sqlite3.connect(tmp_path / "lost.db") as conn:
            status, ended, rated = conn.execute(
                "SELECT status, ended_at, rated_seq FROM arena_games WHERE game_id = ?", (lost_game,)
            ).fetchone()
            assert (status, ended is not None, rated) == ("abandoned", True, None)
            assert conn.execute(
                "SELECT count(*) FROM arena_seats WHERE game_id = ? AND place = 0", (lost_game,)
            ).fetchone() == (2,)
            assert conn.execute(
                "SELECT count(*) FROM arena_rating_history WHERE game_id = ?", (lost_game,)
            ).fetchone() == (0,)
            assert conn.execute(
                "SELECT status, count(*) FROM arena_games GROUP BY status ORDER BY 1"
            ).fetchall() == [
                ("abandoned", 1),
                ("finished", 1),
            ]
            assert conn.execute("SELECT DISTINCT games FROM arena_ratings").fetchall() == [(1,)]
            assert conn.execute("SELECT count(*) FROM arena_tickets").fetchone() == (0,)
        assert arena.metrics.unrated_games.labels(pool="2")._value.get() == 1
        assert arena.metrics.rating_updates.labels(pool="2")._value.get() == 1
        assert not arena.lobby.tickets and arena.lobby._state["2"].playing == {}
        async with await ArenaClient.connect(address) as client:
            profile = await client.bot_profile("stay")
        assert [g.status for g in profile.recent_games] == ["finished", "abandoned"]
        assert len(profile.history) == 1 and profile.history[0].game_id != lost_game
    finally:
        stop_process(doomed)
        stop_process(steady)
        if arena is not None:
            await arena.stop(0)
