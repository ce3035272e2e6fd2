"""Games played through the server's own objects, without the network, for the in-process measures.

:func:`sqlite_hub` is a :class:`~kutnahora.server.hub.GameHub` over a SQLite file as a server keeps it
(no clock, no idle eviction); :func:`joined_game` creates a game on it with every seat taken.
``game_memory`` and ``hub_cpu`` play on them.
"""

from __future__ import annotations

from pathlib import Path

from kutnahora import engine
from kutnahora.plumbing import logs
from kutnahora.server.config import ClockConfig, ServerConfig
from kutnahora.server.game import LiveGame
from kutnahora.server.hub import GameHub
from kutnahora.server.metrics import Metrics
from kutnahora.server.store import SqliteStore


def sqlite_hub(folder: Path, name: str = "games.db") -> GameHub:
    """A hub over the SQLite file ``folder / name`` (open its store before use)."""
    config = ServerConfig.in_memory(clock=ClockConfig(enabled=False), idle_timeout_seconds=0)
    store = SqliteStore(str(folder / name))
    return GameHub(config, store, Metrics(), engine.default_components(), logs.get_logger("kutnahora.server"))


async def joined_game(hub: GameHub, players: int, seed: int) -> LiveGame:
    """A new game of ``players`` seats on ``hub``, every seat joined."""
    game, _, _ = await hub.create(engine.GameOptions(players=players), seed, hub.config.clock, "")
    for seat in range(len(game.seats)):
        await game.join(seat, f"seat {seat}")
    return game
