"""The table on one screen: at laptop and desktop sizes everything a player needs while deciding is in view.

During the player's decision, the city, the mines, the decision and its options, the player's own panel and
every seat's score are inside the viewport and do not overlap; the town hall is one click away. On a phone the
decision panel is in the flow above the board (never over it) and folds away. Screenshots of each size are
saved (``KUTNAHORA_SCREENSHOTS=docs/web`` writes the ones the docs show).
"""

from __future__ import annotations

import re
from itertools import combinations
from pathlib import Path
from typing import Any

from tests.web.conftest import Servers

READY = "#options:not([hidden]) button.option:not([disabled])"
DESKTOPS = [(1366, 768), (1440, 900), (1920, 1080)]
PARTS = {
    "city": "figure.city svg",
    "mines": "figure.mines svg",
    "decision": "#options",
    "your panel": "#you",
    "scores": "#scores",
}


def start_game(page: Any, url: str, players: str = "2") -> None:
    page.goto(url)
    page.select_option("#players", players)
    page.select_option("#seat0", "you")
    for seat in range(1, int(players)):
        page.select_option(f"#seat{seat}", "greedy")
    page.fill("#delay", "0")
    page.fill("#seed", "29")
    page.click("#create-button")
    page.wait_for_url(re.compile(r"/games/[0-9a-f]+$"))


def play_until_cards_in_round(page: Any, round_number: int) -> None:
    """Answer with the first option until it is round ``round_number`` and the seat plays a card."""
    for _ in range(300):
        page.wait_for_selector(READY)
        header = page.locator("#header").inner_text()
        found = re.search(r"Round (\d+)/", header)
        if (
            found
            and int(found.group(1)) >= round_number
            and page.locator("#you button.half.playable").count()
        ):
            return
        page.locator("#options button.option").first.click()
        page.wait_for_timeout(50)
    raise AssertionError("never reached a card to play")


def boxes(page: Any) -> dict[str, dict[str, float]]:
    found = {}
    for name, selector in PARTS.items():
        box = page.locator(selector).bounding_box()
        assert box is not None, f"{name} is not shown"
        found[name] = box
    return found


def inside(box: dict[str, float], width: int, height: int) -> bool:
    return (
        box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= width + 0.5
        and box["y"] + box["height"] <= height + 0.5
    )


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["width"] - 0.5
        and b["x"] < a["x"] + a["width"] - 0.5
        and a["y"] < b["y"] + b["height"] - 0.5
        and b["y"] < a["y"] + a["height"] - 0.5
    )


def test_the_whole_table_fits_each_screen_while_you_decide(
    servers: Servers, context: Any, screenshots: Path
) -> None:
    page = context.new_page()
    start_game(page, servers.web)
    play_until_cards_in_round(page, 2)
    for width, height in DESKTOPS:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(200)
        found = boxes(page)
        for name, box in found.items():
            assert inside(box, width, height), f"{name} at {width}×{height} is outside the screen: {box}"
            assert box["width"] > 60 and box["height"] > 40, f"{name} at {width}×{height} is too small: {box}"
        for (a, box_a), (b, box_b) in combinations(found.items(), 2):
            assert not overlap(box_a, box_b), f"{a} and {b} overlap at {width}×{height}"
        # No scrolling: the page is the screen.
        assert page.evaluate("document.documentElement.scrollHeight") <= height
        # The cards of the hand, the money and the scores are readable, not only present.
        assert page.locator("#you .groschen b").is_visible()
        assert page.locator("#scores tr[data-scores-row]").count() == 2
        assert page.locator("#you .handcard").count() >= 1
        page.screenshot(path=str(screenshots / f"table-{width}x{height}.png"))
        # The town hall and the prices are one click away, and fit too.
        for tab, selector in (("#tab-townhall", "figure.townhall svg"), ("#tab-market", "figure.market svg")):
            page.click(tab)
            box = page.locator(selector).bounding_box()
            assert box is not None and inside(box, width, height), f"{selector} at {width}×{height}: {box}"
            if width == 1366:
                page.screenshot(path=str(screenshots / f"table-{tab[5:]}-{width}x{height}.png"))
        page.click("#tab-table")

    # A decision answered on the board: each square to choose carries its price as a label.
    page.set_viewport_size({"width": 1366, "height": 768})
    for _ in range(300):
        page.wait_for_selector(READY)
        if page.locator("svg g.pick").count() > 1:
            break
        page.locator("#options button.option").first.click()
        page.wait_for_timeout(50)
    picks = page.locator("svg g.pick")
    assert picks.count() > 1
    for i in range(picks.count()):
        index = picks.nth(i).get_attribute("data-option")
        label = picks.nth(i).locator(".picklabel").get_attribute("data-cost")
        price = page.locator(f"#options button.option[data-option='{index}'] .price").inner_text()
        assert label and (label == "free") == (price == "free"), (label, price)
        assert picks.nth(i).is_visible()
    page.screenshot(path=str(screenshots / "table-picks-1366x768.png"))


def test_a_phone_shows_the_decision_above_the_board_and_folds_it(
    servers: Servers, context: Any, screenshots: Path
) -> None:
    page = context.new_page()
    page.set_viewport_size({"width": 390, "height": 844})
    start_game(page, servers.web)
    page.wait_for_selector(READY)
    decision = page.locator("#options").bounding_box()
    city = page.locator("figure.city svg").bounding_box()
    assert decision is not None and city is not None
    assert not overlap(decision, city), "the decision covers the board"
    assert decision["x"] >= 0 and decision["x"] + decision["width"] <= 390
    assert city["x"] >= 0 and city["x"] + city["width"] <= 390.5
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(screenshots / "table-390x844.png"))
    # The decision folds to its one-line summary, and the board moves up under it.
    page.click("#options > summary")
    folded = page.locator("#options").bounding_box()
    assert folded is not None and folded["height"] < 60
    moved = page.locator("figure.city svg").bounding_box()
    assert moved is not None and moved["y"] < city["y"]
    page.click("#options > summary")
    page.locator("#options button.option").first.click()
    page.wait_for_selector(READY)


def test_the_lobby_form_fits_its_card_at_every_width(servers: Servers, context: Any) -> None:
    page = context.new_page()
    page.goto(servers.web)
    page.select_option("#players", "4")
    for width in (390, 760, 1024, 1366, 1920):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        card = page.locator(".create").bounding_box()
        assert card is not None
        for field in page.locator(".create input, .create select, .create button").all():
            box = field.bounding_box()
            assert box is not None
            assert (
                box["x"] >= card["x"] - 0.5 and box["x"] + box["width"] <= card["x"] + card["width"] + 0.5
            ), f"a field of the lobby form leaves its card at {width} px: {box} outside {card}"
        assert page.evaluate("document.documentElement.scrollWidth") <= width
