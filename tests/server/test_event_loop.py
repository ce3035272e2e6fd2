"""The server's event loop: uvloop where installed (``--event-loop auto``), asyncio's on request, and a
sentence when the loop asked for cannot be had. A server process on either loop plays whole games, runs
its clocks (a silent game ends by timeouts and the policy) and stops gracefully."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import grpc.aio
import pytest

from kutnahora.server import event_loop
from kutnahora.v1 import game_pb2, game_service_pb2, replay_service_pb2
from tests.server.conftest import Client, play_game
from tests.server.test_clock import ms
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
            # Nobody answers this one: its timers (call_at on the loop) time the seats out, strike them
            # out, and the random policy finishes the game.
            silent, _, _ = await client.new_game(
                players=2, seed=21, decision_time=ms(30), time_bank=ms(20), max_strikes=2
            )
            request = game_service_pb2.GetGameRequest(game_id=silent)
            deadline = asyncio.get_running_loop().time() + 30
            while (await client.games.GetGame(request)).game.status != game_pb2.GAME_STATUS_FINISHED:
                assert asyncio.get_running_loop().time() < deadline, "the silent game did not finish"
                await asyncio.sleep(0.05)
            replay = await client.replay.GetReplay(replay_service_pb2.GetReplayRequest(game_id=silent))
            sources = [record.source for record in replay.decisions]
            assert sources[:4] == [game_pb2.DECISION_SOURCE_TIMEOUT] * 4
            assert set(sources[4:]) == {game_pb2.DECISION_SOURCE_POLICY}
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
