"""Hosted bots for real: a ``kutnahora-arena`` process, a game server and ``kutnahora-arena-worker``
processes, with authors using the commands docs/hosted-bots.md gives them.

Two authors register (``kutnahora-bot register``) and submit a folder each (``kutnahora-bot submit --wait``:
built by a worker in the sandbox): the walk-through's own bot (examples/hosted-bot, my-bot) and the
project's random bot; a worker plays their bots' games in the arena's ordinary pool. Both bots
are rated, marked hosted with their version on the leaderboard, and each author reads its own seat log
(another author's is not found). Then a worker is killed in the middle of a game: a second worker takes
the bot over, the game ends and is rated, and when the workers have stopped, no process of a sandbox user
and no control group of theirs is left.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import ClientError
from tests.clients.helpers import ROOT, SERVER_FLAGS, start_process, stop_process
from tests.worker.spawn import spawn_worker, work_folder
from tests.worker.test_worker import processes_running, runner_groups

pytestmark = [
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
    pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's walls (leased users, cgroups) need root"),
]

TOKEN = "end-to-end-worker-token-0123456789"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A game server and an arena (SQLite) that hands work to workers; the arena's address and a folder."""
    folder = tmp_path_factory.mktemp("hosted")
    token = folder / "worker-token"
    token.write_text(TOKEN + "\n")
    server, server_address = start_process("kutnahora.server.main", "--host", "127.0.0.1", *SERVER_FLAGS)
    arena, arena_address = start_process(
        "kutnahora.arena.main",
        *("--host", "127.0.0.1", "--port", "0", "--metrics-port", "off", "--log-level", "warning"),
        *("--db", str(folder / "arena.db"), "--server", server_address, "--pools", "2"),
        *("--worker-token-file", str(token), "--lease-time", "4", "--max-wait", "2"),
    )
    try:
        yield arena_address, folder
    finally:
        stop_process(arena)
        stop_process(server)


def bot_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kutnahora.clients.bots.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


def author(folder: Path, arena: str, name: str, bot: str | None) -> Path:
    """An author's bot folder (``bot`` None: examples/hosted-bot, the walk-through's, which names itself
    my-bot), registered as docs/hosted-bots.md says; its key file."""
    submission = folder / name
    if bot is None:
        shutil.copytree(ROOT / "examples" / "hosted-bot", submission)
    else:
        submission.mkdir()
        (submission / "kutnahora-bot.toml").write_text(
            f'name = "{name}"\nlanguage = "python"\nrun = "python3 -m kutnahora.clients.bots.cli {bot}"\n'
        )
    key = folder / f"{name}.key"
    registered = bot_cli("register", name, "--key-file", str(key), "--arena", arena)
    assert registered.returncode == 0, registered.stderr
    return key


async def start_worker(arena: str, folder: Path, n: int) -> tuple[asyncio.subprocess.Process, Path]:
    work = work_folder()
    log = folder / f"worker-{n}.log"
    process = await spawn_worker(arena, folder / "worker-token", work, folder / "leases", log, "--seats", "2")
    return process, work


@pytest.fixture
async def workers(service: tuple[str, Path]) -> AsyncIterator[list[asyncio.subprocess.Process]]:
    started: list[asyncio.subprocess.Process] = []
    yield started
    for process in started:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), 60)
            except TimeoutError:
                process.kill()
                await process.wait()


async def rated_games(client: ArenaClient, name: str) -> int:
    board = await client.leaderboard("2", page_size=200)
    return sum(e.rating.games for e in board.entries if e.name == name)


async def until(condition: object, timeout: float, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if await condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


async def test_authors_submit_and_their_hosted_bots_are_rated_and_survive_a_lost_worker(
    service: tuple[str, Path], workers: list[asyncio.subprocess.Process]
) -> None:
    arena, folder = service
    my_key = author(folder, arena, "my-bot", None)
    random_key = author(folder, arena, "hosted-random", "random")
    first, first_work = await start_worker(arena, folder, 0)
    workers.append(first)
    for name, key in (("my-bot", my_key), ("hosted-random", random_key)):
        submitted = await asyncio.to_thread(
            bot_cli, "submit", str(folder / name), "--arena", arena, "--key-file", str(key), "--wait"
        )
        assert submitted.returncode == 0, submitted.stdout + submitted.stderr
        assert "version 1" in submitted.stdout, submitted.stdout
    listed = bot_cli("submissions", "--arena", arena, "--key-file", str(my_key))
    assert listed.returncode == 0 and "ready" in listed.stdout, listed.stdout + listed.stderr
    assert listed.stdout.startswith("Bot my-bot:"), listed.stdout

    async with await ArenaClient.connect(arena) as client:
        await until(lambda: _both_rated(client), 240, "both hosted bots to finish a rated game")
        board = await client.leaderboard("2", page_size=200)
        marks = {e.name: (e.hosted, e.hosted_version) for e in board.entries}
        assert marks["my-bot"] == (True, 1) and marks["hosted-random"] == (True, 1)
        profile = await client.bot_profile("my-bot")
        finished = [g for g in profile.recent_games if g.status == "finished"]
        assert finished, profile
        own = await client.seat_log(my_key.read_text().strip(), finished[0].game_id)
        assert own.outcome == "finished" and own.version == 1
        with pytest.raises(ClientError) as caught:  # the other author's log of the same game
            await client.seat_log(random_key.read_text().strip(), "not-a-game-of-this-bot")
        assert caught.value.code == grpc.StatusCode.NOT_FOUND

        # A worker lost in the middle of a game: its bots go to another worker and the game still ends.
        before = await rated_games(client, "my-bot")
        await until(lambda: _playing(client, "my-bot"), 120, "a game in progress")
        first.send_signal(signal.SIGKILL)
        await first.wait()
        second, second_work = await start_worker(arena, folder, 1)
        workers.append(second)
        await until(
            lambda: _more_rated(client, "my-bot", before), 240, "a game rated after the worker's loss"
        )
    second.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(second.wait(), 60) == 0
    await asyncio.sleep(1.0)
    async with await ArenaClient.connect(arena) as client:
        games = {
            game.game_id
            for name in ("my-bot", "hosted-random")
            for game in (await client.bot_profile(name)).recent_games
        }
    assert games, "the bots' games are listed"
    # no process of this arena's games is left (other tests' bots may be running beside this one)
    assert processes_running("python3 bot.py", games) == []
    assert processes_running("kutnahora.clients.bots.cli random", games) == []
    assert not any(group.exists() for group in runner_groups(second.pid))
    shutil.rmtree(first_work, ignore_errors=True)
    shutil.rmtree(second_work, ignore_errors=True)


async def _both_rated(client: ArenaClient) -> bool:
    return await rated_games(client, "my-bot") >= 1 and await rated_games(client, "hosted-random") >= 1


async def _playing(client: ArenaClient, name: str) -> bool:
    profile = await client.bot_profile(name)
    return any(g.status == "active" for g in profile.recent_games)


async def _more_rated(client: ArenaClient, name: str, before: int) -> bool:
    return await rated_games(client, name) > before
