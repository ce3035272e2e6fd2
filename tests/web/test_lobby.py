"""The lobby lists every live game however many have ended, and pages the ended ones.

A game server of its own holds a few games waiting for players and a few being played, created first (so
they are the oldest), and then 260 finished and 25 abandoned games: more than a listing of the newest games
of every status could hold. The lobby's API and its page must show every waiting and active game, and walk
the finished and abandoned games page by page, each exactly once.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from kutnahora.clients.sdk import Client
from kutnahora.v1 import game_pb2
from kutnahora.web import lobby
from tests.web import axe
from tests.web.conftest import UNLIMITED, run, start, stop

FINISHED = 260
ABANDONED = 25
NO_CLOCK = game_pb2.ClockSettings(disabled=True)  # the live games wait for their players as long as it takes


@dataclass(frozen=True)
class Crowd:
    """The web server's URL and the ids of its game server's games, by status, newest first."""

    web: str
    ids: dict[str, list[str]]


async def _every(client: Client, status: int) -> list[str]:
    ids: list[str] = []
    token = ""
    while True:
        page, token = await client.list_games_page(status, page_size=500, page_token=token)
        ids.extend(game.game_id for game in page)
        if not token:
            return ids


async def _populate(address: str) -> dict[str, list[str]]:
    async with await Client.connect(address) as client:
        # The live games come first, so that every ended game is newer than they are.
        for players in (2, 3, 4):
            created = await client.create_game(players, label="waiting", clock=NO_CLOCK)
            await client.join_game(created.game.game_id, 0, "early")
        for seed in range(3):
            await client.create_seated_game(["a", "b"], seed=seed, label="active", clock=NO_CLOCK)
        # Ended games: every seat resigned (the server's random policy plays them out), or abandoned.
        for seed in range(FINISHED):
            _, seats = await client.create_seated_game(["a", "b"], seed=seed, label="finished")
            for seat in seats:
                await client.resign(seat)
        for seed in range(ABANDONED):
            created, _ = await client.create_seated_game(["a", "b"], seed=seed, label="abandoned")
            await client.abandon(created.game.game_id, created.game_token, f"test {seed}")
        statuses = {
            "waiting": game_pb2.GAME_STATUS_WAITING,
            "active": game_pb2.GAME_STATUS_ACTIVE,
            "finished": game_pb2.GAME_STATUS_FINISHED,
            "abandoned": game_pb2.GAME_STATUS_ABANDONED,
        }
        for _ in range(600):
            ids = {name: await _every(client, status) for name, status in statuses.items()}
            if len(ids["finished"]) == FINISHED:
                return ids
            await asyncio.sleep(0.1)
        raise AssertionError(f"the resigned games did not finish: {len(ids['finished'])} of {FINISHED}")


@pytest.fixture(scope="module")
def crowd() -> Iterator[Crowd]:
    folder = Path(tempfile.mkdtemp(prefix="kutnahora-lobby-"))
    command = ["kutnahora.server.main", "--host", "127.0.0.1", "--port", "0", "--db", ":memory:"]
    server, address = start(
        [sys.executable, "-m", *command, "--metrics-port", "off", "--log-level", "warning"],
        r"listening on grpc://(\S+)",
        folder / "server.log",
    )
    try:
        ids = run(_populate(address))
        assert (len(ids["waiting"]), len(ids["active"]), len(ids["abandoned"])) == (3, 3, ABANDONED)
        web, url = start(
            [sys.executable, "-m", "kutnahora.web.cli", "--server", address, "--port", "0", *UNLIMITED],
            r"serving (http://\S+)",
            folder / "web.log",
        )
        try:
            yield Crowd(url, ids)
        finally:
            stop(web)
    finally:
        stop(server)
        shutil.rmtree(folder, ignore_errors=True)


def by_status(answer: dict[str, Any], status: str) -> list[str]:
    return [row["game_id"] for row in answer["games"] if row["status"] == status]


def test_every_live_game_is_listed_and_ended_games_are_paged(crowd: Crowd) -> None:
    with httpx.Client(base_url=crowd.web, timeout=30) as web:
        answer = web.get("/api/games").json()
        assert by_status(answer, "waiting") == crowd.ids["waiting"]
        assert by_status(answer, "active") == crowd.ids["active"]
        assert answer["more"] == {"waiting": False, "active": False}
        # The active games carry their round and scores (read from the spectator's view).
        assert all(
            "round" in row and len(row["scores"]) == 2 for row in answer["games"] if row["status"] == "active"
        )
        for status, total in (("finished", FINISHED), ("abandoned", ABANDONED)):
            seen: list[str] = []
            token = ""
            pages = 0
            while True:
                answer = web.get("/api/games", params={status: token} if token else {}).json()
                page = by_status(answer, status)
                assert len(page) == min(lobby.PAGE_SIZE, total - len(seen)), (status, pages)
                # Every page still lists every live game.
                assert len(by_status(answer, "waiting")) == 3 and len(by_status(answer, "active")) == 3
                seen.extend(page)
                pages += 1
                token = answer["next"][status]
                if not token:
                    break
            assert seen == crowd.ids[status], f"the {status} pages, newest first, each game once"
            assert pages == -(-total // lobby.PAGE_SIZE)
        # A page may be larger, up to PAGE_MOST rows.
        answer = web.get("/api/games", params={"size": 100}).json()
        assert by_status(answer, "finished") == crowd.ids["finished"][:100]


@pytest.mark.parametrize(
    ("query", "sentence"),
    [
        ({"size": "0"}, "'size' must be a whole number from 1 to 100."),
        ({"size": "101"}, "'size' must be a whole number from 1 to 100."),
        ({"size": "ten"}, "'size' must be a whole number from 1 to 100."),
        ({"finished": "x" * 201}, "'finished' is not a page token this lobby gave."),
        ({"abandoned": "é"}, "'abandoned' is not a page token this lobby gave."),
        ({"finished": "not-a-token"}, "'finished' is not a page token this game server gave; start again"),
        ({"abandoned": "1.5:"}, "'abandoned' is not a page token this game server gave; start again"),
    ],
)
def test_a_bad_listing_request_is_refused_with_a_sentence(
    crowd: Crowd, query: dict[str, str], sentence: str
) -> None:
    answer = httpx.get(f"{crowd.web}/api/games", params=query, timeout=30)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith(sentence)


def rows(page: Any, table: str) -> list[str]:
    cells = page.locator(f"#{table} tbody tr[data-game-id]")
    return [cells.nth(i).get_attribute("data-game-id") for i in range(cells.count())]


def test_the_lobby_page_shows_every_live_game_and_pages_the_finished_ones(crowd: Crowd, context: Any) -> None:
    checked = axe.AXE.is_file()  # the paging is tested without axe-core too
    if checked:
        axe.install(context)
    page = context.new_page()
    response = page.goto(crowd.web)
    if checked:
        axe.csp_in_force(page, response)
    page.wait_for_selector("#lobby-status:has-text('updated')")
    assert rows(page, "waiting") == crowd.ids["waiting"]
    assert rows(page, "active") == crowd.ids["active"]
    assert page.locator("#waiting button.join").count() == 3
    assert rows(page, "abandoned") == crowd.ids["abandoned"][: lobby.PAGE_SIZE]
    pager = page.locator("#finished-pager")
    seen: list[str] = []
    for number in range(1, -(-FINISHED // lobby.PAGE_SIZE) + 1):
        page.wait_for_selector(f"#finished-pager .pageno:text-is('page {number}')")
        shown = rows(page, "finished")
        assert shown == crowd.ids["finished"][len(seen) : len(seen) + lobby.PAGE_SIZE], f"page {number}"
        assert pager.locator(".newer").is_disabled() == (number == 1)
        seen.extend(shown)
        if pager.locator(".older").is_disabled():
            break
        pager.locator(".older").click()
    assert seen == crowd.ids["finished"] and number == 13
    # The live games stay listed on every page of the ended ones.
    assert rows(page, "waiting") == crowd.ids["waiting"] and rows(page, "active") == crowd.ids["active"]
    pager.locator(".newer").click()
    page.wait_for_selector("#finished-pager .pageno:text-is('page 12')")
    assert rows(page, "finished") == crowd.ids["finished"][220:240]
    # With every pager button live, the lobby still passes axe-core in every state (see test_accessibility).
    report = axe.every_state(page, "#finished-pager button") if checked else []
    assert not report, "\n".join(report)
    pager.locator(".newest").click()
    page.wait_for_selector("#finished-pager .pageno:text-is('page 1')")
    assert rows(page, "finished") == crowd.ids["finished"][:20]
    # The abandoned games page by themselves.
    page.locator("#abandoned-pager .older").click()
    page.wait_for_selector("#abandoned-pager .pageno:text-is('page 2')")
    assert rows(page, "abandoned") == crowd.ids["abandoned"][20:]
    assert page.locator("#abandoned-pager .older").is_disabled()
    assert rows(page, "finished") == crowd.ids["finished"][:20]
