"""The tournament page: standings and every game of a small tournament, each linked to its replay."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.web.conftest import ROOT, Servers, start, stop


@pytest.fixture(scope="module")
def results(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A four-game tournament of random against greedy, played on the web server's game server."""
    out = tmp_path_factory.mktemp("tournament") / "results.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kutnahora.clients.tournament.cli",
            "--bots",
            "random,greedy",
            "--players",
            "2",
            "--games",
            "4",
            "--seed",
            "5",
            "--server",
            servers.grpc,
            "--out",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out


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


def test_results_given_on_the_command_line(servers: Servers, results: Path, tmp_path: Path) -> None:
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
            str(results),
        ],
        r"serving (http://\S+)",
        tmp_path / "web.log",
    )
    try:
        page = httpx.get(f"{url}/tournament", timeout=20).text
    finally:
        stop(process)
    data = json.loads(results.read_text())
    assert "2-player tournament, 4 games, seed 5" in page
    for game in data["games"]:
        assert f'href="/games/{game["game_id"]}"' in page
