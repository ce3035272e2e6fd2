"""The read-flood benchmark's flooder, tried against a server: a seat's reads over the Unix socket (the seat
gateways' way to the server), with and without its token, are held to the seat's and the game's anonymous
allowances."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kutnahora.bench.read_flood import flood
from kutnahora.server.app import create_server
from kutnahora.server.config import ClockConfig, Quotas, ServerConfig


async def test_a_flooding_seat_gets_its_two_allowances_and_no_more(tmp_path: Path) -> None:
    quotas = Quotas(caller_reads=20.0, caller_read_burst=10)
    socket = tmp_path / "server.sock"
    config = replace(
        ServerConfig.in_memory(clock=ClockConfig(enabled=False)), quotas=quotas, unix_socket=str(socket)
    )
    server, _ = await create_server("127.0.0.1:0", config)
    await server.start()
    try:
        counts = await flood(f"unix:{socket}", tasks=8, seconds=1.0)
    finally:
        await server.stop(0.5)
    # the seat's reads and the game's anonymous reads: 10 at once and 20 a second each
    assert 2 * (10 + 20 * 1.0) * 0.8 <= counts["answered"] <= 2 * (10 + 20 * 1.3), counts
    assert counts["refused"] > counts["answered"], counts
