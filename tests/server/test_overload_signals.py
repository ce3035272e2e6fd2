"""Load shedding sees what slows games: the process's CPU and the time decisions wait, not only the lag.

A flood of cheap reads (a bot reading its own game as fast as it can) slows every game several times over
while each wake-up of the event loop stays quick, so the loop's lag never passed its threshold. The CPU
signal sees it: a real server in a process of its own, flooded with reads from this one, refuses
``CreateGame`` ``OVERLOADED`` with a sentence naming its CPU, and takes new games again once the flood
stops.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import Iterator

import grpc
import grpc.aio
import pytest

from kutnahora.server.overload import Overload
from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2

from .test_quotas import refusal

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_each_signal_trips_on_its_own_and_all_must_clear() -> None:
    overload = Overload(threshold=0.1, window=1.0, cpu=0.8, decision=0.2)
    for step in range(12):  # quick loop, a process at 95% of a core
        at = step * 0.1
        overload.observe(at, 0.001)
        overload.observe_cpu(at, 0.095 * step)
    assert overload.overloaded() and overload.cpu() == pytest.approx(0.95)
    assert "95% of a core" in overload.why() and "lag" not in overload.why()
    for step in range(12, 24):  # the CPU back to 10%, but decisions wait 300 ms
        at = step * 0.1
        overload.observe(at, 0.001)
        overload.observe_cpu(at, 0.095 * 11 + 0.01 * (step - 11))
        overload.observe_decision(at, 0.3)
    assert overload.overloaded() and "decisions waited a median 300 ms" in overload.why()
    for step in range(24, 40):  # everything quick again
        at = step * 0.1
        overload.observe(at, 0.001)
        overload.observe_cpu(at, 0.095 * 11 + 0.01 * (step - 11))
        overload.observe_decision(at, 0.002)
    assert not overload.overloaded()
    off = Overload(threshold=0, window=1.0, cpu=0, decision=0)
    for step in range(30):
        off.observe_cpu(step * 0.1, step * 1.0)
        off.observe_decision(step * 0.1, 10.0)
    assert not off.overloaded()


@pytest.fixture
def flooded_server() -> Iterator[str]:
    """A server in a process of its own that sheds load on its CPU only (a third of a core, 2 s)."""
    command = [
        sys.executable,
        "-m",
        "kutnahora.server.main",
        *("--port", "0", "--db", ":memory:", "--metrics-port", "off", "--log-level", "warning"),
        *("--overload-cpu", "0.3", "--overload-lag-ms", "0", "--overload-decision-ms", "0"),
        *("--overload-for", "2", "--caller-rate", "0"),
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT
    )
    assert process.stdout is not None
    match = re.search(r"listening on grpc://(\S+)", process.stdout.readline())
    try:
        assert match is not None, "the server did not start"
        yield match.group(1)
    finally:
        process.terminate()
        process.wait(10)


async def test_a_read_flood_trips_load_shedding(flooded_server: str) -> None:
    create = game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=2))
    own = [("grpc.use_local_subchannel_pool", 1)]
    async with grpc.aio.insecure_channel(flooded_server) as channel:
        games = channel.unary_unary(
            "/kutnahora.v1.GameService/CreateGame",
            game_service_pb2.CreateGameRequest.SerializeToString,
            game_service_pb2.CreateGameResponse.FromString,
        )
        game_id = (await games(create)).game.game_id
        await asyncio.sleep(2.5)  # a quiet window: new games are welcome
        await games(create)

        stop = asyncio.Event()
        body = play_service_pb2.GetObservationRequest(game_id=game_id).SerializeToString()

        async def flood(readers: grpc.aio.Channel) -> None:
            observe = readers.unary_unary("/kutnahora.v1.PlayService/GetObservation")
            while not stop.is_set():
                with_error = False
                try:
                    await observe(body)
                except grpc.aio.AioRpcError:
                    with_error = True
                if with_error:
                    await asyncio.sleep(0.01)

        channels = [grpc.aio.insecure_channel(flooded_server, options=own) for _ in range(4)]
        readers = [asyncio.create_task(flood(channels[i % 4])) for i in range(64)]
        refused: grpc.aio.AioRpcError | None = None
        try:
            async with asyncio.timeout(30):
                while refused is None:
                    await asyncio.sleep(0.5)
                    try:
                        await games(create)
                    except grpc.aio.AioRpcError as error:
                        refused = error
        finally:
            stop.set()
            await asyncio.gather(*readers)
            for readers_channel in channels:
                await readers_channel.close()
        assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        info, delay = refusal(refused)
        assert info.reason == "OVERLOADED" and delay == pytest.approx(2.0)
        assert "of a core" in (refused.details() or "") and "lag" not in (refused.details() or "")
        # The flood is over: once a quiet window has passed, new games are taken again.
        async with asyncio.timeout(20):
            while True:
                await asyncio.sleep(0.5)
                try:
                    await games(create)
                    break
                except grpc.aio.AioRpcError as error:
                    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
