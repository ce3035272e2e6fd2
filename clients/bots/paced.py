"""A bot that waits before each decision, so that a person can watch a game unfold: ``kutnahora-bot
--delay`` and the web front end's bots both play through it."""

from __future__ import annotations

import asyncio
import inspect

from kutnahora.clients.sdk import Bot, Choice, GameInfo, GameOutcome
from kutnahora.v1.game_pb2 import Observation


class PacedBot(Bot):
    """Wraps a bot and waits ``delay`` seconds before each of its decisions."""

    def __init__(self, inner: Bot, delay: float) -> None:
        self.inner = inner
        self.delay = delay
        self.name = inner.name

    def start(self, game: GameInfo) -> None:
        self.inner.start(game)

    async def choose(self, observation: Observation) -> Choice:
        await asyncio.sleep(self.delay)
        choice = self.inner.choose(observation)
        if inspect.isawaitable(choice):
            return await choice
        return choice

    def finish(self, outcome: GameOutcome) -> None:
        self.inner.finish(outcome)
