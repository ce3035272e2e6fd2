"""The server's event loop: uvloop where installed (``--event-loop auto``), asyncio's on request, and a
sentence when the loop asked for cannot be had. A server process on either loop plays whole games."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import grpc.aio
import pytest

from kutnahora.server import event_loop
from kutnahora.v1 import game_pb2
from tests.server.conftest import Client, play_game
from tests.server.test_restart import server_process

uvloop = pytest.importorskip("uvloop")


async def _running() -> str:
    return event_loop.running_loop_name()


def test_each_choice_runs_its_loop() -> None:
    assert event_loop.run(_running(), "asyncio") == "asyncio"
    assert event_loop.run(_running(), "uvloop") == "uvloop"
    assert event_loop.run(_running(), "auto") == "uvloop"  # installed here, so chosen
    assert event_loop.resolve("auto") == "uvloop"


def test_auto_falls_back_to_asyncio_without_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # as if it were not installed: importing it fails
    assert event_loop.resolve("auto") == "asyncio"
    assert event_loop.run(_running(), "auto") == "asyncio"
    with pytest.raises(ValueError, match="uvloop was asked for but uvloop is not installed"):
        event_loop.resolve("uvloop")


def test_an_unknown_loop_is_refused_with_a_sentence() -> None:
    with pytest.raises(ValueError, match="must be one of auto, uvloop, asyncio, not 'trio'"):
        event_loop.resolve("trio")


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
async def test_a_server_on_each_loop_plays_games_and_stops_gracefully(tmp_path: Path, loop: str) -> None:
    with server_process(
        tmp_path / "games.db", "--event-loop", loop, "--log-format", "json", "--log-level", "info"
    ) as (process, port):
        assert process.stderr is not None
        listening = {}
        while listening.get("event") != "server listening":
            line = process.stderr.readline()
            assert line, "the server ended without saying it listens"
            listening = json.loads(line)
        assert listening["event_loop"] == loop
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            client = Client(channel)
            games = [await client.new_game(players=players, seed=players) for players in (2, 3, 4)]
            results = await asyncio.gather(
                *(play_game(client, game_id, tokens, seed=i) for i, (game_id, tokens, _) in enumerate(games))
            )
            for (game_id, tokens, _), ended in zip(games, results, strict=True):
                assert [end.status for end in ended] == [game_pb2.GAME_STATUS_FINISHED] * len(tokens)
                final = await client.observe(game_id)
                assert final.over and final.pending.ByteSize() == 0
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
