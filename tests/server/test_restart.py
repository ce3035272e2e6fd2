"""Durability: a server killed with SIGKILL and restarted on the same SQLite file serves every game on.

The server runs as a separate process, as in production. Every decision it answered before the kill is
there after the restart, at the same version, with the same observations (byte for byte) and, at the
end, the same state hash as the engine's own replay of the log.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import grpc.aio
import pytest

from kutnahora import engine
from kutnahora.engine import GameOptions, parse_option
from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2, replay_service_pb2
from tests.server.conftest import Client, play_game

LISTENING = re.compile(r"listening on grpc://[^:]+:(\d+)")


@contextmanager
def server_process(db: Path, *extra: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """A ``kutnahora-server`` process on a free port; killed at the end if still running."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kutnahora.server.main",
            "--port",
            "0",
            "--metrics-port",
            "off",
            "--db",
            str(db),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "KUTNAHORA_CLOCK": "false"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = LISTENING.search(line)
        assert match, (
            f"no address printed: {line!r} {process.stderr.read() if process.poll() is not None else ''}"
        )
        yield process, int(match.group(1))
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


async def snapshot(client: Client, game_id: str, tokens: dict[int, str]) -> list[bytes]:
    """Every viewer's observation of a game, serialised."""
    views = [(await client.observe(game_id)).SerializeToString()]
    for seat, token in tokens.items():
        views.append((await client.observe(game_id, seat, token)).SerializeToString())
    return views


async def play_some(
    client: Client, game_id: str, tokens: dict[int, str], count: int, rng: random.Random
) -> None:
    for _ in range(count):
        observation = await client.observe(game_id)
        seat = observation.pending.seat
        own = await client.observe(game_id, seat, tokens[seat])
        await client.submit(
            game_id, seat, tokens[seat], own.version, option_index=rng.randrange(len(own.pending.options))
        )


async def test_sigkill_and_restart_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "games.db"
    rng = random.Random(1)
    games: list[tuple[str, dict[int, str], int, int]] = []
    with server_process(db) as (process, port):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            client = Client(channel)
            for players, played in ((2, 25), (3, 40), (4, 7)):
                seed = 500 + players
                game_id, tokens, _ = await client.new_game(players=players, seed=seed)
                await play_some(client, game_id, tokens, played, rng)
                games.append((game_id, tokens, players, seed))
            waiting = await client.games.CreateGame(
                game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=2), seed=3)
            )
            before = {game_id: await snapshot(client, game_id, tokens) for game_id, tokens, _, _ in games}
            versions = {game_id: (await client.observe(game_id)).version for game_id, _, _, _ in games}
        process.send_signal(signal.SIGKILL)
        process.wait(10)

    with server_process(db) as (process, port):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            client = Client(channel)
            for game_id, tokens, players, seed in games:
                assert (await client.observe(game_id)).version == versions[game_id]
                assert await snapshot(client, game_id, tokens) == before[game_id]
                summary = (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
                assert summary.status == game_pb2.GAME_STATUS_ACTIVE
                await play_game(client, game_id, tokens, seed=players)
                replay = await client.replay.GetReplay(replay_service_pb2.GetReplayRequest(game_id=game_id))
                state = engine.replay(
                    GameOptions(players=players), seed, [parse_option(r.text) for r in replay.decisions]
                )
                assert replay.state_hash == engine.state_hash(state)
            joined = await client.games.JoinGame(
                game_service_pb2.JoinGameRequest(game_id=waiting.game.game_id)
            )
            assert joined.seat == 0
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0


async def test_sigterm_stops_gracefully_and_ends_streams(tmp_path: Path) -> None:
    with server_process(tmp_path / "games.db", "--grace", "2") as (process, port):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            client = Client(channel)
            game_id, _, _ = await client.new_game(players=2, seed=1)
            watch = client.play.WatchGame(play_service_pb2.WatchGameRequest(game_id=game_id))
            assert (await watch.read()).observation.version == 0
            process.send_signal(signal.SIGTERM)
            try:
                rest = await watch.read()
            except grpc.aio.AioRpcError as error:  # the channel may also see the server go away
                assert error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
            else:
                assert rest is grpc.aio.EOF  # type: ignore[attr-defined]
        assert process.wait(15) == 0
        assert process.stderr is not None
        log = process.stderr.read()
        assert '"server stopped"' in log


@pytest.mark.parametrize("flag", ["--log-format=console"])
async def test_the_cli_prints_where_it_listens(tmp_path: Path, flag: str) -> None:
    with server_process(tmp_path / "games.db", flag) as (process, port):
        assert port > 0
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
