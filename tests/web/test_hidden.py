"""A spectator's page and event stream never hold a seat's private information.

What the rules hide from everybody but one seat: the mine tiles it is choosing from (``drawn``), the
options of the decision it owes, and the tiles it put on the discard pile (``mine_discard_seen``). The
test plays a game of bots that record what each seat was shown, then reads the spectator's event stream
of the whole game and the spectator's page at every position where a seat held drawn tiles: none of it
may be there. The same scan of the page of a browser holding that seat finds the tiles, so the scan can
see a leak.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from kutnahora.v1 import game_pb2
from tests.web.conftest import Servers, run
from tests.web.games import PlayedGame, play_bot_game


@pytest.fixture(scope="module")
def played(servers: Servers) -> PlayedGame:
    return run(play_bot_game(servers.grpc, players=2, seed=33))


def private_words(obs: game_pb2.Observation) -> list[str]:
    """What only the seat that owes this decision may read: each drawn tile and each option's words."""
    words = [f"tile {tile} (" for tile in obs.drawn]
    words += [option.description for option in obs.pending.options if option.description]
    return words


def events(stream: str) -> list[tuple[str, str]]:
    out = []
    for block in stream.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in fields:
            out.append((fields["event"], fields.get("data", "")))
    return out


def test_the_spectator_stream_holds_no_private_information(servers: Servers, played: PlayedGame) -> None:
    drawn_at = {obs.version: obs for obs in played.private if obs.drawn}
    assert drawn_at, "no seat ever drew mine tiles, so the test proves nothing"
    with httpx.Client(base_url=servers.web, timeout=60) as client:
        stream = client.get(f"/api/games/{played.game_id}/events").text
        technology = {tile["id"] for tile in client.get("/api/components").json()["technology_tiles"]}
    messages = [json.loads(data) for kind, data in events(stream) if kind == "version"]
    assert [m["version"] for m in messages] == list(range(len(played.history)))
    for message in messages:
        obs = message["observation"]
        assert "viewer" not in obs
        assert obs["drawn"] == [] and obs["mine_discard_seen"] == []
        assert obs.get("pending", {}).get("options", []) == []
        # A kept mine tile is its seat's; only a technology tile being placed is public.
        assert obs.get("kept_tile", min(technology)) in technology
        private = drawn_at.get(message["version"])
        if private is not None:
            text = json.dumps(message, ensure_ascii=False)
            leaked = [word for word in private_words(private) if word in text]
            assert not leaked, f"the spectator's stream shows {leaked} at version {message['version']}"
    for seat in played.seats:
        assert seat.token not in stream


def test_the_spectator_page_holds_no_private_information(
    servers: Servers, played: PlayedGame, context: Any, browser: Any
) -> None:
    drawn_at = [obs for obs in played.private if obs.drawn][:4]
    assert drawn_at
    spectator = context.new_page()
    holder = browser.new_context()
    try:
        for obs in drawn_at:
            seat = played.seats[obs.pending.seat]
            url = f"{servers.web}/games/{played.game_id}?v={obs.version}"
            spectator.goto(url)
            spectator.wait_for_selector("#game[data-ended='true']")
            spectator.wait_for_function(
                f"() => document.querySelector('#version').textContent === '{obs.version}'"
            )
            # The moves made after this position are listed too (public once made): they are left out here.
            page = spectator.evaluate(
                "(() => { const copy = document.documentElement.cloneNode(true);"
                " copy.querySelectorAll('#moves li.ahead').forEach((li) => li.remove());"
                " return copy.outerHTML; })()"
            )
            leaked = [word for word in private_words(obs) if word in page]
            assert not leaked, f"the spectator's page shows {leaked} at version {obs.version}"
            assert "You drew" not in page and seat.token not in page
            assert spectator.locator("#options").is_hidden() and spectator.locator("#you").is_hidden()

            # The browser holding that seat sees its drawn tiles at the same position: the scan finds them.
            cookie = {"name": f"kh_seat_{played.game_id}", "value": f"{seat.seat}.{seat.token}"}
            holder.add_cookies([{**cookie, "url": servers.web}])
            mine = holder.new_page()
            mine.goto(url)
            mine.wait_for_selector("#game[data-ended='true']")
            mine.wait_for_function(
                f"() => document.querySelector('#version').textContent === '{obs.version}'"
            )
            text = mine.locator("#you").inner_text()
            assert all(f"tile {tile} (" in text for tile in obs.drawn), text
            mine.close()
    finally:
        holder.close()
