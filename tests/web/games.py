"""Games for the web tests, played through the protocol by the reference bots."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kutnahora.clients.bots import make_bot
from kutnahora.clients.sdk import Bot, Choice, Client, GameInfo, SeatCredentials
from kutnahora.v1 import game_pb2
from tests.web.conftest import ROOT


class Recorder(Bot):
    """A bot that remembers every observation its seat was shown (its private view included)."""

    def __init__(self, inner: Bot, seen: list[game_pb2.Observation]) -> None:
        self.inner = inner
        self.seen = seen
        self.name = inner.name

    def start(self, game: GameInfo) -> None:
        self.inner.start(game)

    def choose(self, observation: game_pb2.Observation) -> Choice:
        self.seen.append(game_pb2.Observation.FromString(observation.SerializeToString()))
        choice = self.inner.choose(observation)
        assert not asyncio.iscoroutine(choice)
        return choice  # type: ignore[return-value]


@dataclass
class PlayedGame:
    game_id: str
    seats: list[SeatCredentials]
    private: list[game_pb2.Observation] = field(default_factory=list)
    history: list[game_pb2.Observation] = field(default_factory=list)


async def play_bot_game(address: str, players: int, seed: int) -> PlayedGame:
    """A whole game of greedy bots, with what each seat saw and the spectator's history of every version."""
    async with await Client.connect(address) as client:
        created = await client.create_game(players, seed=seed, label="web-tests")
        game_id = created.game.game_id
        seats = [await client.join_game(game_id, seat, "greedy") for seat in range(players)]
        played = PlayedGame(game_id, seats)
        bots = [Recorder(make_bot("greedy", seed + seat), played.private) for seat in range(players)]
        await asyncio.gather(*(client.play(bot, seat) for bot, seat in zip(bots, seats, strict=True)))
        played.history = [message.observation async for message in client.watch(game_id)]
        return played


def tournament(out: Path, *server: str) -> Path:
    """Play a small tournament of random against greedy; ``server`` is ``--server ADDRESS`` or nothing."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kutnahora.clients.tournament.cli",
            "--bots",
            "random,greedy",
            "--players",
            "2",
            "--games",
            "4" if server else "2",
            "--seed",
            "5",
            *server,
            "--out",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out
