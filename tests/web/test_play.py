"""A person plays a whole two-player game against the greedy bot by clicking in the browser."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

from kutnahora.clients.sdk import Client
from kutnahora.v1 import game_pb2
from tests.web.conftest import Servers, run

READY = "#options:not([hidden]) button.option:not([disabled]), #result:not([hidden])"


async def summary(address: str, game_id: str) -> game_pb2.GameSummary:
    async with await Client.connect(address) as client:
        return await client.get_game(game_id)


def test_a_person_plays_a_whole_game_against_greedy(
    servers: Servers, context: Any, screenshots: Path
) -> None:
    page = context.new_page()
    page.goto(servers.web)
    page.select_option("#players", "2")
    page.select_option("#seat0", "you")
    page.select_option("#seat1", "greedy")
    page.fill("#name", "Alice")
    page.fill("#delay", "0")
    page.click("#create-button")
    page.wait_for_url(re.compile(r"/games/[0-9a-f]+$"))
    game_id = page.url.rsplit("/", 1)[1]

    choose = random.Random(15)
    clicks = board_clicks = 0
    shot = priced = False
    while True:
        page.wait_for_selector(READY)
        if page.locator("#result").is_visible():
            break
        options = page.locator("#options button.option")
        assert page.locator("#you").inner_text().startswith("You play seat 0")
        # Every option names its price (or says it is free).
        assert all(text for text in options.locator(".price").all_inner_texts())
        picks = page.locator("svg g.pick")
        prices = " ".join(options.locator(".price").all_inner_texts())
        later = re.search(r"Round ([3-9])/", page.locator("#header").inner_text())
        if picks.count() and not priced and later and "groschen" in prices:
            # A decision on the board with prices, well into the game: the picture of a seat being played.
            page.screenshot(path=str(screenshots / "play-board.png"))
            priced = True
        if picks.count() and (board_clicks == 0 or choose.random() < 0.5):
            # Where an option names a square or a town-hall tile, the board itself can be clicked.
            picks.nth(choose.randrange(picks.count())).click()
            board_clicks += 1
        else:
            if not shot and options.count() > 3 and page.locator("#header").inner_text().count("Round 2"):
                page.screenshot(path=str(screenshots / "play.png"), full_page=True)
                shot = True
            options.nth(choose.randrange(options.count())).click()
        clicks += 1
        assert clicks < 400, "the game did not end"

    page.screenshot(path=str(screenshots / "result.png"), full_page=True)
    final = run(summary(servers.grpc, game_id))
    assert final.status == game_pb2.GAME_STATUS_FINISHED
    assert [(s.name, s.replaced) for s in final.seats] == [("Alice", False), ("greedy", False)]
    assert clicks >= 20 and board_clicks >= 1
    # The result on the page is the server's: each seat's score, and who won.
    for seat in final.result.seats:
        row = page.locator(f"#result tr[data-result-seat='{seat.seat}']")
        assert row.locator("td.score").inner_text() == str(seat.score)
    mine = next(s for s in final.result.seats if s.seat == 0)
    verdict = page.locator("#result .verdict").inner_text()
    if 0 in final.result.winners:
        assert verdict == f"You won with {mine.score} points!"
    else:
        assert verdict == f"You scored {mine.score} points."
    assert page.locator("#header").inner_text().endswith("finished")

    # The seat token lived only in an HttpOnly, SameSite=Strict cookie: never in a URL or a log line.
    (cookie,) = [c for c in context.cookies() if c["name"] == f"kh_seat_{game_id}"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    token = cookie["value"].split(".", 1)[1]
    assert len(token) >= 16
    assert token not in page.url and token not in page.content()
    assert token not in servers.web_log.read_text(errors="replace")
    assert page.evaluate("document.cookie").find(token) < 0
