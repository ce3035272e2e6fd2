"""Memory per loaded game, and where it goes, measured in this process with :mod:`tracemalloc`.

Games are created and played through the server's own objects: a :class:`~kutnahora.server.hub.GameHub`
over a SQLite store in a temporary file, as a server keeps it, and no network. Every seat answers with a
random listed option, and before each decision the observation of the seat that owes it is built, as a
Play stream's writer does, so that the presenter's caches fill as they do in a serving process (the
option entries that every game of a component set shares are counted too, divided among the games).
Then the memory the games hold is measured and grouped by the module that allocated it:

    python -m kutnahora.bench.game_memory --games 60 --decisions 150

With ``--reloaded`` the games are played first, unmeasured, and the store closed; then a second hub opens
the file, as a restarted server does, and what is measured is the games it loads from their logs, each
with the observation of the seat that owes the next decision built once.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import sys
import tempfile
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kutnahora.bench.hub_games import joined_game, sqlite_hub
from kutnahora.plumbing import logs
from kutnahora.server.feed import feed as feed_of
from kutnahora.server.game import LiveGame
from kutnahora.server.records import ListedIndex


@dataclass
class GameMemory:
    """What the loaded games held: bytes per game in all, and by where it was allocated."""

    games: int
    decisions_per_game: float
    bytes_per_game: float
    by_place: dict[str, float]  # bytes per game, by the allocating module's area


def _place(filename: str) -> str:
    path = Path(filename)
    parts = path.parts
    for folder, name in (("engine", "engine"), ("server", "server"), ("protobuf", "protobuf")):
        if folder in parts:
            if name == "server":
                return f"server/{path.name}"
            return name
    return "other"


async def _play(games: int, decisions: int, seed: int, folder: Path) -> tuple[list[LiveGame], int]:
    hub = sqlite_hub(folder, "memory.db")
    await hub.store.open()
    rng = random.Random(seed)
    loaded = []
    made = 0
    for index in range(games):
        game = await joined_game(hub, 2 + index % 3, index)
        view = feed_of(game)
        for _ in range(decisions):
            pending = game.state.pending
            if pending is None or game.ended:
                break
            view.observation(pending.seat)  # as the seat's Play stream does before it answers
            await game.submit(pending.seat, game.version, ListedIndex(rng.randrange(len(pending.options))))
            made += 1
        loaded.append(game)
    await hub.store.close()
    return loaded, made


async def _reload(game_ids: Sequence[str], folder: Path) -> list[LiveGame]:
    """The games loaded again by a new hub on the same file, each seen once by the seat that owes."""
    hub = sqlite_hub(folder, "memory.db")
    await hub.store.open()
    loaded = []
    for game_id in game_ids:
        game = await hub.get(game_id)
        pending = game.state.pending
        if pending is not None and not game.ended:
            feed_of(game).observation(pending.seat)
        loaded.append(game)
    await hub.store.close()
    return loaded


def measure(games: int = 30, decisions: int = 120, seed: int = 1, reloaded: bool = False) -> GameMemory:
    """Play ``games`` games ``decisions`` decisions deep (or to their end) and measure what they hold; with
    ``reloaded``, what they hold once a new hub has loaded them from the store."""
    logs.configure("json", "error")
    kept: list[Any] = []
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        if reloaded:
            played, made = asyncio.run(_play(games, decisions, seed, folder))
            game_ids = [game.game_id for game in played]
            del played
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        if reloaded:
            kept.append(asyncio.run(_reload(game_ids, folder)))
        else:
            loaded, made = asyncio.run(_play(games, decisions, seed, folder))
            kept.append(loaded)
            del loaded
        gc.collect()
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
    logs.reset()
    by_place: dict[str, float] = {}
    total = 0
    for stat in after.compare_to(before, "filename"):
        place = _place(stat.traceback[0].filename)
        by_place[place] = by_place.get(place, 0) + stat.size_diff
        total += stat.size_diff
    kept.clear()
    return GameMemory(
        games=games,
        decisions_per_game=made / games,
        bytes_per_game=total / games,
        by_place={place: size / games for place, size in sorted(by_place.items(), key=lambda p: -p[1])},
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print the memory per loaded game and its breakdown."""
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.game_memory",
        description="Measure the memory each loaded game holds, and where it goes (tracemalloc).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--games", type=int, default=30, help="games to load (2, 3 and 4 seats in turn)")
    parser.add_argument("--decisions", type=int, default=120, help="decisions played in each")
    parser.add_argument("--seed", type=int, default=1, help="the random choices' seed")
    parser.add_argument(
        "--reloaded",
        action="store_true",
        help="measure the games once a new hub has loaded them from the store, as after a restart",
    )
    args = parser.parse_args(argv)
    if args.games <= 0 or args.decisions < 0:
        raise SystemExit("--games must be positive and --decisions not negative")
    result = measure(args.games, args.decisions, args.seed, args.reloaded)
    how = "loaded from the store" if args.reloaded else "played"
    print(
        f"memory per loaded game: {result.bytes_per_game / 1024:.0f} KiB "
        f"({result.games} games {how}, {result.decisions_per_game:.0f} decisions each on average)"
    )
    for place, size in result.by_place.items():
        if abs(size) >= 512:
            print(f"  {place:28} {size / 1024:7.1f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
