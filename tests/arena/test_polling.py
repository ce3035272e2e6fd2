"""How the arena asks a game server about the games it follows (kutnahora.arena.servers): every ``poll``
seconds while nobody is waiting on the game, within ``soonest`` of the last question once a bot of the game
seeks again (``check_soon``), never more often than that however often it is told, and a game server that
stops answering is given up after ``lost_after`` seconds, not at the next poll. Then, for real: with
``--poll 60`` bots that seek again the moment their game ends are matched again within seconds (the lobby
tells the follower), and a crowd of long games costs one question a game per poll."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from kutnahora.arena.app import create_arena
from kutnahora.arena.servers import GameServers
from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import Client, ClientError
from kutnahora.v1 import game_pb2
from tests.arena.conftest import arena_config

ADDRESS = "127.0.0.1:9"  # never dialled: the tests put a fake client in its place


class FakeServer:
    """Answers GetGame for one game: unfinished until ``end()``; or fails every call when ``down``."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self.status = game_pb2.GAME_STATUS_ACTIVE
        self.down = False

    def end(self) -> None:
        self.status = game_pb2.GAME_STATUS_FINISHED

    async def get_game(self, game_id: str) -> game_pb2.GameSummary:
        self.asked.append(time.monotonic())
        if self.down:
            raise ClientError("UNAVAILABLE", "the server is down")
        return game_pb2.GameSummary(game_id=game_id, status=self.status)

    async def close(self) -> None:
        pass


def servers_with(fake: FakeServer, **options: float) -> GameServers:
    servers = GameServers([ADDRESS], **options)
    servers._clients[ADDRESS] = fake  # type: ignore[assignment]
    return servers


async def test_a_game_nobody_waits_on_is_asked_about_once_a_poll() -> None:
    fake = FakeServer()
    servers = servers_with(fake, poll=0.4, soonest=0.1)
    follow = asyncio.create_task(servers.wait_end(ADDRESS, "g1"))
    await asyncio.sleep(1.0)
    assert 2 <= len(fake.asked) <= 4  # at 0, 0.4, 0.8 s: not every soonest
    gaps = [b - a for a, b in zip(fake.asked, fake.asked[1:], strict=False)]
    assert all(gap >= 0.35 for gap in gaps)
    fake.end()
    summary = await asyncio.wait_for(follow, 2)
    assert summary is not None and summary.status == game_pb2.GAME_STATUS_FINISHED


async def test_check_soon_asks_within_soonest_and_no_more_often_however_often_told() -> None:
    fake = FakeServer()
    servers = servers_with(fake, poll=60, soonest=0.2)
    follow = asyncio.create_task(servers.wait_end(ADDRESS, "g1"))
    await asyncio.sleep(0.05)
    assert len(fake.asked) == 1
    started = time.monotonic()
    while time.monotonic() - started < 1.0:  # told every 10 ms, as by a lobby ticking fast
        servers.check_soon("g1")
        servers.check_soon("some-game-not-followed")  # nothing happens
        await asyncio.sleep(0.01)
    asked = len(fake.asked)
    assert 4 <= asked <= 7  # about one question per 0.2 s, not one per 10 ms
    gaps = [b - a for a, b in zip(fake.asked, fake.asked[1:], strict=False)]
    assert min(gaps) >= 0.19
    fake.end()
    servers.check_soon("g1")
    assert (await asyncio.wait_for(follow, 1)) is not None  # told: seen within soonest, not at 60 s
    assert "g1" not in servers._wake  # forgotten once followed to its end


async def test_an_unreachable_server_is_given_up_after_lost_after_not_at_the_next_poll() -> None:
    fake = FakeServer()
    fake.down = True
    servers = servers_with(fake, poll=60, soonest=0.1, lost_after=0.6)
    started = time.monotonic()
    assert (await asyncio.wait_for(servers.wait_end(ADDRESS, "g1"), 5)) is None
    assert 0.6 <= time.monotonic() - started < 2.0


@pytest.mark.parametrize("flag", ["0", "-1"])
def test_a_poll_that_is_not_positive_is_refused(flag: str) -> None:
    from kutnahora.arena.main import build_parser, config_from_args

    with pytest.raises(SystemExit, match="--poll must be positive"):
        config_from_args(build_parser().parse_args(["--poll", flag]))


async def test_bots_seeking_again_are_matched_again_long_before_the_poll(
    tmp_path: Path, game_server: str
) -> None:
    """Two bots play three games in a row with --poll 60: each time both resign at once and seek again;
    each next match comes within seconds, because the seeking bots have their game asked about."""
    config = arena_config(tmp_path / "arena.db", game_server, poll_seconds=60.0)
    arena, _ = await create_arena("127.0.0.1:0", config)
    await arena.start()
    try:
        async with (
            await ArenaClient.connect(f"127.0.0.1:{arena.port}") as client,
            await Client.connect(game_server) as server,
        ):
            keys = [await client.register_bot(f"poller-{n}") for n in range(2)]
            for round_number in range(3):
                started = time.monotonic()
                seats = await asyncio.wait_for(asyncio.gather(*(client.seek(key, "2") for key in keys)), 20)
                assert time.monotonic() - started < 15, f"round {round_number} waited for the poll"
                assert len({s.seat.game_id for s in seats}) == 1
                for seat in seats:  # both resign: the game ends at once
                    await server.resign(seat.seat)
            # The first two games were seen to end (their bots sought again) and rated; the third, whose
            # bots do not seek again, is left for the next poll, a minute away.
            for n in range(2):
                profile = await client.bot_profile(f"poller-{n}")
                assert {r.pool: r.games for r in profile.ratings} == {"2": 2}
    finally:
        await arena.stop(0)
