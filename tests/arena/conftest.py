"""Fixtures for the arena tests: a real ``kutnahora-server`` process, and an arena in this process.

``game_server`` runs for the whole session in memory; ``arena`` starts a fresh arena (its own SQLite
file, a quick matchmaker tick) placing games on it; ``arena_client`` is an SDK client of that arena;
``start_arena`` starts arenas from ``kutnahora-arena``'s own flags, each also on a Unix socket, so that
tests of the per-caller limits have two callers (loopback and ``unix``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from kutnahora.arena.app import Arena, ArenaConfig, create_arena
from kutnahora.arena.main import build_parser, config_from_args
from kutnahora.arena.matchmaker import Window
from kutnahora.clients.arena_client import ArenaClient
from kutnahora.v1 import arena_service_pb2_grpc
from tests.clients.helpers import SERVER_FLAGS, start_process, stop_process

StartArena = Callable[..., Awaitable[Arena]]


@pytest.fixture(scope="session")
def game_server() -> Iterator[str]:
    """The address of a ``kutnahora-server`` process (memory store, its default clock)."""
    process, address = start_process("kutnahora.server.main", *SERVER_FLAGS, "--max-games", "500")
    try:
        yield address
    finally:
        stop_process(process)


def arena_config(db: Path | str, server: str, **changes: object) -> ArenaConfig:
    """An arena configuration for tests (``db``: a SQLite file or a PostgreSQL URL): quick ticks, windows
    that open after a second."""
    config = ArenaConfig(
        servers=[server],
        db=str(db),
        window=Window(base=5.0, per_second=5.0, max_wait=1.0),
        tick_seconds=0.05,
        status_seconds=0.2,
        lost_after_seconds=5.0,
    )
    for name, value in changes.items():
        setattr(config, name, value)
    return config


@pytest.fixture
async def arena(tmp_path: Path, game_server: str) -> AsyncIterator[Arena]:
    """A running arena with its own SQLite store, placing games on ``game_server``."""
    running, _ = await create_arena("127.0.0.1:0", arena_config(tmp_path / "arena.db", game_server))
    await running.start()
    try:
        yield running
    finally:
        await running.stop(0)


@pytest.fixture
async def arena_client(arena: Arena) -> AsyncIterator[ArenaClient]:
    """An SDK client of ``arena``."""
    async with await ArenaClient.connect(f"127.0.0.1:{arena.port}") as client:
        yield client


@pytest.fixture
async def start_arena(tmp_path: Path, game_server: str) -> AsyncIterator[StartArena]:
    """Start arenas from command-line flags (``--db``, ``--server`` and ``--metrics-port`` are given), each
    also listening on a Unix socket (``arena.sock`` in ``tmp_path``): a caller other than loopback."""
    running: list[Arena] = []

    async def start(*flags: str) -> Arena:
        args = build_parser().parse_args(
            [*("--db", str(tmp_path / f"arena{len(running)}.db"), "--server", game_server), *flags]
        )
        config = config_from_args(args)
        config.metrics_port = None
        arena, _ = await create_arena("127.0.0.1:0", config)
        arena.grpc_server.add_insecure_port(f"unix:{tmp_path / 'arena.sock'}")
        await arena.start()
        running.append(arena)
        return arena

    try:
        yield start
    finally:
        for arena in running:
            await arena.stop(0)


def stub(channel: grpc.aio.Channel) -> Any:
    """The generated (untyped) stub of the arena on ``channel``."""
    return arena_service_pb2_grpc.ArenaServiceStub(channel)


@contextlib.asynccontextmanager
async def two_callers(arena: Arena, tmp_path: Path) -> AsyncIterator[tuple[Any, Any]]:
    """Stubs of an arena from :func:`start_arena` for two callers: ``ipv4:127.0.0.1`` (its TCP port) and
    ``unix`` (its Unix socket)."""
    async with (
        grpc.aio.insecure_channel(f"127.0.0.1:{arena.port}") as tcp_channel,
        grpc.aio.insecure_channel(f"unix:{tmp_path / 'arena.sock'}") as unix_channel,
    ):
        yield stub(tcp_channel), stub(unix_channel)
