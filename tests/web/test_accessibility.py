"""Accessibility: every kind of page passes axe-core at WCAG 2.1 AA (and its best practices) as shown, with
the pointer over its controls and with the keyboard's focus on them, under the pages' own CSP (:mod:`.axe`);
a whole game can be played with the keyboard alone; your turn shows in the title and favicon.

The pages: the lobby, a game during the player's decision (each part of the board), a game seen by a
spectator, a replay, a finished game, the standings, a tournament game's replay page, the arena's
leaderboard and a bot's page, a bot's author's area (the key form, a refused key, the versions with the
rating plot and its numbers, a build log, a seat log, a game without one), the pages that say there is no
such game or no arena. Without axe-core the axe tests skip, saying so.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.web import axe
from tests.web.conftest import ArenaSite, AuthorSite, Servers, run, start, stop
from tests.web.games import PlayedGame, play_bot_game
from tests.web.test_layout import READY, start_game
from tests.web.test_tournament import tournament

OPTION = "#options button.option"


@pytest.fixture(scope="module")
def finished(servers: Servers) -> PlayedGame:
    return run(play_bot_game(servers.grpc, players=3, seed=41))


@pytest.fixture
def checked(context: Any) -> Any:
    """A browser profile with axe-core in every page, the pages under their own CSP."""
    axe.install(context)
    return context


def visit(page: Any, url: str, status: int = 200) -> None:
    """Open ``url`` (answered with ``status``) and show that the page's CSP is in force there."""
    response = page.goto(url)
    assert response is not None and response.status == status, url
    axe.csp_in_force(page, response)


def report(found: dict[str, list[str]]) -> None:
    failing = {name: lines for name, lines in found.items() if lines}
    assert not failing, "\n".join(f"{name}: {line}" for name, lines in failing.items() for line in lines)


def test_the_lobby(servers: Servers, checked: Any, finished: PlayedGame) -> None:
    with httpx.Client(base_url=servers.web, headers={"origin": servers.web}, timeout=20) as web:
        waiting = web.post("/api/games", json={"players": 3, "seats": ["open", "greedy", "open"]})
        assert waiting.status_code == 200
    page = checked.new_page()
    visit(page, servers.web)
    page.wait_for_selector(f"#waiting tr[data-game-id='{waiting.json()['game_id']}'] button.join")
    page.wait_for_selector(f"#finished tr[data-game-id='{finished.game_id}']")
    report({"the lobby": axe.every_state(page, "button.join")})


def test_a_game_during_the_players_decision(servers: Servers, checked: Any) -> None:
    page = checked.new_page()
    visit(page, servers.web)
    start_game(page, servers.web)
    page.wait_for_selector(READY)
    found = {"a game, during the player's decision": axe.every_state(page, OPTION)}
    for tab in ("#tab-townhall", "#tab-market", "#tab-church", "#tab-players"):
        page.click(tab)
        found[f"a game, {tab}"] = [
            *axe.violations(page),
            *axe.hovered(page, f"{OPTION}, #board .pick", False),
        ]
    report(found)


def test_a_game_seen_by_a_spectator(servers: Servers, checked: Any) -> None:
    with httpx.Client(base_url=servers.web, headers={"origin": servers.web}, timeout=20) as web:
        created = web.post("/api/games", json={"players": 2, "seats": ["greedy", "open"]})
        assert created.status_code == 200
    page = checked.new_page()
    visit(page, f"{servers.web}/games/{created.json()['game_id']}")
    page.wait_for_selector("#header:not(:has-text('loading'))")
    report({"a game waiting for players, seen by a spectator": axe.every_state(page)})


def test_a_replay_and_a_finished_game(servers: Servers, checked: Any, finished: PlayedGame) -> None:
    page = checked.new_page()
    visit(page, f"{servers.web}/games/{finished.game_id}?v=40")
    page.wait_for_selector("#game[data-ended='true']")
    page.click("#moves-panel summary")  # the moves, those after the position shown greyed
    page.wait_for_selector("#moves li.ahead")
    found = {"a replay": axe.every_state(page, "#moves li")}
    visit(page, f"{servers.web}/games/{finished.game_id}")
    page.wait_for_selector("#result:not([hidden])")
    # The same controls as the replay's (checked hovered and focused above), and the result.
    found["a finished game"] = [*axe.violations(page), *axe.csp_violations(page)]
    report(found)


@pytest.fixture(scope="module")
def standings(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A web server showing a tournament played on a game server of its own (since gone)."""
    folder = tmp_path_factory.mktemp("standings")
    results = tournament(folder / "results.json")
    process, url = start(
        [
            sys.executable,
            "-m",
            "kutnahora.web.cli",
            "--server",
            servers.grpc,
            "--port",
            "0",
            *("--results", str(results)),
        ],
        r"serving (http://\S+)",
        folder / "web.log",
    )
    try:
        yield url
    finally:
        stop(process)


def test_the_standings_and_a_tournament_replay(standings: str, checked: Any) -> None:
    page = checked.new_page()
    visit(page, f"{standings}/tournament")
    page.wait_for_selector("#standings")
    found = {"the standings": axe.every_state(page, "a.replay")}
    game_id = page.locator("#tournament-games tbody tr").first.get_attribute("data-game-id")
    visit(page, f"{standings}/tournament/games/{game_id}")
    page.wait_for_selector("#play-again")
    found["a tournament game's replay page"] = axe.every_state(page, "#play-again")
    report(found)


def test_the_arena_pages(arena_site: ArenaSite, servers: Servers, checked: Any) -> None:
    page = checked.new_page()
    visit(page, f"{arena_site.web}/arena?pool=2")
    page.wait_for_selector("#leaderboard tbody tr a")
    found = {"the arena's leaderboard": axe.every_state(page, "#leaderboard a")}
    visit(page, f"{arena_site.web}/arena/bots/steady-greedy")
    page.wait_for_selector("#rating-chart polyline")
    found["a bot's page"] = axe.every_state(page, "#games a")
    visit(page, f"{arena_site.web}/arena/bots/nobody-here", 404)
    found["a bot that is not there"] = axe.every_state(page)
    visit(page, f"{servers.web}/arena", 503)  # a site that shows no arena says so
    found["no arena"] = axe.every_state(page)
    report(found)


def test_the_authors_area(author_site: AuthorSite, checked: Any) -> None:
    site = author_site
    page = checked.new_page()
    visit(page, f"{site.web}/arena/author?bot={site.bot}")
    found = {"the author's key form": axe.every_state(page, "#give-key")}
    page.locator("#api-key").fill("wrong-key-" + "w" * 33)
    page.locator("#give-key").click()
    page.wait_for_selector("#author-error")
    found["a refused key"] = [*axe.violations(page), *axe.csp_violations(page)]
    page.locator("#api-key").fill(site.key)
    page.locator("#give-key").click()
    page.wait_for_selector("#versions")
    visit(page, f"{site.web}/arena/author")
    page.click(".numbers summary")  # the plot's numbers, shown
    found["the author's area"] = axe.every_state(page, "#versions a")
    visit(page, f"{site.web}/arena/author/versions/1")
    found["a version's build log"] = axe.every_state(page)
    visit(page, f"{site.web}/arena/author/games/{site.game_id}")
    found["a seat's log"] = axe.every_state(page)
    visit(page, f"{site.web}/arena/author/games/not0the0bots0game", 404)
    found["a game without the bot's log"] = axe.every_state(page)
    report(found)


def test_the_page_of_a_game_that_is_not_there(servers: Servers, checked: Any) -> None:
    page = checked.new_page()
    visit(page, f"{servers.web}/games/0123456789abcdef", 404)
    report({"no such game": axe.every_state(page)})


def focus_a_choice(page: Any) -> bool:
    """Press Tab until an option, a card half or a board square to choose has the focus (at most 80 times)."""
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate(
            "(() => { const e = document.activeElement; return !!e && !e.disabled &&"
            " e.matches('button.option, button.half.playable, g.pick'); })()"
        ):
            return True
    return False


def test_a_whole_game_is_played_with_the_keyboard(servers: Servers, context: Any) -> None:
    page = context.new_page()
    page.set_viewport_size({"width": 1366, "height": 768})
    start_game(page, servers.web)
    decisions = 0
    turn_seen = False
    while True:
        page.wait_for_selector(f"{READY}, #result:not([hidden])")
        if page.locator("#result").is_visible():
            break
        # Your turn shows in the title and the favicon as well as on the page.
        assert page.title().startswith("▶ Your turn")
        assert page.locator("#favicon").get_attribute("href") == "/static/favicon-turn.svg"
        turn_seen = True
        version = page.locator("#version").inner_text()
        assert focus_a_choice(page), "no choice could be reached with Tab"
        page.keyboard.press("Enter")
        page.wait_for_function(
            f"() => document.querySelector('#version').textContent !== '{version}'"
            " || !document.querySelector('#result').hidden"
        )
        decisions += 1
        assert decisions < 400, "the game did not end"
    assert turn_seen and decisions >= 20
    assert re.search(r"You (won with|scored) \d+ points", page.locator("#result .verdict").inner_text())
    # Once the game is over the title is the page's own again.
    assert not page.title().startswith("▶")
