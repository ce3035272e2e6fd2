"""What a flood of reads from seats on the server's own host costs an unrelated game, with and without the
per-caller read limit.

A hosted bot reaches the server through the tournament runner's seat gateway, over the server's Unix
socket (``kutnahora-tournament --socket``), where every caller has the same address; each of its calls
carries its seat token, so the server counts its reads as its seat's (``seat:GAME/SEAT``), and the reads
that leave the token out as its game's anonymous reads (``anonymous:GAME``). This benchmark starts a game
server (memory store, no clock, a Unix socket) and, for each setting, plays ``--games`` whole games of two
greedy bots over TCP (``kutnahora-bot greedy --create --fill``, one process each game) while
``--flooders`` processes each seat a game of their own and call ``GetGame`` and ``GetObservation`` of it
over the socket from ``--tasks`` concurrent tasks without pause, half with the seat token and half
without. It prints, per setting, the greedy games' median seconds, the reads answered and refused
per second, and the server's CPU seconds:

    python -m kutnahora.bench.read_flood --games 3 --flooders 4 --tasks 15

The settings: no flood; a flood with ``--caller-reads 0`` (no read limit, as before the limit existed);
a flood under the defaults (``--caller-reads 50 --caller-read-burst 100``). ``--quota-store`` runs the
server with a shared store (``redis://127.0.0.1:6379/0``) to show what counting in Redis costs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import grpc
import grpc.aio

from kutnahora.bench.processes import start_serving, stop_process
from kutnahora.clients.help_format import DefaultsHelpFormatter
from kutnahora.v1 import (
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    play_service_pb2,
    play_service_pb2_grpc,
)


def cpu_seconds(pid: int) -> float:
    """The user and system CPU seconds process ``pid`` has used (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def flood(target: str, tasks: int, seconds: float) -> dict[str, int]:
    """Seat a game, then read it from ``tasks`` tasks for ``seconds``: the reads answered and refused."""
    channel = grpc.aio.insecure_channel(target)
    games = game_service_pb2_grpc.GameServiceStub(channel)  # type: ignore[no-untyped-call]
    play = play_service_pb2_grpc.PlayServiceStub(channel)  # type: ignore[no-untyped-call]
    created = await games.CreateGame(
        game_service_pb2.CreateGameRequest(
            options=game_pb2.GameOptions(players=2), seat_names=["flood-0", "flood-1"]
        )
    )
    game_id, token = created.game.game_id, created.seat_tokens[0]
    counts = {"answered": 0, "refused": 0}
    deadline = time.monotonic() + seconds

    async def reader(n: int) -> None:
        metadata = (("authorization", f"Bearer {token}"),) if n % 2 == 0 else None
        seat = {"seat": 0} if metadata else {}
        while time.monotonic() < deadline:
            try:
                if n % 4 < 2:
                    await games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id), metadata=metadata)
                else:
                    request = play_service_pb2.GetObservationRequest(game_id=game_id, **seat)
                    await play.GetObservation(request, metadata=metadata)
                counts["answered"] += 1
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    raise
                counts["refused"] += 1  # a hostile bot asks again at once, whatever RetryInfo says

    await asyncio.gather(*(reader(n) for n in range(tasks)))
    await channel.close(None)
    return counts


def greedy_game(target: str) -> float:
    """Seconds one whole game of two greedy bots takes, in a process of its own."""
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "kutnahora.clients.bots.cli",
            "greedy",
            "--server",
            target,
            "--create",
            "--fill",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def measure(
    args: argparse.Namespace, folder: Path, name: str, flooding: bool, flags: list[str]
) -> dict[str, object]:
    """Play the greedy games under one setting, flooding or not; what was measured."""
    command = [
        sys.executable,
        "-m",
        "kutnahora.server.main",
        "--port",
        "0",
        "--db",
        ":memory:",
        "--metrics-port",
        "off",
        "--clock",
        "off",
        "--quota-store",
        args.quota_store,
        "--unix-socket",
        str(folder / "server.sock"),
        *flags,
    ]
    slug = "".join(c if c.isalnum() else "-" for c in name)
    os.environ["PYTHONUNBUFFERED"] = "1"  # the server's first line reaches its log at once
    server, target = start_serving(command, folder / f"{slug}.log", wait=60.0)
    flooders: list[subprocess.Popen[str]] = []
    try:
        greedy_game(target)  # warm: imports and the server's first game
        cpu_before = cpu_seconds(server.pid)
        seconds = args.flood_seconds
        if flooding:
            flooders = [
                subprocess.Popen(
                    [
                        *(sys.executable, "-m", "kutnahora.bench.read_flood"),
                        *("--flood", f"unix:{folder / 'server.sock'}"),
                        *("--tasks", str(args.tasks), "--flood-seconds", str(seconds)),
                    ],
                    stdout=subprocess.PIPE,
                    text=True,
                )
                for _ in range(args.flooders)
            ]
            time.sleep(1.0)  # the flood is under way
        started = time.perf_counter()
        times = [greedy_game(target) for _ in range(args.games)]
        wall = time.perf_counter() - started
        cpu = cpu_seconds(server.pid) - cpu_before
        answered = refused = 0
        for process in flooders:
            out, _ = process.communicate(timeout=seconds + 60)
            counts = json.loads(out.strip().splitlines()[-1])
            answered += counts["answered"]
            refused += counts["refused"]
        return {
            "setting": name,
            "game_seconds_median": round(statistics.median(times), 2),
            "game_seconds": [round(t, 2) for t in times],
            "reads_answered_per_second": round(answered / seconds) if flooding else 0,
            "reads_refused_per_second": round(refused / seconds) if flooding else 0,
            "server_cpu_seconds": round(cpu, 2),
            "wall_seconds": round(wall, 1),
        }
    finally:
        for process in flooders:
            if process.poll() is None:
                process.kill()
        stop_process(server)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.read_flood",
        description="What a flood of reads from seats on the server's own host costs an unrelated game.",
        formatter_class=DefaultsHelpFormatter,
    )
    parser.add_argument("--games", type=int, default=3, help="greedy games played per setting")
    parser.add_argument("--flooders", type=int, default=4, help="flooding processes, a seated game each")
    parser.add_argument("--tasks", type=int, default=15, help="concurrent reads of each flooder")
    parser.add_argument(
        "--flood-seconds",
        type=float,
        default=25.0,
        help="how long each flooder reads (longer than the games)",
    )
    parser.add_argument("--quota-store", default="memory", help="the server's --quota-store")
    parser.add_argument("--flood", metavar="TARGET", help=argparse.SUPPRESS)  # a flooder process
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Measure each setting and print one JSON line for each."""
    args = build_parser().parse_args(argv)
    if args.flood:
        print(json.dumps(asyncio.run(flood(args.flood, args.tasks, args.flood_seconds))))
        return 0
    settings = [
        ("no flood", False, []),
        ("flood, --caller-reads 0", True, ["--caller-reads", "0"]),
        ("flood, defaults", True, []),
    ]
    with tempfile.TemporaryDirectory(prefix="read-flood-") as folder:
        for name, flooding, flags in settings:
            print(json.dumps(measure(args, Path(folder), name, flooding, flags)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
