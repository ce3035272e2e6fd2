"""Fixtures for the browser tests: a game server, ``kutnahora-web`` in front of it, and headless Chromium.

The game server and the web server run as their own processes on ephemeral loopback ports, as a user
would run them; the web server's output goes to a file that the tests read (no seat token may appear in
it). The browser is Debian's Chromium driven by Playwright; without it the browser tests skip, saying so
(``.ci/run`` installs it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

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
T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end on a thread of its own (Playwright's sync API owns this thread's loop)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=120)


def start(command: list[str], pattern: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start a process whose output goes to ``log`` and wait for the line that names its address."""
    handle = log.open("wb")
    process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, cwd=ROOT)
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
            [sys.executable, "-m", "kutnahora.web.cli", "--server", address, "--port", "0"],
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


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless Chromium (Debian's), or a skip saying why there is none."""
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
    """A fresh browser profile (its own cookies) for one test."""
    # The pages forbid evaluated scripts (CSP); the tests' own waiting functions are allowed through.
    ctx = browser.new_context(viewport={"width": 1600, "height": 1200}, bypass_csp=True)
    ctx.set_default_timeout(20_000)
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture
def strict_context(browser: Any) -> Iterator[Any]:
    """A fresh browser profile whose pages run under their own Content-Security-Policy, as a visitor's do."""
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
