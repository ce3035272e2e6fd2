"""The server's CPU for a game's life outside its decisions: creating it, seating it, its Play streams.

``kutnahora-bench`` counts these costs into its CPU per decision, shared by the about 160 decisions of a
random game. This measures them apart, against a server process of its own (a SQLite store in a
temporary file, no clock), in three ways of starting a game, each run in turn ``--repeats`` times:

- ``seated``: one CreateGame that names every seat (``seat_names``), then AbandonGame;
- ``joined``: an empty CreateGame, one JoinGame per seat, then AbandonGame;
- ``streams``: as ``seated``, with one Play stream per seat opened before the game is abandoned and read
  to its GameEnded.

Games have 2, 3 and 4 seats in turn, 16 at a time. The report gives the server's CPU per game for each,
their medians, and what follows from them: the cost of one JoinGame call and of one Play stream.

    python -m kutnahora.bench.game_lifecycle --games 320 --repeats 3
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import grpc
import grpc.aio

from kutnahora.bench.server_bench import (
    EOF,
    bearer,
    cpu_seconds,
    new_game,
    server_command,
    start_process,
)
from kutnahora.v1 import (
    game_service_pb2,
    game_service_pb2_grpc,
    play_service_pb2,
    play_service_pb2_grpc,
)

AT_ONCE = 16
"""Games started at the same time."""

WAYS = ("seated", "joined", "streams")


@dataclass
class Stubs:
    """The two services a game's life goes through, on one channel."""

    games: game_service_pb2_grpc.GameServiceStub
    play: play_service_pb2_grpc.PlayServiceStub


def players_of(number: int) -> int:
    """2, 3 and 4 seats in turn."""
    return 2 + number % 3


async def _abandon(stubs: Stubs, game_id: str, game_token: str) -> None:
    await stubs.games.AbandonGame(
        game_service_pb2.AbandonGameRequest(game_id=game_id, reason="measured"), metadata=bearer(game_token)
    )


async def abandoned_game(stubs: Stubs, number: int, join: bool) -> None:
    """A game with every seat taken (named at creation, or with ``join`` joined one by one), abandoned."""
    created, _ = await new_game(stubs.games, players_of(number), number, "lifecycle", join)
    await _abandon(stubs, created.game.game_id, created.game_token)


async def streamed_game(stubs: Stubs, number: int) -> None:
    """A seated game whose every seat opens its Play stream; once the server has sent the first turn, the
    game is abandoned and every stream is read to its GameEnded."""
    created, tokens = await new_game(stubs.games, players_of(number), number, "lifecycle")
    game_id = created.game.game_id
    first_turn = asyncio.Event()

    async def play(seat: int, token: str) -> None:
        call = stubs.play.Play(metadata=bearer(token))
        await call.write(
            play_service_pb2.PlayRequest(start=play_service_pb2.PlayStart(game_id=game_id, seat=seat))
        )
        while True:
            response = await call.read()
            first_turn.set()
            if response is EOF or response.WhichOneof("message") == "game_ended":
                break
        await call.done_writing()

    streams = [asyncio.create_task(play(seat, token)) for seat, token in enumerate(tokens)]
    await first_turn.wait()
    await _abandon(stubs, game_id, created.game_token)
    await asyncio.gather(*streams)


PLAYS: dict[str, Callable[[Stubs, int], Awaitable[None]]] = {
    "seated": partial(abandoned_game, join=False),
    "joined": partial(abandoned_game, join=True),
    "streams": streamed_game,
}


async def measure_way(stubs: Stubs, pid: int, way: str, games: int, first: int) -> float:
    """The server's CPU microseconds per game for ``games`` games started ``way``."""
    play = PLAYS[way]
    started = cpu_seconds(pid)
    for batch in range(0, games, AT_ONCE):
        await asyncio.gather(*(play(stubs, first + batch + i) for i in range(min(AT_ONCE, games - batch))))
    return (cpu_seconds(pid) - started) / games * 1e6


async def _measure(address: str, pid: int, games: int, repeats: int) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {way: [] for way in WAYS}
    async with grpc.aio.insecure_channel(address) as channel:
        stubs = Stubs(
            game_service_pb2_grpc.GameServiceStub(channel),  # type: ignore[no-untyped-call]
            play_service_pb2_grpc.PlayServiceStub(channel),  # type: ignore[no-untyped-call]
        )
        number = 0
        for way in WAYS:  # a warm-up of each way, not counted
            await measure_way(stubs, pid, way, AT_ONCE, number)
            number += AT_ONCE
        for repeat in range(repeats):
            for way in WAYS:
                figures[way].append(await measure_way(stubs, pid, way, games, number))
                number += games
            print(
                f"repeat {repeat + 1}: "
                + ", ".join(f"{way} {figures[way][-1]:.0f} µs" for way in WAYS)
                + " of server CPU per game",
                flush=True,
            )
    return figures


def measure(games: int, repeats: int) -> dict[str, list[float]]:
    """Start a server and measure every way ``repeats`` times, ``games`` games each."""
    with tempfile.TemporaryDirectory() as folder:
        server, port, _ = start_process(
            server_command(str(Path(folder) / "lifecycle.db"), max(1000, games * 4))
        )
        try:
            return asyncio.run(_measure(f"127.0.0.1:{port}", server.pid, games, repeats))
        finally:
            server.terminate()
            server.wait(30)


def summary(figures: dict[str, list[float]], games: int) -> str:
    """The medians, and the cost of one JoinGame call and of one Play stream that follow from them."""
    median = {way: statistics.median(values) for way, values in figures.items()}
    seats = statistics.fmean(players_of(number) for number in range(games))
    join = (median["joined"] - median["seated"]) / seats
    stream = (median["streams"] - median["seated"]) / seats
    return (
        f"medians per game: seated {median['seated']:.0f} µs, joined {median['joined']:.0f} µs, "
        f"with a Play stream per seat {median['streams']:.0f} µs ({seats:.1f} seats a game)\n"
        f"so one JoinGame costs about {join:.0f} µs and one Play stream (opened, its turn or none, its "
        f"GameEnded, closed) about {stream:.0f} µs of server CPU"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print each repeat's figures, then the medians and what follows from them."""
    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.bench.game_lifecycle",
        description="Measure the server's CPU per game for creating, seating and streaming a game.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--games", type=int, default=320, help="games per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="measurements of each way, in turn")
    args = parser.parse_args(argv)
    if args.games <= 0 or args.repeats <= 0:
        raise SystemExit("--games and --repeats must be positive")
    figures = measure(args.games, args.repeats)
    print(summary(figures, args.games))
    return 0


if __name__ == "__main__":
    sys.exit(main())
