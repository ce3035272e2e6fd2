"""The Node.js starter bot plays rated games in the arena (``node bot.js --arena``), and leaves a game the
arena reports abandoned (its game server killed mid-game) to play a rated one on the server still alive; an
arena that restarts while the bot seeks costs it nothing (it seeks and follows its events again).

Runs when ``node`` is installed and ``npm ci`` has been run in ``clients/node``; skipped otherwise."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from kutnahora.arena.app import Arena, create_arena
from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.bots import make_bot
from kutnahora.clients.bots.arena import play_rated
from tests.arena.conftest import arena_config
from tests.arena.lost_server import a_bot_outlives_its_server
from tests.clients.helpers import ROOT

NODE_DIR = ROOT / "clients" / "node"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed"),
    pytest.mark.skipif(
        not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir(),
        reason="the Node.js bot's packages are not installed (run npm ci in clients/node)",
    ),
]


async def test_the_node_bot_plays_rated_games(
    arena: Arena, arena_client: ArenaClient, tmp_path: Path
) -> None:
    assert NODE is not None
    node_key = await arena_client.register_bot("node-bot")
    python_key = await arena_client.register_bot("py-bot")
    key_file = tmp_path / "node.key"
    key_file.write_text(node_key + "\n")
    address = f"127.0.0.1:{arena.port}"
    command = [NODE, "bot.js", "--arena", address, "--key-file", str(key_file), "--pool", "2", "--games", "2"]
    node = asyncio.create_task(
        asyncio.to_thread(subprocess.run, command, cwd=NODE_DIR, capture_output=True, text=True, timeout=240)
    )
    outcomes = await play_rated(
        address, python_key, ["2"], 2, lambda: make_bot("random", None), Console(quiet=True), quiet=True
    )
    done = await node
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("pool 2 game") == 2 and "vs py-bot" in done.stdout
    assert len(outcomes) == 2
    for _ in range(100):
        profile = await arena_client.bot_profile("node-bot")
        if profile.ratings and profile.ratings[0].games == 2:
            break
        await asyncio.sleep(0.1)
    assert profile.ratings[0].games == 2


async def test_the_node_bot_leaves_a_game_the_arena_abandons_and_plays_a_rated_one(tmp_path: Path) -> None:
    """The game server of the Node bot's first game dies mid-game: the arena tells the bot on its event
    stream, the bot leaves that game at once, does not count it, and plays its one rated game on the second
    server."""
    assert NODE is not None
    async with a_bot_outlives_its_server(tmp_path, "node-bot", [NODE, "bot.js"], cwd=NODE_DIR) as game:
        told = [line for line in game.lines if f"{game.lost.game_id} abandoned, not rated" in line]
        assert game.doomed_address in told[0], "\n".join(game.lines)
        assert any(
            line.startswith(f"pool 2: {game.rated.game_id} rated, place ")
            and "μ 25.00 → " in line
            and "σ " in line
            for line in game.lines
        ), "\n".join(game.lines)
        async with await ArenaClient.connect(game.arena_address) as client:
            profile = await client.bot_profile("node-bot")
        assert [g.status for g in profile.recent_games] == ["finished", "abandoned"]
        assert profile.ratings[0].games == 1


async def test_the_node_bot_seeks_and_follows_its_events_again_after_the_arena_restarts(
    tmp_path: Path, game_server: str
) -> None:
    """The arena stops while the Node bot seeks and starts again on the same port: the bot seeks again and
    opens its event stream again (the rated line comes from it), without crashing."""
    assert NODE is not None
    config = arena_config(tmp_path / "restart.db", game_server)
    arena, port = await create_arena("127.0.0.1:0", config)
    await arena.start()
    address = f"127.0.0.1:{port}"
    node: asyncio.subprocess.Process | None = None
    try:
        async with await ArenaClient.connect(address) as client:
            node_key = await client.register_bot("node-bot")
            python_key = await client.register_bot("py-bot")
        key_file = tmp_path / "node.key"
        key_file.write_text(node_key + "\n")
        flags = ["--arena", address, "--key-file", str(key_file), "--pool", "2", "--games", "1"]
        node = await asyncio.create_subprocess_exec(
            NODE,
            "bot.js",
            *flags,
            cwd=NODE_DIR,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(300):
            if arena.lobby.tickets:
                break
            await asyncio.sleep(0.05)
        assert arena.lobby.tickets, "the Node bot seeks"
        await arena.stop(0)
        await asyncio.sleep(1.0)
        arena, _ = await create_arena(address, config)
        await arena.start()
        outcomes = await asyncio.wait_for(
            play_rated(
                address,
                python_key,
                ["2"],
                1,
                lambda: make_bot("random", None),
                Console(quiet=True),
                quiet=True,
            ),
            60,
        )
        assert len(outcomes) == 1
        stdout, stderr = await asyncio.wait_for(node.communicate(), 60)
        output = stdout.decode()
        assert node.returncode == 0, output + stderr.decode()
        counted = [line for line in output.splitlines() if line.startswith("pool 2 game 1/1: ")]
        assert len(counted) == 1 and "vs py-bot" in counted[0], output
        game_id = counted[0].split()[4]
        assert f"pool 2: {game_id} rated, place " in output, output
    finally:
        if node is not None and node.returncode is None:
            node.kill()
            await node.wait()
        await arena.stop(0)
