"""What the seat gateway costs: decisions per second through it against straight to the server.

Games of two random bots (the SDK's Play stream) on one local server reached over its Unix socket, played
alternately straight to the server and with each seat through a :class:`SeatGateway` of its own (in the
same process and event loop as the bots, as in the runner, so its work is counted), so that the machine's
load falls on both alike::

    python -m kutnahora.clients.tournament.gateway_cost --games 10

It prints the median decisions per second of each way and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from kutnahora.clients.bots import make_bot
from kutnahora.clients.sdk import Client
from kutnahora.clients.tournament.runner import LocalServer
from kutnahora.hosting.gateway import SeatGateway


async def one_game(upstream: str, folder: Path, seed: int, through: bool) -> float:
    """Decisions per second of one game, played straight or through one gateway per seat."""
    async with await Client.connect(upstream) as admin:
        created = await admin.create_game(2, seed=seed)
        game_id = created.game.game_id
        seats = [await admin.join_game(game_id, seat, f"s{seat}") for seat in range(2)]
        gateways = [SeatGateway(folder / f"g{seed}-{s}.sock", upstream, [game_id]) for s in range(2)]
        if through:
            for gateway in gateways:
                await gateway.start()
        try:
            addresses = [f"unix:{g.socket}" if through else upstream for g in gateways]
            clients = [await Client.connect(address) for address in addresses]
            started = time.perf_counter()
            await asyncio.gather(
                *(c.play(make_bot("random", seed + i), seats[i]) for i, c in enumerate(clients))
            )
            elapsed = time.perf_counter() - started
            for client in clients:
                await client.close()
        finally:
            if through:
                for gateway in gateways:
                    await gateway.stop()
        summary = await admin.get_game(game_id)
    return summary.version / elapsed


async def measure(games: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory(prefix="kutnahora-gateway-cost-") as work:
        folder = Path(work)
        socket = folder / "server.sock"
        server = LocalServer(["--unix-socket", str(socket)])
        await server.start()
        rates: dict[str, list[float]] = {"straight": [], "gateway": []}
        try:
            for index in range(games * 2):
                through = index % 2 == 1
                rate = await one_game(f"unix:{socket}", folder, 100 + index // 2, through)
                rates["gateway" if through else "straight"].append(rate)
        finally:
            await server.stop()
    return rates


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.clients.tournament.gateway_cost",
        description="Measure the seat gateway's cost: decisions per second through it and straight to the "
        "server, interleaved in one run.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--games", type=int, default=10, help="games each way (the same seeds both ways)")
    args = parser.parse_args(argv)
    rates = asyncio.run(measure(args.games))
    for mode in ("straight", "gateway"):
        print(
            f"{mode:8}: median {statistics.median(rates[mode]):7.1f} decisions/s ({len(rates[mode])} games)"
        )
    ratio = statistics.median(rates["gateway"]) / statistics.median(rates["straight"])
    print(f"gateway / straight: {ratio:.2f}; load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
