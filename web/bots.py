"""The reference bots a page asks for: they join seats and play them in this process, over the protocol.

A game created in the browser may seat ``greedy``, ``random`` and ``mcts`` bots
(:mod:`kutnahora.clients.bots`). Each game's bots get a connection of their own, as any bot would, and may
wait a while before each decision so that people can follow the game. The mcts bot's search runs in a process
of its own (:class:`SearchInProcess`, one worker process shared by every game), so the web server's event
loop, and with it every page, stays responsive while it thinks. :class:`BotPlayers` keeps the running games'
tasks and stops them when the web server stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor

from kutnahora.clients.bots import BOTS, MctsBot, make_bot
from kutnahora.clients.bots.paced import PacedBot
from kutnahora.clients.sdk import Bot, Choice, Client, ClientError, SeatCredentials
from kutnahora.clients.stopping import exit_with_parent
from kutnahora.v1.game_pb2 import Observation

log = logging.getLogger(__name__)

SEARCH_BUDGET_MS = 1000.0
"""How long the lobby's mcts bot thinks about each decision."""


CLOSE_SECONDS = 5.0
"""How long a stopping web server waits for its search process to finish the decision under way."""


def _search(seed: int, budget_ms: float, observation: bytes) -> Choice:
    """One decision of the mcts bot, in the worker process: the wire observation in, the option's text out."""
    return asyncio.run(_choose(MctsBot(seed, budget_ms=budget_ms), Observation.FromString(observation)))


async def _choose(bot: MctsBot, observation: Observation) -> Choice:
    return await bot.choose(observation)


class SearchInProcess(MctsBot):
    """The mcts bot, its search run in ``pool`` (another process) rather than on the event loop's."""

    def __init__(self, pool: Executor, seed: int, budget_ms: float = SEARCH_BUDGET_MS) -> None:
        super().__init__(seed, budget_ms=budget_ms)
        self.pool = pool
        self.search_seed = seed

    async def choose(self, observation: Observation) -> Choice:
        options = observation.pending.options
        if len(options) == 1:
            return options[0]
        loop = asyncio.get_running_loop()
        budget = self.budget_ms or SEARCH_BUDGET_MS
        data = observation.SerializeToString()
        return await loop.run_in_executor(self.pool, _search, self.search_seed, budget, data)


class BotPlayers:
    """The bots playing games on behalf of pages, one task per game."""

    def __init__(
        self, address: str, *, tls: bool = False, ca_cert: str | None = None, quota_token: str | None = None
    ) -> None:
        self.address = address
        self.tls = tls
        self.ca_cert = ca_cert
        self.quota_token = quota_token
        self.tasks: set[asyncio.Task[None]] = set()
        self._pool: ProcessPoolExecutor | None = None

    def pool(self) -> ProcessPoolExecutor:
        """The search process, started when a game first seats an mcts bot (a fresh interpreter: spawn)."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=exit_with_parent,
                initargs=(os.getpid(),),
            )
        return self._pool

    def make(self, kind: str, seed: int) -> Bot:
        """A bot of the named kind; mcts searches in the worker process."""
        if kind == "mcts":
            return SearchInProcess(self.pool(), seed)
        return make_bot(kind, seed)

    @staticmethod
    def check(kinds: Sequence[str]) -> None:
        """Refuse unknown bot names, naming the known ones."""
        for kind in kinds:
            if kind not in BOTS:
                raise ValueError(f"unknown bot {kind!r}; the bots are {', '.join(sorted(BOTS))}")

    async def seat(self, game_id: str, seats: Sequence[tuple[int, str]], delay: float, seed: int) -> None:
        """Join ``seats`` (seat, bot name) of a waiting game and start playing them in the background."""
        self.check([kind for _, kind in seats])
        client = await Client.connect(
            self.address, tls=self.tls, ca_cert=self.ca_cert, quota_token=self.quota_token
        )
        try:
            joined = [(await client.join_game(game_id, seat, kind), kind) for seat, kind in seats]
        except BaseException:
            await client.close()
            raise
        task = asyncio.create_task(self._play(client, joined, delay, seed), name=f"bots of {game_id}")
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _play(
        self, client: Client, seats: list[tuple[SeatCredentials, str]], delay: float, seed: int
    ) -> None:
        try:
            players = []
            for credentials, kind in seats:
                bot = self.make(kind, seed * 10 + credentials.seat)
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
        if self._pool is not None:
            # Waited for (the decision under way, then the process's exit), on a thread: uvicorn re-raises
            # the stopping signal once the app has stopped, which ends this process before any exit hook.
            pool, self._pool = self._pool, None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True), CLOSE_SECONDS
                )
