"""Fixtures for the client tests: a real ``kutnahora-server`` on an ephemeral port, and helpers.

The server runs as its own process (as a bot author would run it), in memory, for the whole session;
tests that need a server with other settings start one in-process with ``server.app.create_server``.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator

import pytest

from tests.clients.helpers import ROOT, python_module


@pytest.fixture(scope="session")
def server_address() -> Iterator[str]:
    """The address of a ``kutnahora-server`` started for the session (memory store, no metrics)."""
    command = python_module(
        "kutnahora.server.main",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--db",
        ":memory:",
        "--metrics-port",
        "off",
        "--log-level",
        "warning",
    )
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT, env=dict(os.environ)
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"listening on grpcs?://(\S+)", line)
    if match is None:
        process.kill()
        pytest.fail(f"kutnahora-server did not start: {line!r}")
    try:
        yield match.group(1)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
