"""``kutnahora-soak``: hostile Play streams, over and over, with the server's resident memory over time.

Each sequence opens a Play stream and misbehaves in one of a few ways: a first message that does not
decode, a start for a seat whose token it does not hold, a start followed by messages that do not decode,
decisions for the wrong version or with options that are not listed, an option text of 100 KB, a stream
abandoned (cancelled) in the middle of its turn, or a start on a game that has ended followed by a decision
of 100 KB (the server ends such a stream by itself while the client is still sending). Several run at
once. Every few seconds the command prints how many sequences ran and the server's RSS; at the end, how
much the RSS grew per sequence over the first and the second half of the run. A server that holds nothing
per finished stream levels off: the second half's growth per sequence is near zero.

    kutnahora-soak                          # 20,000 sequences against a fresh server (memory store)
    kutnahora-soak --sequences 100000 --concurrency 32
    kutnahora-soak --kinds ended_game       # only streams the server ends by itself
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from kutnahora.bench.fuzz import rss_kib, start_server
from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2

PLAY = "/kutnahora.v1.PlayService/Play"
GARBAGE = b"\xff\xff\xff\xff"
KINDS = (
    "garbage_first",
    "wrong_seat",
    "garbage_later",
    "bad_decisions",
    "huge_text",
    "abandon_turn",
    "ended_game",
)
ENDED_GAME_TEXT = 100_000  # the size of the decision sent after a start on an ended game


def _start(game_id: str, seat: int) -> bytes:
    return play_service_pb2.PlayRequest(
        start=play_service_pb2.PlayStart(game_id=game_id, seat=seat)
    ).SerializeToString()


def _decision(version: int, **answer: Any) -> bytes:
    decision = play_service_pb2.PlayDecision(version=version, answer=game_pb2.Answer(**answer))
    return play_service_pb2.PlayRequest(decision=decision).SerializeToString()


async def hostile_sequence(
    channel: grpc.aio.Channel, game_id: str, tokens: Sequence[str], seat: int, kind: str
) -> None:
    """One misbehaving Play stream of the given kind; its end, whatever status it has, is expected."""
    stream = channel.stream_stream(PLAY, None, None)
    token = tokens[seat] if kind != "wrong_seat" else tokens[1 - seat]
    call = stream(None, metadata=(("authorization", f"Bearer {token}"),))
    try:
        if kind == "garbage_first":
            await call.write(GARBAGE)
        else:
            await call.write(_start(game_id, seat))
            if kind == "garbage_later":
                await call.write(GARBAGE)
                await call.write(GARBAGE[:2])
            elif kind == "bad_decisions":
                await call.write(_decision(10_000, option_index=0))
                await call.write(_decision(0, option_index=999))
                await call.write(_decision(0, option_text="square 99,99"))
            elif kind in ("huge_text", "ended_game"):
                await call.write(_decision(0, option_text="x" * ENDED_GAME_TEXT))
            elif kind == "abandon_turn":
                await call.read()
                call.cancel()
                return
        await call.done_writing()
        while await call.read() is not grpc.aio.EOF:  # type: ignore[attr-defined]
            pass
    except (grpc.aio.AioRpcError, asyncio.CancelledError, asyncio.InvalidStateError):
        pass  # the server ended the call (a refusal, a stream taken over) before the client was done writing


async def prepare_games(
    channel: grpc.aio.Channel, count: int, abandoned: bool = False
) -> list[tuple[str, list[str]]]:
    """Games (two seats joined, no clock; abandoned if asked) to misbehave in: their ids and seat tokens."""
    create = channel.unary_unary(
        "/kutnahora.v1.GameService/CreateGame",
        game_service_pb2.CreateGameRequest.SerializeToString,
        game_service_pb2.CreateGameResponse.FromString,
    )
    join = channel.unary_unary(
        "/kutnahora.v1.GameService/JoinGame",
        game_service_pb2.JoinGameRequest.SerializeToString,
        game_service_pb2.JoinGameResponse.FromString,
    )
    abandon = channel.unary_unary(
        "/kutnahora.v1.GameService/AbandonGame",
        game_service_pb2.AbandonGameRequest.SerializeToString,
        game_service_pb2.AbandonGameResponse.FromString,
    )
    games = []
    for index in range(count):
        created = await create(
            game_service_pb2.CreateGameRequest(
                options=game_pb2.GameOptions(players=2),
                seed=index,
                clock=game_pb2.ClockSettings(disabled=True),
            )
        )
        game_id = created.game.game_id
        tokens = []
        for seat in (0, 1):
            joined = await join(game_service_pb2.JoinGameRequest(game_id=game_id, seat=seat))
            tokens.append(joined.seat_token)
        if abandoned:
            await abandon(
                game_service_pb2.AbandonGameRequest(game_id=game_id),
                metadata=(("authorization", f"Bearer {created.game_token}"),),
            )
        games.append((game_id, tokens))
    return games


async def soak(
    address: str,
    sequences: int,
    concurrency: int,
    report_every: float,
    pid: int | None,
    new_connections: bool = False,
    kinds: Sequence[str] = KINDS,
) -> list[tuple[float, int, int]]:
    """Run the sequences; the samples taken: (seconds, sequences done, RSS in KiB)."""
    channel = grpc.aio.insecure_channel(address)
    games = await prepare_games(channel, max(1, concurrency // 4))
    ended = await prepare_games(channel, 1, abandoned=True)
    get_game = channel.unary_unary(
        "/kutnahora.v1.GameService/GetGame",
        game_service_pb2.GetGameRequest.SerializeToString,
        game_service_pb2.GetGameResponse.FromString,
    )
    movers = []
    for game_id, tokens in games:
        summary = (await get_game(game_service_pb2.GetGameRequest(game_id=game_id))).game
        movers.append((game_id, tokens, summary.pending_seat))
    done = 0
    started = time.monotonic()
    samples: list[tuple[float, int, int]] = []

    def sample() -> None:
        rss = rss_kib(pid) if pid is not None else 0
        samples.append((time.monotonic() - started, done, rss))
        memory = f", server RSS {rss / 1024:.1f} MiB" if pid is not None else ""
        print(f"kutnahora-soak: {samples[-1][0]:6.1f} s  {done:7d} sequences{memory}", flush=True)

    async def worker(number: int) -> None:
        nonlocal done
        while done < sequences:
            kind = kinds[(done + number) % len(kinds)]
            if kind == "ended_game":
                (game_id, tokens), seat = ended[0], 0
            else:
                game_id, tokens, seat = movers[(done + number) % len(movers)]
            done += 1
            if new_connections:  # a connection of its own, opened and closed around the sequence
                own = grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
                await hostile_sequence(own, game_id, tokens, seat, kind)
                await own.close(None)
            else:
                await hostile_sequence(channel, game_id, tokens, seat, kind)

    async def reporter() -> None:
        while True:
            await asyncio.sleep(report_every)
            sample()

    sample()
    reporting = asyncio.create_task(reporter())
    await asyncio.gather(*(worker(n) for n in range(concurrency)))
    reporting.cancel()
    await asyncio.sleep(1.0)  # let the server finish the last streams
    sample()
    await channel.close(None)
    return samples


def growth_per_sequence(samples: Sequence[tuple[float, int, int]]) -> tuple[float, float]:
    """RSS growth in bytes per sequence over the first and the second half of the run."""
    end = samples[-1]
    middle = min(samples, key=lambda s: abs(s[1] - end[1] / 2))
    first, second = samples[0], end

    def rate(a: tuple[float, int, int], b: tuple[float, int, int]) -> float:
        return (b[2] - a[2]) * 1024 / max(b[1] - a[1], 1)

    return rate(first, middle), rate(middle, second)


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    parser = argparse.ArgumentParser(
        prog="kutnahora-soak",
        description="Run hostile Play streams against a Kutná Hora server and print its memory over time.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--sequences", type=int, default=20_000, help="hostile Play streams to run")
    parser.add_argument("--concurrency", type=int, default=16, help="streams at once")
    parser.add_argument(
        "--new-connections", action="store_true", help="open a connection of its own for every sequence"
    )
    parser.add_argument(
        "--kinds",
        default=",".join(KINDS),
        help="the kinds of hostile stream to run, in turn (comma-separated, from: " + ", ".join(KINDS) + ")",
    )
    parser.add_argument("--report-every", type=float, default=5.0, help="seconds between memory samples")
    parser.add_argument("--target", default="", help="drive this running server instead of starting one")
    parser.add_argument("--pid", type=int, default=None, help="the process id of --target, to sample its RSS")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the soak and print the memory figures."""
    args = build_parser().parse_args(argv)
    if args.sequences <= 0 or args.concurrency <= 0 or args.report_every <= 0:
        raise SystemExit("--sequences, --concurrency and --report-every must be positive")
    kinds = [kind.strip() for kind in args.kinds.split(",") if kind.strip()]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown or not kinds:
        raise SystemExit(
            f"--kinds: unknown kind {', '.join(unknown) or '(none given)'}; known: {', '.join(KINDS)}"
        )
    with tempfile.TemporaryDirectory() as folder:
        process = None
        address = args.target
        if not address:
            process, port = start_server(Path(folder) / "server.log")
            address = f"127.0.0.1:{port}"
        try:
            pid = process.pid if process is not None else args.pid
            samples = asyncio.run(
                soak(
                    address,
                    args.sequences,
                    args.concurrency,
                    args.report_every,
                    pid,
                    args.new_connections,
                    kinds,
                )
            )
        finally:
            if process is not None:
                process.terminate()
                process.wait(timeout=10)
    start, end = samples[0], samples[-1]
    print(f"kutnahora-soak: {end[1]} hostile Play sequences in {end[0]:.1f} s")
    if process is not None or args.pid is not None:
        early, late = growth_per_sequence(samples)
        print(f"  server RSS      {start[2] / 1024:.1f} MiB at the start, {end[2] / 1024:.1f} MiB at the end")
        print(f"  growth          {early:.0f} bytes per sequence in the first half, {late:.0f} in the second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
