"""``python -m kutnahora.bench.arena_bench``: the arena's matchmaker, measured two ways.

1. **Cost per ticket.** :func:`kutnahora.arena.matchmaker.make_matches` over queues of 100 to 10,000 waiting
   tickets spread over the pools 2, 3 and 4 (ratings spread like a real ladder, waits from fresh to long):
   the median processor time of one pass (``time.process_time``, so that other work on a shared
   machine does not count), divided by the number of tickets. A near-linear matchmaker keeps this
   figure nearly flat as the queue grows; a quadratic one would grow it a hundredfold.
2. **A simulated ladder.** ``--bots`` bots (200 by default) of spread skill seek in every pool, in
   simulated time: the matchmaker runs every ``--tick`` seconds as the arena does, each game lasts a random
   5 to 30 seconds, and a bot seeks again in that pool when its game ends. Reported: time from a seek to
   its match (p50, p99) and matches made per simulated second. No game server is involved: this measures
   the matchmaking policy (window widening, fairness, one game per pool at a time), not the network.

3. **Over gRPC** (``--grpc``). The same ladder for real: a ``kutnahora-server`` process and a
   ``kutnahora-arena`` process (SQLite, its default matchmaker settings), and ``--bots`` bots, each a gRPC
   client with its own connection to the arena, seeking in every pool at once. The seats of a matched game
   are held for the game's random length (``--game-seconds``, 5 to 30 s by default, as simulated), then
   resigned (the game server's random policy plays the rest, so the game finishes and is rated), and
   each bot seeks again in that pool.
   Reported after ``--grpc-seconds``: time from opening a Seek to its SeekMatched (p50, p99) and matches
   per second, measured by the bots.

    python -m kutnahora.bench.arena_bench                 # 1 and 2, about 20 s
    python -m kutnahora.bench.arena_bench --sizes 100,1000 --sim-seconds 300
    python -m kutnahora.bench.arena_bench --grpc --grpc-seconds 120   # and 3
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import heapq
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from kutnahora.arena.matchmaker import Ticket, Window, make_matches
from kutnahora.bench.processes import start_serving, stop_process

POOLS = {"2": 2, "3": 3, "4": 4}


def queue(size: int, rng: random.Random) -> list[Ticket]:
    """``size`` waiting tickets: distinct accounts per pool, ratings around 10 ± 8, waits of 0 to 12 s."""
    tickets = []
    for number in range(size):
        pool = rng.choice(sorted(POOLS))
        tickets.append(
            Ticket(f"t{number}", f"a{number}", pool, POOLS[pool], rng.gauss(10, 8), rng.uniform(0, 12))
        )
    return tickets


def cost_per_ticket(sizes: Sequence[int], repeats: int, seed: int) -> list[tuple[int, float, int]]:
    """(queue size, median microseconds per ticket of one pass, matches made) per size."""
    rng = random.Random(seed)
    rows = []
    for size in sizes:
        tickets = queue(size, rng)
        times = []
        made = 0
        for _ in range(repeats):
            started = time.process_time()
            made = len(make_matches(tickets, None, Window()))
            times.append(time.process_time() - started)
        rows.append((size, statistics.median(times) / size * 1e6, made))
    return rows


def simulate(bots: int, seconds: float, tick: float, seed: int) -> tuple[list[float], int]:
    """Waits from seek to match, and the number of matches, of a simulated ladder."""
    rng = random.Random(seed)
    skill = {f"b{n}": rng.gauss(10, 8) for n in range(bots)}
    waiting: dict[tuple[str, str], float] = {(bot, pool): 0.0 for bot in skill for pool in POOLS}
    returns: list[tuple[float, str, str]] = []  # (time the game ends, bot, pool)
    waits: list[float] = []
    matches = 0
    now = 0.0
    number = 0
    while now < seconds:
        now += tick
        while returns and returns[0][0] <= now:
            ended, bot, pool = heapq.heappop(returns)
            waiting[(bot, pool)] = ended  # the bot seeks again the moment its game ends
        tickets = []
        for (bot, pool), since in waiting.items():
            number += 1
            tickets.append(Ticket(f"{bot}/{pool}", bot, pool, POOLS[pool], skill[bot], now - since))
        for match in make_matches(tickets, None, Window()):
            matches += 1
            ends = now + rng.uniform(5, 30)
            for ticket in match.tickets:
                waits.append(now - waiting.pop((ticket.account, ticket.pool)))
                heapq.heappush(returns, (ends, ticket.account, ticket.pool))
    return waits, matches


async def over_grpc(
    bots: int, seconds: float, game_seconds: tuple[float, float], seed: int
) -> tuple[list[float], set[str]]:
    """Waits from opening a Seek to its SeekMatched, and the games matched, of ``bots`` real gRPC clients of
    a real arena process placing games on a real game server, for ``seconds``."""
    from kutnahora.clients.arena_client import ArenaClient
    from kutnahora.clients.sdk import Client, ClientError

    folder = Path(tempfile.mkdtemp(prefix="kutnahora-arena-bench-"))
    server, server_address = start_serving(
        [
            *(sys.executable, "-m", "kutnahora.server.main", "--port", "0", "--db", ":memory:"),
            *("--metrics-port", "off", "--log-level", "warning", "--max-games", "100000"),
        ],
        folder / "server.log",
    )
    arena, arena_address = start_serving(
        [
            *(sys.executable, "-m", "kutnahora.arena.main", "--port", "0", "--db", str(folder / "arena.db")),
            *("--server", server_address, "--pools", ",".join(POOLS), "--metrics-port", "off"),
            *("--log-level", "warning"),
        ],
        folder / "arena.log",
    )
    waits: list[float] = []
    games: set[str] = set()
    try:
        async with await ArenaClient.connect(arena_address) as registrar:
            keys = [await registrar.register_bot(f"bench-{n}") for n in range(bots)]
        game_server = await Client.connect(server_address)
        stop_at = time.monotonic() + seconds

        async def seek_and_hold(arena_client: ArenaClient, key: str, pool: str) -> None:
            while time.monotonic() < stop_at:
                started = time.monotonic()
                try:
                    seat = await asyncio.wait_for(arena_client.seek(key, pool), stop_at - started)
                except TimeoutError:
                    return
                waits.append(time.monotonic() - started)
                games.add(seat.seat.game_id)
                # One length per game, as simulated: every seat holds it, then resigns.
                hold = random.Random(f"{seed}/{seat.seat.game_id}").uniform(*game_seconds)
                await asyncio.sleep(min(hold, max(0.0, stop_at - time.monotonic())))
                with contextlib.suppress(ClientError):  # the game ended already (its clock)
                    await game_server.resign(seat.seat)

        async def bot(key: str) -> None:
            async with ArenaClient(arena_address) as arena_client:  # a connection of its own
                await asyncio.gather(*(seek_and_hold(arena_client, key, pool) for pool in POOLS))

        try:
            await asyncio.gather(*(bot(key) for key in keys))
        finally:
            await game_server.close()
    finally:
        stop_process(arena, grace=15)
        stop_process(server, grace=15)
        shutil.rmtree(folder, ignore_errors=True)
    return waits, games


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.arena_bench",
        description="The arena matchmaker's cost per ticket, and a simulated ladder's time to match.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--sizes", default="100,300,1000,3000,10000", help="queue sizes, comma-separated")
    parser.add_argument("--repeats", type=int, default=5, help="passes timed per size (the median is shown)")
    parser.add_argument("--bots", type=int, default=200, help="bots of the simulated ladder")
    parser.add_argument("--sim-seconds", type=float, default=600.0, help="simulated seconds of the ladder")
    parser.add_argument("--tick", type=float, default=0.2, help="simulated seconds between matchmaker passes")
    parser.add_argument("--seed", type=int, default=1, help="random seed")
    parser.add_argument(
        "--grpc",
        action="store_true",
        help="also run the ladder over gRPC, against real arena and game server processes",
    )
    parser.add_argument("--grpc-seconds", type=float, default=90.0, help="seconds the gRPC ladder runs")
    parser.add_argument(
        "--game-seconds",
        default="5,30",
        help="MIN,MAX seconds a matched bot of the gRPC ladder holds its seat before resigning it",
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    print("matchmaker cost per ticket (one pass, median of repeats):")
    print(f"{'tickets':>8} {'µs/ticket':>10} {'matches':>8}")
    for size, micros, made in cost_per_ticket(sizes, args.repeats, args.seed):
        print(f"{size:>8} {micros:>10.2f} {made:>8}", flush=True)
    started = time.perf_counter()
    waits, matches = simulate(args.bots, args.sim_seconds, args.tick, args.seed)
    took = time.perf_counter() - started
    print(
        f"simulated ladder: {args.bots} bots in pools {','.join(POOLS)}, {args.sim_seconds:g} s simulated "
        f"({took:.1f} s to run): {matches} matches, {matches / args.sim_seconds:.2f} matches/s, "
        f"time to match p50 {percentile(waits, 0.5):.2f} s, p99 {percentile(waits, 0.99):.2f} s"
    )
    if args.grpc:
        low, _, high = args.game_seconds.partition(",")
        hold = (float(low), float(high or low))
        waits, games = asyncio.run(over_grpc(args.bots, args.grpc_seconds, hold, args.seed))
        print(
            f"over gRPC: {args.bots} bots (each its own connection to an arena process, games on a game "
            f"server process) in pools {','.join(POOLS)}, {args.grpc_seconds:g} s, games held "
            f"{hold[0]:g} to {hold[1]:g} s: {len(games)} matches, "
            f"{len(games) / args.grpc_seconds:.2f} matches/s, "
            f"time to match p50 {percentile(waits, 0.5):.2f} s, p99 {percentile(waits, 0.99):.2f} s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
