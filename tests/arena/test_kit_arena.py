"""Every starter kit (Go, C++, Java, Node.js) plays rated games in a real arena: it registers with its own
step (which plays no game, and never overwrites a key file that exists), meets a ticket of its account
that another process holds (ALREADY_EXISTS) and waits instead of dying, then plays two rated games
against a Python bot, keeping the arena's event stream open (it prints each rating change), and exits 0;
given several pools (``--pool 2,3``) it plays in each at once. The compiled kits also leave a game the
arena reports abandoned (its game server killed mid-game) at once, and play their rated game on the
server still alive (tests/arena/test_node_arena.py does so for the Node.js bot).

The kits are the ones tests/clients/kit_builds.py builds once per session from their READMEs; a kit whose
toolchain is missing is skipped, saying what is missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import stat
import subprocess
from pathlib import Path

import grpc
import pytest
from rich.console import Console

from kutnahora.arena.app import Arena
from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.bots import make_bot
from kutnahora.clients.bots.arena import play_rated
from kutnahora.clients.sdk import Bot, ClientError
from tests.arena.lost_server import a_bot_outlives_its_server
from tests.clients.kit_builds import build_kit

# The flags differ only in spelling: Go's flag package takes -flag (and --flag too).
KITS = ["go", "cpp", "java", "node"]


@pytest.fixture(scope="module", params=KITS)
def kit_name(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


async def test_the_kit_registers_and_plays_rated_games(
    kit_name: str, arena: Arena, arena_client: ArenaClient, tmp_path: Path
) -> None:
    kit = await asyncio.to_thread(build_kit, kit_name)
    address = f"127.0.0.1:{arena.port}"
    key_file = tmp_path / "kit.key"
    name = f"{kit_name}-kit"

    registered = await asyncio.to_thread(
        subprocess.run,
        [*kit.command, "--arena", address, "--register", name, "--key-file", str(key_file)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert registered.returncode == 0, registered.stdout + registered.stderr
    assert f"registered {name}; its key is in {key_file}" in registered.stdout
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = key_file.read_text().strip()
    profile = await arena_client.bot_profile(name)
    assert not profile.recent_games and not profile.ratings  # registering played no game

    taken = await asyncio.to_thread(
        subprocess.run,
        [*kit.command, "--arena", address, "--register", name, "--key-file", str(tmp_path / "again.key")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert taken.returncode == 1 and "(NAME_TAKEN)" in taken.stderr, taken.stdout + taken.stderr
    assert not (tmp_path / "again.key").exists()

    # A key file that exists (it may hold the only copy of a key) is never overwritten: the kit refuses
    # before it registers, as `kutnahora-bot register` does.
    kept = await asyncio.to_thread(
        subprocess.run,
        [*kit.command, "--arena", address, "--register", f"{name}-2", "--key-file", str(key_file)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    said = kept.stdout + kept.stderr
    assert kept.returncode == 2, said
    assert f"{key_file} exists (it may hold a key); name a new file, or delete it first" in kept.stderr, said
    assert key_file.read_text().strip() == key and stat.S_IMODE(key_file.stat().st_mode) == 0o600
    with pytest.raises(ClientError) as unknown:
        await arena_client.bot_profile(f"{name}-2")
    assert unknown.value.code == grpc.StatusCode.NOT_FOUND, "the refused registration registered nothing"

    # Another process of the same account holds a ticket in pool 2: the kit says so and waits.
    holder_waiting = asyncio.Event()
    holder = asyncio.ensure_future(_hold_ticket(arena_client, key, holder_waiting))
    await asyncio.wait_for(holder_waiting.wait(), 30)
    opponent_key = await arena_client.register_bot("py-opponent")
    process = await asyncio.create_subprocess_exec(
        *kit.command,
        *("--arena", address, "--key-file", str(key_file), "--pool", "2", "--games", "2"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        first = await asyncio.wait_for(process.stdout.readline(), 60)
        told = first.decode()
        assert "another process of this bot already seeks in this pool (TICKET_EXISTS)" in told, told
        holder.cancel()  # the other process leaves: the kit's next Seek goes through
        with contextlib.suppress(asyncio.CancelledError):
            await holder
        outcomes = await play_rated(
            address, opponent_key, ["2"], 2, lambda: make_bot("random", None), Console(quiet=True), quiet=True
        )
        stdout, stderr = await asyncio.wait_for(process.communicate(), 120)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    output = told + stdout.decode()
    assert process.returncode == 0, output + stderr.decode()
    assert len(outcomes) == 2
    counted = [line for line in output.splitlines() if line.startswith("pool 2 game ")]
    assert [line.split(":")[0] for line in counted] == ["pool 2 game 1/2", "pool 2 game 2/2"], output
    assert all("vs py-opponent: finished" in line for line in counted), output
    rated = [line for line in output.splitlines() if " rated, place " in line]
    assert len(rated) == 2 and rated[0].startswith("pool 2: ") and "μ 25.00 → " in rated[0], output
    assert output.count("already seeks in this pool") == 1  # one sentence, not one per retry
    for _ in range(100):
        profile = await arena_client.bot_profile(name)
        if profile.ratings and profile.ratings[0].games == 2:
            break
        await asyncio.sleep(0.1)
    assert profile.ratings[0].games == 2
    assert [g.status for g in profile.recent_games] == ["finished", "finished"]


async def test_the_kit_plays_in_several_pools_at_once(
    kit_name: str, arena: Arena, arena_client: ArenaClient, tmp_path: Path
) -> None:
    """``--pool 2,3`` (as `kutnahora-bot` takes it): the kit seeks in both pools at once and plays
    ``--games`` rated games in each, against Python bots that play only when it does."""
    kit = await asyncio.to_thread(build_kit, kit_name)
    address = f"127.0.0.1:{arena.port}"
    name = f"{kit_name}-pools"
    key_file = tmp_path / "kit.key"
    key_file.write_text(await arena_client.register_bot(name) + "\n")
    both, three = await arena_client.register_bot("py-both"), await arena_client.register_bot("py-three")
    process = await asyncio.create_subprocess_exec(
        *kit.command,
        *("--arena", address, "--key-file", str(key_file), "--pool", "2, 3,2", "--games", "1"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        console = Console(quiet=True)

        def random_bot() -> Bot:
            return make_bot("random", None)

        played = await asyncio.wait_for(
            asyncio.gather(
                play_rated(address, both, ["2", "3"], 1, random_bot, console, quiet=True),
                play_rated(address, three, ["3"], 1, random_bot, console, quiet=True),
            ),
            180,
        )
        stdout, stderr = await asyncio.wait_for(process.communicate(), 120)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    output = stdout.decode()
    assert process.returncode == 0, output + stderr.decode()
    assert [len(outcomes) for outcomes in played] == [2, 1]
    counted = sorted(line.split(":")[0] for line in output.splitlines() if " game 1/1: " in line)
    assert counted == ["pool 2 game 1/1", "pool 3 game 1/1"], output
    assert "vs py-both, py-three" in output or "vs py-three, py-both" in output, output
    for _ in range(100):
        profile = await arena_client.bot_profile(name)
        if sorted((r.pool, r.games) for r in profile.ratings) == [("2", 1), ("3", 1)]:
            break
        await asyncio.sleep(0.1)
    assert sorted((r.pool, r.games) for r in profile.ratings) == [("2", 1), ("3", 1)]


async def _hold_ticket(client: ArenaClient, key: str, waiting: asyncio.Event) -> None:
    async for message in client.seek_updates(key, "2"):
        if message.HasField("waiting"):
            waiting.set()


@pytest.mark.parametrize("compiled", ["go", "cpp", "java"])
async def test_the_kit_leaves_a_game_the_arena_abandons_and_plays_a_rated_one(
    compiled: str, tmp_path: Path
) -> None:
    """The game server of the kit's first game dies mid-game: the arena tells the kit on its event stream,
    the kit leaves that game at once (before its own Play stream would give up), does not count it, and
    plays its one rated game on the second server."""
    kit = await asyncio.to_thread(build_kit, compiled)
    # --retry-for 60: left to itself, the kit would retry the dead server for a minute.
    async with a_bot_outlives_its_server(
        tmp_path, f"{compiled}-kit", kit.command, options=("--retry-for", "60"), under_way_within=90
    ):
        pass  # the scenario checks what every bot must do there; a kit's output says nothing more
