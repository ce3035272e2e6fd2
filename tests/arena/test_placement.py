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


async def test_the_server_token_keeps_the_arenas_games_out_of_its_callers_quota() -> None:
    """A game server counts the arena as one caller; with its --quota-token (the arena's --server-token)
    every game is placed, without it the second meets the first's quota at once and is not placed (no
    waiting out the refusal's RetryInfo: the next server would be tried)."""
    from kutnahora.arena.servers import PlacementFailed
    from kutnahora.server.app import create_server
    from kutnahora.server.config import Quotas, ServerConfig

    quotas = Quotas(caller_games=1, exempt=(), token="arena-quota-token")
    server, port = await create_server("127.0.0.1:0", ServerConfig.in_memory(quotas=quotas))
    await server.start()
    try:
        exempt = GameServers([f"127.0.0.1:{port}"], quota_token="arena-quota-token")
        try:
            placed = [await exempt.place(Pool("2", 2), ["a", "b"], "quota") for _ in range(3)]
            assert len({p.game_id for p in placed}) == 3
        finally:
            await exempt.close()
        counted = GameServers([f"127.0.0.1:{port}"])
        try:
            await counted.place(Pool("2", 2), ["a", "b"], "quota")
            started = asyncio.get_running_loop().time()
            try:
                await counted.place(Pool("2", 2), ["a", "b"], "quota")
            except PlacementFailed as failed:
                assert "already holds 1 unfinished games" in str(failed)
            else:
                raise AssertionError("the second game was placed against the caller's quota")
            assert asyncio.get_running_loop().time() - started < 5
        finally:
            await counted.close()
    finally:
        await server.stop(0)


def test_the_server_token_is_a_setting(monkeypatch: Any) -> None:
    from kutnahora.arena.main import build_parser, config_from_args

    config = config_from_args(build_parser().parse_args(["--server-token", "s3cr3t-value"]))
    assert config.server_token == "s3cr3t-value"
    monkeypatch.setenv("KUTNAHORA_ARENA_SERVER_TOKEN", "s3cr3t-from-env")
    parser = build_parser()
    assert config_from_args(parser.parse_args([])).server_token == "s3cr3t-from-env"
    assert "s3cr3t" not in parser.format_help(), "a token's value is never shown as a default"
