"""Playing rated games in an arena: register once, then seek, play, and seek again.

:func:`play_rated` runs one loop per pool: seek a game in the pool (the arena's ``Seek`` stream), play the
matched seat on the game server the arena names (``Client.play``), and seek again, until ``games`` games
of each pool are played (0: until stopped). A dropped arena connection is retried with a growing pause;
a refusal (a revoked key, an unknown pool) ends the loop with its message.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc
from rich.console import Console

from kutnahora.clients.sdk import ArenaClient, Bot, Client, ClientError, ConnectError, GameOutcome

ENV_ARENA_KEY = "KUTNAHORA_ARENA_KEY"


def read_key(key_file: str | None) -> str | None:
    """The API key from ``key_file`` (its first line), else from ``$KUTNAHORA_ARENA_KEY``."""
    if key_file:
        try:
            return Path(key_file).read_text(encoding="utf-8").strip() or None
        except FileNotFoundError:
            return None
    return os.environ.get(ENV_ARENA_KEY) or None


def write_key(key_file: str, key: str) -> None:
    """Write a key file readable only by its owner."""
    path = Path(key_file)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(key + "\n")


async def register(address: str, name: str, key_file: str, admin_token: str | None = None) -> str:
    """Register ``name`` with the arena and write its key to ``key_file``; returns the key."""
    async with await ArenaClient.connect(address) as arena:
        key = await arena.register_bot(name, admin_token=admin_token)
    write_key(key_file, key)
    return str(key)


async def play_rated(
    address: str,
    key: str,
    pools: Sequence[str],
    games: int,
    make_bot: Callable[[], Bot],
    console: Console,
    *,
    quiet: bool = False,
) -> list[GameOutcome]:
    """Play ``games`` rated games in each pool (0: forever); returns the outcomes."""
    clients: dict[str, Client] = {}
    outcomes: list[GameOutcome] = []
    lock = asyncio.Lock()

    async def client_for(server: str) -> Client:
        async with lock:
            if server not in clients:
                clients[server] = await Client.connect(server)
            return clients[server]

    async def one_pool(arena: ArenaClient, pool: str) -> None:
        played = 0
        delay = 0.5
        while games == 0 or played < games:
            try:
                seat = await arena.seek(key, pool)
            except ClientError as error:
                if error.code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, None):
                    raise
                await asyncio.sleep(delay)  # the arena restarts, or the connection dropped: seek again
                delay = min(delay * 2, 5.0)
                continue
            delay = 0.5
            client = await client_for(seat.server_address)
            outcome = await client.play(make_bot(), seat.seat)
            played += 1
            outcomes.append(outcome)
            if not quiet:
                place = "won" if outcome.won else f"score {outcome.score}"
                opponents = ", ".join(n for i, n in enumerate(seat.seat_names) if i != seat.seat.seat)
                total = f"/{games}" if games else ""
                console.print(
                    f"pool {pool} game {played}{total}: {seat.seat.game_id} seat {seat.seat.seat} "
                    f"vs {opponents}: {place}"
                )

    try:
        async with await ArenaClient.connect(address) as arena:
            await asyncio.gather(*(one_pool(arena, pool) for pool in pools))
    except ConnectError:
        raise
    finally:
        for client in clients.values():
            await client.close()
    return outcomes
