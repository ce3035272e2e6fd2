"""The lobby lists a game that bots are playing, and its game page follows it live (a real browser)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.web.conftest import Servers


def moves_shown(page: Any) -> int:
    return int(page.locator("#move-count").inner_text())


def test_the_lobby_shows_a_bot_game_and_its_page_follows_it(
    servers: Servers, context: Any, screenshots: Path
) -> None:
    page = context.new_page()
    page.goto(servers.web)
    # Create a game of two bots from the lobby's form, slowed down enough to watch.
    page.select_option("#players", "2")
    page.select_option("#seat0", "greedy")
    page.select_option("#seat1", "random")
    page.fill("#delay", "0.25")
    page.click("#create-button")
    page.wait_for_url(re.compile(r"/games/[0-9a-f]+$"))
    game_id = page.url.rsplit("/", 1)[1]

    # Back in the lobby the game is listed as being played, with its players, round and moves.
    page.goto(servers.web)
    row = page.locator(f"#active tr[data-game-id='{game_id}']")
    row.wait_for()
    assert "greedy" in row.inner_text() and "random" in row.inner_text()
    moves_in_lobby = int(row.locator("td.moves").inner_text())
    page.wait_for_function(
        "() => Number(document.querySelector("
        f"\"#active tr[data-game-id='{game_id}'] td.moves\")?.textContent) > {moves_in_lobby}"
    )
    page.screenshot(path=str(screenshots / "lobby.png"), full_page=True)

    # Its page draws the board and counts the moves as they are made.
    row.locator("a.game-link").click()
    page.wait_for_url(re.compile(f"/games/{game_id}"))
    page.wait_for_function("() => Number(document.querySelector('#move-count').textContent) > 0")
    first = moves_shown(page)
    page.wait_for_function(f"() => Number(document.querySelector('#move-count').textContent) >= {first + 3}")
    assert moves_shown(page) >= first + 3
    assert page.locator("#live").inner_text() == "● live"
    # The position on screen follows the newest version, and the move list names the bots' decisions.
    page.wait_for_function(
        "() => document.querySelector('#version').textContent"
        " === document.querySelector('#move-count').textContent"
    )
    assert page.locator("#moves li").count() >= 1
    assert page.locator("svg.city-svg").count() == 1 and page.locator("svg.mines-svg").count() == 1
    assert page.locator("figure.player").count() == 2
    page.screenshot(path=str(screenshots / "live.png"), full_page=True)
