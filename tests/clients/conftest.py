"""Fixtures for the client tests: a real ``kutnahora-server`` on an ephemeral port, and helpers.

The server runs as its own process (as a bot author would run it), in memory, for the whole session;
tests that need a server with other settings start one in-process with ``server.app.create_server``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.clients.helpers import SERVER_FLAGS, start_process, stop_process


@pytest.fixture(scope="session")
def server_address() -> Iterator[str]:
    """The address of a ``kutnahora-server`` started for the session (memory store, no metrics)."""
    process, address = start_process("kutnahora.server.main", "--host", "127.0.0.1", *SERVER_FLAGS)
    try:
        yield address
    finally:
        stop_process(process)
