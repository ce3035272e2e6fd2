"""``python -m kutnahora.bench.hosted_arena``: hosted bots playing rated arena games for real.

Started here: a fresh schema on PostgreSQL, two ``kutnahora-server`` processes, one ``kutnahora-arena`` on
that schema placing games on both (with a worker token), and ``--workers`` ``kutnahora-arena-worker``
processes, each walled in by bubblewrap (as root: leased user ids, control groups). ``--submissions``
accounts are registered and each submits a folder with ``SubmitBot``, the way an author does:

- Python bots that play with the project's own bots inside the sandbox: ``random``, ``greedy`` and the
  search bot (``mcts --iterations N``, ``--search-iterations``), in equal numbers;
- one of each starter kit that builds here (Go, C++, Java, Node.js: built in the sandbox by the workers
  from the kits' own manifests), unless ``--no-kits``;
- hostile ones, unless ``--no-hostile``: a reader that tries a canary file planted on the host (and
  ``/etc/shadow``) and prints what it read, a fork bomb, and one that tries the network.

Then the submissions play for ``--minutes``: the workers lease them, seek their games in the pools and
play their seats, one game per bot at a time. At ``--kill-at`` of the run one worker is killed (SIGKILL);
its bots' leases expire and the other workers take them over, resuming the games in progress.

At the end it prints, and writes to ``--json``: games finished per minute, time to match (the arena's
histogram), refusals by reason, ``games_finished``, ``escapes`` (0: the canary's secret in any seat log or
build log, or a process of a leased user id outside the sandbox), ``processes_left`` (0: processes of the
leased user ids, control groups of the workers, held user-id leases, after the workers have stopped), each
submission's rating by pool with its kind, and whether the ratings order the kinds as their strength says
(search above greedy above random, by the mean conservative rating of each kind in the pool with most
games).

    python -m kutnahora.bench.hosted_arena --submissions 40 --workers 3 --minutes 20 --json hosted.json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import secrets
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kutnahora.bench.processes import start_serving, stop_process

DEFAULT_DB = os.environ.get("KUTNAHORA_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
LISTENING = r"listening on grpc://(\S+ \(metrics \S+),"
"""The line a game server or an arena prints once serving: its address and its metrics URL."""
REPOSITORY = Path(__file__).resolve().parent.parent
KITS = {"go": "clients/go", "cpp": "clients/cpp", "java": "clients/java", "node": "clients/node"}
KIT_LEFT_OUT = ("build", "build-hosted", "target")  # an author's own build outputs are not submitted
UID_BASE = 61000
"""The first sandbox user id (the workers' default, as the tournament runner's)."""
STRENGTH = ("random", "greedy", "search")
"""The kinds whose ratings must come out in this order, weakest first."""


@dataclass(slots=True)
class Entry:
    """One account and what it submitted."""

    name: str
    kind: str  # random, greedy, search, kit-go, ..., hostile-reader, ...
    folder: Path
    key: str = ""
    version: int = 0
    refused: str = ""


def python_bot(folder: Path, name: str, bot: str) -> Path:
    """A submission that plays the project's ``bot`` inside the sandbox (the package is bound there)."""
    folder.mkdir(parents=True)
    (folder / "kutnahora-bot.toml").write_text(
        f'name = "{name}"\nlanguage = "python"\nrun = "python3 -m kutnahora.clients.bots.cli {bot}"\n'
    )
    return folder


def kit(folder: Path, name: str, kind: str, kits: Path) -> Path | None:
    """A copy of a starter kit from the checkout ``kits``, renamed; None (said) when it is not there, or
    when the Node.js kit's packages are not installed (its hosted submission takes its node_modules)."""
    source = kits / KITS[kind]
    if not (source / "kutnahora-bot.toml").is_file():
        print(f"  the {kind} kit is left out: no {source / 'kutnahora-bot.toml'}", flush=True)
        return None
    if kind == "node" and not (source / "node_modules").is_dir():
        print(f"  the node kit is left out: run `npm ci` in {source} first", flush=True)
        return None

    def left_out(where: str, names: list[str]) -> set[str]:  # the kit's own build folders, not a package's
        return set(KIT_LEFT_OUT) & set(names) if Path(where) == source else set()

    shutil.copytree(source, folder, symlinks=True, ignore=left_out)
    manifest = folder / "kutnahora-bot.toml"
    text = re.sub(r'(?m)^name = ".*"$', f'name = "{name}"', manifest.read_text())
    manifest.write_text(text)
    return folder


def hostile(folder: Path, name: str, kind: str, canary: Path) -> Path:
    """A hostile submission: ``reader`` (the canary and /etc/shadow), ``forkbomb`` or ``network``."""
    folder.mkdir(parents=True)
    scripts = {
        "reader": (
            "import sys\n"
            f"for target in ({str(canary)!r}, '/etc/shadow', '/proc/1/environ'):\n"
            "    try:\n"
            "        print('READ', target, open(target, 'rb').read(200))\n"
            "    except OSError as error:\n"
            "        print('BLOCKED', target, error.strerror)\n"
            "sys.exit(3)\n"
        ),
        "forkbomb": (
            "import os, time\n"
            "children = 0\n"
            "try:\n"
            "    while True:\n"
            "        if os.fork() == 0:\n"
            "            time.sleep(600)\n"
            "            os._exit(0)\n"
            "        children += 1\n"
            "except OSError as error:\n"
            "    print('stopped after', children, 'children:', error.strerror, flush=True)\n"
            "time.sleep(600)\n"
        ),
        "network": (
            "import socket, sys\n"
            "for host, port in (('1.1.1.1', 53), ('127.0.0.1', 5432), ('127.0.0.1', 6379)):\n"
            "    try:\n"
            "        socket.create_connection((host, port), timeout=2).close()\n"
            "        print('CONNECTED', host, port)\n"
            "    except OSError as error:\n"
            "        print('BLOCKED', host, port, error.strerror)\n"
            "sys.exit(4)\n"
        ),
    }
    (folder / "bot.py").write_text(scripts[kind])
    (folder / "kutnahora-bot.toml").write_text(
        f'name = "{name}"\nlanguage = "python"\nrun = "python3 bot.py"\n'
    )
    return folder


def line_up(
    count: int, root: Path, canary: Path, kits: Path | None, hostiles: bool, iterations: int
) -> list[Entry]:
    """The submissions: kits and hostile ones first (as many as asked for fit), the rest Python bots in
    equal numbers of random, greedy and search."""
    entries: list[Entry] = []
    if kits is not None:
        for kind in KITS:
            if len(entries) < count:
                name = f"hosted-{kind}"
                folder = kit(root / name, name, kind, kits)
                if folder is not None:
                    entries.append(Entry(name, f"kit-{kind}", folder))
    if hostiles:
        for kind in ("reader", "forkbomb", "network"):
            if len(entries) < count:
                name = f"hosted-hostile-{kind}"
                entries.append(Entry(name, f"hostile-{kind}", hostile(root / name, name, kind, canary)))
    bots = {"random": "random", "greedy": "greedy", "search": f"mcts --iterations {iterations}"}
    n = 0
    while len(entries) < count:
        kind = STRENGTH[n % 3]
        name = f"hosted-{kind}-{n // 3 + 1}"
        entries.append(Entry(name, kind, python_bot(root / name, name, bots[kind])))
        n += 1
    return entries


def metrics(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return str(response.read().decode())
    except OSError:
        return ""


def samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    """Every sample of the metric ``name`` in a Prometheus text page, with its labels."""
    found = []
    for line in text.splitlines():
        if not line.startswith(name):
            continue
        match = re.match(rf"{re.escape(name)}(?:\{{(.*)\}})? (\S+)$", line)
        if match is None:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1) or ""))
        found.append((labels, float(match.group(2))))
    return found


def histogram_quantile(text: str, name: str, quantile: float) -> float | None:
    """The quantile of a histogram summed over its labels, read off its buckets (the bucket's bound)."""
    buckets: dict[float, float] = {}
    for labels, value in samples(text, f"{name}_bucket"):
        text_bound = labels.get("le", "+Inf")
        edge = float("inf") if text_bound == "+Inf" else float(text_bound)
        buckets[edge] = buckets.get(edge, 0.0) + value
    total = buckets.get(float("inf"), 0.0)
    if total == 0:
        return None
    for edge in sorted(buckets):
        if buckets[edge] >= quantile * total:
            return edge
    return None


def leased_processes(base: int, count: int) -> list[tuple[int, int, str]]:
    """(pid, uid, command) of every process whose real user id is a sandbox lease's."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
            command = (
                Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            )
        except OSError:
            continue
        match = re.search(r"^Uid:\s+(\d+)", status, re.M)
        if match and base <= int(match.group(1)) < base + count:
            found.append((int(entry), int(match.group(1)), command[:120]))
    return found


def outside_sandbox(pid: int) -> bool:
    """Whether a process has no bubblewrap among its ancestors (it would have left its walls)."""
    current = pid
    for _ in range(64):
        try:
            status = Path(f"/proc/{current}/status").read_text()
            name = re.search(r"^Name:\s+(\S+)", status, re.M)
            if name and name.group(1) == "bwrap":
                return False
            parent = re.search(r"^PPid:\s+(\d+)", status, re.M)
        except OSError:
            return False  # gone meanwhile
        if parent is None or int(parent.group(1)) <= 1:
            return True
        current = int(parent.group(1))
    return True


def worker_groups() -> list[str]:
    """Control groups of sandbox runners (workers) left on the host."""
    left = []
    for root in (Path("/sys/fs/cgroup"), *Path("/sys/fs/cgroup").glob("*")):
        if root.is_dir():
            with contextlib.suppress(OSError):
                left += [str(p) for p in root.rglob("kutnahora-runner-*") if p.is_dir()]
    return sorted(set(left))


def store_counts(db: str) -> dict[str, int]:
    """The arena's games by status."""
    import psycopg

    with psycopg.connect(db) as conn:
        rows = conn.execute("SELECT status, count(*) FROM arena_games GROUP BY status").fetchall()
    return {str(status): int(count) for status, count in rows}


async def submit_all(address: str, entries: list[Entry], pools: list[str]) -> None:
    """Register every account and submit its folder, as an author does."""
    import grpc

    from kutnahora.clients.arena_client import ArenaClient
    from kutnahora.hosting.archives import ArchiveError, pack
    from kutnahora.v1 import arena_service_pb2, arena_service_pb2_grpc

    async with await ArenaClient.connect(address) as client:
        for entry in entries:
            entry.key = await client.register_bot(entry.name)
    async with grpc.aio.insecure_channel(address) as channel:
        stub = arena_service_pb2_grpc.ArenaServiceStub(channel)  # type: ignore[no-untyped-call]
        for entry in entries:
            try:
                archive = pack(entry.folder)
            except ArchiveError as error:
                entry.refused = str(error)
                continue
            request = arena_service_pb2.SubmitBotRequest(archive=archive, pools=pools)
            try:
                answer = await stub.SubmitBot(request, metadata=(("authorization", f"Bearer {entry.key}"),))
                entry.version = answer.submission.version
            except grpc.aio.AioRpcError as error:
                entry.refused = f"{error.code().name}: {error.details()}"


async def standings(address: str, pools: list[str]) -> dict[str, dict[str, dict[str, float]]]:
    """Each pool's leaderboard: name -> conservative rating, mu, games."""
    from kutnahora.clients.arena_client import ArenaClient

    found: dict[str, dict[str, dict[str, float]]] = {}
    async with await ArenaClient.connect(address) as client:
        for pool in pools:
            board = await client.leaderboard(pool, page_size=200)
            found[pool] = {
                e.name: {
                    "conservative": round(e.rating.conservative, 3),
                    "mu": round(e.rating.mu, 3),
                    "games": e.rating.games,
                    "wins": e.rating.wins,
                    "hosted_version": e.hosted_version,
                }
                for e in board.entries
            }
    return found


async def seat_logs_with(address: str, entry: Entry, secret: str) -> int:
    """How many of ``entry``'s seat logs hold ``secret`` (its own logs, read with its key)."""
    import grpc

    from kutnahora.clients.arena_client import ArenaClient
    from kutnahora.v1 import arena_service_pb2, arena_service_pb2_grpc

    async with await ArenaClient.connect(address) as client:
        profile = await client.bot_profile(entry.name)
    hits = 0
    async with grpc.aio.insecure_channel(address) as channel:
        stub = arena_service_pb2_grpc.ArenaServiceStub(channel)  # type: ignore[no-untyped-call]
        for game in profile.recent_games:
            with contextlib.suppress(grpc.aio.AioRpcError):
                log = await stub.GetSeatLog(
                    arena_service_pb2.GetSeatLogRequest(game_id=game.game_id),
                    metadata=(("authorization", f"Bearer {entry.key}"),),
                )
                hits += secret in log.log
    return hits


def conduct(args: argparse.Namespace) -> int:
    import psycopg

    from kutnahora.hosting.leases import UidLeases

    pools = [p.strip() for p in args.pools.split(",") if p.strip()]
    schema = f"kh_hosted_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.db, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in args.db else "?"
    db = f"{args.db}{separator}options=-csearch_path%3D{schema}"
    folder = Path(tempfile.mkdtemp(prefix="kutnahora-hosted-arena-"))
    os.chmod(folder, 0o711)
    secret = secrets.token_hex(16)
    canary = Path(f"/var/tmp/kutnahora-canary-{secret[:8]}")
    canary.write_text(f"canary {secret}\n")
    token_file = folder / "worker-token"
    token_file.write_text(secrets.token_urlsafe(32))
    os.chmod(token_file, 0o600)
    processes: list[subprocess.Popen[bytes]] = []
    workers: list[subprocess.Popen[bytes]] = []
    started_at = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    print(f"load average at the start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} processors)", flush=True)
    try:
        servers = []
        for n in range(2):
            process, found = start_serving(
                [
                    *(sys.executable, "-m", "kutnahora.server.main", "--port", "0", "--db", ":memory:"),
                    *("--metrics-port", "0", "--log-level", "warning", "--max-games", "100000"),
                ],
                folder / f"server{n}.log",
                LISTENING,
                wait=60,
            )
            processes.append(process)
            servers.append(found.partition(" (metrics ")[0])
        process, found = start_serving(
            [
                *(sys.executable, "-m", "kutnahora.arena.main", "--port", "0", "--metrics-port", "0"),
                *("--db", db, "--server", ",".join(servers), "--pools", ",".join(pools)),
                *("--worker-token-file", str(token_file), "--log-level", "warning"),
                *("--hosted-games-per-hour", str(args.games_per_hour), "--lease-time", str(args.lease_time)),
            ],
            folder / "arena.log",
            LISTENING,
            wait=60,
        )
        processes.append(process)
        arena, _, arena_metrics = found.partition(" (metrics ")
        entries = line_up(
            args.submissions,
            folder / "submissions",
            canary,
            args.kits_from if args.kits else None,
            args.hostile,
            args.search_iterations,
        )
        asyncio.run(submit_all(arena, entries, pools))
        refused = [e for e in entries if e.refused]
        print(
            f"2 game servers, an arena on PostgreSQL schema {schema}; {len(entries) - len(refused)} of "
            f"{len(entries)} submissions taken ("
            + ", ".join(f"{k} {v}" for k, v in sorted(Counter(e.kind.split("-")[0] for e in entries).items()))
            + ")",
            flush=True,
        )
        for entry in refused:
            print(f"  {entry.name} refused: {entry.refused}", flush=True)
        for n in range(args.workers):
            work = folder / f"worker{n}"
            work.mkdir()
            with (folder / f"worker{n}.log").open("wb") as log:
                workers.append(
                    subprocess.Popen(
                        [
                            *(sys.executable, "-m", "kutnahora.worker.main", "--arena", arena),
                            *("--worker-token-file", str(token_file), "--seats", str(args.seats)),
                            *("--work", str(work), "--log-level", "info", "--log-format", "console"),
                        ],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )
        print(
            f"{args.workers} workers of {args.seats} seats each, playing for {args.minutes:g} minutes; "
            f"worker 0 is killed at {args.kill_at * args.minutes:.1f} minutes",
            flush=True,
        )
        started = time.monotonic()
        seconds = args.minutes * 60
        killed_at: float | None = None
        escaped: set[int] = set()
        next_report = args.progress
        while (elapsed := time.monotonic() - started) < seconds:
            time.sleep(2.0)
            for pid, uid, command in leased_processes(UID_BASE, 1000):
                if outside_sandbox(pid) and pid not in escaped:
                    escaped.add(pid)
                    print(
                        f"  a process of sandbox user {uid} outside the sandbox: {pid} {command}", flush=True
                    )
            if killed_at is None and elapsed >= args.kill_at * seconds and workers:
                workers[0].send_signal(signal.SIGKILL)
                workers[0].wait()
                killed_at = elapsed
                print(f"{elapsed:6.0f} s: killed worker 0 (SIGKILL)", flush=True)
            if elapsed >= next_report:
                next_report += args.progress
                counts = store_counts(db)
                print(
                    f"{elapsed:6.0f} s: games {dict(sorted(counts.items()))}, load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        counts = store_counts(db)
        page = metrics(arena_metrics)
        stop_began = time.monotonic()
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
        for worker in workers:
            try:
                worker.wait(60)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
        stop_seconds = time.monotonic() - stop_began
        time.sleep(1.0)
        left_processes = leased_processes(UID_BASE, 1000)
        left_groups = worker_groups()
        left_leases = UidLeases(UID_BASE).holders()
        processes_left = len(left_processes) + len(left_groups) + len(left_leases)
        reader = next((e for e in entries if e.kind == "hostile-reader" and not e.refused), None)
        canary_in_logs = asyncio.run(seat_logs_with(arena, reader, secret)) if reader is not None else 0
        canary_in_files = sum(
            1
            for path in folder.rglob("*")
            if path.is_file() and path != canary and secret.encode() in path.read_bytes()[: 1 << 22]
        )
        escapes = len(escaped) + canary_in_logs + canary_in_files
        board = asyncio.run(standings(arena, pools))
        kinds = {e.name: e.kind for e in entries}
        busiest = max(pools, key=lambda p: sum(int(v["games"]) for v in board[p].values()))
        means: dict[str, float] = {}
        for kind in STRENGTH:
            values = [v["conservative"] for n, v in board[busiest].items() if kinds.get(n) == kind]
            if values:
                means[kind] = statistics.fmean(values)
        ordered = len(means) == 3 and means["search"] > means["greedy"] > means["random"]
        refusals = {
            labels.get("reason", "?"): int(value)
            for labels, value in samples(page, "kutnahora_arena_refusals_total")
            if value
        }
        finished = counts.get("finished", 0)
        result: dict[str, Any] = {
            "started_at": started_at,
            "submissions": len(entries),
            "submissions_refused": {e.name: e.refused for e in refused},
            "workers": args.workers,
            "seats_per_worker": args.seats,
            "minutes": args.minutes,
            "pools": pools,
            "worker_killed_at_seconds": round(killed_at, 1) if killed_at is not None else None,
            "games_finished": finished,
            "games_by_status": counts,
            "games_per_minute": round(finished / args.minutes, 2),
            "time_to_match_seconds": {
                "p50": histogram_quantile(page, "kutnahora_arena_time_to_match_seconds", 0.5),
                "p90": histogram_quantile(page, "kutnahora_arena_time_to_match_seconds", 0.9),
            },
            "refusals_by_reason": refusals,
            "escapes": escapes,
            "escapes_detail": {
                "processes_outside_the_sandbox": len(escaped),
                "canary_in_seat_logs": canary_in_logs,
                "canary_in_files": canary_in_files,
            },
            "processes_left": processes_left,
            "processes_left_detail": {
                "processes": [f"{pid} uid {uid}: {cmd}" for pid, uid, cmd in left_processes],
                "control_groups": left_groups,
                "uid_leases": left_leases,
            },
            "workers_stop_seconds": round(stop_seconds, 1),
            "ratings_pool": busiest,
            "mean_conservative_by_kind": {k: round(v, 3) for k, v in means.items()},
            "ordered_as_strength": ordered,
            "ratings": {
                pool: {n: {"kind": kinds.get(n, "?"), **v} for n, v in sorted(rows.items())}
                for pool, rows in board.items()
            },
            "load_average_end": round(os.getloadavg()[0], 2),
        }
        print(f"results ({args.submissions} submissions, {args.workers} workers, {args.minutes:g} minutes):")
        print(f"  games_finished {finished} ({result['games_per_minute']} a minute); by status {counts}")
        print(
            f"  time to match p50 {result['time_to_match_seconds']['p50']} s, p90 "
            f"{result['time_to_match_seconds']['p90']} s (the arena's histogram buckets)"
        )
        print(f"  refusals by reason: {refusals or 'none'}")
        print(f"  escapes {escapes} {result['escapes_detail']}")
        print(f"  processes_left {processes_left} {result['processes_left_detail']}")
        print(
            f"  ratings in pool {busiest}: mean conservative by kind {result['mean_conservative_by_kind']}; "
            f"ordered as strength (search > greedy > random): {ordered}"
        )
        for name, row in sorted(board[busiest].items(), key=lambda item: -item[1]["conservative"]):
            print(
                f"    {name:28} {kinds.get(name, '?'):16} {row['conservative']:7.2f} "
                f"({int(row['games'])} games)"
            )
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
            print(f"written to {args.json}")
        return 0 if escapes == 0 and processes_left == 0 else 1
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
        for process in processes:
            if process.poll() is None:
                stop_process(process, grace=15)
        canary.unlink(missing_ok=True)
        with contextlib.suppress(Exception), psycopg.connect(args.db, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
        if args.keep:
            print(f"logs kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.hosted_arena",
        description="Hosted submissions (Python bots, the starter kits, hostile ones) playing rated games in "
        "an arena on PostgreSQL through sandbox workers, one worker killed midway: games a minute, time to "
        "match, refusals, escapes, what is left behind, and whether the ratings follow the bots' strength.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--submissions", type=int, default=40, help="hosted submissions, each its own account"
    )
    parser.add_argument("--workers", type=int, default=3, help="kutnahora-arena-worker processes")
    parser.add_argument("--seats", type=int, default=8, help="seats each worker plays at once (its --seats)")
    parser.add_argument("--minutes", type=float, default=20.0, help="minutes the submissions play")
    parser.add_argument("--pools", default="2", help="pools, comma-separated")
    parser.add_argument("--search-iterations", type=int, default=50, help="the search bots' mcts iterations")
    parser.add_argument(
        "--games-per-hour", type=int, default=1000, help="the arena's --hosted-games-per-hour"
    )
    parser.add_argument("--lease-time", type=float, default=15.0, help="the arena's --lease-time (seconds)")
    parser.add_argument(
        "--kill-at", type=float, default=0.5, help="fraction of the run at which worker 0 dies"
    )
    parser.add_argument("--no-kits", dest="kits", action="store_false", help="leave the starter kits out")
    parser.add_argument(
        "--kits-from",
        type=Path,
        default=REPOSITORY,
        help="the checkout whose clients/go, cpp, java and node are submitted (the Node.js kit after npm ci)",
    )
    parser.add_argument("--no-hostile", dest="hostile", action="store_false", help="leave hostile ones out")
    parser.add_argument("--progress", type=float, default=60.0, help="seconds between progress lines")
    parser.add_argument(
        "--db", default=DEFAULT_DB, help="PostgreSQL database (a fresh schema, dropped after)"
    )
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--keep", action="store_true", help="keep the processes' logs and work folders")
    args = parser.parse_args(argv)
    if args.submissions < 2 or args.workers < 1 or args.seats < 1 or args.minutes <= 0:
        parser.error("--submissions must be at least 2, --workers and --seats at least 1, --minutes positive")
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a stop cleans up as Ctrl-C does
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if os.geteuid() != 0 or shutil.which("bwrap") is None:
        parser.error(
            "the workers wall their bots in with bubblewrap as root: run as root with bwrap installed"
        )
    return conduct(args)


if __name__ == "__main__":
    sys.exit(main())
