"""The reference bots a page asks for: they join seats and play them in this process, over the protocol.

A game created in the browser may seat ``greedy`` and ``random`` bots (:mod:`kutnahora.clients.bots`).
Each game's bots get a connection of their own, as any bot would, and may wait a while before each
decision so that people can follow the game. :class:`BotPlayers` keeps the running games' tasks and stops
them when the web server stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Sequence

from kutnahora.clients.bots import BOTS, make_bot
from kutnahora.clients.sdk import Bot, Choice, Client, ClientError, GameInfo, GameOutcome, SeatCredentials
from kutnahora.v1.game_pb2 import Observation

log = logging.getLogger(__name__)


class PacedBot(Bot):
    """A bot that waits ``delay`` seconds before each decision, so that a person can watch it."""

    def __init__(self, inner: Bot, delay: float) -> None:
        self.inner = inner
        self.delay = delay
        self.name = inner.name

    def start(self, game: GameInfo) -> None:
        self.inner.start(game)

    async def choose(self, observation: Observation) -> Choice:
        await asyncio.sleep(self.delay)
        choice = self.inner.choose(observation)
        if isinstance(choice, Awaitable):
            return await choice
        return choice

    def finish(self, outcome: GameOutcome) -> None:
        self.inner.finish(outcome)


class BotPlayers:
    """The bots playing games on behalf of pages, one task per game."""

    def __init__(self, address: str, *, tls: bool = False, ca_cert: str | None = None) -> None:
        self.address = address
        self.tls = tls
        self.ca_cert = ca_cert
        self.tasks: set[asyncio.Task[None]] = set()

    @staticmethod
    def check(kinds: Sequence[str]) -> None:
        """Refuse unknown bot names, naming the known ones."""
        for kind in kinds:
            if kind not in BOTS:
                raise ValueError(f"unknown bot {kind!r}; the bots are {', '.join(sorted(BOTS))}")

    async def seat(self, game_id: str, seats: Sequence[tuple[int, str]], delay: float, seed: int) -> None:
        """Join ``seats`` (seat, bot name) of a waiting game and start playing them in the background."""
        self.check([kind for _, kind in seats])
        client = await Client.connect(self.address, tls=self.tls, ca_cert=self.ca_cert)
        try:
            joined = [(await client.join_game(game_id, seat, kind), kind) for seat, kind in seats]
        except BaseException:
            await client.close()
            raise
        task = asyncio.create_task(self._play(client, joined, delay, seed), name=f"bots of {game_id}")
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    @staticmethod
    async def _play(
        client: Client, seats: list[tuple[SeatCredentials, str]], delay: float, seed: int
    ) -> None:
        try:
            players = []
            for credentials, kind in seats:
                bot = make_bot(kind, seed * 10 + credentials.seat)
                players.append(client.play(PacedBot(bot, delay) if delay > 0 else bot, credentials))
            results = await asyncio.gather(*players, return_exceptions=True)
            for (credentials, kind), outcome in zip(seats, results, strict=True):
                if isinstance(outcome, ClientError):
                    log.warning("%s bot on seat %d stopped: %s", kind, credentials.seat, outcome)
                elif isinstance(outcome, BaseException) and not isinstance(outcome, asyncio.CancelledError):
                    log.error("%s bot on seat %d failed: %r", kind, credentials.seat, outcome)
        finally:
            with contextlib.suppress(Exception):
                await client.close()

    async def close(self) -> None:
        """Stop every game's bots (their seats stay in the games)."""
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
