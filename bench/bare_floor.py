"""The floor under ``kutnahora-hold``: a bare grpc.aio server holding the same streams at the same rate.

What latency can a Python ``grpc.aio`` server give 4,000 bidirectional streams on this machine when it
does no game logic at all? This benchmark answers it with the hold's load and the hold's measurement, so
that the game server's figures can be judged against it:

- the server (a child process, on the same event loop as the game server: uvloop where installed)
  answers ``CreateGame``-like unary calls and holds ``Play``-like bidirectional streams of raw bytes,
  ``--players`` per game. When every seat of a game has opened its stream it sends the first seat its
  turn; each decision received is answered with an acknowledgement to its sender and the next turn to the
  next seat, and after the game's length in decisions every seat gets an end message and its stream
  closes. The messages have the sizes of the game server's: a turn is the mean size of a real
  ``YourTurn`` over random four-seat games, the acknowledgement a real ``DecisionAccepted``, the decision
  a real ``PlayDecision``, and a game lasts as many decisions as a random four-seat game does;
- it also answers ``kutnahora.v1.AdminService/GetServerInfo`` with a small fixed answer, so that
  :mod:`kutnahora.bench.probe` calls it exactly as it calls the game server;
- the clients are the hold's bots without the SDK or the rules: each thinks ``--think`` seconds and
  answers; a game that ends is replaced. They run in ``--client-processes`` children, each measuring the
  latency from a seat's answer to its game's next turn reaching its bot, merged per window
  (:mod:`kutnahora.bench.windows`), beside the probe's process.

    python -m kutnahora.bench.bare_floor            # 1,000 games of 4 seats, 120 s, 2 client processes
    python -m kutnahora.bench.bare_floor --games 200 --duration 30 --report-every 10
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from kutnahora.bench.fuzz import open_descriptors, rss_kib
from kutnahora.bench.processes import start_serving, stop_process
from kutnahora.bench.server_bench import cpu_seconds
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
from kutnahora.server import event_loop
from kutnahora.server.app import PENDING_REQUESTS, PENDING_REQUESTS_HARD_LIMIT
from kutnahora.v1 import admin_service_pb2, game_pb2, play_service_pb2

SERVICE = "bench.Floor"
TURN, ACCEPTED, ENDED = b"T", b"A", b"E"
EOF: Any = grpc.aio.EOF  # type: ignore[attr-defined]
RETRIED = (grpc.StatusCode.CANCELLED, grpc.StatusCode.INTERNAL, grpc.StatusCode.UNAVAILABLE)


def _identity(data: bytes) -> bytes:
    return data


@dataclass(frozen=True)
class Sizes:
    """The game server's message sizes and game length this floor copies."""

    turn: int  # a YourTurn (and a GameEnded, which carries the final observation too), bytes
    accepted: int  # a DecisionAccepted, bytes
    decision: int  # a PlayDecision, bytes
    length: int  # decisions in a game

    @classmethod
    def measured(cls, players: int, games: int = 4) -> Sizes:
        """The mean sizes over ``games`` random games of ``players`` seats, encoded as the server does."""
        from kutnahora import engine
        from kutnahora.engine.text import QUESTIONS, describe_option
        from kutnahora.wire.encoder import ObservationEncoder

        rng = random.Random(7)
        turns: list[int] = []
        lengths: list[int] = []
        for _ in range(games):
            state = engine.new_game(engine.GameOptions(players=players), rng.randrange(1 << 30))
            encoder = ObservationEncoder("floor")
            decisions = 0
            while state.pending is not None:
                pending = state.pending
                view = encoder.observer.observe(state, pending.seat)
                body = encoder.encode(
                    view, QUESTIONS[pending.kind], partial(describe_option, state, pending.kind)
                )
                turns.append(len(body) + 6)  # PlayResponse { your_turn { observation } }
                engine.apply(state, rng.choice(pending.options))
                decisions += 1
            lengths.append(decisions)
        accepted = play_service_pb2.PlayResponse(
            accepted=play_service_pb2.DecisionAccepted(version=150, next_version=151)
        ).SerializeToString()  # as messages.accepted_message builds it
        decision = play_service_pb2.PlayRequest(
            decision=play_service_pb2.PlayDecision(version=150, answer=game_pb2.Answer(option_index=3))
        ).SerializeToString()
        return cls(
            round(statistics.fmean(turns)), len(accepted), len(decision), round(statistics.fmean(lengths))
        )


# --- the server -------------------------------------------------------------------------------------------


@dataclass
class FloorGame:
    """A game on the floor server: its seats' outgoing queues, whose turn it is, decisions so far."""

    players: int
    seats: dict[int, asyncio.Queue[bytes]] = field(default_factory=dict)
    turn: int = 0
    decisions: int = 0
    started: bool = False


async def serve(sizes: Sizes) -> None:
    """The bare server: CreateGame, Play and GetServerInfo, printing its address when it listens."""
    games: dict[str, FloorGame] = {}
    orphans: set[asyncio.Task[None]] = set()
    numbers = iter(range(1, 1 << 62))
    turn = TURN + b"x" * (sizes.turn - 1)
    ended = ENDED + b"x" * (sizes.turn - 1)
    accepted = ACCEPTED + b"x" * (sizes.accepted - 1)
    info = admin_service_pb2.GetServerInfoResponse(server_version="floor", store="memory").SerializeToString()

    async def server_info(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        return info

    async def create_game(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        game_id = f"g{next(numbers)}"
        games[game_id] = FloorGame(int(request.decode()))
        return game_id.encode()

    async def play(requests: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        first: Any = await context.read()
        start = bytes(first).decode()
        game_id, seat_text = start.split(":")
        game, seat = games[game_id], int(seat_text)
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        game.seats[seat] = queue
        if len(game.seats) == game.players:
            if not game.started:  # the last seat came: the first one's turn
                game.started = True
                game.seats[game.turn].put_nowait(turn)
            elif game.turn == seat:  # a seat that opened its stream again owes the turn: again
                queue.put_nowait(turn)

        async def read() -> None:
            while True:
                message = await context.read()
                if message is EOF or game.turn != seat:
                    return
                queue.put_nowait(accepted)
                game.decisions += 1
                if game.decisions >= sizes.length:
                    for other in game.seats.values():
                        other.put_nowait(ended)
                    games.pop(game_id, None)
                    return
                game.turn = (game.turn + 1) % game.players
                game.seats[game.turn].put_nowait(turn)

        reader = asyncio.create_task(read())
        while True:
            message = await queue.get()
            await context.write(message)
            if message[:1] == ENDED:
                break
        if not reader.done():  # left to end with the call, as the game server does: a read cancelled while
            orphans.add(reader)  # it waits would keep the next message the client sends
            reader.add_done_callback(orphans.discard)

    handlers = [
        grpc.method_handlers_generic_handler(
            SERVICE,
            {
                "CreateGame": grpc.unary_unary_rpc_method_handler(create_game, _identity, _identity),
                "Play": grpc.stream_stream_rpc_method_handler(play, _identity, _identity),
            },
        ),
        grpc.method_handlers_generic_handler(
            "kutnahora.v1.AdminService",
            {"GetServerInfo": grpc.unary_unary_rpc_method_handler(server_info, _identity, _identity)},
        ),
    ]
    server = grpc.aio.server(
        options=[  # as the game server's (kutnahora.server.app): a burst of 4,000 streams is taken up whole
            ("grpc.so_reuseport", 0),
            ("grpc.server.max_pending_requests", PENDING_REQUESTS),
            ("grpc.server.max_pending_requests_hard_limit", PENDING_REQUESTS_HARD_LIMIT),
        ]
    )
    server.add_generic_rpc_handlers(handlers)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"floor listening on grpc://127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


# --- the clients ------------------------------------------------------------------------------------------


async def clients(
    target: str, games: int, players: int, connections: int, think: tuple[float, float], sizes: Sizes,
    duration: float, every: float, seed: int,
) -> None:  # fmt: skip
    """Hold ``games`` games on the floor server for ``duration`` seconds, printing each window as JSON."""
    channels = [grpc.aio.insecure_channel(target) for _ in range(connections)]
    creates = [channel.unary_unary(f"/{SERVICE}/CreateGame", _identity, _identity) for channel in channels]
    plays = [channel.stream_stream(f"/{SERVICE}/Play", _identity, _identity) for channel in channels]
    rng = random.Random(seed)
    decision = b"d" * sizes.decision
    latencies: list[float] = []
    counts = {"decisions": 0, "finished": 0, "failed": 0, "reconnects": 0}
    stopping = asyncio.Event()

    async def seat(slot: int, game_id: str, number: int, answered: list[float | None]) -> None:
        """Play a seat; a stream that fails is opened again after a short wait, as the SDK's Play does."""
        for attempt in range(1, 11):
            try:
                await seat_once(slot, game_id, number, answered)
                return
            except grpc.aio.AioRpcError as error:
                if attempt == 10 or error.code() not in RETRIED:
                    raise
                counts["reconnects"] += 1
                await asyncio.sleep(0.1 * attempt)

    async def seat_once(slot: int, game_id: str, number: int, answered: list[float | None]) -> None:
        call = plays[slot % len(plays)]()  # type: ignore[call-arg]
        await call.write(f"{game_id}:{number}".encode())
        while True:
            message: Any = await call.read()
            if message is EOF or message[:1] == ENDED:
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await call.done_writing()
                return
            if message[:1] != TURN:
                continue
            sent = answered[0]
            if sent is not None:
                latencies.append(time.monotonic() - sent)
            await asyncio.sleep(rng.uniform(*think))
            answered[0] = time.monotonic()
            counts["decisions"] += 1
            await call.write(decision)

    async def one_game(slot: int) -> None:
        while not stopping.is_set():
            try:
                game_id = (await creates[slot % len(creates)](str(players).encode())).decode()
                answered: list[float | None] = [None]
                await asyncio.gather(*(seat(slot, game_id, number, answered) for number in range(players)))
                counts["finished"] += 1
            except grpc.aio.AioRpcError as error:
                counts["failed"] += 1
                if counts["failed"] <= 3:
                    print(f"floor client: {error.code().name}: {error.debug_error_string()}", file=sys.stderr)
                await asyncio.sleep(1.0)

    last = 0

    def take(number: int, seconds: float) -> Window:
        nonlocal last
        window = Window(number, seconds, counts["decisions"] - last, list(latencies), dict(counts))
        latencies.clear()
        last = counts["decisions"]
        return window

    tasks = [asyncio.create_task(one_game(slot)) for slot in range(games)]
    async for window in windows_on_schedule(time.monotonic(), duration, every, take):
        emit(window)
    stopping.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for channel in channels:
        await channel.close(None)


# --- the command ------------------------------------------------------------------------------------------


async def run(args: argparse.Namespace, sizes: Sizes, target: str, pid: int) -> int:
    """Start the client processes and the probe on ``target``; print a merged line per window. The number
    of client processes and probe calls that failed."""
    sources = [f"client {index}" for index in range(args.client_processes)]
    probing = args.probe_interval_ms > 0
    elapsed = 0.0
    cpu = [cpu_seconds(pid)]
    failed = 0

    def line(number: int, windows: dict[str, Window]) -> None:
        nonlocal elapsed
        probe = windows.pop("probe", None)
        if not windows:
            return
        merged = merge(list(windows.values()))
        elapsed += merged.seconds
        used, cpu[0] = cpu_seconds(pid) - cpu[0], cpu_seconds(pid)
        text = (
            f"bare floor: {elapsed:6.0f} s  {merged.decisions / max(merged.seconds, 1e-9):7.1f} decisions/s  "
            f"latency {millis(spread(merged.latencies), ('p50', 'p99'))}  server CPU "
            f"{used / max(merged.seconds, 1e-9) * 100:3.0f}%  games finished "
            f"{merged.counters.get('finished', 0)}, {merged.counters.get('failed', 0)} failed, "
            f"{merged.counters.get('reconnects', 0)} reconnects"
        )
        if probe is not None:
            text += f"  probe {probe.decisions} calls {millis(spread(probe.latencies))}"
        load = "/".join(f"{value:.1f}" for value in os.getloadavg())
        print(
            f"{text}  server RSS {rss_kib(pid) // 1024} MiB, {open_descriptors(pid)} fds  load {load}",
            flush=True,
        )

    merger = Merger([*sources, *(["probe"] if probing else [])], line)

    async def child(source: str, command: list[str]) -> None:
        nonlocal failed
        process, lines = await child_lines(command)
        async for text in lines:
            window = Window.from_json(json.loads(text))
            merger.add(source, window)
        merger.finish(source)
        if await process.wait() != 0:
            failed += 1

    share = [args.games // len(sources) + (i < args.games % len(sources)) for i in range(len(sources))]
    children = [
        child(source, [
            sys.executable, "-m", "kutnahora.bench.bare_floor", "--client-of", target,
            "--client-index", str(index), "--games", str(share[index]), "--players", str(args.players),
            "--connections", str(max(1, args.connections // len(sources))), "--think", args.think,
            "--duration", str(args.duration), "--report-every", str(args.report_every),
            "--sizes", json.dumps(sizes.__dict__),
        ])
        for index, source in enumerate(sources)
    ]  # fmt: skip
    if probing:
        children.append(
            child("probe", [
                sys.executable, "-m", "kutnahora.bench.probe", "--target", target, "--json",
                "--interval-ms", str(args.probe_interval_ms), "--duration", str(args.duration),
                "--report-every", str(args.report_every),
            ])
        )  # fmt: skip
    await asyncio.gather(*children)
    return failed


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.bare_floor",
        description="Hold kutnahora-hold's streams and message rate on a bare grpc.aio server, with the "
        "hold's latency measure and the probe: the floor the game server is judged against.",
        formatter_class=DefaultsHelpFormatter,
    )
    parser.add_argument("--games", type=int, default=1000, help="games held at once")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4), help="seats (streams) per game")
    parser.add_argument("--connections", type=int, default=8, help="client connections the streams share")
    parser.add_argument("--think", default="0.5-2.0", help="each bot's thinking time, MIN-MAX seconds")
    parser.add_argument("--duration", type=float, default=120.0, help="seconds measured")
    parser.add_argument("--report-every", type=float, default=30.0, help="seconds per report line")
    parser.add_argument("--client-processes", type=int, default=2, help="child processes the bots run in")
    parser.add_argument(
        "--probe-interval-ms", type=float, default=20.0, help="GetServerInfo probe interval (0: no probe)"
    )
    parser.add_argument(
        "--event-loop", default="auto", choices=event_loop.CHOICES, help="the bare server's event loop"
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--client-of", default="", help=argparse.SUPPRESS)
    parser.add_argument("--client-index", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default="", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the floor and print its figures; exit 1 when a client process or probe call failed."""
    from kutnahora.bench.hold import parse_think

    args = build_parser().parse_args(argv)
    think = parse_think(args.think)
    if args.serve:
        event_loop.run(serve(Sizes(**json.loads(args.sizes))), args.event_loop)
        return 0
    if args.client_of:
        sizes = Sizes(**json.loads(args.sizes))
        asyncio.run(
            clients(
                args.client_of, args.games, args.players, args.connections, think, sizes,
                args.duration, args.report_every, seed=args.client_index + 1,
            )
        )  # fmt: skip
        return 0
    if args.games <= 0 or args.duration <= 0 or args.report_every <= 0 or args.connections <= 0:
        raise SystemExit("--games, --connections, --duration and --report-every must be positive")
    if not 1 <= args.client_processes <= args.games:
        raise SystemExit("--client-processes must be between 1 and --games")
    sizes = Sizes.measured(args.players)
    with tempfile.TemporaryDirectory(prefix="kutnahora-floor-") as folder:
        server, target = start_serving(
            [
                sys.executable, "-m", "kutnahora.bench.bare_floor", "--serve", "--sizes",
                json.dumps(sizes.__dict__), "--event-loop", args.event_loop,
            ],
            Path(folder) / "floor.log",
        )  # fmt: skip
        try:
            print(
                f"bare floor: {args.games} games of {args.players} streams over {args.connections} "
                f"connections to a bare grpc.aio server on {target} ({event_loop.resolve(args.event_loop)}), "
                "bots thinking "
                f"{args.think} s, for {args.duration:g} s in {args.client_processes} client processes; "
                f"messages: turn {sizes.turn} B, acknowledgement {sizes.accepted} B, decision "
                f"{sizes.decision} B, {sizes.length} decisions a game",
                flush=True,
            )
            failed = asyncio.run(run(args, sizes, target, server.pid))
        finally:
            stop_process(server)
    if failed:
        print(f"bare floor: {failed} client or probe processes failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
