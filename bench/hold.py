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

With ``--replicas 2`` (PostgreSQL) the clients' target lists every replica, so that gRPC moves a
connection to another replica when one goes; ``--kill-replica-at S`` kills the first replica with
SIGKILL after S seconds and every game must still finish; ``--restart-database-at S`` runs
``--restart-database-command`` (for example ``pg_ctlcluster 15 main restart``) after S seconds.

    kutnahora-hold                                    # 1,000 four-player games for 10 minutes, SQLite
    kutnahora-hold --games 200 --duration 60 --report-every 10
    kutnahora-hold --db postgresql://postgres@127.0.0.1/test --replicas 2 --kill-replica-at 120
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import random
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from kutnahora.bench.fuzz import open_descriptors, rss_kib
from kutnahora.bench.replay_check import check_replay
from kutnahora.bench.server_bench import server_command
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
    errors: list[str] = field(default_factory=list)


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

    def __init__(self, db: str, replicas: int, folder: Path) -> None:
        self.processes: list[subprocess.Popen[str]] = []
        self.addresses: list[str] = []
        for index in range(replicas):
            log = (folder / f"server-{index}.log").open("w")
            command = [*server_command(db, 100_000), "--log-format", "json"]
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
            assert process.stdout is not None
            line = process.stdout.readline()
            if LISTENING_PREFIX not in line:
                process.kill()
                raise SystemExit(f"kutnahora-hold: the server did not start: {line!r} (see {log.name})")
            self.addresses.append(line.split(LISTENING_PREFIX, 1)[1].split()[0])
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


async def hold(servers: Servers, settings: Settings) -> Tally:
    """Hold the games for the run's duration, printing a line every interval; the tally at the end."""
    tally = Tally()
    answered: dict[str, float] = {}
    clients = [Client(servers.target) for _ in range(settings.connections)]
    stopping = asyncio.Event()
    started = time.monotonic()
    seeds = iter(range(1, 10**9))
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
                tally.failed += 1
                tally.errors.append(f"create: {error}")
                await asyncio.sleep(1.0)
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

    async def report() -> None:
        last, last_decisions = started, 0
        while not stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), settings.report_every)
            now = time.monotonic()
            rate = (tally.decisions - last_decisions) / max(now - last, 1e-9)
            latencies = sorted(tally.latencies)
            tally.latencies.clear()
            p50 = statistics.median(latencies) * 1000 if latencies else 0.0
            p99 = latencies[int(len(latencies) * 0.99)] * 1000 if latencies else 0.0
            print(
                f"kutnahora-hold: {now - started:6.0f} s  {rate:7.1f} decisions/s  latency p50 {p50:6.1f} ms "
                f"p99 {p99:7.1f} ms  games finished {tally.finished}, abandoned {tally.abandoned}  errors: "
                f"{tally.failed} failed, {tally.reconnects} reconnects, {tally.refused} refused  verified "
                f"{tally.verified}, mismatched {tally.mismatched}  {servers.health()}  load "
                + "/".join(f"{value:.1f}" for value in os.getloadavg()),
                flush=True,
            )
            last, last_decisions = now, tally.decisions

    async def faults() -> None:
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

    reporter = asyncio.create_task(report())
    fault_task = asyncio.create_task(faults())
    games = [asyncio.create_task(one_game(slot)) for slot in range(settings.games)]
    await asyncio.sleep(settings.duration)
    stopping.set()  # no new games
    if settings.drain:
        print("kutnahora-hold: the duration is over; the games under way play to their end", flush=True)
    else:
        print(f"kutnahora-hold: the duration is over; abandoning {len(under_way)} games", flush=True)
        for game_id, (client, token) in list(under_way.items()):
            with contextlib.suppress(ClientError):
                await client.abandon(game_id, token, "kutnahora-hold is over")
    await asyncio.gather(*games)
    fault_task.cancel()
    await reporter
    for client in clients:
        await client.close()
    return tally


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
    with tempfile.TemporaryDirectory(prefix="kutnahora-hold-") as folder:
        db = args.db or str(Path(folder) / "games.db")
        servers = Servers(db, args.replicas, Path(folder))
        try:
            print(
                f"kutnahora-hold: {args.games} games of {args.players} seats over {args.connections} "
                f"connections to {servers.target}, bots thinking {args.think} s, for {args.duration:g} s",
                flush=True,
            )
            tally = asyncio.run(hold(servers, settings))
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
