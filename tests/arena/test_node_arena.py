"""The Node.js starter bot plays rated games in the arena (``node bot.js --arena``).

Runs when ``node`` is installed and ``npm ci`` has been run in ``clients/node``; skipped otherwise."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from kutnahora.arena.app import Arena
from kutnahora.clients.bots import make_bot
from kutnahora.clients.bots.arena import play_rated
from kutnahora.clients.sdk import ArenaClient
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
