"""Fixtures for the browser tests: a game server, ``kutnahora-web`` in front of it, and headless Chromium.

The game server and the web server run as their own processes on ephemeral loopback ports, as a user
would run them; the web server's output goes to a file that the tests read (no seat token may appear in
it). The browser is Debian's Chromium driven by Playwright; without it the browser tests skip, saying so
(``.ci/run`` installs it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("KUTNAHORA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
UNLIMITED = [
    *("--visitor-creations", "0", "--visitor-games", "0"),
    *("--visitor-requests", "0", "--visitor-streams", "0", "--visitor-connections", "0"),
]
"""The browser tests' web servers hold no visitor to limits: every test's browser and client is one
visitor, 127.0.0.1, and the session creates far more games than one visitor may hold (the limits have
their own tests, tests/web/test_visitor_limits.py)."""
T = TypeVar("T")
P = ParamSpec("P")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end on a thread of its own (Playwright's sync API owns this thread's loop)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=120)


def runs_on_own_loop(test: Callable[P, Coroutine[Any, Any, None]]) -> Callable[P, None]:
    """Make an async test a plain one that runs it to its end with :func:`run`, on a thread and an event
    loop of its own (the browser tests' Playwright owns the test thread's loop). The test keeps its name
    and signature, so pytest still hands it the fixtures it names."""

    @functools.wraps(test)
    def on_own_loop(*args: P.args, **kwargs: P.kwargs) -> None:
        run(test(*args, **kwargs))

    return on_own_loop


def start(
    command: list[str], pattern: str, log: Path, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """Start a process whose output goes to ``log`` and wait for the line that names its address;
    ``env`` adds to its environment."""
    handle = log.open("wb")
    environment = {**os.environ, **(env or {})}
    process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, cwd=ROOT, env=environment)
    for _ in range(300):
        found = re.search(pattern, log.read_text(errors="replace"))
        if found:
            return process, found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    pytest.fail(f"{command[2]} did not start: {log.read_text(errors='replace')[-2000:]}")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@dataclass(frozen=True)
class Servers:
    """The game server's gRPC address, the web server's URL and the file its output goes to."""

    grpc: str
    web: str
    web_log: Path


@pytest.fixture(scope="session")
def servers() -> Iterator[Servers]:
    folder = Path(tempfile.mkdtemp(prefix="kutnahora-web-"))
    game_server, address = start(
        [
            sys.executable,
            "-m",
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
        ],
        r"listening on grpc://(\S+)",
        folder / "server.log",
    )
    try:
        log = folder / "web.log"
        web, url = start(
            [sys.executable, "-m", "kutnahora.web.cli", "--server", address, "--port", "0", *UNLIMITED],
            r"serving (http://\S+)",
            log,
        )
        try:
            yield Servers(address, url, log)
        finally:
            stop(web)
    finally:
        stop(game_server)
        shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class ArenaSite:
    """An arena on the session's game server where two bots have played two rated games, and a web server
    that shows it (``KUTNAHORA_WEB_ARENA``)."""

    arena: str
    web: str


async def _play_rated(address: str) -> None:
    from rich.console import Console

    from kutnahora.clients.arena_client import ArenaClient
    from kutnahora.clients.bots import make_bot
    from kutnahora.clients.bots.arena import play_rated

    async with await ArenaClient.connect(address) as arena:
        keys = {name: await arena.register_bot(name) for name in ("steady-greedy", "lucky-random")}

    async def loop(name: str) -> None:
        kind = "greedy" if "greedy" in name else "random"
        await play_rated(
            address, keys[name], ["2"], 2, lambda: make_bot(kind, 7), Console(quiet=True), quiet=True
        )

    await asyncio.gather(loop("steady-greedy"), loop("lucky-random"))
    async with await ArenaClient.connect(address) as arena:
        for _ in range(100):
            profile = await arena.bot_profile("steady-greedy")
            if profile.ratings and profile.ratings[0].games == 2:
                return
            await asyncio.sleep(0.1)


@pytest.fixture(scope="session")
def arena_site(servers: Servers) -> Iterator[ArenaSite]:
    folder = Path(tempfile.mkdtemp(prefix="kutnahora-arena-web-"))
    arena, address = start(
        [
            *(sys.executable, "-m", "kutnahora.arena.main", "--port", "0", "--server", servers.grpc),
            *("--db", str(folder / "arena.db"), "--metrics-port", "off", "--open-after", "0.5"),
            *("--log-level", "warning"),
        ],
        r"listening on grpc://(\S+)",
        folder / "arena.log",
    )
    try:
        run(_play_rated(address))
        web, url = start(
            [sys.executable, "-m", "kutnahora.web.cli", "--server", servers.grpc, "--port", "0", *UNLIMITED],
            r"serving (http://\S+)",
            folder / "web.log",
            env={"KUTNAHORA_WEB_ARENA": address},
        )
        try:
            yield ArenaSite(address, url)
        finally:
            stop(web)
    finally:
        stop(arena)
        shutil.rmtree(folder, ignore_errors=True)


AUTHOR_KEY = "steady-key-" + "k" * 32


@dataclass(frozen=True)
class AuthorSite:
    """A web server whose arena is :class:`~tests.web.fake_arena.FakeArena` in front of ``arena_site``'s:
    ``steady-greedy`` has uploaded version 1 (built, with a build log) and played ``game_id`` with it
    (a seat log), and its key is ``key``."""

    web: str
    fake: Any
    bot: str
    key: str
    game_id: str
    folder: Path


def _prepare_author(fake: Any, address: str, bot: str, folder: Path) -> str:
    """Upload a version of ``bot`` through the fake's SubmitBot, build it, and give it a seat log of one of
    its games; the game's id."""
    import grpc

    from kutnahora.hosting.archives import pack
    from kutnahora.v1 import arena_service_pb2, arena_service_pb2_grpc

    source = folder / "steady"
    source.mkdir()
    (source / "kutnahora-bot.toml").write_text(
        f'name = "{bot}"\nlanguage = "python"\nrun = "python3 -m kutnahora.clients.bots.cli greedy"\n'
    )
    metadata = (("authorization", f"Bearer {AUTHOR_KEY}"),)
    with grpc.insecure_channel(address) as channel:
        stub = arena_service_pb2_grpc.ArenaServiceStub(channel)
        stub.SubmitBot(
            arena_service_pb2.SubmitBotRequest(archive=pack(source), pools=["2"]), metadata=metadata
        )
        profile = stub.GetBotProfile(arena_service_pb2.GetBotProfileRequest(name=bot))
    fake.built(bot, 1, ok=True, log="Collecting kutnahora\nbuilt <steady> in 2.1 s\n")
    game_id = str(profile.recent_games[0].game_id)
    fake.seat_played(
        bot, game_id, profile.recent_games[0].seat, "seat joined\ndecision 1: <greedy> took 3 ms\n"
    )
    return game_id


@pytest.fixture(scope="session")
def author_site(servers: Servers, arena_site: ArenaSite) -> Iterator[AuthorSite]:
    from tests.web.fake_arena import FakeArena

    folder = Path(tempfile.mkdtemp(prefix="kutnahora-author-web-"))
    fake = FakeArena(arena_site.arena)
    fake.add_bot("steady-greedy", AUTHOR_KEY)
    fake.add_bot("lucky-random", "lucky-key-" + "l" * 33)
    try:
        with fake.serve() as address:
            game_id = _prepare_author(fake, address, "steady-greedy", folder)
            web, url = start(
                [
                    sys.executable,
                    "-m",
                    "kutnahora.web.cli",
                    "--server",
                    servers.grpc,
                    "--port",
                    "0",
                    *UNLIMITED,
                ],
                r"serving (http://\S+)",
                folder / "web.log",
                env={"KUTNAHORA_WEB_ARENA": address},
            )
            try:
                yield AuthorSite(url, fake, "steady-greedy", AUTHOR_KEY, game_id, folder)
            finally:
                stop(web)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """Headless Chromium (Debian's), or a skip saying why there is none.

    Package-scoped, not session-scoped: Playwright's synchronous API keeps its event loop marked as
    running in this thread while it is open, so any later test calling ``asyncio.run`` would fail; it is
    closed as soon as the run leaves tests/web (with pytest-xdist, a worker interleaves packages)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium; .ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    """A fresh browser profile (its own cookies) for one test. Its pages run under their own
    Content-Security-Policy, as a visitor's do: the tests drive them through the DevTools protocol, which the
    CSP does not govern, and never add a script to a page."""
    ctx = browser.new_context(viewport={"width": 1600, "height": 1200})
    ctx.set_default_timeout(20_000)
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where the tests save their screenshots (``KUTNAHORA_SCREENSHOTS``, else a temporary folder)."""
    folder = Path(os.environ.get("KUTNAHORA_SCREENSHOTS") or tempfile.mkdtemp(prefix="kutnahora-shots-"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder
