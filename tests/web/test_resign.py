"""Resigning from the game page: it shows at once, stays after a reload; a rematch after the game."""

from __future__ import annotations

import re
from typing import Any

from tests.web.conftest import Servers
from tests.web.test_layout import READY


def test_resigning_shows_at_once_and_stays_after_a_reload(servers: Servers, context: Any) -> None:
    page = context.new_page()
    page.goto(servers.web)
    page.select_option("#players", "2")
    page.select_option("#seat0", "you")
    page.select_option("#seat1", "greedy")
    page.fill("#name", "Rita")
    page.fill("#delay", "0")
    page.click("#create-button")
    page.wait_for_url(re.compile(r"/games/[0-9a-f]+$"))
    game_url = page.url
    page.wait_for_selector(READY)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#you button.resign")
    # At once: no options, no resign button, a sentence saying the server plays the seat.
    page.wait_for_selector("#you .resigned")
    assert (
        page.locator("#you .resigned").inner_text() == "You resigned: the server plays your seat to the end."
    )
    assert page.locator("#you button.resign").count() == 0
    assert page.locator("#options").is_hidden()
    page.reload()
    page.wait_for_selector("#you .resigned")
    assert page.locator("#you button.resign").count() == 0
    assert "(resigned)" in page.locator("#scores tr[data-scores-row='0']").inner_text()

    # The server plays the resigned seat to the end; then a rematch makes a new game with the same seats.
    page.wait_for_selector("#result:not([hidden])", timeout=120_000)
    page.click("#rematch")
    # The page is already at a game's address: wait for another one (a pattern would match at once).
    page.wait_for_url(lambda url: url != game_url and re.search(r"/games/[0-9a-f]+$", url) is not None)
    assert page.url != game_url
    page.wait_for_selector(READY)
    assert page.locator("#you h2").inner_text() == "You play seat 0"
    assert "greedy" in page.locator("#scores tr[data-scores-row='1']").inner_text()
