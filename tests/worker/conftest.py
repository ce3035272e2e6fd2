"""Fixtures for the worker's tests: a real game server, the fake arena, and a worker in a process of its
own (as an operator runs it)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
import signal
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.clients.helpers import ROOT, SERVER_FLAGS, start_process, stop_process
from tests.worker.fake_arena import FakeArena
from tests.worker.spawn import spawn_worker, work_folder

HOSTILE = ROOT / "tests" / "clients" / "hostile"


@pytest.fixture(scope="module")
def game_server() -> Iterator[str]:
    """A ``kutnahora-server`` for the module's games (in memory)."""
    process, address = start_process("kutnahora.server.main", "--host", "127.0.0.1", *SERVER_FLAGS)
    try:
        yield address
    finally:
        stop_process(process)


@pytest.fixture
async def arena(game_server: str) -> AsyncIterator[FakeArena]:
    fake = await FakeArena(game_server).start()
    try:
        yield fake
    finally:
        await fake.stop()


@dataclass
class WorkerProcess:
    """A ``kutnahora-arena-worker`` started by a test."""

    process: asyncio.subprocess.Process
    log: Path
    work: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    async def terminate(self, timeout: float = 60.0) -> int:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return await asyncio.wait_for(self.process.wait(), timeout)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
            raise AssertionError(f"the worker did not stop within {timeout:g} s:\n{self.output()}") from None


@pytest.fixture
async def start_worker(tmp_path: Path, arena: FakeArena) -> AsyncIterator[object]:
    """Start a worker against the fake arena: ``await start_worker(*extra_flags)``."""
    started: list[WorkerProcess] = []
    folders: list[Path] = []

    async def start(*extra: str, token_text: str | None = None) -> WorkerProcess:
        token = tmp_path / "worker-token"
        token.write_text((arena.token if token_text is None else token_text) + "\n")
        work = work_folder()
        folders.append(work)
        log = tmp_path / f"worker-{len(started)}.log"
        process = await spawn_worker(
            arena.address, token, work, tmp_path / "leases", log, "--bot-memory", "1024", *extra
        )
        worker = WorkerProcess(process, log, work)
        started.append(worker)
        return worker

    yield start
    for worker in started:  # stopped as an operator would, so that its sandbox's tmpfs is unmounted
        if worker.process.returncode is None:
            with contextlib.suppress(AssertionError):
                await worker.terminate(30)
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def sleepy(folder: Path) -> tuple[Path, str]:
    """A submission that joins nothing and sleeps for ever, its script named uniquely (to find its
    processes); the folder and that name."""
    name = f"nap_{secrets.token_hex(6)}.py"
    folder.mkdir(parents=True)
    (folder / "kutnahora-bot.toml").write_text(
        f'name = "sleepy"\nlanguage = "python"\nrun = "python3 {name}"\n'
    )
    shutil.copyfile(HOSTILE / "sleeper" / "sleeper.py", folder / name)
    return folder, name
