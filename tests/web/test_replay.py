"""Scrubbing a finished game: at version N the page shows the scores and prices of the game's history at
N, as the server's WatchGame gives it (a spectator's observation of every version), and the URL names N."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kutnahora.v1 import common_pb2, game_pb2
from tests.web.conftest import Servers, run
from tests.web.games import PlayedGame, play_bot_game


@pytest.fixture(scope="module")
def finished(servers: Servers) -> PlayedGame:
    return run(play_bot_game(servers.grpc, players=3, seed=21))


def shown(page: Any, obs: game_pb2.Observation) -> None:
    """The page shows exactly this observation's scores, groschen and prices."""
    page.wait_for_function(f"() => document.querySelector('#version').textContent === '{obs.version}'")
    for board in obs.players:
        score = page.locator(f"[data-score-seat='{board.seat}'] .statvalue").text_content()
        groschen = page.locator(f"[data-groschen-seat='{board.seat}'] .statvalue").text_content()
        assert (int(score or ""), int(groschen or "")) == (board.points, board.groschen), f"seat {board.seat}"
    for price in obs.prices:
        name = common_pb2.Commodity.Name(price.commodity)
        text = page.locator(f"[data-price='{name}'] .pricetext").text_content()
        assert int(text or "") == price.price, name
    assert f"Round {obs.round}/{obs.rounds}" in page.locator("#header").inner_text()


def test_scrubbing_shows_the_history_at_each_version(
    servers: Servers, finished: PlayedGame, context: Any, screenshots: Path
) -> None:
    history = finished.history
    assert [o.version for o in history] == list(range(len(history)))
    page = context.new_page()
    n = len(history) // 3
    page.goto(f"{servers.web}/games/{finished.game_id}?v={n}")
    page.wait_for_selector("#game[data-ended='true']")
    shown(page, history[n])
    assert page.url.endswith(f"?v={n}")
    assert page.locator("#live").inner_text() == "replay"
    # The move list holds the moves that led here, and the later ones marked as ahead; one of those can be
    # clicked as well as an earlier one.
    last = len(history) - 1
    assert page.locator("#moves li").count() == last
    assert page.locator("#moves li.ahead").count() == last - n
    assert page.locator("#moves li.current").get_attribute("data-version") == str(n)
    page.screenshot(path=str(screenshots / "replay.png"), full_page=True)
    page.click("#moves-panel > summary")
    page.click(f"#moves li[data-version='{n + 2}']")
    shown(page, history[n + 2])
    page.click(f"#moves li[data-version='{n}']")
    shown(page, history[n])

    page.click("#prev")
    shown(page, history[n - 1])
    assert page.url.endswith(f"?v={n - 1}")
    page.click("#next")
    page.click("#next")
    shown(page, history[n + 1])

    late = 2 * len(history) // 3
    page.evaluate(
        f"() => {{ const s = document.querySelector('#slider'); s.value = {late};"
        " s.dispatchEvent(new Event('input')); }"
    )
    shown(page, history[late])
    assert page.url.endswith(f"?v={late}")

    round_three = next(o for o in history if o.round == 3)
    page.select_option("#round", "3")
    shown(page, round_three)

    page.click("#last")
    shown(page, history[-1])
    assert page.locator("#result").is_visible()
    final = history[-1]
    for seat, score in enumerate(final.scores):
        assert page.locator(f"#result tr[data-result-seat='{seat}'] td.score").inner_text() == str(score)

    # A shared link opens at the same position.
    other = context.new_page()
    other.goto(f"{servers.web}/games/{finished.game_id}?v={late}")
    shown(other, history[late])
