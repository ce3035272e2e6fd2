"""The worker's ``--gateway-*`` flags reach the seat gateways it starts: from its command line through its
:class:`~kutnahora.worker.context.Context` and a host job's budget to the gateway of a seat it plays
(unwalled, against a real game server)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kutnahora.clients.sdk import Client
from kutnahora.hosting import seat as seat_module
from kutnahora.hosting.gateway import SeatGateway
from kutnahora.hosting.gateway_limits import MIB, GatewayLimits
from kutnahora.hosting.seat import SeatHost
from kutnahora.hosting.submission import Submission
from kutnahora.v1 import hosting_service_pb2 as pb
from kutnahora.worker import main as worker_main
from kutnahora.worker import seats
from kutnahora.worker.context import Context
from kutnahora.worker.host_job import HostJob
from kutnahora.worker.options import build_parser
from tests.worker.spawn import work_folder

FLAGS = [
    *("--gateway-connections", "3", "--gateway-calls", "5", "--gateway-bytes", "2"),
    *("--gateway-message", "64", "--gateway-rate", "7.5", "--gateway-burst", "9", "--gateway-cpu", "0.1"),
]
GIVEN = GatewayLimits(
    connections=3, calls=5, bytes_in_flight=2 * MIB, message_bytes=64 << 10, rate=7.5, burst=9, cpu_share=0.1
)


async def served_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Context:
    """The context ``kutnahora-arena-worker FLAGS`` hands its jobs (its worker not run)."""
    token = tmp_path / "token"
    token.write_text("worker-token\n")
    args = build_parser().parse_args(["--worker-token-file", str(token), "--sandbox", "none", *FLAGS])
    contexts: list[Context] = []

    class Idle:
        def __init__(self, context: Context, *, seats: int, builds: int) -> None:
            contexts.append(context)

        async def run(self) -> None:
            return None

        def stop(self) -> None:
            return None

    monkeypatch.setattr(worker_main, "Worker", Idle)
    work = work_folder()
    try:
        assert await worker_main.serve(args, None, work) == 0
    finally:
        shutil.rmtree(work)
    (context,) = contexts
    return context


async def test_the_flags_reach_the_gateway_of_a_hosted_seat(
    game_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    context = await served_context(tmp_path, monkeypatch)
    assert context.gateway == GIVEN
    job = HostJob(context, "lease-1", 30.0, pb.HostJob(bot_name="quitter", version=1))
    started: list[SeatGateway] = []

    class Recorded(SeatGateway):
        async def start(self) -> None:
            await super().start()
            started.append(self)

    monkeypatch.setattr(seat_module, "SeatGateway", Recorded)
    async with await Client.connect(game_server) as client:
        created, credentials = await client.create_seated_game(["quitter", "idle"], seed=5)
    seat = seats.Seat(game_server, created.game.game_id, 0, credentials[0].token)
    host = SeatHost(sandbox=None, upstream=game_server, sockets=context.gateways, logs=tmp_path / "logs")
    folder = tmp_path / "bot"
    folder.mkdir()
    result = await seats.play(
        host, Submission("quitter", "shell", "exit 1", folder), seat, job.budget, resumed=False
    )
    assert result.failed
    (gateway,) = started
    assert gateway.budget is job.budget and gateway.limits == GIVEN
    assert gateway.message_bytes == 64 << 10  # what its gRPC server accepts: the flag, under the server's
