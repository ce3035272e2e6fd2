"""Store fixtures: the same contract tests run against every store (memory, SQLite, PostgreSQL).

``backend`` is parametrised over the stores; ``open_store()`` opens a new store instance on the backend's
database (a second instance is a second replica, or the same server after a restart), and every instance
opened is closed when the test ends. PostgreSQL tests skip, with the reason, when it is unreachable.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kutnahora.server.store import MemoryStore, SqliteStore, Store
from tests.store.pg import fresh_schema


@dataclass(frozen=True)
class Backend:
    """How to make stores on one database: ``shared`` when two instances see the same data."""

    name: str
    make: Callable[[], Store]
    shared: bool


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """One store backend with a database of its own."""
    if request.param == "memory":
        only = MemoryStore()
        yield Backend("memory", lambda: only, shared=False)
    elif request.param == "sqlite":
        path = tmp_path / "store.db"
        yield Backend("sqlite", lambda: SqliteStore(path), shared=True)
    else:
        from kutnahora.server.store import PostgresStore

        with fresh_schema() as url:
            yield Backend("postgresql", lambda: PostgresStore(url), shared=True)


OpenStore = Callable[[], Awaitable[Store]]


@pytest.fixture
async def open_store(backend: Backend) -> AsyncIterator[OpenStore]:
    """Opens store instances on the backend; closes them all at the end of the test."""
    opened: list[Store] = []

    async def open_one() -> Store:
        store = backend.make()
        if store not in opened:
            await store.open()
            opened.append(store)
        return store

    yield open_one
    for store in reversed(opened):
        await store.close()


@pytest.fixture
async def store(open_store: OpenStore) -> Store:
    """An open store of the backend."""
    return await open_store()
