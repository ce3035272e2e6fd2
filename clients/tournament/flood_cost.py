"""What a flooding hosted bot costs an unrelated tournament on the same server.

One game server (its defaults, a Unix socket for the hosted bots' gateways) and a second tournament
of ``--floods`` games at once, each with a hosted submission, walled in, which floods the server in
every odd period of the wall clock (``--period`` seconds) and rests in the even ones: from each of 4
connections to its gateway, 15 concurrent calls reading its own game (``GetGame`` and ``GetObservation``
in turn, as fast as they are answered), and from 4 more, 15 Play streams of its own seat each, opened
again whenever one ends; at the end it plays its seat. An innocent tournament
(``kutnahora-tournament --server ADDR --bots greedy,random``, a process of its own) is timed once in each
period, so that quiet and flooded runs alternate closely and share the machine's other load::

    python -m kutnahora.clients.tournament.flood_cost --rounds 5 --games 8

It prints each period's time, the medians and their ratio, and what the flooding submission cost (the
``hosting`` part of its results file: calls forwarded and refused, the runner's CPU). Needs root and
bubblewrap, as walled hosted bots do.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

FLOODER = '''"""Floods its own game through its gateway, then plays its seat."""
import asyncio, os, sys, time
import grpc
from kutnahora.v1 import game_service_pb2, play_service_pb2

SECONDS, PERIOD = (float(x) for x in open("seconds.txt").read().split())
game_id, seat = os.environ["KUTNAHORA_GAME_ID"], int(os.environ["KUTNAHORA_SEAT"])
token = (("authorization", "Bearer " + os.environ["KUTNAHORA_TOKEN"]),)
address = os.environ["KUTNAHORA_SERVER"]

def flooding():
    """Whether this is a flooding phase: odd periods of the wall clock (the measurer reads it too)."""
    return int(time.time() / PERIOD) % 2 == 1

async def flood():
    until = time.monotonic() + SECONDS
    counts = {"answered": 0, "refused": 0, "streams": 0}
    get_game = game_service_pb2.GetGameRequest(game_id=game_id).SerializeToString()
    observe = play_service_pb2.GetObservationRequest(game_id=game_id, seat=seat).SerializeToString()
    start = play_service_pb2.PlayRequest(
        start=play_service_pb2.PlayStart(game_id=game_id, seat=seat)).SerializeToString()

    async def reads(channel, index):
        call = channel.unary_unary(
            "/kutnahora.v1.GameService/GetGame" if index % 2 else "/kutnahora.v1.PlayService/GetObservation")
        body = get_game if index % 2 else observe
        while time.monotonic() < until:
            if not flooding():
                await asyncio.sleep(0.05)
                continue
            try:
                await call(body, metadata=token)
                counts["answered"] += 1
            except grpc.aio.AioRpcError:
                counts["refused"] += 1

    async def streams(channel):
        while time.monotonic() < until:
            if not flooding():
                await asyncio.sleep(0.05)
                continue
            play = channel.stream_stream("/kutnahora.v1.PlayService/Play")(metadata=token)
            counts["streams"] += 1
            try:
                await play.write(start)
                async for _ in play:
                    if not flooding():
                        play.cancel()
                        break
            except grpc.aio.AioRpcError:
                pass
            except asyncio.CancelledError:
                play.cancel()
                raise

    channels = [grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
                for _ in range(8)]
    tasks = [asyncio.create_task(reads(c, i)) for c in channels[:4] for i in range(15)]
    holders = [asyncio.create_task(streams(c)) for c in channels[4:] for _ in range(15)]
    await asyncio.gather(*tasks)
    for holder in holders:
        holder.cancel()
    await asyncio.gather(*holders, return_exceptions=True)
    print("flood", counts, flush=True)

asyncio.run(flood())
os.execvp(sys.executable, [sys.executable, "-m", "kutnahora.clients.bots.cli", "greedy"])
'''


def _submission(folder: Path, seconds: float, period: float) -> Path:
    bot = folder / "flooder"
    bot.mkdir(parents=True, exist_ok=True)
    (bot / "flooder.py").write_text(FLOODER)
    (bot / "seconds.txt").write_text(f"{seconds:g} {period:g}")
    (bot / "kutnahora-bot.toml").write_text(
        'name = "flooder"\nlanguage = "python"\nrun = "python3 flooder.py"\n'
    )
    return bot


def _tournament(address: str, games: int, seed: int, extra: Sequence[str]) -> list[str]:
    return [
        *(sys.executable, "-m", "kutnahora.clients.tournament.cli", "--server", address),
        *("--games", str(games), "--players", "2", "--seed", str(seed), "--no-replays", "--quiet"),
        *extra,
    ]


def _innocent(address: str, games: int, seed: int, out: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        _tournament(
            address, games, seed, ["--bots", "greedy,random", "--concurrency", "4", "--out", f"{out}"]
        ),
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    elapsed = time.perf_counter() - started
    played = json.loads(out.read_text())["games"]
    if len(played) != games or any(g.get("failures") or g.get("scores") is None for g in played):
        raise SystemExit(f"the innocent tournament did not play all its {games} games cleanly: {out}")
    return elapsed


def _phase(period: float) -> tuple[int, float]:
    """The wall clock's phase (odd: the flooder floods) and the seconds until the next one."""
    now = time.time()
    return int(now / period), period - now % period


def measure(
    rounds: int, games: int, period: float, floods: int, walls: Sequence[str] = ()
) -> dict[str, object]:
    """Start the server and one flooding tournament whose bot floods in the odd periods of the wall clock
    and rests in the even ones, for ``rounds`` pairs of periods; time the innocent tournament once in each
    period, started at its beginning (a run that spills into the next period is not counted)."""
    with tempfile.TemporaryDirectory(prefix="kutnahora-flood-cost-") as name:
        work = Path(name)
        os.chmod(work, 0o755)
        socket = work / "server.sock"
        server = subprocess.Popen(
            [
                *(sys.executable, "-m", "kutnahora.server.main", "--port", "0", "--db", ":memory:"),
                *("--metrics-port", "off", "--log-level", "warning", "--unix-socket", str(socket)),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert server.stdout is not None
        found = re.search(r"grpc://(\S+)", server.stdout.readline())
        if found is None:
            raise SystemExit("the server did not start")
        address = found.group(1)
        quiet: list[float] = []
        flooded: list[float] = []
        spilled = 0
        hosting: dict[str, object] = {}
        out = work / "flood.json"
        try:
            _innocent(address, games, 1, work / "warm.json")  # imports and caches warmed once
            seconds = (2 * rounds + 3) * period
            submissions = work / "submissions"
            _submission(submissions, seconds, period)
            flood = subprocess.Popen(
                _tournament(
                    address,
                    floods,
                    100,
                    [
                        *("--submissions", str(submissions), "--bots", "random"),
                        *("--server-socket", str(socket), "--out", str(out)),
                        # the flooder makes no decision while it floods: neither it nor the clock may stop it
                        *("--move-timeout", str(seconds + 60), "--game-timeout", str(seconds + 120)),
                        *("--decision-time", str(seconds + 60), "--concurrency", str(floods)),
                        *walls,
                    ],
                ),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            try:
                time.sleep(_phase(period)[1] + period)  # the submission walled in and running
                for index in range(2 * rounds):
                    phase, left = _phase(period)
                    time.sleep(left + 0.5)  # the next period, its flood (or rest) under way
                    phase += 1
                    elapsed = _innocent(address, games, 10 + index, work / f"innocent-{index}.json")
                    if _phase(period)[0] != phase:
                        spilled += 1
                        print(f"period {index + 1}: {elapsed:.2f} s spilled into the next period", flush=True)
                        continue
                    (flooded if phase % 2 == 1 else quiet).append(elapsed)
                    kind = "beside the flood" if phase % 2 == 1 else "quiet"
                    print(f"period {index + 1}: {kind} {elapsed:.2f} s", flush=True)
                flood.wait(seconds + 180)  # the flood ends, the bot plays its game, the runner saves
            finally:
                if flood.poll() is None:
                    os.killpg(flood.pid, signal.SIGINT)
                    flood.wait(60)
            if out.exists():
                hosting = json.loads(out.read_text()).get("hosting", {}).get("flooder", {})
        finally:
            server.terminate()
            server.wait(10)
    return {"quiet": quiet, "flooded": flooded, "spilled": spilled, "hosting": hosting}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.clients.tournament.flood_cost",
        description="Time an innocent tournament on a quiet server and beside a hosted bot flooding the same "
        "server, alternately.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--rounds", type=int, default=5, help="pairs of quiet and flooded periods")
    parser.add_argument("--games", type=int, default=8, help="games of the innocent tournament")
    parser.add_argument(
        "--floods",
        type=int,
        default=4,
        help="games of the flooding tournament at once, each with one flooder",
    )
    parser.add_argument(
        "--bot-cpu-weight",
        type=int,
        default=0,
        help="passed to the flooding tournament: its bots' CPU weight, in percent (0: not bounded)",
    )
    parser.add_argument(
        "--period", type=float, default=15.0, help="seconds of each flooding and each quiet period"
    )
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("needs root: hosted bots are walled in by a root runner", file=sys.stderr)
        return 2
    walls = ["--bot-cpu-weight", str(args.bot_cpu_weight)] if args.bot_cpu_weight else []
    result = measure(args.rounds, args.games, args.period, args.floods, walls)
    quiet, flooded = result["quiet"], result["flooded"]
    assert isinstance(quiet, list) and isinstance(flooded, list)
    q, f = statistics.median(quiet), statistics.median(flooded)
    print(f"median: quiet {q:.2f} s, beside the flood {f:.2f} s; flooded / quiet {f / q:.2f}")
    print("flooder cost:", json.dumps(result["hosting"], sort_keys=True))
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
