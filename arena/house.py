"""House bots: the arena's own accounts, played by ``kutnahora-bot`` processes, that keep pools playable.

``--house-bots greedy,random,mcts:200`` names the kinds. Each kind gets enough accounts (``house-greedy-1``,
``house-greedy-2``, ...) that, together, the house can fill every seat but one of the largest pool's
games, so a lone bot is matched as soon as its rating window opens. Each account is one process,
``kutnahora-bot KIND --arena ADDRESS --pool P1,P2,...`` (outside the arena's event loop), given a fresh API
key through its environment at every start; a process that exits is started again after a pause. ADDRESS
is on loopback: the arena's port, or beside a port serving TLS a plain one bound for the house bots. The
matchmaker never makes a game of house bots alone, and they are rated like every other bot.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kutnahora.arena.store import ArenaStore
from kutnahora.clients.sdk import ENV_CA_CERT, ENV_TLS
from kutnahora.plumbing import auth

KINDS = ("greedy", "random", "mcts", "neural", "neural-mcts")
ENV_ARENA_KEY = "KUTNAHORA_ARENA_KEY"


@dataclass(frozen=True, slots=True)
class HouseBot:
    """One house account: its name, the bot kind that plays it, and the mcts iterations (if any)."""

    name: str
    kind: str
    iterations: int | None = None


def parse_house_bots(text: str, max_players: int) -> list[HouseBot]:
    """The house accounts ``--house-bots`` asks for; ValueError for an unknown kind."""
    specs: list[tuple[str, int | None]] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        kind, _, budget = part.partition(":")
        if kind not in KINDS:
            raise ValueError(f"house bot {part!r}: the kinds are {', '.join(KINDS)}")
        iterations = None
        if budget:
            if kind not in ("mcts", "neural", "neural-mcts") or not budget.isdigit() or int(budget) < 1:
                raise ValueError(
                    f"house bot {part!r}: only mcts, neural and neural-mcts take a budget, mcts:ITERATIONS"
                )
            iterations = int(budget)
        specs.append((kind, iterations))
    if not specs:
        return []
    each = max(1, math.ceil((max_players - 1) / len(specs)))
    bots: list[HouseBot] = []
    for kind, iterations in specs:
        label = kind if iterations is None else f"{kind}{iterations}"
        bots.extend(HouseBot(f"house-{label}-{n}", kind, iterations) for n in range(1, each + 1))
    return bots


class HouseBots:
    """The house bot processes of one arena."""

    def __init__(self, bots: Sequence[HouseBot], store: ArenaStore, pools: Sequence[str], log: Any) -> None:
        self.bots = list(bots)
        self.store = store
        self.pools = list(pools)
        self.log = log
        self._tasks: list[asyncio.Task[None]] = []
        self._processes: dict[str, asyncio.subprocess.Process] = {}

    async def start(self, address: str) -> None:
        """Make sure every house account exists and start its process against the arena at ``address``."""
        for bot in self.bots:
            self._tasks.append(asyncio.create_task(self._keep_running(bot, address)))

    async def _key(self, bot: HouseBot) -> str:
        key = auth.new_token()
        account = await self.store.account_by_name(bot.name)
        if account is None:
            await self.store.register(bot.name, auth.token_hash(key), house=True)
        else:
            await self.store.set_key(account.account_id, auth.token_hash(key))
        return key

    async def _keep_running(self, bot: HouseBot, address: str) -> None:
        while True:
            key = await self._key(bot)
            command = [sys.executable, "-m", "kutnahora.clients.bots.cli", bot.kind, "--arena", address]
            command += ["--pool", ",".join(self.pools), "--games", "0", "--quiet", "--name", bot.name]
            if bot.iterations is not None:
                command += ["--search" if bot.kind == "neural" else "--iterations", str(bot.iterations)]
            # Plain to the arena's own loopback port (Arena.house_port) and to the game servers, which the
            # arena reaches plain too: TLS meant for this machine's other clients is not theirs.
            env = {name: value for name, value in os.environ.items() if name not in (ENV_TLS, ENV_CA_CERT)}
            env[ENV_ARENA_KEY] = key
            process = await asyncio.create_subprocess_exec(
                *command, env=env, stdin=asyncio.subprocess.DEVNULL
            )
            self._processes[bot.name] = process
            self.log.info("house bot started", bot=bot.name, pid=process.pid)
            code = await process.wait()
            self.log.warning("house bot exited; starting it again", bot=bot.name, exit_code=code)
            await asyncio.sleep(2.0)

    async def stop(self) -> None:
        """Stop every house bot process."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for process in self._processes.values():
            if process.returncode is None:
                process.terminate()
        for process in self._processes.values():
            try:
                await asyncio.wait_for(process.wait(), 5)
            except TimeoutError:
                process.kill()
                await process.wait()
