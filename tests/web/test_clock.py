"""The clock on the game page: the time left for the pending decision and each seat's bank, ticking."""

from __future__ import annotations

import re
from typing import Any

from tests.web.conftest import Servers
from tests.web.test_layout import READY


def test_the_clock_shows_and_ticks(servers: Servers, context: Any) -> None:
    page = context.new_page()
    page.goto(servers.web)
    page.select_option("#players", "2")
    page.select_option("#seat0", "you")
    page.select_option("#seat1", "greedy")
    page.select_option("#clock", "60")
    page.fill("#delay", "0")
    page.click("#create-button")
    page.wait_for_url(re.compile(r"/games/[0-9a-f]+$"))
    page.wait_for_selector(READY)
    page.wait_for_selector("#clock:not([hidden]):has-text('for this move')")
    first = page.locator("#clock").inner_text()
    found = re.match(
        r"⏱ (you|P1): (\d+):(\d\d) for this move · bank (\d+):(\d\d) · banks: P\d (\d+):(\d\d)", first
    )
    assert found, first
    assert 0 < int(found[2]) * 60 + int(found[3]) <= 60
    assert int(found[4]) * 60 + int(found[5]) <= 600 and int(found[6]) * 60 + int(found[7]) <= 600
    page.wait_for_function(f"() => document.querySelector('#clock').textContent !== {first!r}", timeout=5000)
    # A game without a clock shows none.
    page.goto(servers.web)
    page.select_option("#seat0", "you")
    page.click("#create-button")
    page.wait_for_url(re.compile(r"/games/[0-9a-f]+$"))
    page.wait_for_selector(READY)
    assert page.locator("#clock").is_hidden()
