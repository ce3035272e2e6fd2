"""What the sandbox costs a hosted bot: start-up, time per game and per decision, against ``none``.

Both ways are measured in the same run, interleaved (walled, unwalled, walled, …) against one local
server reached over its Unix socket, so that the machine's load falls on both alike::

    python -m kutnahora.clients.tournament.sandbox_cost --games 6 --starts 20

It prints the median start of an empty command (``true``) and of the Python bot's imports, and the median
seconds per game and per decision of a hosted Python bot (greedy, through the SDK) playing greedy.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from kutnahora.clients.tournament.runner import BotSpec, LocalServer, Runner, RunnerConfig
from kutnahora.clients.tournament.schedule import schedule
from kutnahora.hosting.sandbox import Sandbox, bot_env
from kutnahora.hosting.submission import Submission

BOT = "python3 -m kutnahora.clients.bots.cli greedy"
IMPORTS = "python3 -c 'import kutnahora.clients.sdk'"


def start_times(sandbox: Sandbox, folder: Path, command: str, count: int) -> tuple[float, float]:
    """Median seconds to run ``command`` to its end, walled and unwalled (interleaved)."""
    walled: list[float] = []
    plain: list[float] = []
    env = bot_env()
    for _ in range(count):
        lease = sandbox.lease()
        try:
            argv = sandbox.command(folder, command, env, uid=lease.uid if lease else None, socket=None)
            started = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True)
            walled.append(time.perf_counter() - started)
        finally:
            if lease is not None:
                lease.release()
        started = time.perf_counter()
        subprocess.run(["/bin/sh", "-c", command], check=True, capture_output=True, cwd=folder)
        plain.append(time.perf_counter() - started)
    return statistics.median(walled), statistics.median(plain)


async def games(sandbox: Sandbox, folder: Path, count: int) -> dict[str, list[tuple[float, int]]]:
    """(seconds, decisions) of each game, walled and unwalled, one at a time, interleaved."""
    socket = folder.parent / "server.sock"
    server = LocalServer(["--unix-socket", str(socket)])
    address = await server.start()
    os.chmod(socket, 0o666)
    submission = Submission("hosted", "python", BOT, folder)
    bots = {"hosted": BotSpec("hosted", submission=submission), "greedy": BotSpec("greedy")}
    measured: dict[str, list[tuple[float, int]]] = {"bwrap": [], "none": []}
    try:
        for game in schedule(["hosted", "greedy"], 2, count * 2, 1):
            mode = "bwrap" if game.index % 2 == 0 else "none"
            config = RunnerConfig(
                bots=bots, players=2, poll=0.05, exit_grace=2.0, socket=socket, gateways=folder.parent / "gw"
            )
            config.sandbox = sandbox if mode == "bwrap" else None
            record = await Runner(config, address).play(game)
            if record.failures or record.decisions is None:
                raise SystemExit(f"game {game.index} ({mode}) failed: {record.failures or record.error}")
            measured[mode].append((record.seconds, record.decisions))
    finally:
        await server.stop()
    return measured


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.clients.tournament.sandbox_cost",
        description="Measure the sandbox's cost per game against --sandbox none, interleaved in one run.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--games", type=int, default=6, help="games each way")
    parser.add_argument("--starts", type=int, default=20, help="starts each way")
    args = parser.parse_args(argv)
    sandbox = Sandbox()
    sandbox.setup()
    with tempfile.TemporaryDirectory(prefix="kutnahora-cost-") as work:
        folder = Path(work) / "bot"
        folder.mkdir()
        os.chmod(work, 0o711)
        walled, plain = start_times(sandbox, folder, "true", args.starts)
        print(f"start of 'true':          bwrap {walled * 1000:7.1f} ms   none {plain * 1000:7.1f} ms")
        walled, plain = start_times(sandbox, folder, IMPORTS, max(3, args.starts // 4))
        print(f"start of the SDK imports: bwrap {walled * 1000:7.1f} ms   none {plain * 1000:7.1f} ms")
        try:
            measured = asyncio.run(games(sandbox, folder, args.games))
        finally:
            sandbox.close()
    for mode in ("bwrap", "none"):
        seconds = statistics.median(s for s, _ in measured[mode])
        per = statistics.median(s / max(1, d) for s, d in measured[mode])
        print(
            f"game, {mode:5}: median {seconds:6.2f} s a game, {per * 1000:6.2f} ms a decision "
            f"({len(measured[mode])} games)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
