"""Helpers shared by the client tests (and the arena's): running the project's commands, a game server in a
process of its own, playing quick games."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kutnahora.clients.bots import make_bot
from kutnahora.clients.sdk import Client, GameOutcome

ROOT = Path(__file__).resolve().parents[2]

SERVER_FLAGS = ("--port", "0", "--db", ":memory:", "--metrics-port", "off", "--log-level", "warning")
"""A quiet ``kutnahora-server`` for a test: an ephemeral port, games in memory, no metrics port."""


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


def start_process(
    module: str, *args: str, pattern: str = r"listening on grpcs?://(\S+)"
) -> tuple[subprocess.Popen[str], str]:
    """Start ``python -m module args`` and return it with the address it prints."""
    process = subprocess.Popen(
        python_module(module, *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
        env=dict(os.environ),
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(pattern, line)
    if match is None:
        process.kill()
        pytest.fail(f"{module} did not start: {line!r}")
    return process, match.group(1)


def stop_process(process: subprocess.Popen[str]) -> None:
    """Terminate a process started by :func:`start_process` (SIGTERM) and wait for it."""
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


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


@dataclass
class TournamentRun:
    """A tournament run of hosted submissions (tests/clients/test_hostile.py, test_walls.py): the runner's
    exit status and output, its results file and the folder of each seat's log."""

    code: int
    output: str
    results: dict[str, Any]
    logs: Path

    def games_of(self, bot: str) -> list[dict[str, Any]]:
        return [g for g in self.results["games"] if bot in g["bots"]]

    def failures_of(self, bot: str) -> list[dict[str, Any]]:
        return [f for g in self.games_of(bot) for f in g["failures"] if f["bot"] == bot]

    def log_of(self, bot: str) -> str:
        texts = []
        for game in self.games_of(bot):
            for seat, name in enumerate(game["bots"]):
                path = self.logs / f"{game['game_id']}-seat{seat}.log"
                if name == bot and path.exists():
                    texts.append(path.read_text(errors="replace"))
        return "\n".join(texts)
