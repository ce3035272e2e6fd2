"""Arena replicas on one PostgreSQL database: tickets on different replicas meet, and when the replica
running the matchmaker is killed another takes over and matches the bots still waiting, on their streams."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import urllib.request

import pytest

from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import ClientError
from tests.clients.helpers import ROOT, python_module
from tests.store.pg import fresh_schema

FLAGS = ("--port", "0", "--metrics-port", "0", "--window", "5", "--widen", "5", "--open-after", "1")
FLAGS += ("--tick", "0.1", "--log-level", "warning")


def start_replica(db: str, game_server: str) -> tuple[subprocess.Popen[str], str, str]:
    process = subprocess.Popen(
        python_module("kutnahora.arena.main", *FLAGS, "--db", db, "--server", game_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
        env=dict(os.environ),
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"listening on grpc://(\S+) \(metrics (\S+),", line)
    if found is None:
        process.kill()
        pytest.fail(f"the arena did not start: {line!r}")
    return process, found.group(1), found.group(2)


async def leads(metrics_url: str) -> bool:
    text = await asyncio.to_thread(lambda: urllib.request.urlopen(metrics_url, timeout=5).read().decode())
    return "kutnahora_arena_matchmaker_leader 1.0" in text


async def test_replicas_share_tickets_and_fail_over(game_server: str) -> None:
    with fresh_schema("kh_arena_replicas") as db:
        first = start_replica(db, game_server)
        second = start_replica(db, game_server)
        replicas = [first, second]
        try:
            async with (
                await ArenaClient.connect(first[1]) as one,
                await ArenaClient.connect(second[1]) as two,
            ):
                keys = {name: await one.register_bot(name) for name in ("a", "b", "c", "d", "e", "f")}
                # a's events, followed on both replicas: whichever places the game, both tell it
                opened = [asyncio.Event(), asyncio.Event()]
                followers = [r.events(keys["a"], opened=o) for r, o in zip((one, two), opened, strict=True)]
                told = [asyncio.ensure_future(events.__anext__()) for events in followers]
                await asyncio.wait_for(asyncio.gather(*(o.wait() for o in opened)), 10)
                # a ticket on each replica: one game
                seats = await asyncio.wait_for(
                    asyncio.gather(one.seek(keys["a"], "2"), two.seek(keys["b"], "2")), 30
                )
                assert seats[0].seat.game_id == seats[1].seat.game_id
                for events, started_told in zip(followers, told, strict=True):
                    started = await asyncio.wait_for(started_told, 10)
                    assert started.started.game_id == seats[0].seat.game_id
                    assert started.started.seat == seats[0].seat.seat
                    await events.aclose()
                # one ticket per pool across replicas
                updates = two.seek_updates(keys["c"], "3")
                await updates.__anext__()
                with pytest.raises(ClientError) as caught:
                    await one.seek(keys["c"], "3")
                assert caught.value.reason == "TICKET_EXISTS" and "another arena replica" in str(caught.value)
                await updates.aclose()

                flags = [await leads(r[2]) for r in replicas]
                assert sorted(flags) == [False, True], "exactly one replica runs the matchmaker"
                leader = replicas[flags.index(True)]
                survivor, client = (second, two) if leader is first else (first, one)
                waiting = [asyncio.ensure_future(client.seek(keys[name], "4")) for name in ("c", "d", "e")]
                await asyncio.sleep(1.0)
                assert not any(w.done() for w in waiting), "three bots cannot make a 4-player game"
                leader[0].send_signal(signal.SIGKILL)
                leader[0].wait(10)
                last = asyncio.ensure_future(client.seek(keys["f"], "4"))
                matched = await asyncio.wait_for(asyncio.gather(*waiting, last), 30)
                assert len({m.seat.game_id for m in matched}) == 1
                assert sorted(m.seat.seat for m in matched) == [0, 1, 2, 3]
                assert await leads(survivor[2])
        finally:
            for process, _, _ in replicas:
                if process.poll() is None:
                    process.terminate()
                    process.wait(10)
