"""The arena's leaderboard and bot pages in Chromium, reached from the site's menu, and a bot's author's
area (its key, versions, build log, seat log, pausing, an upload), with a screenshot of each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kutnahora.hosting.archives import pack
from tests.web.conftest import ArenaSite, AuthorSite


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


def test_the_authors_area_in_the_browser(author_site: AuthorSite, context: Any, screenshots: Path) -> None:
    site, fake = author_site, author_site.fake
    page = context.new_page()
    page.goto(f"{site.web}/arena/bots/{site.bot}")
    assert page.locator("h1 .hosted").inner_text() == "hosted v1"
    page.get_by_role("link", name="The author's area").click()
    page.wait_for_url("**/arena/author?bot=steady-greedy")
    assert page.locator("#key-form").count() == 1 and page.locator("input[name=bot]").count() == 0
    heading = page.locator("#key-heading").inner_text()
    assert heading == f"The key of {site.bot}", "the bot that led here named"
    page.locator("#api-key").fill("wrong-key-" + "w" * 33)
    page.locator("#give-key").click()
    assert "does not accept this key" in page.locator("#author-error").inner_text()
    assert not context.cookies(), "a refused key is not kept"
    page.locator("#api-key").fill(site.key)
    page.locator("#give-key").click()
    page.wait_for_selector("#versions")
    assert page.url == f"{site.web}/arena/author", "the key is in no address"
    cookie = next(c for c in context.cookies() if c["name"] == "kh_arena_key")
    assert cookie["value"] == site.key and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert cookie["path"] == "/arena" and cookie["expires"] == -1, "gone when the browser closes"
    assert site.key not in page.evaluate("document.cookie") and site.key not in page.content()
    assert page.locator("#versions tbody tr").count() == 1
    assert "Version 1 plays in pool 2" in page.locator("#hosting-state").inner_text()
    assert page.locator("#rating-chart circle.point").count() == 2, "one point per rated game"
    page.screenshot(path=str(screenshots / "arena-author.png"), full_page=True)
    # The build log of version 1, and back.
    page.get_by_role("link", name="version 1 and its build log").click()
    page.wait_for_url("**/arena/author/versions/1")
    assert "built <steady> in 2.1 s" in page.locator("#build-log").inner_text()
    page.get_by_role("link", name="Back to the author's area").click()
    # The seat log of its game, and the game's replay page.
    page.get_by_role("link", name=f"the bot's log of game {site.game_id}").click()
    page.wait_for_url(f"**/arena/author/games/{site.game_id}")
    assert "decision 1: <greedy> took 3 ms" in page.locator("#seat-log").inner_text()
    page.screenshot(path=str(screenshots / "arena-author-seat-log.png"), full_page=True)
    page.get_by_role("link", name="The game").click()
    page.wait_for_url(f"**/games/{site.game_id}")
    page.goto(f"{site.web}/arena/author")
    # Pause, then resume.
    page.locator("#pause").click()
    page.wait_for_selector("#resume")
    assert "Paused: paused by its author." in page.locator("#hosting-state").inner_text()
    assert fake.bots[site.bot].paused
    page.locator("#resume").click()
    page.wait_for_selector("#pause")
    assert not fake.bots[site.bot].paused
    # Upload a version for pool 2 only.
    source = site.folder / "browser-upload"
    source.mkdir(exist_ok=True)
    (source / "kutnahora-bot.toml").write_text(f'name = "{site.bot}"\nlanguage = "go"\nrun = "./bot"\n')
    (source / "main.go").write_text("package main\nfunc main() {}\n")
    packed = site.folder / "upload.tar.gz"
    packed.write_bytes(pack(source))
    page.locator("#archive").set_input_files(str(packed))
    for box in page.locator("input[name=pools]").all():
        box.set_checked(box.get_attribute("value") == "2")
    page.locator("#upload").click()
    page.wait_for_selector("#author-notice")
    assert page.locator("#author-notice").inner_text() == "Version 2 submitted (building)."
    kept = fake.bots[site.bot].versions[-1]
    assert kept.archive == packed.read_bytes() and fake.bots[site.bot].pools == ["2"]
    assert page.locator("#versions tbody tr").first.locator(".state").inner_text() == "building"
    # Forget the key: the form again, the cookies gone.
    page.locator("#forget").click()
    page.wait_for_selector("#key-form")
    assert not [c for c in context.cookies() if c["name"].startswith("kh_arena_")]
    assert site.key not in (site.folder / "web.log").read_text(errors="replace"), "nor in the web's log"
