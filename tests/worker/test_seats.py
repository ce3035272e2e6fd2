"""One hosted seat (kutnahora.worker.seats) played unwalled against a real game server: a bot's failure is
its own while its game server knows the game, and not its own once the server has lost the game."""

from __future__ import annotations

from pathlib import Path

from kutnahora.clients.sdk import Client
from kutnahora.hosting.gateway_limits import BotBudget, GatewayLimits
from kutnahora.hosting.seat import SeatHost
from kutnahora.hosting.submission import Submission
from kutnahora.worker import seats


def failing(folder: Path) -> Submission:
    folder.mkdir()
    return Submission("failing", "shell", 'echo "seat $KUTNAHORA_SEAT of $KUTNAHORA_GAME_ID"; exit 1', folder)


def host(tmp_path: Path, server: str) -> SeatHost:
    return SeatHost(sandbox=None, upstream=server, sockets=tmp_path / "s", logs=tmp_path / "logs")


async def test_a_failure_in_a_game_the_server_knows_is_the_bots(game_server: str, tmp_path: Path) -> None:
    async with await Client.connect(game_server) as client:
        created, credentials = await client.create_seated_game(["failing", "idle"], seed=5)
    seat = seats.Seat(game_server, created.game.game_id, 0, credentials[0].token)
    budget = BotBudget("failing", GatewayLimits())
    result = await seats.play(
        host(tmp_path, game_server), failing(tmp_path / "bot"), seat, budget, resumed=False
    )
    assert result.failed and not result.lost
    assert "status 1" in result.reason
    assert result.log == f"seat 0 of {created.game.game_id}\n".encode() and not result.truncated
    assert not (tmp_path / "logs" / f"{created.game.game_id}-seat0.log").exists()  # read, then removed


async def test_a_failure_in_a_game_the_server_lost_is_not_the_bots(game_server: str, tmp_path: Path) -> None:
    seat = seats.Seat(game_server, "0123456789abcdef", 0, "no-token")
    budget = BotBudget("failing", GatewayLimits())
    result = await seats.play(
        host(tmp_path, game_server), failing(tmp_path / "bot"), seat, budget, resumed=False
    )
    assert result.failed and result.lost
