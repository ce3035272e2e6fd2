"""A game server that dies mid-game: the arena notices, stores the game as abandoned, and rates nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kutnahora.arena.app import create_arena
from kutnahora.clients.sdk import ArenaClient
from tests.arena.conftest import arena_config, start_process, stop_process


async def test_a_lost_game_server_leaves_its_game_unrated(tmp_path: Path) -> None:
    server, address = start_process(
        "kutnahora.server.main",
        "--port",
        "0",
        "--db",
        ":memory:",
        "--metrics-port",
        "off",
        "--log-level",
        "warning",
    )
    arena = None
    try:
        arena, port = await create_arena("127.0.0.1:0", arena_config(tmp_path / "lost.db", address))
        arena.config.lost_after_seconds = 1.0
        arena.servers.lost_after = 1.0
        await arena.start()
        async with await ArenaClient.connect(f"127.0.0.1:{port}") as client:
            keys = [await client.register_bot(name) for name in ("stay", "put")]
            seats = await asyncio.gather(*(client.seek(key, "2") for key in keys))
            game_id = seats[0].seat.game_id
            stop_process(server)  # the game server dies with the game unplayed
            for _ in range(150):
                profile = await client.bot_profile("stay")
                if profile.recent_games and profile.recent_games[0].status != "active":
                    break
                await asyncio.sleep(0.1)
            assert profile.recent_games[0].game_id == game_id
            assert profile.recent_games[0].status == "abandoned"
            assert list(profile.ratings) == [] and list(profile.history) == []
            assert arena.metrics.unrated_games.labels(pool="2")._value.get() == 1
            assert arena.lobby._state["2"].playing == set(), "the bots may be matched again"
    finally:
        stop_process(server)
        if arena is not None:
            await arena.stop(0)
