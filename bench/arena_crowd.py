"""``python -m kutnahora.bench.arena_crowd``: a crowd of bot accounts against two arena replicas, for real.

Started here: a fresh schema on PostgreSQL, ``--game-servers`` ``kutnahora-server`` processes, and two
``kutnahora-arena`` replicas on that schema placing games on all of them. ``--bots`` accounts are
registered, then ``--processes`` worker processes each hold their share of the bots as asyncio tasks.
Each bot is its own account with its own connections: its ``StreamEvents`` stream open beside its
``Seek`` on one replica (bots alternate between the two), in one pool (pools alternate too); when matched
it plays its seat on the game server named (``--play random``: the random bot, every decision over
``PlayService.Play``, taking ``--think`` milliseconds over each; ``--play resign``: it resigns at once
and the server's clock plays the seat out) and seeks again. A bot whose replica stops answering moves
to the other.

At ``--kill-at`` of the run the replica holding the matchmaker lock is killed (SIGKILL); the other takes
the lock and carries every bot. At the end: matches per second, time to match (from opening a Seek to its
SeekMatched, measured by the bots) p50/p99 per pool, refusals by reason, bot crashes (a bot task that
died of an exception; should be 0), double bookings (checked from the store: an account in two games
of one pool whose times overlap, or twice in one game; should be 0), the store's games by kind (those
handed to the bots; those placed from the last Seeks of bots still seeking when the run ended, which no
bot plays; and those no Seek handed over: should be 0, see :func:`games_by_kind`), and the ``GetGame``
calls the game servers answered (the arena following its games; ``--poll`` sets the replicas' own).
Progress is printed every ``--progress`` seconds; the load average is printed at the start and the end.

    python -m kutnahora.bench.arena_crowd --bots 100 --seconds 180
    python -m kutnahora.bench.arena_crowd --bots 300 --processes 6 --seconds 240
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kutnahora.bench.processes import start_serving, stop_process

DEFAULT_DB = os.environ.get("KUTNAHORA_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
LISTENING = r"listening on grpc://(\S+ \(metrics \S+),"
"""The line a game server or an arena prints once serving: its address and its metrics URL."""


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def load() -> str:
    """The load averages over 1, 5 and 15 minutes."""
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


# --- one worker process: many bots ---------------------------------------------------------------------


async def run_bots(spec: dict[str, Any]) -> dict[str, Any]:
    """Play the bots of ``spec`` until its deadline; what they measured."""
    from kutnahora.clients.arena_client import ArenaClient
    from kutnahora.clients.bots import make_bot
    from kutnahora.clients.sdk import Bot, Client, ClientError
    from kutnahora.v1.game_pb2 import Observation

    think = float(spec.get("think_ms", 0)) / 1000

    class Thinking(Bot):
        """The random bot, taking ``think`` seconds over each decision (without holding the loop)."""

        def __init__(self) -> None:
            self.inner = make_bot("random", None)

        async def choose(self, observation: Observation) -> Any:
            await asyncio.sleep(think)
            return self.inner.choose(observation)

    arenas: list[str] = spec["arenas"]
    stop_at = time.time() + float(spec["seconds"])
    waits: dict[str, list[float]] = {}
    refusals: Counter[str] = Counter()
    crashes: list[str] = []
    games: set[str] = set()
    told: set[str] = set()  # games the bots' event streams announced (``started``)
    last_seeks: dict[str, float] = {}  # bot -> when it opened the Seek it was still waiting on at the end
    played = 0
    cut = [0]  # games resigned because the run ended

    async def bot(name: str, key: str, pool: str, first: int) -> None:
        nonlocal played
        which = first
        servers: dict[str, Client] = {}
        arena: ArenaClient | None = None
        events: asyncio.Task[None] | None = None

        async def follow(client: ArenaClient) -> None:
            with contextlib.suppress(ClientError):
                async for message in client.events(key):
                    if message.HasField("started"):
                        told.add(message.started.game_id)

        try:
            while time.time() < stop_at:
                if arena is None:
                    arena = ArenaClient(arenas[which % len(arenas)])
                    events = asyncio.ensure_future(follow(arena))
                opened = time.monotonic()
                opened_at = time.time()
                try:
                    seat = await asyncio.wait_for(arena.seek(key, pool), max(0.1, stop_at - time.time()))
                except TimeoutError:
                    last_seeks[name] = opened_at  # still seeking as the run ends
                    return
                except ClientError as error:
                    refusals[error.reason or (error.code.name if error.code else "UNREACHABLE")] += 1
                    if error.reason is None:  # the replica is gone: move to the other
                        if events is not None:
                            events.cancel()
                        await arena.close()
                        arena, which = None, which + 1
                    await asyncio.sleep(0.5 + random.random())
                    continue
                waits.setdefault(pool, []).append(time.monotonic() - opened)
                games.add(seat.seat.game_id)
                server = servers.get(seat.server_address)
                if server is None:
                    server = servers[seat.server_address] = Client(seat.server_address)
                try:
                    if spec["play"] == "resign":
                        await server.resign(seat.seat)
                    else:
                        # A game still on at the end (a seat may be left to the clock) is resigned.
                        limit = max(5.0, stop_at - time.time() + 5.0)
                        player = Thinking() if think else make_bot("random", None)
                        await asyncio.wait_for(server.play(player, seat.seat), limit)
                    played += 1
                except TimeoutError:
                    cut[0] += 1
                    with contextlib.suppress(ClientError):
                        await server.resign(seat.seat)
                except ClientError as error:
                    why = error.reason or (error.code.name if error.code else "UNREACHABLE")
                    refusals[f"play: {why}"] += 1
        except Exception as error:  # a crash: counted, and reported by name
            crashes.append(f"{name}: {type(error).__name__}: {error}")
        finally:
            if events is not None:
                events.cancel()
            if arena is not None:
                with contextlib.suppress(Exception):
                    await arena.close()
            for client in servers.values():
                with contextlib.suppress(Exception):
                    await client.close()

    await asyncio.gather(
        *(bot(b["name"], b["key"], b["pool"], b["arena"]) for b in spec["bots"]), return_exceptions=True
    )
    return {
        "waits": waits,
        "refusals": dict(refusals),
        "crashes": crashes,
        "games": sorted(games),
        "told": sorted(told),
        "last_seeks": last_seeks,
        "seats_played": played,
        "seats_cut": cut[0],
    }


def worker(spec_file: str) -> int:
    spec = json.loads(Path(spec_file).read_text())
    report = asyncio.run(run_bots(spec))
    Path(spec["report"]).write_text(json.dumps(report))
    return 0


# --- the conductor ------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """Processor seconds (user and system) a running process has used so far; 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metrics(url: str) -> str:
    try:
        return str(urllib.request.urlopen(url, timeout=5).read().decode())
    except OSError:
        return ""


def counted(text: str, name: str, **labels: str) -> float:
    """A counter's value in a Prometheus text page, summed over its samples that carry ``labels``."""
    pairs = [f'{key}="{value}"' for key, value in labels.items()]
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") and all(pair in line.split("}")[0] for pair in pairs):
            total += float(line.rsplit(" ", 1)[1])
    return total


def double_bookings(db: str) -> tuple[int, int]:
    """(games in the store, double bookings): an account twice in one game, or in two games of one pool
    whose times overlap (a game still active counts as lasting until now)."""
    import psycopg

    with psycopg.connect(db) as conn:
        rows = conn.execute(
            "SELECT s.account_id, g.pool, g.game_id, g.created_at, g.ended_at FROM arena_seats s "
            "JOIN arena_games g USING (game_id) ORDER BY s.account_id, g.pool, g.created_at"
        ).fetchall()
        total = conn.execute("SELECT count(*) FROM arena_games").fetchone()
    doubles = 0
    seen: set[tuple[int, str]] = set()
    last: dict[tuple[int, str], float] = {}
    for account, pool, game_id, created, ended in rows:
        if (account, game_id) in seen:
            doubles += 1
        seen.add((account, game_id))
        if last.get((account, pool), float("-inf")) > created:
            doubles += 1
        last[(account, pool)] = float(ended) if ended is not None else float("inf")
    return int(total[0]) if total else 0, doubles


def games_by_kind(db: str, seen: set[str], told: set[str], last_seeks: dict[str, float]) -> Counter[str]:
    """The store's games by kind. ``seen``: handed to a bot by its Seek. ``ending``: placed from the last
    ticket of a bot that was still seeking when the run ended (created after that bot opened its last
    Seek, which it closed unanswered at the end): the bot never hears of the game, and the game server's
    clock plays its seat. ``announced``: a bot's event stream told of the game but no Seek handed it over;
    ``lost``: never heard of by any of its bots. The last two should be 0. ``last_seeks``: for each bot
    still seeking at the end, when it opened that Seek (wall clock)."""
    import psycopg

    with psycopg.connect(db) as conn:
        rows = conn.execute(
            "SELECT g.game_id, g.created_at, a.name FROM arena_games g JOIN arena_seats s USING (game_id) "
            "JOIN arena_accounts a USING (account_id)"
        ).fetchall()
    created: dict[str, float] = {}
    ending: set[str] = set()
    for game_id, at, name in rows:
        created[str(game_id)] = float(at)
        if float(at) >= last_seeks.get(str(name), float("inf")):
            ending.add(str(game_id))
    kinds: Counter[str] = Counter()
    for game_id in created:
        if game_id in seen:
            kinds["seen"] += 1
        elif game_id in ending:
            kinds["ending"] += 1
        elif game_id in told:
            kinds["announced"] += 1
        else:
            kinds["lost"] += 1
    return kinds


def conduct(args: argparse.Namespace) -> int:
    import psycopg

    from kutnahora.clients.arena_client import ArenaClient

    pools = [p.strip() for p in args.pools.split(",") if p.strip()]
    schema = f"kh_crowd_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.db, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in args.db else "?"
    db = f"{args.db}{separator}options=-csearch_path%3D{schema}"
    folder = Path(tempfile.mkdtemp(prefix="kutnahora-arena-crowd-"))
    processes: list[subprocess.Popen[bytes]] = []
    print(f"load average at the start: {load()} ({os.cpu_count()} processors)", flush=True)
    try:
        servers: list[str] = []
        server_urls: list[str] = []
        for n in range(args.game_servers):
            process, address = start_serving(
                [
                    *(sys.executable, "-m", "kutnahora.server.main", "--port", "0", "--db", ":memory:"),
                    *("--metrics-port", "0", "--log-level", "warning", "--max-games", "100000"),
                ],
                folder / f"server{n}.log",
                LISTENING,
                wait=60,
            )
            processes.append(process)
            address, _, url = address.partition(" (metrics ")
            servers.append(address)
            server_urls.append(url)
        replicas: list[tuple[subprocess.Popen[bytes], str, str]] = []
        for n in range(2):
            process, found = start_serving(
                [
                    *(sys.executable, "-m", "kutnahora.arena.main", "--port", "0", "--metrics-port", "0"),
                    *("--db", db, "--server", ",".join(servers), "--pools", ",".join(pools)),
                    *("--max-wait", str(args.max_wait), "--log-level", args.arena_log_level),
                    *(("--poll", str(args.poll)) if args.poll is not None else ()),
                ],
                folder / f"arena{n}.log",
                LISTENING,
                wait=60,
            )
            processes.append(process)
            address, _, url = found.partition(" (metrics ")
            replicas.append((process, address, url))
        print(
            f"{args.game_servers} game servers, 2 arena replicas on PostgreSQL schema {schema}; "
            f"registering {args.bots} bots…",
            flush=True,
        )

        async def register() -> list[str]:
            async with await ArenaClient.connect(replicas[0][1]) as client:
                return [await client.register_bot(f"crowd-{n}") for n in range(args.bots)]

        keys = asyncio.run(register())
        # Replicas alternate bot by bot, pools pair by pair, and each process takes runs of four bots
        # (so that each holds bots of every replica and pool).
        bots = [
            {"name": f"crowd-{n}", "key": key, "pool": pools[(n // 2) % len(pools)], "arena": n % 2}
            for n, key in enumerate(keys)
        ]
        workers = []
        for w in range(args.processes):
            spec = {
                "arenas": [r[1] for r in replicas],
                "seconds": args.seconds,
                "play": args.play,
                "think_ms": args.think,
                "bots": [b for n, b in enumerate(bots) if (n // 4) % args.processes == w],
                "report": str(folder / f"report{w}.json"),
            }
            (folder / f"spec{w}.json").write_text(json.dumps(spec))
            workers.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "kutnahora.bench.arena_crowd",
                        "--worker",
                        str(folder / f"spec{w}.json"),
                    ],
                    stdout=(folder / f"worker{w}.log").open("wb"),
                    stderr=subprocess.STDOUT,
                )
            )
        started = time.monotonic()
        print(
            f"{args.bots} bots in {args.processes} processes, pools {','.join(pools)}, playing "
            f"({args.play}) for {args.seconds:g} s; the matchmaker's replica is killed at "
            f"{args.kill_at * args.seconds:.0f} s",
            flush=True,
        )
        killed_at: float | None = None
        killed_cpu = 0.0
        worker_cpu: dict[int, float] = {}
        killed: tuple[subprocess.Popen[bytes], str, str] | None = None
        next_report = args.progress
        while any(w.poll() is None for w in workers):
            time.sleep(0.5)
            for process in workers:
                worker_cpu[process.pid] = cpu_seconds(process.pid) or worker_cpu.get(process.pid, 0.0)
            elapsed = time.monotonic() - started
            if killed is None and elapsed >= args.kill_at * args.seconds:
                leaders = [r for r in replicas if "kutnahora_arena_matchmaker_leader 1.0" in metrics(r[2])]
                if leaders:
                    killed = leaders[0]
                    killed_cpu = cpu_seconds(killed[0].pid)
                    killed[0].send_signal(signal.SIGKILL)
                    killed[0].wait()
                    killed_at = elapsed
                    print(f"{elapsed:6.0f} s: killed the replica holding the matchmaker lock", flush=True)
            if elapsed >= next_report:
                next_report += args.progress
                total, _ = double_bookings(db)
                print(f"{elapsed:6.0f} s: {total} games placed, load {load()}", flush=True)
            if elapsed > args.seconds + 120:
                for late in workers:
                    late.kill()
        took = time.monotonic() - started
        reports = []
        for w in range(args.processes):
            path = folder / f"report{w}.json"
            if path.exists():
                reports.append(json.loads(path.read_text()))
            else:
                print(f"worker {w} left no report: {(folder / f'worker{w}.log').read_text()[-1500:]}")
        waits: dict[str, list[float]] = {}
        refusals: Counter[str] = Counter()
        crashes: list[str] = []
        games: set[str] = set()
        told: set[str] = set()
        last_seeks: dict[str, float] = {}
        seats_cut = 0
        for report in reports:
            seats_cut += report["seats_cut"]
            told.update(report["told"])
            last_seeks.update(report["last_seeks"])
            for pool, values in report["waits"].items():
                waits.setdefault(pool, []).extend(values)
            refusals.update(report["refusals"])
            crashes.extend(report["crashes"])
            games.update(report["games"])
        survivor = next(r for r in replicas if r is not killed)
        survivor_metrics = metrics(survivor[2])
        server_cpu = [cpu_seconds(process.pid) for process in processes[: args.game_servers]]
        polls = sum(
            counted(metrics(url), "kutnahora_rpc_requests_total", rpc="GetGame", code="OK")
            for url in server_urls
        )
        survivor_cpu = cpu_seconds(survivor[0].pid)
        total, doubles = double_bookings(db)
        kinds = games_by_kind(db, games, told, last_seeks)
        print(f"load average at the end: {load()}")
        print(
            f"results: {args.bots} bots, {args.processes} processes, {args.game_servers} game servers, "
            "2 arena replicas "
            + (f"(one killed at {killed_at:.0f} s), " if killed_at is not None else "(none killed), ")
            + f"{args.seconds:g} s of play "
            f"({took:.0f} s in all)"
        )
        print(
            f"  matches: {len(games)} seen by the bots, {total} in the store; "
            f"{len(games) / args.seconds:.2f} matches/s"
        )
        print(
            f"  the store's games by kind: {kinds['seen']} seen by the bots, {kinds['ending']} placed from "
            "the last Seeks of bots still seeking as the run ended (nobody plays their seats), "
            f"{kinds['announced']} announced on an event stream but not handed over by a Seek, "
            f"{kinds['lost']} never heard of by any of their bots"
        )
        for pool in sorted(waits):
            values = waits[pool]
            print(
                f"  pool {pool}: time to match p50 {percentile(values, 0.5):.2f} s, p99 "
                f"{percentile(values, 0.99):.2f} s, max {max(values):.2f} s ({len(values)} seeks matched; "
                f"mean {statistics.fmean(values):.2f} s)"
            )
        print(f"  refusals by reason: {dict(sorted(refusals.items())) or 'none'}")
        print(f"  seats resigned because the run ended: {seats_cut}")
        arena_refusals = [
            line
            for line in survivor_metrics.splitlines()
            if line.startswith("kutnahora_arena_refusals_total{")
        ]
        print(f"  refusals counted by the surviving replica: {arena_refusals or 'none'}")
        print(f"  bot crashes: {len(crashes)}" + "".join(f"\n    {c}" for c in crashes[:10]))
        print(f"  double bookings (from the store): {doubles}")
        print(
            f"  GetGame calls answered by the game servers: {polls:.0f} "
            f"({polls / max(total, 1):.1f} a game placed, {polls / took:.1f} a second)"
        )
        print(
            "  processor seconds: game servers "
            + " + ".join(f"{c:.0f}" for c in server_cpu)
            + f", arena replicas {killed_cpu:.0f} (killed, until then) + {survivor_cpu:.0f}, "
            f"bot processes {sum(worker_cpu.values()):.0f}"
        )
        lost = kinds["lost"] + kinds["announced"]
        return 0 if not crashes and not doubles and not lost else 1
    finally:
        for process in processes:
            if process.poll() is None:
                stop_process(process, grace=15)
        with contextlib.suppress(Exception), psycopg.connect(args.db, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
        if args.keep:
            print(f"logs kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.arena_crowd",
        description="A crowd of bot accounts, as real gRPC clients in several processes, against two arena "
        "replicas on PostgreSQL and several game servers, with the matchmaker's replica killed midway.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--bots", type=int, default=100, help="bot accounts, each its own gRPC client")
    parser.add_argument("--processes", type=int, default=4, help="worker processes holding the bots")
    parser.add_argument("--seconds", type=float, default=180.0, help="seconds the bots play")
    parser.add_argument("--pools", default="2,4", help="pools, comma-separated (bots alternate between them)")
    parser.add_argument("--game-servers", type=int, default=2, help="kutnahora-server processes")
    parser.add_argument(
        "--play", choices=("random", "resign"), default="random", help="how a bot plays its seat"
    )
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="milliseconds a bot playing random takes over each decision (longer games, as real bots play)",
    )
    parser.add_argument("--max-wait", type=float, default=8.0, help="the arenas' bound on waiting (seconds)")
    parser.add_argument(
        "--poll",
        type=float,
        help="the arenas' --poll: seconds between questions about a game none of whose bots seeks again "
        "(default: the arena's own)",
    )
    parser.add_argument(
        "--kill-at",
        type=float,
        default=0.5,
        help="fraction of the run at which the matchmaker's replica is killed (above 1: never)",
    )
    parser.add_argument("--progress", type=float, default=15.0, help="seconds between progress lines")
    parser.add_argument(
        "--db", default=DEFAULT_DB, help="PostgreSQL database (a fresh schema is made and dropped)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the processes' logs")
    parser.add_argument("--arena-log-level", default="warning", help="the arena replicas' --log-level")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker)
    if args.bots < 2 or args.processes < 1 or args.seconds <= 0 or args.game_servers < 1:
        parser.error(
            "--bots must be at least 2, --processes and --game-servers at least 1, --seconds positive"
        )
    return conduct(args)


if __name__ == "__main__":
    raise SystemExit(main())
