"""Accessibility: axe-core finds no serious or critical violation on the lobby, a game, a replay and the
standings; a whole game can be played with the keyboard alone; your turn shows in the title and favicon.

axe-core comes from the npm registry (``.ci/run`` installs it into ``.ci/.tools``, as it does buf; or set
``KUTNAHORA_AXE`` to its ``axe.min.js``); without it the axe test skips, saying so.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import ROOT, Servers, run
from tests.web.games import PlayedGame, play_bot_game
from tests.web.test_layout import READY, start_game
from tests.web.test_tournament import tournament

AXE = Path(os.environ.get("KUTNAHORA_AXE") or ROOT / ".ci/.tools/node_modules/axe-core/axe.min.js")
SERIOUS = ("serious", "critical")


@pytest.fixture(scope="module")
def finished(servers: Servers) -> PlayedGame:
    return run(play_bot_game(servers.grpc, players=3, seed=41))


def violations(page: Any) -> list[str]:
    """The serious and critical axe-core violations of the page as shown now, one line each."""
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:3]}"
        for v in found
        if v["impact"] in SERIOUS
    ]


def test_axe_finds_no_serious_violation(
    servers: Servers, context: Any, finished: PlayedGame, tmp_path: Path
) -> None:
    if not AXE.is_file():
        pytest.skip(
            f"axe-core is not installed at {AXE} (npm install --prefix .ci/.tools axe-core; .ci/run does)"
        )
    page = context.new_page()
    found: dict[str, list[str]] = {}
    page.goto(servers.web)
    page.wait_for_selector("#lobby-status:has-text('updated')")
    found["the lobby"] = violations(page)

    start_game(page, servers.web)
    page.wait_for_selector(READY)
    found["a game, during the player's decision"] = violations(page)
    for tab in ("#tab-townhall", "#tab-market", "#tab-church", "#tab-players"):
        page.click(tab)
        found[f"a game, {tab}"] = violations(page)

    page.goto(f"{servers.web}/games/{finished.game_id}?v=40")
    page.wait_for_selector("#game[data-ended='true']")
    found["a replay"] = violations(page)

    results = tournament(tmp_path / "results.json")
    page.goto(f"{servers.web}/tournament")
    page.set_input_files("input[name=results]", str(results))
    page.click("form.upload button")
    page.wait_for_selector("#standings")
    found["the standings"] = violations(page)
    failing = {name: lines for name, lines in found.items() if lines}
    assert not failing, "\n".join(f"{name}: {line}" for name, lines in failing.items() for line in lines)


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
            f"document.querySelector('#version').textContent !== '{version}'"
            " || !document.querySelector('#result').hidden"
        )
        decisions += 1
        assert decisions < 400, "the game did not end"
    assert turn_seen and decisions >= 20
    assert re.search(r"You (won with|scored) \d+ points", page.locator("#result .verdict").inner_text())
    # Once the game is over the title is the page's own again.
    assert not page.title().startswith("▶")
