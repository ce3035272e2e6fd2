"""The tournament page: standings and every game of a small tournament, each linked to its replay."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.web.conftest import Servers, start, stop
from tests.web.games import tournament


@pytest.fixture(scope="module")
def results(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A four-game tournament played on the web server's game server."""
    return tournament(tmp_path_factory.mktemp("tournament") / "results.json", "--server", servers.grpc)


@pytest.fixture(scope="module")
def own_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-game tournament played on a game server of its own, gone when it ends; replays saved."""
    return tournament(tmp_path_factory.mktemp("own") / "results.json")


def test_the_page_lists_the_standings_and_every_game(
    servers: Servers, results: Path, context: Any, screenshots: Path
) -> None:
    data = json.loads(results.read_text())
    page = context.new_page()
    page.goto(f"{servers.web}/tournament")
    page.set_input_files("input[name=results]", str(results))
    page.click("form.upload button")
    page.wait_for_selector("#standings")
    # The table is the runner's: games, wins, interval, mean score and rating of each bot.
    for line in data["standings"]:
        row = page.locator(f"#standings tr[data-bot='{line['bot']}']")
        assert row.locator("td.games").inner_text() == str(line["games"])
        assert row.locator("td.wins").inner_text() == str(line["wins"])
        low, high = line["win_rate_ci95"]
        assert row.locator("td.interval").inner_text() == f"{100 * low:.0f}–{100 * high:.0f}%"
        assert row.locator("td.mean").inner_text() == f"{line['mean_score']:.1f}"
        assert row.locator("td.rating").inner_text() == f"{line['rating']:.1f}"
    # Every game is listed with a link to its replay, which draws it from the game server.
    listed = page.locator("#tournament-games tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.gameId)"
    )
    assert listed == [game["game_id"] for game in data["games"]]
    page.screenshot(path=str(screenshots / "tournament.png"), full_page=True)
    first = data["games"][0]
    page.locator(f"tr[data-game-id='{first['game_id']}'] a.replay").click()
    page.wait_for_selector("#game[data-ended='true']")
    assert page.locator("#move-count").inner_text() == str(first["decisions"])
    for seat, score in enumerate(first["scores"]):
        assert page.locator(f"#result tr[data-result-seat='{seat}'] td.score").inner_text() == str(score)


def test_a_game_from_a_server_that_is_gone_is_played_again_from_its_replay(
    servers: Servers, own_results: Path, context: Any, tmp_path: Path
) -> None:
    data = json.loads(own_results.read_text())
    process, url = start(
        [
            sys.executable,
            "-m",
            "kutnahora.web.cli",
            "--server",
            servers.grpc,
            "--port",
            "0",
            "--results",
            str(own_results),
        ],
        r"serving (http://\S+)",
        tmp_path / "web.log",
    )
    try:
        html = httpx.get(f"{url}/tournament", timeout=20).text
        assert "2-player tournament, 2 games, seed 5" in html
        for game in data["games"]:
            assert f'href="/tournament/games/{game["game_id"]}"' in html
        page = context.new_page()
        page.goto(f"{url}/tournament")
        first = data["games"][0]
        page.locator(f"tr[data-game-id='{first['game_id']}'] a.replay").click()
        page.click("#play-again")
        page.wait_for_selector("#game[data-ended='true']")
        assert page.url != f"{url}/games/{first['game_id']}"  # a new game on this server, the same moves
        assert page.locator("#move-count").inner_text() == str(first["decisions"])
        # The game played again keeps its original id, linked to its row of the standings.
        link = page.locator("#origin a")
        assert link.inner_text() == first["game_id"]
        assert link.get_attribute("href") == f"/tournament#game-{first['game_id']}"
        for seat, score in enumerate(first["scores"]):
            assert page.locator(f"#result tr[data-result-seat='{seat}'] td.score").inner_text() == str(score)
        # Asked again, the page goes straight to the game played before.
        again = httpx.get(f"{url}/tournament/games/{first['game_id']}", timeout=20)
        assert again.status_code == 303 and again.headers["location"] == urlsplit(page.url).path
        # A game that is in no results file and on no server is one sentence.
        missing = httpx.get(f"{url}/tournament/games/0123456789abcdef", timeout=20)
        assert missing.status_code == 404 and "no saved replay of it" in missing.text
    finally:
        stop(process)
