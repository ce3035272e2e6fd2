"""``kutnahora-hold``: many games held at once by slow bots, with the server's health every interval.

Starts a server (SQLite, the default) or several replicas on one PostgreSQL database, creates ``--games``
games of ``--players`` seats, and plays every seat with its own Play stream through the SDK, spread over
``--connections`` client connections, all opened at once. Each bot thinks for a random time in
``--think`` seconds, then picks a random legal option. A finished game is replaced by a new one, so the
number held stays the same for ``--duration`` seconds. Every ``--report-every`` seconds it prints the
decisions per second, the p50 and p99 latency (from a seat's answer to the next turn of its game reaching
its bot), the errors (play sessions that failed, streams that had to reconnect, refused answers), the
games verified, each server's resident memory and open descriptors, and the machine's load average.

Every game that ends is verified (:mod:`kutnahora.bench.replay_check`): its players note each decision the
server confirmed, and the game's replay, read back with ``GetReplay``, must hold every one of them in order
and replay on the rules engine to the state and the result the players were told. A mismatch is a failure.

One client process running 4,000 bots measures its own event loop as much as the server, so
``--client-processes N`` runs the bots in N child processes (each holding its share of the games over its
share of the connections, verifying its own games' records) and merges their windows into each line:
decisions summed, latencies pooled before the percentiles (:mod:`kutnahora.bench.windows`).
``--probe-interval-ms 20`` also runs :mod:`kutnahora.bench.probe` in a process of its own, calling
``GetServerInfo`` on its own connection, and adds its p50, p99, p99.9 and maximum to each line: a stall
of the server's event loop shows there whatever its handlers' histograms say. A new game the server
refuses because it is overloaded (``RESOURCE_EXHAUSTED``) is counted by reason, not as a failure, and
asked for again once the refusal's RetryInfo delay has passed (a second without one, ten at most):
driven past its capacity, the server refuses new games and the line says
how many.

With ``--replicas 2`` (PostgreSQL) the clients' target lists every replica, so that gRPC moves a
connection to another replica when one goes; ``--kill-replica-at S`` kills the first replica with
SIGKILL after S seconds and every game must still finish; ``--restart-database-at S`` runs
``--restart-database-command`` (for example ``pg_ctlcluster 15 main restart``) after S seconds.

    kutnahora-hold                                    # 1,000 four-player games for 10 minutes, SQLite
    kutnahora-hold --games 200 --duration 60 --report-every 10
    kutnahora-hold --games 1000 --duration 120 --report-every 30 --no-drain --client-processes 2 \
        --probe-interval-ms 20
    kutnahora-hold --db postgresql://postgres@127.0.0.1/test --replicas 2 --kill-replica-at 120
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import random
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from kutnahora.bench.fuzz import open_descriptors, rss_kib
from kutnahora.bench.replay_check import check_replay
from kutnahora.bench.server_bench import METRICS_URL, server_command
from kutnahora.bench.windows import (
    Merger,
    Window,
    child_lines,
    emit,
    merge,
    millis,
    spread,
    windows_on_schedule,
)
from kutnahora.clients.help_format import DefaultsHelpFormatter
from kutnahora.clients.sdk import (
    TRANSIENT_CODES,
    Bot,
    Client,
    ClientError,
    GameInfo,
    GameOutcome,
    SeatCredentials,
)
from kutnahora.v1 import game_pb2, play_service_pb2, replay_service_pb2
from kutnahora.v1.game_pb2 import Observation

LISTENING_PREFIX = "listening on grpc://"


@dataclass
class Tally:
    """What the run counted so far."""

    decisions: int = 0
    latencies: list[float] = field(default_factory=list)  # seconds, since the last report
    failed: int = 0  # play sessions that ended with an error
    reconnects: int = 0
    refused: int = 0
    finished: int = 0
    abandoned: int = 0
    verified: int = 0  # ended games whose replay held every confirmed decision and the result told
    mismatched: int = 0  # ended games whose replay did not (each a failure)
    confirmed: int = 0  # confirmed decisions found in the replays of the verified games
    refusals: collections.Counter[str] = field(default_factory=collections.Counter)  # by reason and code
    games_refused: collections.Counter[str] = field(default_factory=collections.Counter)  # by reason
    errors: list[str] = field(default_factory=list)

    COUNTS = ("decisions", "failed", "reconnects", "refused", "finished", "abandoned", "verified",
              "mismatched", "confirmed")  # fmt: skip

    def counters(self) -> dict[str, int]:
        """The counts so far, with the new games refused under ``games_refused:REASON``."""
        counts = {name: int(getattr(self, name)) for name in self.COUNTS}
        counts.update({f"games_refused:{reason}": n for reason, n in self.games_refused.items()})
        return counts

    def to_json(self) -> dict[str, object]:
        """The tally at the end, for the parent process (the first errors only)."""
        return {
            "counters": self.counters(),
            "refusals": dict(self.refusals),
            "errors": self.errors[:10],
        }

    def add_json(self, data: dict[str, Any]) -> None:
        """Add a child process's tally (:meth:`to_json`) to this one."""
        for name, value in data["counters"].items():
            if name.startswith("games_refused:"):
                self.games_refused[name.split(":", 1)[1]] += int(value)
            else:
                setattr(self, name, getattr(self, name) + int(value))
        self.refusals.update({key: int(value) for key, value in data["refusals"].items()})
        self.errors.extend(str(error) for error in data["errors"])


class SlowBot(Bot):
    """Thinks for a while, then plays a random legal option; measures its game's turnaround and notes each
    decision the server confirms in its game's ``confirmed`` (version -> seat and option text)."""

    def __init__(
        self,
        tally: Tally,
        answered: dict[str, float],
        think: tuple[float, float],
        seed: int,
        confirmed: dict[int, tuple[int, str]],
    ) -> None:
        self.tally = tally
        self.answered = answered  # game id -> when its last answer was sent
        self.think = think
        self.random = random.Random(seed)
        self.confirmed = confirmed
        self.seat = -1
        self.sent: dict[int, str] = {}  # version -> the text of the option last sent for it

    def start(self, game: GameInfo) -> None:
        self.seat = game.seat

    async def choose(self, observation: Observation) -> int:
        now = time.monotonic()
        sent = self.answered.pop(observation.game_id, None)
        if sent is not None:
            self.tally.latencies.append(now - sent)
        await asyncio.sleep(self.random.uniform(*self.think))
        self.answered[observation.game_id] = time.monotonic()
        self.tally.decisions += 1
        index = self.random.randrange(len(observation.pending.options))
        self.sent[observation.version] = observation.pending.options[index].text
        return index

    def accepted(self, version: int) -> None:
        text = self.sent.pop(version, None)
        if text is not None:
            self.confirmed[version] = (self.seat, text)

    def refused(self, rejected: play_service_pb2.DecisionRejected) -> None:
        code = grpc.StatusCode.UNKNOWN
        for status in grpc.StatusCode:
            if status.value[0] == rejected.code:
                code = status
        self.tally.refusals[f"{game_pb2.RejectReason.Name(rejected.reason)} ({code.name})"] += 1


class Servers:
    """The server processes of a run, started with the same store."""

    def __init__(self, db: str, replicas: int, folder: Path, gc_trace: Path | None = None) -> None:
        self.processes: list[subprocess.Popen[str]] = []
        self.addresses: list[str] = []
        self.metrics_urls: list[str] = []
        for index in range(replicas):
            log = (folder / f"server-{index}.log").open("w")
            command = [*server_command(db, 100_000, metrics=True), "--log-format", "json"]
            if gc_trace is not None:  # every collection of server 0 timed (kutnahora.bench.gc_trace)
                traced = gc_trace if index == 0 else gc_trace.with_name(f"{gc_trace.stem}-{index}.json")
                command[1:3] = ["-m", "kutnahora.bench.gc_trace", str(traced), "--", "-m", command[2]]
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
            assert process.stdout is not None
            line = process.stdout.readline()
            if LISTENING_PREFIX not in line:
                process.kill()
                raise SystemExit(f"kutnahora-hold: the server did not start: {line!r} (see {log.name})")
            self.addresses.append(line.split(LISTENING_PREFIX, 1)[1].split()[0])
            found = METRICS_URL.search(line)
            self.metrics_urls.append(found.group(1) if found else "")
            self.processes.append(process)

    @property
    def target(self) -> str:
        """One gRPC target naming every replica (gRPC moves to another when one goes)."""
        if len(self.addresses) == 1:
            return self.addresses[0]
        return "ipv4:" + ",".join(self.addresses)

    def health(self) -> str:
        """Each live server's RSS and open descriptors."""
        parts = []
        for index, process in enumerate(self.processes):
            if process.poll() is not None:
                parts.append(f"server {index} gone")
                continue
            rss, fds = rss_kib(process.pid) / 1024, open_descriptors(process.pid)
            parts.append(f"server {index} RSS {rss:.0f} MiB, {fds} fds")
        return "; ".join(parts)

    def save_metrics(self, path: Path) -> None:
        """Server 0's ``/metrics`` text, written to ``path`` (its histograms cover the whole run)."""
        if self.metrics_urls and self.metrics_urls[0] and self.processes[0].poll() is None:
            with urllib.request.urlopen(self.metrics_urls[0], timeout=10) as answer:
                path.write_bytes(answer.read())

    def kill(self, index: int) -> None:
        """SIGKILL one server."""
        self.processes[index].send_signal(signal.SIGKILL)
        self.processes[index].wait(10)

    def stop(self) -> None:
        """SIGTERM every live server and wait."""
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(20)
            if process.poll() is None:
                process.kill()


@dataclass
class Settings:
    """What one run does."""

    games: int
    players: int
    connections: int
    think: tuple[float, float]
    duration: float
    report_every: float
    kill_replica_at: float | None
    restart_database_at: float | None
    restart_database_command: str
    drain: bool = True


async def hold(
    target: str, settings: Settings, on_window: Callable[[Window], None], seed_base: int = 1
) -> Tally:
    """Hold ``settings.games`` games on ``target`` for the run's duration, giving ``on_window`` each
    window's figures; the tally at the end."""
    tally = Tally()
    answered: dict[str, float] = {}
    # Refusals are counted here (and asked again after their RetryInfo's delay), not waited out in the SDK.
    clients = [Client(target, retry_refused=False) for _ in range(settings.connections)]
    stopping = asyncio.Event()
    started = time.monotonic()
    seeds = iter(range(seed_base, 10**12))
    under_way: dict[str, tuple[Client, str]] = {}  # game id -> its client and game token

    async def one_game(slot: int) -> None:
        client = clients[slot % len(clients)]
        while not stopping.is_set():
            try:
                created, seats = await client.create_seated_game(
                    [f"bot{seat}" for seat in range(settings.players)],
                    clock=game_pb2.ClockSettings(disabled=True),
                    label="kutnahora-hold",
                )
            except ClientError as error:
                if error.code == grpc.StatusCode.RESOURCE_EXHAUSTED:  # refused, not failed: ask again
                    tally.games_refused[error.reason or "RESOURCE_EXHAUSTED"] += 1
                else:
                    tally.failed += 1
                    tally.errors.append(f"create: {error}")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stopping.wait(), min(error.retry_after or 1.0, 10.0))
                continue
            game_id = created.game.game_id
            under_way[game_id] = (client, created.game_token)
            confirmed: dict[int, tuple[int, str]] = {}
            outcomes = await asyncio.gather(*(play(client, seat, confirmed) for seat in seats))
            under_way.pop(game_id, None)
            statuses = {outcome.status for outcome in outcomes if outcome is not None}
            if statuses == {game_pb2.GAME_STATUS_FINISHED}:
                tally.finished += 1
            elif game_pb2.GAME_STATUS_ABANDONED in statuses:
                tally.abandoned += 1
            if None not in outcomes:  # every seat saw the game end: its record must hold what they heard
                told = [outcome.result for outcome in outcomes if outcome is not None]
                await verify(client, game_id, confirmed, told)

    async def verify(
        client: Client,
        game_id: str,
        confirmed: dict[int, tuple[int, str]],
        told: list[game_pb2.GameResult | None],
    ) -> None:
        try:
            replay = await read_replay(client, game_id)
        except ClientError as error:
            tally.mismatched += 1
            tally.errors.append(f"verifying {game_id}: {error}")
            return
        problem = check_replay(replay, confirmed, told)
        if problem is None:
            tally.verified += 1
            tally.confirmed += len(confirmed)
        else:
            tally.mismatched += 1
            tally.errors.append(problem)

    async def play(
        client: Client, seat: SeatCredentials, confirmed: dict[int, tuple[int, str]]
    ) -> GameOutcome | None:
        bot = SlowBot(tally, answered, settings.think, next(seeds), confirmed)
        try:
            outcome = await client.play(bot, seat, reconnect_for=120.0)
        except ClientError as error:
            tally.failed += 1
            tally.errors.append(f"seat {seat.seat} of {seat.game_id}: {error}")
            return None
        tally.reconnects += outcome.reconnects
        tally.refused += outcome.refused
        return outcome

    last_decisions = 0

    def take(number: int, seconds: float) -> Window:
        nonlocal last_decisions
        window = Window(
            number, seconds, tally.decisions - last_decisions, list(tally.latencies), tally.counters()
        )
        tally.latencies.clear()
        last_decisions = tally.decisions
        return window

    games = [asyncio.create_task(one_game(slot)) for slot in range(settings.games)]
    async for window in windows_on_schedule(started, settings.duration, settings.report_every, take):
        on_window(window)
    stopping.set()  # no new games
    if not settings.drain:
        for game_id, (client, token) in list(under_way.items()):
            with contextlib.suppress(ClientError):
                await client.abandon(game_id, token, "kutnahora-hold is over")
    await asyncio.gather(*games)
    for client in clients:
        await client.close()
    return tally


class Report:
    """Prints one line per window, merged over the client processes and the probe, with the servers'
    health and the machine's load."""

    def __init__(self, servers: Servers, sources: Sequence[str], probing: bool) -> None:
        self.servers = servers
        self.elapsed = 0.0
        self.probe_failures = 0
        self.merger = Merger([*sources, *(["probe"] if probing else [])], self.line)

    def line(self, number: int, windows: dict[str, Window]) -> None:
        probe = windows.pop("probe", None)
        if not windows:  # the probe's window alone, after the bots': nothing to say
            return
        merged = merge(list(windows.values()))
        self.elapsed += merged.seconds
        counts = merged.counters
        rate = merged.decisions / max(merged.seconds, 1e-9)
        figures = spread(merged.latencies) if merged.latencies else {"p50": 0.0, "p99": 0.0}
        refused = sum(n for name, n in counts.items() if name.startswith("games_refused:"))
        text = (
            f"kutnahora-hold: {self.elapsed:6.0f} s  {rate:7.1f} decisions/s  latency p50 "
            f"{figures['p50']:6.1f} ms p99 {figures['p99']:7.1f} ms  games finished {counts['finished']}, "
            f"abandoned {counts['abandoned']}  errors: {counts['failed']} failed, {counts['reconnects']} "
            f"reconnects, {counts['refused']} refused  new games refused {refused}  verified "
            f"{counts['verified']}, mismatched {counts['mismatched']}"
        )
        if len(windows) > 1:
            text += f"  ({len(windows)} client processes)"
        if probe is not None:
            self.probe_failures = probe.counters.get("probe_failures", 0)
            text += f"  probe {probe.decisions} calls {millis(spread(probe.latencies))}"
        load = "/".join(f"{value:.1f}" for value in os.getloadavg())
        print(f"{text}  {self.servers.health()}  load {load}", flush=True)


async def run_processes(servers: Servers, settings: Settings, processes: int, probe_interval: float) -> Tally:
    """The hold, its bots in this process (``processes`` 1) or in ``processes`` children, with the probe
    in a child of its own when ``probe_interval`` is positive, and the faults asked for; the merged tally."""
    sources = [f"client {index}" for index in range(processes)]
    report = Report(servers, sources, probe_interval > 0)
    tally = Tally()
    tasks = [asyncio.create_task(faults(servers, settings))]
    if probe_interval > 0:
        tasks.append(asyncio.create_task(probe_child(servers.target, settings, probe_interval, report)))
    if processes == 1:
        tally = await hold(servers.target, settings, lambda window: report.merger.add(sources[0], window))
        report.merger.finish(sources[0])
    else:
        shares = [
            settings.games // processes + (index < settings.games % processes) for index in range(processes)
        ]
        children = [
            client_child(servers.target, settings, index, share, processes, report, tally)
            for index, share in enumerate(shares)
        ]
        await asyncio.gather(*children)
    tasks[0].cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    if report.probe_failures:
        tally.errors.append(f"the probe's calls failed {report.probe_failures} times")
    return tally


async def client_child(
    target: str, settings: Settings, index: int, games: int, processes: int, report: Report, tally: Tally
) -> None:
    """One child process holding ``games`` of the games; its windows go to ``report``, its tally into
    ``tally``."""
    source = f"client {index}"
    command = [
        sys.executable, "-m", "kutnahora.bench.hold", "--client-of", target, "--client-index", str(index),
        "--games", str(games), "--players", str(settings.players),
        "--connections", str(max(1, settings.connections // processes)),
        "--think", f"{settings.think[0]}-{settings.think[1]}", "--duration", str(settings.duration),
        "--report-every", str(settings.report_every), *([] if settings.drain else ["--no-drain"]),
    ]  # fmt: skip
    process, lines = await child_lines(command)
    ended = False
    async for line in lines:
        data = json.loads(line)
        if "window" in data:
            report.merger.add(source, Window.from_json(data))
        elif "tally" in data:
            tally.add_json(data["tally"])
            ended = True
    report.merger.finish(source)
    if await process.wait() != 0 or not ended:
        tally.failed += 1
        tally.errors.append(f"client process {index} ended with status {process.returncode}")


async def probe_child(target: str, settings: Settings, interval: float, report: Report) -> None:
    """The probe's process, its windows to ``report``."""
    command = [
        sys.executable, "-m", "kutnahora.bench.probe", "--target", target, "--json",
        "--interval-ms", str(interval * 1000), "--duration", str(settings.duration),
        "--report-every", str(settings.report_every),
    ]  # fmt: skip
    process, lines = await child_lines(command)
    async for line in lines:
        window = Window.from_json(json.loads(line))
        report.probe_failures = window.counters.get("probe_failures", 0)
        report.merger.add("probe", window)
    report.merger.finish("probe")
    await process.wait()


async def faults(servers: Servers, settings: Settings) -> None:
    """Kill a replica and restart the database when the settings say so."""
    started = time.monotonic()
    events = []
    if settings.kill_replica_at is not None:
        events.append((settings.kill_replica_at, "kill"))
    if settings.restart_database_at is not None:
        events.append((settings.restart_database_at, "restart"))
    for at, what in sorted(events):
        await asyncio.sleep(max(0.0, at - (time.monotonic() - started)))
        if what == "kill":
            print("kutnahora-hold: killing server 0 (SIGKILL)", flush=True)
            servers.kill(0)
        else:
            print(f"kutnahora-hold: {settings.restart_database_command}", flush=True)
            began = time.monotonic()
            done = await asyncio.to_thread(
                subprocess.run, shlex.split(settings.restart_database_command), check=False
            )
            print(
                f"kutnahora-hold: the restart command exited with status {done.returncode} after "
                f"{time.monotonic() - began:.1f} s",
                flush=True,
            )


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-hold",
        description="Hold many games at once with slow bots and print the server's health as it goes.",
        formatter_class=DefaultsHelpFormatter,
    )
    parser.add_argument("--games", type=int, default=1000, help="games held at once")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4), help="seats of each game")
    parser.add_argument("--connections", type=int, default=8, help="client connections the streams share")
    parser.add_argument("--think", default="0.5-2.0", help="each bot's thinking time, MIN-MAX seconds")
    parser.add_argument("--duration", type=float, default=600.0, help="seconds during which games start")
    parser.add_argument("--report-every", type=float, default=60.0, help="seconds between report lines")
    parser.set_defaults(drain=True)  # set here, so that the help does not print a default for --no-drain
    parser.add_argument(
        "--no-drain",
        dest="drain",
        action="store_false",
        default=argparse.SUPPRESS,
        help="abandon the games under way when the duration is over, instead of playing them to their end",
    )
    parser.add_argument("--db", default="", help="the store: a SQLite file (default: a new one) or a URL")
    parser.add_argument("--replicas", type=int, default=1, help="server processes on the store")
    parser.add_argument("--kill-replica-at", type=float, default=None, help="SIGKILL server 0 after S s")
    parser.add_argument(
        "--restart-database-at", type=float, default=None, help="run --restart-database-command after S s"
    )
    parser.add_argument(
        "--restart-database-command",
        default="pg_ctlcluster --skip-systemctl-redirect 15 main restart",
        help="the command that restarts the database",
    )
    parser.add_argument(
        "--client-processes",
        type=int,
        default=1,
        help="child processes the bots run in (the games and connections shared out between them)",
    )
    parser.add_argument(
        "--probe-interval-ms",
        type=float,
        default=0.0,
        help="also call GetServerInfo every this many milliseconds from a process of its own and report "
        "its latency (0: no probe)",
    )
    parser.add_argument(
        "--server-gc-trace",
        type=Path,
        default=None,
        help="time every garbage collection of the server and write a summary to this JSON file at the "
        "end (python -m kutnahora.bench.gc_trace)",
    )
    parser.add_argument(
        "--save-metrics", type=Path, default=None, help="write server 0's /metrics text here at the end"
    )
    parser.add_argument("--client-of", default="", help=argparse.SUPPRESS)  # a child: the server's address
    parser.add_argument("--client-index", type=int, default=0, help=argparse.SUPPRESS)
    return parser


def parse_think(text: str) -> tuple[float, float]:
    """``MIN-MAX`` seconds."""
    try:
        low, high = (float(part) for part in text.split("-", 1))
    except ValueError:
        raise SystemExit(f"--think must be MIN-MAX in seconds, such as 0.5-2.0; got {text!r}") from None
    if not 0 <= low <= high:
        raise SystemExit(f"--think must have 0 <= MIN <= MAX; got {text!r}")
    return low, high


def main(argv: Sequence[str] | None = None) -> int:
    """Run the hold and print its figures; exit 1 when a seat failed or a game's record did not verify."""
    args = build_parser().parse_args(argv)
    if args.games <= 0 or args.connections <= 0 or args.duration <= 0 or args.report_every <= 0:
        raise SystemExit("--games, --connections, --duration and --report-every must be positive")
    if args.replicas > 1 and not args.db.startswith("postgres"):
        raise SystemExit("--replicas above 1 needs a PostgreSQL --db (postgresql://...)")
    settings = Settings(
        args.games,
        args.players,
        args.connections,
        parse_think(args.think),
        args.duration,
        args.report_every,
        args.kill_replica_at,
        args.restart_database_at,
        args.restart_database_command,
        args.drain,
    )
    if args.client_of:  # a child process: hold this share of the games, print JSON lines for the parent
        tally = asyncio.run(hold(args.client_of, settings, emit, seed_base=1 + args.client_index * 10**9))
        print(json.dumps({"tally": tally.to_json()}), flush=True)
        return 0
    if args.client_processes <= 0 or args.client_processes > args.games:
        raise SystemExit("--client-processes must be between 1 and --games")
    if args.probe_interval_ms < 0:
        raise SystemExit("--probe-interval-ms must be 0 (no probe) or positive")
    with tempfile.TemporaryDirectory(prefix="kutnahora-hold-") as folder:
        db = args.db or str(Path(folder) / "games.db")
        gc_trace = args.server_gc_trace.resolve() if args.server_gc_trace else None
        servers = Servers(db, args.replicas, Path(folder), gc_trace)
        try:
            print(
                f"kutnahora-hold: {args.games} games of {args.players} seats over {args.connections} "
                f"connections to {servers.target}, bots thinking {args.think} s, for {args.duration:g} s, "
                f"in {args.client_processes} client process(es)"
                + (f", probed every {args.probe_interval_ms:g} ms" if args.probe_interval_ms else ""),
                flush=True,
            )
            tally = asyncio.run(
                run_processes(servers, settings, args.client_processes, args.probe_interval_ms / 1000)
            )
            if args.save_metrics is not None:
                servers.save_metrics(args.save_metrics)
        finally:
            servers.stop()
    print(
        f"kutnahora-hold: {tally.decisions} decisions; games finished {tally.finished}, abandoned "
        f"{tally.abandoned}; {tally.failed} failed, {tally.reconnects} reconnects, {tally.refused} refused; "
        f"games verified {tally.verified} ({tally.confirmed} confirmed decisions found in their replays), "
        f"mismatched {tally.mismatched}"
    )
    for refusal, count in tally.refusals.most_common():
        print(f"  answers refused: {count} {refusal}")
    for reason, count in tally.games_refused.most_common():
        print(f"  new games refused: {count} {reason}")
    for error in tally.errors[:10]:
        print(f"  {error}")
    return 1 if tally.failed or tally.mismatched else 0


async def read_replay(
    client: Client, game_id: str, wait: float = 120.0
) -> replay_service_pb2.GetReplayResponse:
    """The replay of an ended game, asked again while the server cannot answer yet: a replica that did not
    end the game learns of its end by notification, and a store restarting is away for a few seconds."""
    give_up = time.monotonic() + wait
    delay = 0.05
    while True:
        try:
            return await client.replay(game_id)
        except ClientError as error:
            again = error.code in TRANSIENT_CODES or error.code == grpc.StatusCode.FAILED_PRECONDITION
            if not again or time.monotonic() + delay > give_up:
                raise
        await asyncio.sleep(delay)
        delay = min(delay * 2, 2.0)


if __name__ == "__main__":
    sys.exit(main())
