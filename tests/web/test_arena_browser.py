"""The arena's leaderboard and bot pages in Chromium, reached from the site's menu, with a screenshot of
each."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from kutnahora.clients.bots import make_bot
from kutnahora.clients.bots.arena import play_rated
from kutnahora.clients.sdk import ArenaClient
from tests.web.conftest import Servers, run, start, stop


async def _play(address: str) -> None:
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


def test_leaderboard_and_bot_page_in_the_browser(
    servers: Servers, context: Any, screenshots: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="kutnahora-arena-web-"))
    arena, address = start(
        [
            sys.executable,
            "-m",
            "kutnahora.arena.main",
            "--port",
            "0",
            "--server",
            servers.grpc,
            "--db",
            str(folder / "arena.db"),
            "--metrics-port",
            "off",
            "--open-after",
            "0.5",
            "--log-level",
            "warning",
        ],
        r"listening on grpc://(\S+)",
        folder / "arena.log",
    )
    try:
        run(_play(address))
        monkeypatch.setenv("KUTNAHORA_WEB_ARENA", address)
        web, url = start(
            [sys.executable, "-m", "kutnahora.web.cli", "--server", servers.grpc, "--port", "0"],
            r"serving (http://\S+)",
            folder / "web.log",
        )
        try:
            page = context.new_page()
            page.goto(url)  # the lobby: its menu leads to the arena's leaderboards
            page.locator("#menu").get_by_role("link", name="Arena").click()
            page.wait_for_url("**/arena")
            assert page.locator("#menu a[aria-current=page]").inner_text() == "Arena"
            pools = page.locator("nav.pools a")
            assert [pools.nth(i).inner_text() for i in range(pools.count())] == ["2", "3", "4"]
            assert page.locator("nav.pools a[aria-current=page]").inner_text() == "2", (
                "the first pool's board"
            )
            pools.get_by_text("4", exact=True).click()
            page.wait_for_url("**/arena?pool=4")
            assert "No rated games in this pool yet" in page.locator("#leaderboard").inner_text()
            page.locator("nav.pools").get_by_role("link", name="2", exact=True).click()
            page.wait_for_url("**/arena?pool=2")
            rows = page.locator("#leaderboard tbody tr")
            assert rows.count() == 2
            names = [rows.nth(i).locator("td").nth(1).inner_text() for i in range(2)]
            assert set(names) == {"steady-greedy", "lucky-random"}
            page.screenshot(path=str(screenshots / "arena-leaderboard.png"), full_page=True)
            page.get_by_role("link", name="steady-greedy").click()
            page.wait_for_selector("#rating-chart polyline")
            assert page.locator("#games tbody tr").count() == 2
            assert page.locator("#ratings tbody tr td").first.inner_text() == "2"
            page.screenshot(path=str(screenshots / "arena-bot.png"), full_page=True)
            page.locator("#games tbody tr a").first.click()
            page.wait_for_url("**/games/**")
            page.locator("#menu").get_by_role("link", name="Arena").click()
            page.wait_for_url("**/arena")
        finally:
            stop(web)
    finally:
        stop(arena)
