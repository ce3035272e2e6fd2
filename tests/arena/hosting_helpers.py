"""What the hosted-bots tests share: a submission folder packed, the arena's and the workers' stubs, calls
with a key, and a refusal's code, reason and RetryInfo read as a client reads them."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from kutnahora.arena.app import Arena
from kutnahora.hosting.archives import pack
from kutnahora.v1 import arena_service_pb2_grpc, hosting_service_pb2_grpc
from tests.status_details import refusal

WORKER_TOKEN = "worker-secret-token"


def archive(folder: Path, name: str, *, marker: str = "", run: str = "python3 bot.py") -> bytes:
    """A packed submission folder of bot ``name`` (``marker`` changes its content, so its digest)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kutnahora-bot.toml").write_text(
        f'name = "{name}"\nlanguage = "python"\nrun = "{run}"\n', encoding="utf-8"
    )
    (folder / "bot.py").write_text(f"print('playing {marker}')\n", encoding="utf-8")
    return pack(folder)


def auth(key: str) -> tuple[tuple[str, str], ...]:
    """The metadata of a call carrying ``key``."""
    return (("authorization", f"Bearer {key}"),)


@contextlib.asynccontextmanager
async def stubs(arena: Arena) -> AsyncIterator[tuple[Any, Any]]:
    """The ArenaService and HostingService stubs of a running arena."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{arena.port}") as channel:
        yield (
            arena_service_pb2_grpc.ArenaServiceStub(channel),
            hosting_service_pb2_grpc.HostingServiceStub(channel),
        )


async def refused(call: Awaitable[Any], code: grpc.StatusCode, reason: str) -> tuple[str, float | None]:
    """Await a call that must be refused with ``code`` and the ErrorInfo ``reason``: its sentence and its
    RetryInfo delay."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    error = caught.value
    assert error.code() == code, (error.code(), error.details())
    info, delay = refusal(error)
    assert info.reason == reason, (info.reason, error.details())
    return str(error.details()), delay


def metric(arena: Arena, name: str, **labels: str) -> float:
    """A sample of the arena's metrics (0 when it has none yet)."""
    value = arena.metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value
