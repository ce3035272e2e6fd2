"""The Node.js starter bot (``clients/node``) plays a whole game against a real server.

Runs when ``node`` is installed and ``npm ci`` (or ``npm install``) has been run in ``clients/node``;
skipped otherwise, saying which is missing.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from kutnahora.clients.bots import RandomBot
from kutnahora.clients.sdk import Bot, Choice, Client
from kutnahora.v1 import game_pb2
from kutnahora.v1.game_pb2 import Observation
from tests.clients.helpers import ROOT

NODE_DIR = ROOT / "clients" / "node"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed"),
    pytest.mark.skipif(
        not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir(),
        reason="the Node.js bot's packages are not installed (run npm ci in clients/node)",
    ),
]


async def test_the_node_bot_plays_a_seat_handed_over_in_its_environment(server_address: str) -> None:
    assert NODE is not None
    async with await Client.connect(server_address) as client:
        created = await client.create_game(2, seed=17)
        game_id = created.game.game_id
        node_seat = await client.join_game(game_id, 0, "node")
        python_seat = await client.join_game(game_id, 1, "random")
        env = {
            **os.environ,
            "KUTNAHORA_SERVER": server_address,
            "KUTNAHORA_GAME_ID": game_id,
            "KUTNAHORA_SEAT": "0",
            "KUTNAHORA_TOKEN": node_seat.token,
            "KUTNAHORA_BOT_SEED": "5",
        }
        process = await asyncio.create_subprocess_exec(
            NODE, "bot.js", cwd=NODE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        outcome, (stdout, stderr) = await asyncio.gather(
            client.play(RandomBot(6), python_seat), asyncio.wait_for(process.communicate(), 60)
        )
        summary = await client.get_game(game_id)
        replay = await client.replay(game_id)
    assert process.returncode == 0, stderr.decode()
    assert outcome.finished
    assert f"game {game_id} finished: seat 0 scored" in stdout.decode()
    assert summary.status == game_pb2.GAME_STATUS_FINISHED
    node_moves = [d for d in replay.decisions if d.seat == 0]
    assert node_moves and all(d.source == game_pb2.DECISION_SOURCE_SEAT for d in node_moves)


def test_the_node_bot_creates_a_game_and_says_when_the_server_is_away(server_address: str) -> None:
    assert NODE is not None
    away = subprocess.run(
        [NODE, "bot.js", "--server", "127.0.0.1:1", "--create", "--retry-for", "1"],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert away.returncode == 2 and "cannot connect" in away.stderr
    # It said at once that it retries, where, why and for how long (not a silent wait).
    assert "cannot reach 127.0.0.1:1 (" in away.stderr and "ECONNREFUSED" in away.stderr, away.stderr
    assert "retrying for up to 1 s" in away.stderr
    usage = subprocess.run(
        [NODE, "bot.js", "--server", server_address],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    assert usage.returncode == 2 and "--create" in usage.stderr


async def test_the_node_bot_reads_the_refusal_reason_and_acts_on_it(server_address: str) -> None:
    """Asked for a seat that is taken, the bot reads SEAT_TAKEN from the status details (not the English
    sentence) and joins a free seat instead; a refusal it cannot act on is printed with its reason."""
    assert NODE is not None
    async with await Client.connect(server_address) as client:
        created = await client.create_game(2, seed=19)
        game_id = created.game.game_id
        python_seat = await client.join_game(game_id, 0, "random")
        process = await asyncio.create_subprocess_exec(
            NODE, "bot.js", "--server", server_address, "--game", game_id, "--seat", "0", "--seed", "4",
            cwd=NODE_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        outcome, (stdout, stderr) = await asyncio.gather(
            client.play(RandomBot(8), python_seat), asyncio.wait_for(process.communicate(), 60)
        )
    assert process.returncode == 0, stderr.decode()
    assert "seat 0 is taken (SEAT_TAKEN); joining a free seat instead" in stdout.decode()
    assert f"joined game {game_id} as seat 1" in stdout.decode()
    assert outcome.finished
    full = subprocess.run(
        [NODE, "bot.js", "--server", server_address, "--game", game_id],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert full.returncode == 1 and "(GAME_NOT_ACTIVE)" in full.stderr, full.stderr


async def test_the_node_bot_reconnects_after_a_drop_later_in_the_game_than_its_retry_window(
    tmp_path: Path,
) -> None:
    """--retry-for bounds a run of failed reconnects, not the game: a bot that has played for longer than
    its window still reconnects when its server dies and comes back on the same address."""
    assert NODE is not None
    from tests.server.test_restart import server_process

    class Slow(Bot):
        answered = 0

        async def choose(self, observation: Observation) -> Choice:
            await asyncio.sleep(0.6)
            Slow.answered += 1
            return 0

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address, db = f"127.0.0.1:{port}", tmp_path / "games.db"
    with server_process(db, "--port", str(port)) as (process, _):
        client = await Client.connect(address)
        created, seats = await client.create_seated_game(["node", "slow"], seed=8)
        game_id = created.game.game_id
        env = {
            **os.environ,
            "KUTNAHORA_SERVER": address,
            "KUTNAHORA_GAME_ID": game_id,
            "KUTNAHORA_SEAT": "0",
            "KUTNAHORA_TOKEN": seats[0].token,
            "KUTNAHORA_RETRY_FOR": "6",
        }
        node = await asyncio.create_subprocess_exec(
            NODE, "bot.js", cwd=NODE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        playing = asyncio.create_task(client.play(Slow(), seats[1], reconnect_for=30))
        await asyncio.sleep(8.0)  # longer than the Node bot's retry window
        assert node.returncode is None
        process.send_signal(signal.SIGKILL)
        process.wait(10)
    await asyncio.sleep(0.5)
    with server_process(db, "--port", str(port)):
        async with await Client.connect(address) as other:
            # Every version after the restart is one decision (no clock): more of them than the slow seat
            # made means the Node bot answered too.
            restarted_at, slow_before = (await other.get_game(game_id)).version, Slow.answered
            node_answered = False
            for _ in range(150):
                await asyncio.sleep(0.1)
                made = (await other.get_game(game_id)).version - restarted_at
                if made > Slow.answered - slow_before:
                    node_answered = True
                    break
            assert node_answered, f"the Node bot did not answer after the restart (exit {node.returncode})"
            await other.abandon(game_id, created.game_token, "done")
        stdout, stderr = await asyncio.wait_for(node.communicate(), 30)
        await asyncio.wait_for(playing, 30)
        await client.close()
    assert f"game {game_id} abandoned" in stdout.decode(), stderr.decode()
