"""How long the SQLite store's writes hold the event loop, and how much of that is WAL checkpoints.

With ``synchronous=NORMAL`` (the default) the server writes each decision on the event loop's own
connection, committed at once: tens of microseconds. But every commit that takes the write-ahead log
past SQLite's ``wal_autocheckpoint`` (1,000 pages) also runs a checkpoint there and then: the log's
pages copied into the database file, which is synced, on the event loop. This benchmark drives the real
store (:class:`kutnahora.server.store.sqlite.SqliteStore`) as the server does, ``--games`` games with
their decisions appended in turn, times every write, and tells the writes that ran a checkpoint (the
only writes to the database file itself in WAL mode, so its modification time changes) from the others:

    python -m kutnahora.bench.sqlite_writes                    # 1,000 games, 60,000 decisions
    python -m kutnahora.bench.sqlite_writes --decisions 20000 --folder /var/tmp

It runs the store with SQLite's own checkpoints alone (in the write that fills the log: the store before),
then as the server runs it, its worker thread also running a passive checkpoint every ``--checkpoint-
every`` writes (:data:`kutnahora.server.store.sqlite.CHECKPOINT_EVERY`: the copying and syncing off the
event loop, leaving SQLite's own little to do), alternately ``--rounds`` times, and prints for each every
write's p50, p99, p99.9 and the longest, and the same for the writes during which the database file
changed (a checkpoint ran) and the others. (Checkpoints on the worker alone, ``wal_autocheckpoint=0`` on
the loop's connection, are no option: with writes arriving during each of them, none reaches the log's
end, so the log never starts over and grows without bound.)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from kutnahora.bench.windows import millis, spread
from kutnahora.clients.help_format import DefaultsHelpFormatter
from kutnahora.server.store.base import DecisionRow, GameRow, SeatRow
from kutnahora.server.store.sqlite import CHECKPOINT_EVERY, SqliteStore

OPTION = "mine 3 4 pay 2"  # an option's canonical text, about as long as most


async def measure(path: Path, games: int, decisions: int, every: int) -> dict[str, list[float]]:
    """Write ``decisions`` decisions over ``games`` games, the store's worker checkpointing every ``every``
    writes (0: never, SQLite's own checkpoints alone); the seconds of each write, by kind."""
    store = SqliteStore(path, checkpoint_every=every)
    await store.open()
    times: dict[str, list[float]] = {"checkpoint": [], "plain": []}
    try:
        for number in range(games):
            row = GameRow(
                game_id=f"g{number:06d}", created_at=time.time(), players=4, events=True,
                guild_setup_card=None, mine_setup_card=None, seed=number, clock={}, label="bench",
                game_token_hash="ab" * 32, rules_version=1, status="active",
            )  # fmt: skip
            await store.create_game(row, [SeatRow(seat, f"bot{seat}", "cd" * 32) for seat in range(4)])
        database = path.stat().st_mtime_ns
        for seq in range(decisions // games + 1):
            for number in range(games):
                if seq * games + number >= decisions:
                    break
                decision = DecisionRow(seq, seq % 4, OPTION, "seat", 900, time.time())
                started = time.perf_counter()
                await store.append_decision(f"g{number:06d}", decision)
                took = time.perf_counter() - started
                await asyncio.sleep(0)  # the loop turns between writes, as in the server
                changed = path.stat().st_mtime_ns
                times["checkpoint" if changed != database else "plain"].append(took)
                database = changed
    finally:
        await store.close()
    return times


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.sqlite_writes",
        description="Time the SQLite store's decision writes as the server makes them, telling those that "
        "ran a WAL checkpoint from the others.",
        formatter_class=DefaultsHelpFormatter,
    )
    parser.add_argument("--games", type=int, default=1000, help="games the decisions are spread over")
    parser.add_argument("--decisions", type=int, default=60_000, help="decisions written")
    parser.add_argument(
        "--rounds", type=int, default=1, help="alternate the two ways this many times (SQLite's own first)"
    )
    parser.add_argument(
        "--checkpoint-every",
        type=int,
        default=CHECKPOINT_EVERY,
        help="writes between the worker's passive checkpoints, the second way",
    )
    parser.add_argument(
        "--folder", type=Path, default=None, help="where the database file goes (default: /tmp)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print."""
    args = build_parser().parse_args(argv)
    if args.games <= 0 or args.decisions <= 0:
        raise SystemExit("--games and --decisions must be positive")
    load = "/".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"sqlite writes: {args.decisions} decisions over {args.games} games, load {load}")
    for checkpoint_every in [0, args.checkpoint_every] * args.rounds:
        with tempfile.TemporaryDirectory(prefix="kutnahora-sqlite-", dir=args.folder) as folder:
            times = asyncio.run(
                measure(Path(folder) / "games.db", args.games, args.decisions, checkpoint_every)
            )
        every = [value for values in times.values() for value in values]
        where = (
            f"also on the worker every {checkpoint_every} writes" if checkpoint_every else "SQLite's own only"
        )
        print(f"  checkpoints {where}: every write {millis(spread(every))}, total {sum(every):.2f} s")
        for kind, values in times.items():
            if values:
                print(
                    f"    {kind:<10} {len(values):6d} writes  {millis(spread(values))}  "
                    f"{sum(values) / max(sum(every), 1e-12) * 100:5.1f}% of the writes' time"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
