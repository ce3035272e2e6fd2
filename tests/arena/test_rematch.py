"""A bot whose games end at once seeks again at once, many times, and is never refused with TICKET_EXISTS:
the ticket of a match handed over no longer exists, on one arena (SQLite) and across two replicas on one
PostgreSQL database.

Eight bots seek in pool 2 (half on each replica with PostgreSQL), and the moment each hears its match it
opens its next Seek (before its game has even ended; the ticket waits until the arena sees the game end),
then resigns the game, which the game server finishes within milliseconds. Before the ticket of a match
was deleted in the transaction that handed it over, the next Seek often met the old row still there."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections import Counter
from collections.abc import AsyncIterator, Sequence

from kutnahora.arena.app import Arena
from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import Client, ClientError
from tests.arena.test_replicas import start_replica
from tests.store.pg import fresh_schema

ROUNDS = 8
BOTS = 8


async def quick_bots(
    arenas: Sequence[ArenaClient], keys: Sequence[str], game_server: str, pool: str = "2"
) -> list[str]:
    """Bots (the i-th on ``arenas[i % 2]``) that each play ``ROUNDS`` games or more, seeking again the
    moment they are matched and resigning at once; the games' ids. A bot that has played its rounds seeks
    on until every bot has, so that none is left without an opponent."""
    games: list[str] = []
    played = [0] * len(keys)
    everyone_done = asyncio.Event()
    async with await Client.connect(game_server) as server:

        async def bot(number: int) -> None:
            arena, key = arenas[number % len(arenas)], keys[number]
            pending = asyncio.ensure_future(arena.seek(key, pool))
            try:
                while not everyone_done.is_set():
                    stop = asyncio.ensure_future(everyone_done.wait())
                    done, _ = await asyncio.wait(
                        {pending, stop}, timeout=30, return_when=asyncio.FIRST_COMPLETED
                    )
                    stop.cancel()
                    if pending not in done:
                        assert everyone_done.is_set(), f"bot {number} was not matched within 30 s"
                        return
                    seat = pending.result()  # a refusal (TICKET_EXISTS) raises here
                    games.append(seat.seat.game_id)
                    pending = asyncio.ensure_future(arena.seek(key, pool))  # at once, before the game ends
                    await asyncio.sleep(0)
                    with contextlib.suppress(ClientError):  # ended already by the other seat's resignation
                        await server.resign(seat.seat)
                    played[number] += 1
                    if min(played) >= ROUNDS:
                        everyone_done.set()
            finally:
                pending.cancel()
                with contextlib.suppress(asyncio.CancelledError, ClientError):
                    await pending

        await asyncio.gather(*(bot(number) for number in range(len(keys))))
    return games


async def test_quick_bots_seek_again_at_once_on_one_arena(
    arena: Arena, arena_client: ArenaClient, game_server: str
) -> None:
    keys = [await arena_client.register_bot(f"quick-{n}") for n in range(BOTS)]
    games = await quick_bots([arena_client], keys, game_server)
    assert len(games) >= BOTS * ROUNDS
    assert max(Counter(games).values()) <= 2, "a game handed to more seats than it has"
    assert arena.metrics.refusals.labels(reason="ticket_exists")._value.get() == 0


@contextlib.asynccontextmanager
async def two_replicas(db: str, game_server: str) -> AsyncIterator[tuple[ArenaClient, ArenaClient]]:
    replicas = [start_replica(db, game_server), start_replica(db, game_server)]
    try:
        async with (
            await ArenaClient.connect(replicas[0][1]) as one,
            await ArenaClient.connect(replicas[1][1]) as two,
        ):
            yield one, two
    finally:
        for process, _, _ in replicas:
            process.send_signal(signal.SIGTERM)
            process.wait(15)


async def test_quick_bots_seek_again_at_once_across_two_replicas(game_server: str) -> None:
    with fresh_schema("kh_arena_rematch") as db:
        async with two_replicas(db, game_server) as (one, two):
            keys = [await one.register_bot(f"quick-{n}") for n in range(BOTS)]
            # Half the bots on each replica, then the other way round in the 4-player pool. (The last
            # Seeks of a round, closed when every bot has played its games, may have been matched just
            # then: their games go on with the clock playing the seats, and hold their bots in pool 2.)
            games = await quick_bots([one, two], keys, game_server)
            assert len(games) >= BOTS * ROUNDS
            assert max(Counter(games).values()) <= 2, "a game handed to more seats than it has"
            games = await quick_bots([two, one], keys, game_server, "4")
            assert len(games) >= BOTS * ROUNDS
            assert max(Counter(games).values()) <= 4, "a game handed to more seats than it has"
