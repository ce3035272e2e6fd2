"""Placing games: the least-loaded game server that answers, counting the games being created on it, so
that a burst of matches (all asking for the loads at the same moment) is spread over the servers."""

from __future__ import annotations

import asyncio
from collections import Counter
from types import SimpleNamespace
from typing import Any

from kutnahora.arena.pools import Pool
from kutnahora.arena.servers import GameServers


class SlowServer:
    """A game server that answers its load (no unfinished games) at once and creates games slowly."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.created = 0

    async def server_info(self) -> Any:
        return SimpleNamespace(games=[])  # no unfinished games counted: only the ones in flight differ

    async def create_seated_game(self, names: Any, **_: Any) -> tuple[Any, list[Any]]:
        await asyncio.sleep(0.05)
        self.created += 1
        game = SimpleNamespace(game=SimpleNamespace(game_id=f"{self.address}-{self.created}"))
        return game, [SimpleNamespace(token=f"t{seat}") for seat in range(len(names))]

    async def close(self) -> None:
        return None


async def test_a_burst_of_placements_is_spread_over_the_servers() -> None:
    servers = GameServers(["a:1", "b:1", "c:1"])
    await servers.close()
    fakes = {address: SlowServer(address) for address in servers.addresses}
    servers._clients = fakes  # type: ignore[assignment]
    placed = await asyncio.gather(*(servers.place(Pool("2", 2), ["x", "y"], "burst") for _ in range(30)))
    spread = Counter(p.server for p in placed)
    assert spread == {"a:1": 10, "b:1": 10, "c:1": 10}, spread
    assert all(count == 0 for count in servers._in_flight.values())
