"""A client that freezes with its streams open, as a crashed or stopped process leaves them: the test
starts :data:`FROZEN_WATCHER` or :data:`FROZEN_ARENA_WATCHER` in a subprocess, waits for its ``open`` line
and stops it with SIGSTOP. Its operating system still answers for its sockets, so only the server's own
pings (which the stopped process cannot acknowledge) can tell that nobody is there any more."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
from collections.abc import AsyncIterator

FROZEN_WATCHER = """
import sys, grpc
from kutnahora.v1 import play_service_pb2 as pb, play_service_pb2_grpc as rpc
channel = grpc.insecure_channel(sys.argv[1])
watch = rpc.PlayServiceStub(channel).WatchGame(pb.WatchGameRequest(game_id=sys.argv[2]))
next(watch)
print("open", flush=True)
for _ in watch:
    pass
"""
"""Watch the game ``argv[2]`` on the server at ``argv[1]``, saying ``open`` once its first update came."""

FROZEN_ARENA_WATCHER = """
import sys, grpc
from kutnahora.v1 import arena_service_pb2 as pb, arena_service_pb2_grpc as rpc
channel = grpc.insecure_channel(sys.argv[1])
key = (("authorization", "Bearer " + sys.argv[2]),)
events = rpc.ArenaServiceStub(channel).StreamEvents(pb.StreamEventsRequest(), metadata=key)
events.initial_metadata()
print("open", flush=True)
for _ in events:
    pass
"""
"""Hold an arena StreamEvents stream at ``argv[1]`` with the bot key ``argv[2]``, saying ``open`` once the
arena said the stream is live."""


def start_frozen(script: str, *args: str) -> subprocess.Popen[str]:
    """Run ``script`` until it says ``open``, then stop it (SIGSTOP). Blocking: from a test whose event loop
    serves the stream, call it in a thread (:func:`frozen`)."""
    process = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    if line.strip() != "open":
        process.kill()
        raise AssertionError(f"the client did not open its stream: {line!r}")
    process.send_signal(signal.SIGSTOP)
    return process


@contextlib.asynccontextmanager
async def frozen(script: str, *args: str) -> AsyncIterator[subprocess.Popen[str]]:
    """A client running ``script`` with its stream open, stopped; killed at the end."""
    process = await asyncio.to_thread(start_frozen, script, *args)
    try:
        yield process
    finally:
        process.kill()
        await asyncio.to_thread(process.wait, 10)
