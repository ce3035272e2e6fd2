"""The scenario a bot in another language plays against a game server that dies mid-game: two game servers
behind an arena, the bot's first game placed on the one killed once the game is under way, and its one
rated game then played on the other. The starter kits (tests/arena/test_kit_arena.py) and the Node.js bot
(tests/arena/test_node_arena.py) play it; tests/arena/test_server_loss.py plays its Python side alone."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from kutnahora.arena.app import create_arena
from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.bots.arena import play_rated
from kutnahora.clients.bots.random_bot import RandomBot
from kutnahora.clients.sdk import Bot, Choice
from kutnahora.v1 import arena_service_pb2 as pb
from kutnahora.v1.game_pb2 import Observation
from tests.arena.conftest import arena_config
from tests.clients.helpers import SERVER_FLAGS, start_process, stop_process


class SlowBot(RandomBot):
    """A random bot that thinks a little, and says when the game is well under way."""

    def __init__(self, under_way: asyncio.Event) -> None:
        super().__init__(1)
        self.under_way = under_way
        self.decisions = 0

    async def choose(self, observation: Observation) -> Choice:  # type: ignore[override]
        await asyncio.sleep(0.05)
        self.decisions += 1
        if self.decisions >= 4:
            self.under_way.set()
        return super().choose(observation)


@dataclass
class LostGame:
    """What the bot and its Python opponent went through: the bot's output lines, the two games the arena
    started (the lost one and the rated one), the doomed server's address and the arena's."""

    lines: list[str]
    lost: pb.BotGameStarted
    rated: pb.BotGameStarted
    doomed_address: str
    arena_address: str


@contextlib.asynccontextmanager
async def a_bot_outlives_its_server(
    tmp_path: Path,
    name: str,
    command: Sequence[str],
    *,
    options: Sequence[str] = (),
    cwd: Path | None = None,
    under_way_within: float = 60.0,
) -> AsyncIterator[LostGame]:
    """Run ``command --arena A --key-file K --pool 2 --games 1 options`` as the bot ``name`` against a
    Python bot, kill the first game's server mid-game, check what every such bot must do (leave the lost
    game when the arena says so, count only the rated game, exit 0) and yield what happened, with the arena
    still up; everything is stopped on leaving."""
    doomed, doomed_address = start_process("kutnahora.server.main", *SERVER_FLAGS)
    steady, steady_address = start_process("kutnahora.server.main", *SERVER_FLAGS)
    arena = None
    process: asyncio.subprocess.Process | None = None
    try:
        # The two servers are equally loaded, so the first game goes to the first one named: the doomed one.
        config = arena_config(tmp_path / "lost.db", doomed_address, lost_after_seconds=1.0)
        config.servers = [doomed_address, steady_address]
        arena, port = await create_arena("127.0.0.1:0", config)
        await arena.start()
        address = f"127.0.0.1:{port}"
        async with await ArenaClient.connect(address) as client:
            bot_key = await client.register_bot(name)
            python_key = await client.register_bot("py-bot")
        key_file = tmp_path / f"{name}.key"
        key_file.write_text(bot_key + "\n")
        process = await asyncio.create_subprocess_exec(
            *command,
            *("--arena", address, "--key-file", str(key_file), "--pool", "2", "--games", "1"),
            *options,
            cwd=cwd,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        under_way = asyncio.Event()
        heard: list[pb.StreamEventsResponse] = []
        made: list[Bot] = []

        def make() -> Bot:
            # The Python opponent thinks a little in its first game: it is under way when the server dies.
            made.append(SlowBot(under_way) if not made else RandomBot(2))
            return made[-1]

        opponent = asyncio.ensure_future(
            play_rated(
                address, python_key, ["2"], 1, make, Console(quiet=True), quiet=True, on_event=heard.append
            )
        )
        await asyncio.wait_for(under_way.wait(), under_way_within)
        doomed.kill()  # mid-game, without a word
        doomed.wait(10)
        outcomes = await asyncio.wait_for(opponent, 120)
        stdout, stderr = await asyncio.wait_for(process.communicate(), 120)
        output = stdout.decode()
        assert process.returncode == 0, output + stderr.decode()
        assert len(outcomes) == 1

        kinds = [m.WhichOneof("event") for m in heard]
        assert kinds == ["started", "abandoned", "started", "finished"], kinds
        lost, rated = heard[0].started, heard[2].started
        assert lost.server_address == doomed_address and rated.server_address == steady_address
        lines = output.splitlines()
        told = [line for line in lines if f"{lost.game_id} abandoned, not rated" in line]
        assert len(told) == 1, output
        assert "given up" not in output, "the bot left the lost game when the arena said so, not on its own"
        # The lost game does not count: the one game counted is the rated one, on the steady server.
        counted = [line for line in lines if line.startswith("pool 2 game")]
        assert len(counted) == 1 and counted[0].startswith(f"pool 2 game 1/1: {rated.game_id} seat "), output
        assert lines.index(told[0]) < lines.index(counted[0])
        assert any(line.startswith(f"pool 2: {rated.game_id} rated, place ") for line in lines), output
        yield LostGame(lines, lost, rated, doomed_address, address)
    finally:
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()
        if arena is not None:
            await arena.stop(0)
        for server in (doomed, steady):
            if server.poll() is None:
                stop_process(server)
