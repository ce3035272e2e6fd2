"""One hosted seat of an arena game played on this worker, and what to report of it.

:func:`play` runs the bot's code for the seat with :func:`kutnahora.hosting.seat.play_seat`: walled in,
behind a seat gateway of its own that leads to the game server the arena matched the bot on, with the
SDK's seat variables in its environment (``KUTNAHORA_SERVER`` naming the gateway's socket,
``KUTNAHORA_GAME_ID``, ``KUTNAHORA_SEAT``, ``KUTNAHORA_TOKEN``, ``KUTNAHORA_BOT_SEED``). Meanwhile the game
is watched: once it has ended, a bot still running gets ``EXIT_GRACE`` seconds to exit, then is stopped.

The seat has *finished* when the bot played to the game's end; it has *failed* when the bot crashed,
exceeded a limit, exited before the end, or left decisions to the game server's clock (a strike; not
counted for a seat handed over from a lost worker, whose clock ran while nobody played). A bot that
failed while its game server was lost (unreachable, or no longer knowing the game) is not blamed:
``SeatResult.lost``. The report carries the last ``LOG_TAIL`` bytes of what the bot wrote.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from dataclasses import dataclass
from pathlib import Path

import grpc

from kutnahora.clients.sdk import (
    ENV_GAME_ID,
    ENV_SEAT,
    ENV_SERVER,
    ENV_TOKEN,
    Client,
    ClientError,
    ConnectError,
    SeatCredentials,
)
from kutnahora.hosting.gateway_limits import BotBudget
from kutnahora.hosting.seat import SeatFailed, SeatHost, play_seat
from kutnahora.hosting.submission import Submission
from kutnahora.v1 import game_pb2

ENV_BOT_SEED = "KUTNAHORA_BOT_SEED"
LOG_TAIL = 64 << 10  # bytes of a seat's log sent to the arena (its end)
EXIT_GRACE = 10.0  # seconds a bot may run on after its game has ended
POLL_SECONDS = 2.0  # between looks at the game while the bot plays
ENDED = (game_pb2.GAME_STATUS_FINISHED, game_pb2.GAME_STATUS_ABANDONED)


@dataclass(frozen=True, slots=True)
class Seat:
    """A seat to play: the game server, the game, the seat and its token (keep it out of logs)."""

    server_address: str
    game_id: str
    seat: int
    token: str


@dataclass(frozen=True, slots=True)
class SeatResult:
    """How the bot's code ended: ``failed`` with ``reason``, or finished; its log's tail. ``lost``: it
    failed while its game server could not be reached or no longer knew the game, so the failure is
    not the bot's (the arena rules on a game whose server is lost)."""

    failed: bool
    reason: str
    log: bytes
    truncated: bool
    lost: bool = False


async def play(
    host: SeatHost, submission: Submission, seat: Seat, budget: BotBudget, *, resumed: bool
) -> SeatResult:
    """Play ``seat`` with ``submission`` to its end (cancellation stops the bot at once)."""
    game = Client(seat.server_address)
    try:

        async def ended() -> bool:
            try:
                summary = await game.get_game(seat.game_id)
            except ClientError:
                return True  # the game server cannot say: the bot is not blamed for its exit
            return summary.status in ENDED

        def seat_env(server: str) -> dict[str, str]:
            return {
                ENV_SERVER: server,
                ENV_GAME_ID: seat.game_id,
                ENV_SEAT: str(seat.seat),
                ENV_TOKEN: seat.token,
                ENV_BOT_SEED: str(random.randrange(1 << 31)),
            }

        playing = asyncio.create_task(
            play_seat(
                host, submission, seat.game_id, seat.seat, seat_env, budget, ended, seat_token=seat.token
            )
        )
        failure: str | None = None
        try:
            await _until_done(game, seat, playing)
            if playing.done():
                playing.result()
        except SeatFailed as failed:
            failure = failed.reason
        finally:
            if not playing.done():
                playing.cancel()
                with contextlib.suppress(asyncio.CancelledError, SeatFailed):
                    await playing
        lost = failure is not None and await _server_lost(game, seat)
        if failure is not None and not lost:
            # As in a tournament: the failed seat is resigned, so the server's random policy plays it to
            # the end and the other bots' game goes on at their pace, not the clock's.
            with contextlib.suppress(ClientError):
                await game.resign(SeatCredentials(seat.game_id, seat.seat, seat.token))
        if failure is None and not resumed:
            failure = await _strikes(game, seat)
    finally:
        await game.close()
    log, truncated = _log_tail(host.log_path(seat.game_id, seat.seat))
    return SeatResult(failure is not None, failure or "", log, truncated, lost)


async def _server_lost(game: Client, seat: Seat) -> bool:
    """Whether the game server cannot be reached or no longer knows the game."""
    try:
        await game.get_game(seat.game_id)
    except ConnectError:
        return True
    except ClientError as error:
        return error.code == grpc.StatusCode.NOT_FOUND
    return False


async def _until_done(game: Client, seat: Seat, playing: asyncio.Task[None]) -> None:
    """Wait for the bot to exit, or for the game to have ended ``EXIT_GRACE`` seconds ago."""
    loop = asyncio.get_running_loop()
    ended_at: float | None = None
    while not playing.done():
        await asyncio.wait({playing}, timeout=POLL_SECONDS)
        if playing.done():
            return
        try:
            summary = await game.get_game(seat.game_id)
        except ClientError:
            continue
        if summary.status in ENDED:
            ended_at = ended_at if ended_at is not None else loop.time()
            if loop.time() - ended_at >= EXIT_GRACE:
                return  # it played to the end; it is stopped now


async def _strikes(game: Client, seat: Seat) -> str | None:
    """Why the seat failed, if the game server's clock decided for it."""
    try:
        summary = await game.get_game(seat.game_id)
    except ClientError:
        return None
    for info in summary.seats:
        if info.seat == seat.seat and info.strikes:
            return f"the game server's clock decided for it {info.strikes} time(s)"
    return None


def _log_tail(path: Path | None) -> tuple[bytes, bool]:
    """The end of the seat's log (at most ``LOG_TAIL`` bytes) and whether its start was cut; the file is
    removed."""
    if path is None or not path.is_file():
        return b"", False
    with path.open("rb") as handle:
        size = handle.seek(0, 2)
        handle.seek(max(0, size - LOG_TAIL))
        data = handle.read()
    path.unlink(missing_ok=True)
    return data, size > LOG_TAIL
