"""``kutnahora-bench``: how many decisions per second the server sustains, and how fast it answers.

The benchmark starts a server process (SQLite store on, no clock, no rate limit) and drives many games at
once through it the way bots do: every seat of every game plays over its own Play stream, answering each
observation with a uniformly random legal option. Each game is created with its seats named, as the
tournament runner creates them (``--join`` joins them one by one instead). A game that ends is replaced by
a new one, so the number of games in play stays constant. The server's CPU per decision includes each
game's share of creating it, opening its streams and ending it: about 160 decisions share one game.
It reports decisions per second and the decision latency (from sending a decision until the next
observation of that game arrives, whichever seat it is for: storing, applying, building the next
observation and both transfers), with the server's CPU time per decision. From the server's own metrics
(read before and after the measured seconds) it also says how long, per decision, the server spent
handling the decision it received, and inside that building the next seat's observation and storing.

In the same run it measures the ceiling of the machine: a trivial grpc.aio echo server, driven by the same
number of concurrent callers (``--echo-callers``), first with unary calls, then with streamed messages,
with the echo server's CPU time per call and per message. The ratio of the two shows how much of the
transport's capacity the game logic leaves. The unary figures hardly depend on the number of callers;
the streamed ones do, since gRPC writes the messages of many streams together (on a 2-core machine: about
7,000 messages per second at 120 µs of CPU each with 4 callers, twice that with 64). Finally it measures,
in this process, what building one observation costs (the engine's view, then the wire encoding).

``--unary`` plays every seat over unary calls instead, as a bot without streams does: each seat watches its
game as itself (``WatchGame`` naming the seat) and answers its turns with ``SubmitDecision``, the path
where the server checks the seat's call rate on every decision; the ratios are then taken to the echo's
unary calls. ``--quota-store`` gives the server a quota store (``redis://…``, with a fresh key prefix for
each server started), so that the cost of the limits kept in it is measured: the benchmark's calls come
from loopback, which the per-caller quotas do not count, so what it measures there is the per-seat limits
(docs/operations.md#seats).

On a shared machine the echo's figures drift between runs as much as the server's, so ``--rounds N``
measures a fresh server and then the echo N times and reports each figure's median, with the ratios
taken round by round (a server and the echo measured one after the other share the machine's speed).
The server and the echo run on the same event loop (``--event-loop``: uvloop where it is installed, as the
server runs by default), so that the ratio compares the game's work with the transport's on equal terms.

    kutnahora-bench                         # 64 games, 15 s after a 3 s warm-up
    kutnahora-bench --duration 8 --rounds 5 # five server-then-echo rounds, medians and paired ratios
    kutnahora-bench --games 16 --duration 5 --json results.json
    kutnahora-bench --target 127.0.0.1:50051  # drive a server that is already running
    kutnahora-bench --db postgresql://postgres@127.0.0.1:5432/bench   # the PostgreSQL store instead
    kutnahora-bench --unary --quota-store redis://127.0.0.1:6379/0   # SubmitDecision, seat limits in Redis
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import grpc
import grpc.aio
from prometheus_client.parser import text_string_to_metric_families

import kutnahora
from kutnahora.server import event_loop
from kutnahora.v1 import (
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    play_service_pb2,
    play_service_pb2_grpc,
)

LISTENING = re.compile(r"listening on grpc://[^:]+:(\d+)")
METRICS_URL = re.compile(r"\(metrics (http://\S+/metrics)")
ECHO_SERVICE = "bench.Echo"
EOF: Any = grpc.aio.EOF  # type: ignore[attr-defined]


# --- the server under test -----------------------------------------------------------------------------


class Started(NamedTuple):
    """A server process that has started listening, its port and the line it said so in."""

    process: subprocess.Popen[str]
    port: int
    banner: str

    @property
    def metrics_url(self) -> str | None:
        """The URL of the server's ``/metrics`` endpoint, when its banner names one."""
        found = METRICS_URL.search(self.banner)
        return found.group(1) if found else None


def server_command(
    db: str,
    max_games: int,
    synchronous: str = "NORMAL",
    metrics: bool = False,
    loop: str = "auto",
    quota_store: str = "memory",
    quota_prefix: str = "kutnahora-bench",
) -> list[str]:
    """The command of a Kutná Hora server for a benchmark: any free port, no clock, no rate limit, no load
    shedding on the CPU (a benchmark keeps the server at a full core on purpose), warnings only, the
    store ``db``, at most ``max_games`` games, a metrics endpoint on a free port when ``metrics`` (else
    none), the event loop ``loop``, and the quota store ``quota_store`` (a shared one with its keys under
    ``quota_prefix``)."""
    command = [
        sys.executable, "-m", "kutnahora.server.main", "--port", "0",
        "--metrics-port", "0" if metrics else "off", "--db", db, "--db-synchronous", synchronous,
        "--clock", "false", "--rate", "0", "--log-level", "warning", "--max-games", str(max_games),
        "--event-loop", loop, "--overload-cpu", "0",
    ]  # fmt: skip
    if quota_store != "memory":
        command += ["--quota-store", quota_store, "--quota-store-prefix", quota_prefix]
    return command


def forget_keys(url: str, prefix: str) -> None:
    """Delete every key under ``prefix`` in the Redis at ``url``: what a benchmark's server left there."""
    import redis

    client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
    try:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        for start in range(0, len(keys), 1000):
            client.delete(*keys[start : start + 1000])
    except (redis.RedisError, OSError) as error:
        progress(f"the benchmark's keys under {prefix} in the quota store were left there ({error})")
    finally:
        client.close()


def start_process(command: Sequence[str]) -> Started:
    """Start a server process that prints ``listening on grpc://host:port``; return it, its port and that
    line (the Kutná Hora server names its metrics endpoint there too)."""
    process = subprocess.Popen(list(command), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    match = LISTENING.search(line)
    if match is None:
        process.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return Started(process, int(match.group(1)), line)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


# --- driving games --------------------------------------------------------------------------------------


@dataclass
class Stats:
    """What the drivers measured."""

    measuring: bool = False
    latencies: list[float] = field(default_factory=list)
    games_finished: int = 0
    rejected: int = 0
    client_cpu: float = 0.0
    failures: list[str] = field(default_factory=list)  # why a game driver stopped early


@dataclass
class GameRun:
    """One game being driven: when its last decision was sent (one is outstanding at a time), and whether
    a seat has seen it end (each seat's stream does; the game is counted once)."""

    sent_at: float | None = None
    sent_version: int = -1
    ended: bool = False


# --- the server's own metrics ----------------------------------------------------------------------------

SERVER_TIMES: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "submit": ("kutnahora_submission_latency_seconds", ()),
    "observation": ("kutnahora_observation_build_seconds", ()),
    "store_insert": ("kutnahora_store_write_seconds", ()),
}
"""The server's histograms whose seconds the report shares out over the decisions: the handling of a
decision received on a Play stream, or in a SubmitDecision with ``--unary`` (decoding, checking, storing,
applying, building the next seat's observation), and inside it the observations built and the store's
inserts. Each is wall time. With SQLite it is measured around code that does not wait, so it is about its
CPU time while the machine has a core to spare; with PostgreSQL, storing (and so handling) waits for the
database's answer."""

APPLIED = "kutnahora_decisions_applied_total"
COUNTED = {
    APPLIED: "decisions",
    "kutnahora_store_commits_total": "commits",
    "kutnahora_store_commit_writes_total": "commit_writes",
}
"""The server's counters read with its histograms: the decisions applied, the store's transactions and
the writes they held (with SQLite at ``synchronous=NORMAL`` one each; with FULL or PostgreSQL, group
commit puts several in one)."""


def read_metrics(url: str) -> dict[str, float]:
    """Seconds so far in each of :data:`SERVER_TIMES`, and the counts of :data:`COUNTED`, from ``url``."""
    with urllib.request.urlopen(url, timeout=10) as answer:
        text = answer.read().decode()
    found = dict.fromkeys([*SERVER_TIMES, *COUNTED.values()], 0.0)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in COUNTED:
                found[COUNTED[sample.name]] += sample.value
            for part, (histogram, labels) in SERVER_TIMES.items():
                if sample.name == f"{histogram}_sum" and all(sample.labels.get(k) == v for k, v in labels):
                    found[part] += sample.value
    return found


async def try_read_metrics(url: str | None) -> dict[str, float] | None:
    """:func:`read_metrics` in a worker thread; None without a URL or when the server does not answer
    (the report then goes without the server's own figures)."""
    if not url:
        return None
    try:
        return await asyncio.to_thread(read_metrics, url)
    except (OSError, ValueError) as error:
        progress(f"the server's metrics could not be read ({error}); going on without them")
        return None


def server_times(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """Microseconds per decision applied between two readings, for each of :data:`SERVER_TIMES`, and the
    writes per store transaction."""
    decisions = after["decisions"] - before["decisions"]
    if decisions <= 0:
        return {}
    times = {
        f"server_{part}_us_per_decision": (after[part] - before[part]) / decisions * 1e6
        for part in SERVER_TIMES
    }
    commits = after["commits"] - before["commits"]
    if commits > 0:
        times["server_writes_per_commit"] = (after["commit_writes"] - before["commit_writes"]) / commits
    return times


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def play_seat(
    play: play_service_pb2_grpc.PlayServiceStub,
    game_id: str,
    seat: int,
    token: str,
    run: GameRun,
    stats: Stats,
    rng: random.Random,
) -> None:
    """Play one seat over its Play stream with random legal options until the game ends."""
    call = play.Play(metadata=bearer(token))
    await call.write(
        play_service_pb2.PlayRequest(start=play_service_pb2.PlayStart(game_id=game_id, seat=seat))
    )
    decision = play_service_pb2.PlayRequest()
    while True:
        response = await call.read()
        if response is EOF:
            return
        kind = response.WhichOneof("message")
        now = time.perf_counter()
        if run.sent_at is not None and kind in ("your_turn", "game_ended"):
            if stats.measuring:
                stats.latencies.append(now - run.sent_at)
            run.sent_at = None
        if kind == "your_turn":
            observation = response.your_turn.observation
            decision.decision.version = observation.version
            decision.decision.answer.option_index = rng.randrange(len(observation.pending.options))
            run.sent_at = time.perf_counter()
            await call.write(decision)
        elif kind == "game_ended":
            if stats.measuring and not run.ended:
                stats.games_finished += 1
            run.ended = True
            await call.done_writing()
            return
        else:
            stats.rejected += 1


async def answer_seat(
    play: play_service_pb2_grpc.PlayServiceStub,
    game_id: str,
    seat: int,
    token: str,
    run: GameRun,
    stats: Stats,
    rng: random.Random,
) -> None:
    """Play one seat over unary calls with random legal options until the game ends: watch the game as
    the seat, and answer each of its turns with SubmitDecision."""
    watch = play.WatchGame(
        play_service_pb2.WatchGameRequest(game_id=game_id, seat=seat), metadata=bearer(token)
    )
    request = play_service_pb2.SubmitDecisionRequest(game_id=game_id, seat=seat)
    async for response in watch:
        if response.seats:
            continue  # who holds the seats, repeating a version already seen
        observation = response.observation
        now = time.perf_counter()
        if run.sent_at is not None and observation.version > run.sent_version:
            if stats.measuring:
                stats.latencies.append(now - run.sent_at)
            run.sent_at = None
        if response.status == game_pb2.GAME_STATUS_FINISHED:
            if stats.measuring and not run.ended:
                stats.games_finished += 1
            run.ended = True
            return
        pending = observation.pending
        if observation.HasField("pending") and pending.seat == seat and pending.options:
            request.version = observation.version
            request.answer.option_index = rng.randrange(len(pending.options))
            run.sent_at, run.sent_version = time.perf_counter(), observation.version
            try:
                await play.SubmitDecision(request, metadata=bearer(token))
            except grpc.aio.AioRpcError:
                stats.rejected += 1


async def new_game(
    games: game_service_pb2_grpc.GameServiceStub, players: int, seed: int, label: str, join: bool = False
) -> tuple[game_service_pb2.CreateGameResponse, list[str]]:
    """A game without a clock and with every seat taken: named in CreateGame, as the tournament runner
    creates games, or with ``join`` created empty and joined seat by seat. The response and the seat
    tokens, in seat order."""
    created = await games.CreateGame(
        game_service_pb2.CreateGameRequest(
            options=game_pb2.GameOptions(players=players),
            seed=seed,
            clock=game_pb2.ClockSettings(disabled=True),
            label=label,
            seat_names=() if join else [label] * players,
        )
    )
    tokens = list(created.seat_tokens)
    for seat in range(players if join else 0):
        joined = await games.JoinGame(
            game_service_pb2.JoinGameRequest(game_id=created.game.game_id, seat=seat, name=label)
        )
        tokens.append(joined.seat_token)
    return created, tokens


@dataclass(frozen=True)
class Load:
    """The games the benchmark plays: how many at once, their seats, for how long, over how many
    connections, and whether their seats join one by one."""

    games: int
    players: Sequence[int]
    warmup: float
    duration: float
    channels: int
    join: bool = False
    unary: bool = False


async def drive_games(
    channel: grpc.aio.Channel, load: Load, stats: Stats, stop: asyncio.Event, seed: int
) -> None:
    """Play games one after another on a channel until asked to stop."""
    games = game_service_pb2_grpc.GameServiceStub(channel)  # type: ignore[no-untyped-call]
    play = play_service_pb2_grpc.PlayServiceStub(channel)  # type: ignore[no-untyped-call]
    rng = random.Random(seed)
    round_number = 0
    while not stop.is_set():
        count = load.players[round_number % len(load.players)]
        round_number += 1
        created, tokens = await new_game(games, count, rng.randrange(1 << 62), "bench", load.join)
        game_id = created.game.game_id
        run = GameRun()
        player = answer_seat if load.unary else play_seat
        await asyncio.gather(
            *(player(play, game_id, seat, token, run, stats, rng) for seat, token in enumerate(tokens))
        )


async def measure_games(address: str, load: Load) -> tuple[Stats, float]:
    """Drive ``load.games`` concurrent games; returns the stats and the measured wall time."""
    stats = Stats()
    stop = asyncio.Event()
    opened = [grpc.aio.insecure_channel(address) for _ in range(load.channels)]
    tasks = [
        asyncio.create_task(drive_games(opened[i % load.channels], load, stats, stop, seed=i))
        for i in range(load.games)
    ]
    await asyncio.sleep(load.warmup)
    stats.measuring = True
    started = time.perf_counter()
    cpu_started = time.process_time()
    await asyncio.sleep(load.duration)
    stats.measuring = False
    elapsed = time.perf_counter() - started
    stats.client_cpu = time.process_time() - cpu_started
    stop.set()
    for task in tasks:
        task.cancel()
    for outcome in await asyncio.gather(*tasks, return_exceptions=True):
        if isinstance(outcome, grpc.aio.AioRpcError):
            stats.failures.append(f"{outcome.code().name}: {outcome.details()}")
        elif isinstance(outcome, Exception):
            stats.failures.append(f"{type(outcome).__name__}: {outcome}")
    for channel in opened:
        await channel.close(None)
    return stats, elapsed


async def measure_with_cpu(
    server: subprocess.Popen[str] | None, address: str, load: Load, metrics: str | None = None
) -> tuple[Stats, float, float, dict[str, float]]:
    """:func:`measure_games`, with the server's CPU seconds spent during the measured window and, when
    ``metrics`` is the server's metrics URL, its :func:`server_times` in that window."""
    stats_task = asyncio.create_task(measure_games(address, load))
    await asyncio.sleep(load.warmup)
    before = cpu_seconds(server.pid) if server is not None else 0.0
    read_before = await try_read_metrics(metrics)
    await asyncio.sleep(load.duration)
    after = cpu_seconds(server.pid) if server is not None else 0.0
    read_after = await try_read_metrics(metrics)
    stats, elapsed = await stats_task
    times = server_times(read_before, read_after) if read_before and read_after else {}
    return stats, elapsed, after - before, times


# --- the echo ceiling -----------------------------------------------------------------------------------


def _identity(data: bytes) -> bytes:
    return data


async def serve_echo() -> None:
    """A trivial grpc.aio server: unary echo and a bidirectional echo stream, raw bytes."""

    async def unary(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        return request

    async def stream(requests: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        async for request in requests:
            yield request

    handler = grpc.method_handlers_generic_handler(
        ECHO_SERVICE,
        {
            "Unary": grpc.unary_unary_rpc_method_handler(unary, _identity, _identity),
            "Stream": grpc.stream_stream_rpc_method_handler(stream, _identity, _identity),
        },
    )
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"echo listening on grpc://127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


async def measure_echo(
    address: str, callers: int, duration: float, payload: bytes, pid: int
) -> tuple[float, float, float, float]:
    """Unary calls per second and streamed messages per second, each with the echo server's CPU seconds
    per call or message, with ``callers`` concurrent callers."""
    channel = grpc.aio.insecure_channel(address)
    unary = channel.unary_unary(f"/{ECHO_SERVICE}/Unary", _identity, _identity)
    stream = channel.stream_stream(f"/{ECHO_SERVICE}/Stream", _identity, _identity)
    await unary(payload)

    async def unary_loop(until: float, counts: list[int]) -> None:
        while time.perf_counter() < until:
            await unary(payload)
            counts[0] += 1

    async def stream_loop(until: float, counts: list[int]) -> None:
        call = stream()  # type: ignore[call-arg]
        while time.perf_counter() < until:
            await call.write(payload)
            await call.read()
            counts[0] += 1
        await call.done_writing()
        await call.read()

    rates = []
    cpu_per_call = []
    for loop in (unary_loop, stream_loop):
        counts = [0]
        cpu_started = cpu_seconds(pid)
        started = time.perf_counter()
        until = started + duration
        await asyncio.gather(*(loop(until, counts) for _ in range(callers)))
        rates.append(counts[0] / (time.perf_counter() - started))
        cpu_per_call.append((cpu_seconds(pid) - cpu_started) / max(counts[0], 1))
    await channel.close(None)
    return rates[0], cpu_per_call[0], rates[1], cpu_per_call[1]


# --- building observations ------------------------------------------------------------------------------


def measure_observation_cost(games: int = 4) -> dict[str, float]:
    """CPU microseconds per observation (the engine's view as the server's observer builds it, the wire
    encoding, and for comparison a plain view and message build) and per engine apply, over every
    decision of a few random four-seat games, for the seat that owes it."""
    from kutnahora import engine, wire
    from kutnahora.engine.text import QUESTIONS, describe_option
    from kutnahora.wire.encoder import ObservationEncoder

    rng = random.Random(1)
    observe_s = encode_s = reference_s = apply_s = 0.0
    count = 0
    for _ in range(games):
        state = engine.new_game(engine.GameOptions(players=4), rng.randrange(1 << 30))
        encoder = ObservationEncoder("bench")
        while state.pending is not None:
            pending = state.pending
            kind = pending.kind
            started = time.process_time()
            view = encoder.observer.observe(state, pending.seat)  # as the server observes
            observed = time.process_time()
            encoder.encode(view, QUESTIONS[kind], partial(describe_option, state, kind))
            encoded = time.process_time()
            wire.observation_to_wire(engine.observe(state, pending.seat), "bench").SerializeToString()
            built = time.process_time()
            option = rng.choice(pending.options)
            before = time.process_time()
            engine.apply(state, option)
            applied = time.process_time()
            observe_s += observed - started
            encode_s += encoded - observed
            reference_s += built - encoded
            apply_s += applied - before
            count += 1
    return {
        "engine_observe_us": observe_s / count * 1e6,
        "encode_us": encode_s / count * 1e6,
        "reference_build_and_serialize_us": reference_s / count * 1e6,
        "engine_apply_us": apply_s / count * 1e6,
        "decisions": float(count),
    }


# --- the command ----------------------------------------------------------------------------------------


def percentile(values: Sequence[float], fraction: float) -> float:
    """The value below which ``fraction`` of the sorted values fall (nearest rank)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def parse_players(text: str) -> list[int]:
    counts = [int(part) for part in text.split(",") if part]
    if not counts or any(c not in (2, 3, 4) for c in counts):
        raise argparse.ArgumentTypeError("players must be a comma-separated list of 2, 3 and 4")
    return counts


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kutnahora-bench",
        description="Benchmark the Kutná Hora server against a trivial gRPC echo server.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--games", type=int, default=64, help="games played at once")
    parser.add_argument("--players", type=parse_players, default=[2, 3, 4], help="seats per game, cycled")
    parser.add_argument("--duration", type=float, default=15.0, help="seconds measured")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring")
    parser.add_argument("--channels", type=int, default=4, help="client connections to spread the games over")
    parser.add_argument(
        "--join",
        action="store_true",
        help="create each game empty and join its seats one by one with JoinGame, instead of naming the "
        "seats in CreateGame",
    )
    parser.add_argument(
        "--db",
        default="",
        help="the server's store: a SQLite file or a postgresql:// URL (default: a temporary SQLite file)",
    )
    parser.add_argument("--synchronous", default="NORMAL", help="SQLite synchronous pragma for the server")
    parser.add_argument(
        "--unary",
        action="store_true",
        help="play every seat over unary calls (WatchGame as the seat, SubmitDecision) instead of Play "
        "streams; the ratios are then to the echo's unary calls",
    )
    parser.add_argument(
        "--quota-store",
        default="memory",
        type=_quota_store,
        help="the server's --quota-store: memory, or a redis:// URL (each server started gets a fresh key "
        "prefix there, whose keys are deleted when it stops)",
    )
    parser.add_argument("--target", default="", help="drive this running server instead of starting one")
    parser.add_argument("--echo-duration", type=float, default=4.0, help="seconds per echo measurement")
    parser.add_argument(
        "--echo-callers", type=int, default=0, help="concurrent echo callers (default: as many as --games)"
    )
    parser.add_argument("--no-echo", action="store_true", help="skip the echo ceiling")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure the server and then the echo this many times, each round on a fresh server, and "
        "report the medians, the ratios taken round by round",
    )
    parser.add_argument(
        "--event-loop",
        default="auto",
        choices=event_loop.CHOICES,
        help="the event loop of the server started here and of the echo, the same for both: auto is "
        "uvloop where installed, else asyncio's",
    )
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    parser.add_argument("--echo-server", action="store_true", help=argparse.SUPPRESS)
    return parser


def _quota_store(text: str) -> str:
    from kutnahora.plumbing.quota_store import parse_url

    try:
        return parse_url(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kutnahora-bench``."""
    args = build_parser().parse_args(argv)
    try:
        args.event_loop = event_loop.resolve(args.event_loop)
    except ValueError as error:
        raise SystemExit(f"kutnahora-bench: {error}") from None
    if args.echo_server:
        event_loop.run(serve_echo(), args.event_loop)
        return 0
    if args.rounds < 1:
        raise SystemExit("kutnahora-bench: --rounds must be at least 1")
    results: dict[str, Any] = {
        "games": args.games,
        "players": args.players,
        "duration_s": args.duration,
        "seating": "JoinGame" if args.join else "CreateGame",
        "playing": "unary" if args.unary else "stream",
    }
    if not args.target:
        from kutnahora.plumbing.quota_store import show_url

        results["quota_store"] = show_url(args.quota_store)
    if not args.target:  # the server started here runs this interpreter, with this installation's modules
        results["compiled_modules"] = len(kutnahora.compiled_modules())
        results["event_loop"] = args.event_loop
    rounds: list[dict[str, Any]] = []
    for number in range(1, args.rounds + 1):
        heading = f"round {number} of {args.rounds}: " if args.rounds > 1 else ""
        measured = measure_server(args, heading)
        if not args.no_echo:
            measured.update(measure_echo_round(args, heading))
        rounds.append(with_ratios(measured, unary=args.unary))
    results.update(combine(rounds))
    if args.rounds > 1:
        results["rounds"] = rounds
    progress("what an observation costs, in this process")
    results["observation"] = measure_observation_cost()
    print_report(results)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


def measure_server(args: argparse.Namespace, heading: str = "") -> dict[str, Any]:
    """Play the games against the server (started here unless ``--target`` names one) and return its
    figures; SystemExit when no decision was made."""
    figures: dict[str, Any] = {}
    server: subprocess.Popen[str] | None = None
    prefix = f"kutnahora-bench-{uuid.uuid4().hex[:12]}"  # a fresh one for each server: its counts start anew
    with tempfile.TemporaryDirectory() as folder:
        metrics: str | None = None
        if args.target:
            address = args.target
            figures["store"] = "as configured by the target"
        else:
            db = args.db or str(Path(folder) / "bench.db")
            started = start_process(
                server_command(
                    db,
                    max(1000, args.games * 4),
                    args.synchronous,
                    metrics=True,
                    loop=args.event_loop,
                    quota_store=args.quota_store,
                    quota_prefix=prefix,
                )
            )
            server = started.process
            address = f"127.0.0.1:{started.port}"
            metrics = started.metrics_url
            from kutnahora.server.store import is_postgres_url

            figures["store"] = (
                "postgresql" if is_postgres_url(db) else f"sqlite (synchronous={args.synchronous})"
            )
        try:
            progress(
                f"{heading}playing {args.games} games on {address}: {args.warmup:g} s of warm-up, then "
                f"{args.duration:g} s measured"
            )
            stats, elapsed, server_cpu, times = asyncio.run(
                measure_with_cpu(
                    server,
                    address,
                    Load(
                        args.games,
                        args.players,
                        args.warmup,
                        args.duration,
                        args.channels,
                        args.join,
                        args.unary,
                    ),
                    metrics,
                )
            )
        finally:
            if server is not None:
                server.terminate()
                server.wait(30)
                if args.quota_store != "memory":
                    forget_keys(args.quota_store, prefix)
    decisions = len(stats.latencies)
    if not decisions:
        why = f" ({stats.failures[0]})" if stats.failures else ""
        raise SystemExit(f"kutnahora-bench: no decision was made at {address} in the measured time{why}")
    figures.update(
        decisions=decisions,
        decisions_per_s=decisions / elapsed,
        latency_p50_ms=percentile(stats.latencies, 0.50) * 1000,
        latency_p99_ms=percentile(stats.latencies, 0.99) * 1000,
        latency_mean_ms=statistics.fmean(stats.latencies) * 1000,
        games_finished=stats.games_finished,
        rejected=stats.rejected,
        drivers_failed=len(stats.failures),
        client_cpu_us_per_decision=stats.client_cpu / decisions * 1e6,
    )
    if server is not None:
        figures["server_cpu_us_per_decision"] = server_cpu / decisions * 1e6
    figures.update(times)
    return figures


def measure_echo_round(args: argparse.Namespace, heading: str = "") -> dict[str, Any]:
    """The echo ceiling, measured now: right after the server, so that the two share the machine's speed
    of the moment."""
    progress(
        f"{heading}the echo ceiling: {args.echo_duration:g} s of unary calls, "
        f"{args.echo_duration:g} s streamed"
    )
    echo, port, _ = start_process(
        [
            sys.executable, "-m", "kutnahora.bench.server_bench", "--echo-server",
            "--event-loop", args.event_loop,
        ]
    )  # fmt: skip
    try:
        payload = b"x" * 1200  # about one observation
        callers = args.echo_callers or args.games
        unary, unary_cpu, streamed, stream_cpu = asyncio.run(
            measure_echo(f"127.0.0.1:{port}", callers, args.echo_duration, payload, echo.pid)
        )
    finally:
        echo.terminate()
        echo.wait(10)
    return {
        "echo_callers": callers,
        "echo_unary_per_s": unary,
        "echo_cpu_us_per_unary_call": unary_cpu * 1e6,
        "echo_stream_msgs_per_s": streamed,
        "echo_cpu_us_per_stream_msg": stream_cpu * 1e6,
    }


def with_ratios(measured: dict[str, Any], unary: bool = False) -> dict[str, Any]:
    """``measured`` with its ratios to the echo, where the echo was measured: to its streamed messages,
    or (``unary``, decisions over SubmitDecision) to its unary calls."""
    figures = dict(measured)
    rate, cpu = ("echo_unary_per_s", "echo_cpu_us_per_unary_call") if unary else (
        "echo_stream_msgs_per_s", "echo_cpu_us_per_stream_msg"
    )  # fmt: skip
    if rate in figures:
        figures["ratio_to_echo"] = figures["decisions_per_s"] / figures[rate]
        if "server_cpu_us_per_decision" in figures and figures[cpu] > 0:
            figures["server_cpu_per_echo_cpu"] = figures["server_cpu_us_per_decision"] / figures[cpu]
    return figures


def combine(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """One round's figures as they are; of several, the counts summed, each other figure's median (its
    ratios were taken round by round: a server and an echo measured one after the other share the
    machine's speed of the moment), and what every round agrees on as it is."""
    if len(rounds) == 1:
        return rounds[0]
    combined: dict[str, Any] = {}
    for key, value in rounds[0].items():
        values = [measured[key] for measured in rounds if key in measured]
        if key in ("decisions", "games_finished", "rejected", "drivers_failed"):
            combined[key] = sum(values)
        elif all(other == value for other in values) or not isinstance(value, (int, float)):
            combined[key] = value
        else:
            combined[key] = statistics.median(values)
    return combined


def progress(step: str) -> None:
    """Say on stderr what the benchmark does now (the report itself goes to stdout)."""
    print(f"kutnahora-bench: {step}…", file=sys.stderr, flush=True)


def _build(compiled: int | None) -> str:
    """How the server started here was built: pure Python, or with modules compiled (setup.py)."""
    if compiled is None:
        return ""
    if compiled == 0:
        return ", a pure-Python server"
    return f", a compiled server ({compiled} of {len(kutnahora.COMPILABLE)} modules)"


def _loop(name: str | None) -> str:
    """The event loop of the server started here, which the echo ran on too."""
    return f", on the {name} event loop (the echo too)" if name else ""


def print_report(results: dict[str, Any]) -> None:
    """The results, for people."""
    r = results
    seats = "/".join(map(str, r["players"]))
    seating = "seats joined one by one" if r.get("seating") == "JoinGame" else "seats named at creation"
    print(
        f"kutnahora-bench: {r['games']} concurrent games ({seats} seats, {seating}), store {r['store']}, "
        + ("unary calls" if r.get("playing") == "unary" else "Play streams")
        + (f", quota store {r['quota_store']}" if r.get("quota_store", "memory") != "memory" else "")
        + _build(r.get("compiled_modules"))
        + _loop(r.get("event_loop"))
    )
    rounds = r.get("rounds", [])
    if rounds:
        print(f"  {len(rounds)} rounds, each a fresh server and then the echo; the figures below are medians")
        for number, measured in enumerate(rounds, 1):
            line = f"  round {number:<8} {measured['decisions_per_s']:8.0f} decisions/s"
            if "server_cpu_us_per_decision" in measured:
                line += f", server {measured['server_cpu_us_per_decision']:.0f} µs per decision"
            if r.get("playing") == "unary" and "echo_cpu_us_per_unary_call" in measured:
                line += f", echo {measured['echo_cpu_us_per_unary_call']:.0f} µs per call"
            elif "echo_cpu_us_per_stream_msg" in measured:
                line += f", echo {measured['echo_cpu_us_per_stream_msg']:.0f} µs per message"
            if "server_cpu_per_echo_cpu" in measured:
                line += f", ratio {measured['server_cpu_per_echo_cpu']:.2f}"
            print(line)
    span = f"{len(rounds)} rounds of {r['duration_s']:g} s" if rounds else f"{r['duration_s']:.0f} s"
    print(
        f"  decisions/s     {r['decisions_per_s']:8.0f}   ({r['decisions']} decisions in "
        f"{span}, {r['games_finished']} games finished, {r['rejected']} rejected)"
    )
    print(
        f"  latency         p50 {r['latency_p50_ms']:.1f} ms   p99 {r['latency_p99_ms']:.1f} ms   "
        f"mean {r['latency_mean_ms']:.1f} ms"
    )
    if r.get("drivers_failed"):
        print(
            f"  warning         {r['drivers_failed']} of {r['games']} game drivers stopped early on an error"
        )
    if "server_cpu_us_per_decision" in r:
        print(
            f"  CPU             server {r['server_cpu_us_per_decision']:.0f} µs per decision, "
            f"client {r['client_cpu_us_per_decision']:.0f} µs per decision"
        )
    if "server_submit_us_per_decision" in r:
        waits = "postgresql" in str(r.get("store"))
        print(
            f"  in the server   handling a decision {r['server_submit_us_per_decision']:.0f} µs, of which "
            f"the next observation {r['server_observation_us_per_decision']:.0f} µs and storing "
            f"{r['server_store_insert_us_per_decision']:.0f} µs "
            + (
                f"({r['server_writes_per_commit']:.1f} writes a commit) "
                if "server_writes_per_commit" in r
                else ""
            )
            + (
                "(its metrics, wall time: storing waits for PostgreSQL's answer)"
                if waits
                else "(its metrics; the rest of its CPU is gRPC, the games' lives and the event loop)"
            )
        )
    if "echo_unary_per_s" in r:
        streamed = r["echo_stream_msgs_per_s"]
        unary_cpu, stream_cpu = r["echo_cpu_us_per_unary_call"], r["echo_cpu_us_per_stream_msg"]
        print(
            f"  echo ceiling    unary {r['echo_unary_per_s']:.0f} calls/s ({unary_cpu:.0f} µs CPU each)   "
            f"stream {streamed:.0f} msgs/s ({stream_cpu:.0f} µs CPU each)"
        )
        print(f"{'':18}a trivial grpc.aio server on this machine, {r['echo_callers']} concurrent callers")
        unary = r.get("playing") == "unary"
        echo = "unary echo calls/s" if unary else "streamed echo msgs/s"
        print(f"  ratio           decisions/s ÷ {echo} = {r['ratio_to_echo']:.2f}")
        if "server_cpu_per_echo_cpu" in r:
            print(
                "                  server CPU per decision ÷ echo CPU per "
                + ("unary call" if unary else "streamed message")
                + f" = {r['server_cpu_per_echo_cpu']:.1f} (compares machines of different speeds)"
            )
    cost = r["observation"]
    print(
        f"  in-process      engine observe {cost['engine_observe_us']:.0f} µs + wire encoding "
        f"{cost['encode_us']:.0f} µs per observation (a plain view and message build: "
        f"{cost['reference_build_and_serialize_us']:.0f} µs); engine apply {cost['engine_apply_us']:.0f} µs"
    )


if __name__ == "__main__":
    sys.exit(main())
