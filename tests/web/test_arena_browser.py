"""The arena's leaderboard and bot pages in Chromium, reached from the site's menu, with a screenshot of
each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.web.conftest import ArenaSite


def test_leaderboard_and_bot_page_in_the_browser(
    arena_site: ArenaSite, context: Any, screenshots: Path
) -> None:
    page = context.new_page()
    page.goto(arena_site.web)  # the lobby: its menu leads to the arena's leaderboards
    page.locator("#menu").get_by_role("link", name="Arena").click()
    page.wait_for_url("**/arena")
    assert page.locator("#menu a[aria-current=page]").inner_text() == "Arena"
    pools = page.locator("nav.pools a")
    assert [pools.nth(i).inner_text() for i in range(pools.count())] == ["2", "3", "4"]
    assert page.locator("nav.pools a[aria-current=page]").inner_text() == "2", "the first pool's board"
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
