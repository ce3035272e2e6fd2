"""Redis for tests: the machine's server, a key prefix of its own per test, skipped when unreachable.

``KUTNAHORA_TEST_REDIS`` names the server (default: the local one, database 0). Each test's keys start
with a unique prefix (process id and a random suffix), so parallel runs never collide, and they are
deleted when the test ends.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache

import pytest
import redis
import redis.asyncio

URL = os.environ.get("KUTNAHORA_TEST_REDIS", "redis://127.0.0.1:6379/0")


@cache
def unreachable_reason() -> str | None:
    """Why Redis cannot be used for tests, or None when it can."""
    try:
        client = redis.Redis.from_url(URL, socket_timeout=2, socket_connect_timeout=2)
        try:
            client.ping()
        finally:
            client.close()
    except (redis.RedisError, OSError) as error:
        return f"Redis is unreachable at {URL} ({error})"
    return None


def require_redis() -> None:
    """Skips the calling test, with the reason, when Redis cannot be used."""
    reason = unreachable_reason()
    if reason is not None:
        pytest.skip(reason)


@asynccontextmanager
async def fresh_prefix(name: str = "kh-test") -> AsyncIterator[str]:
    """A unique key prefix; every key under it is deleted afterwards."""
    require_redis()
    prefix = f"{name}-{os.getpid()}-{uuid.uuid4().hex[:10]}"
    try:
        yield prefix
    finally:
        client = redis.asyncio.Redis.from_url(URL)
        try:
            keys = [key async for key in client.scan_iter(match=f"{prefix}:*")]
            if keys:
                await client.delete(*keys)
        finally:
            await client.aclose()
