"""Helpers shared by the client tests: running the project's commands, playing quick games."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from kutnahora.clients.bots import make_bot
from kutnahora.clients.sdk import Client, GameOutcome

ROOT = Path(__file__).resolve().parents[2]


def python_module(module: str, *args: str) -> list[str]:
    """The command that runs one of the project's modules with this Python."""
    return [sys.executable, "-m", module, *args]


def run_module(
    module: str, *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run one of the project's command-line modules to its end, capturing its output."""
    return subprocess.run(
        python_module(module, *args),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        check=False,
    )


async def play_game(address: str, bots: list[str], seed: int = 1) -> list[GameOutcome]:
    """Create a game, seat the named bots and play it to the end; one outcome per seat."""
    async with await Client.connect(address) as client:
        created = await client.create_game(len(bots), seed=seed)
        game_id = created.game.game_id
        seats = [await client.join_game(game_id, seat, name) for seat, name in enumerate(bots)]
        return list(
            await asyncio.gather(
                *(client.play(make_bot(name, seed + i), seats[i]) for i, name in enumerate(bots))
            )
        )
