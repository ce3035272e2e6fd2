"""Two people in two browsers: one creates a game with an open seat, the other joins it from the lobby."""

from __future__ import annotations

import re
from typing import Any

from tests.web.conftest import Servers


def test_a_second_person_joins_a_waiting_seat_from_the_lobby(
    servers: Servers, browser: Any, context: Any
) -> None:
    alice = context.new_page()
    alice.goto(servers.web)
    alice.select_option("#players", "2")
    alice.select_option("#seat0", "you")
    alice.select_option("#seat1", "open")
    alice.fill("#name", "Alice")
    alice.click("#create-button")
    alice.wait_for_url(re.compile(r"/games/[0-9a-f]+$"))
    game_id = alice.url.rsplit("/", 1)[1]
    alice.wait_for_selector("#turn[data-waiting='true']")
    assert "seat 0: Alice, seat 1: open" in alice.locator("#turn").inner_text()

    other = browser.new_context()
    try:
        bob = other.new_page()
        bob.goto(servers.web)
        bob.fill("#name", "Bob")
        bob.locator(f"#waiting tr[data-game-id='{game_id}'] button.join").click()
        bob.wait_for_url(re.compile(f"/games/{game_id}$"))
        bob.wait_for_selector("#you:not([hidden])")
        assert bob.locator("#you h2").inner_text() == "You play seat 1"

        # Alice's page hears that the seat was taken: the game starts, with Bob on seat 1.
        alice.wait_for_function("() => !document.querySelector('#turn').dataset.waiting")
        alice.wait_for_function("() => document.querySelector('#header').textContent.endsWith('active')")
        assert "Bob" in alice.locator("figure.player[data-seat='1']").text_content()
        # Exactly one of them owes the first decision, and only that page offers options.
        pages = {0: alice, 1: bob}
        alice.wait_for_selector("#turn .seatname")
        first = 0 if "You (seat 0)" in alice.locator("#turn").inner_text() else 1
        pages[first].wait_for_selector("#options:not([hidden]) button.option")
        assert pages[1 - first].locator("#options").is_hidden()
    finally:
        other.close()
