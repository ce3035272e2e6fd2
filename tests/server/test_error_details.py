"""Errors a bot in any language can act on: every refusal carries a ``google.rpc.Status`` with an
``ErrorInfo`` whose reason is a ``RejectReason`` name, so that one status code shared by several causes
(FAILED_PRECONDITION for not your turn, not an option, game not active) no longer needs its English read.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import grpc
import grpc.aio
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from kutnahora.plumbing import status
from kutnahora.plumbing.errors import Reason
from kutnahora.server.config import Limits, ServerConfig
from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2, replay_service_pb2
from tests.server.conftest import NO_CLOCK, Client, StartServer, bearer

Code = grpc.StatusCode


async def refusal(call: Awaitable[Any], code: grpc.StatusCode) -> error_details_pb2.ErrorInfo:
    """Await a call that must be refused with ``code``; its ErrorInfo (the status details must agree with
    the call's own code and sentence, or ``from_call`` raises)."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    error = caught.value
    assert error.code() == code, error.details()
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None, "the refusal carries no google.rpc.Status"
    assert status.message == error.details() and status.code == code.value[0]
    (detail,) = status.details
    info = error_details_pb2.ErrorInfo()
    assert detail.Unpack(info)
    assert info.domain == "kutnahora.v1"
    return info


def test_the_error_reasons_are_the_reject_reasons() -> None:
    """Every reason the server refuses for maps to a RejectReason, and every RejectReason is used."""
    used = set(status.REJECT_REASONS.values())
    every = {value.number for value in game_pb2.RejectReason.DESCRIPTOR.values} - {0}
    assert used == every
    assert set(status.REJECT_REASONS) == set(Reason)


async def test_unary_refusals_name_their_reason(client: Client) -> None:
    games, play = client.games, client.play
    info = await refusal(games.GetGame(game_service_pb2.GetGameRequest(game_id="nope")), Code.NOT_FOUND)
    assert info.reason == "NOT_FOUND"
    game_id, tokens, _ = await client.new_game(players=2, seed=3)
    seat = (await client.observe(game_id)).pending.seat
    other = 1 - seat
    # Three causes that share FAILED_PRECONDITION, told apart by their reason.
    info = await refusal(
        client.submit(game_id, other, tokens[other], 0, option_index=0), Code.FAILED_PRECONDITION
    )
    assert info.reason == "NOT_YOUR_TURN"
    info = await refusal(
        client.submit(game_id, seat, tokens[seat], 0, option_index=999), Code.FAILED_PRECONDITION
    )
    assert info.reason == "NOT_AN_OPTION"
    waiting, _, _ = await client.new_game(players=2, seed=4, join=False)
    joined = await games.JoinGame(game_service_pb2.JoinGameRequest(game_id=waiting, seat=0))
    info = await refusal(
        client.submit(waiting, 0, joined.seat_token, 0, option_index=0), Code.FAILED_PRECONDITION
    )
    assert info.reason == "GAME_NOT_ACTIVE"
    info = await refusal(
        games.JoinGame(game_service_pb2.JoinGameRequest(game_id=waiting, seat=0)), Code.ALREADY_EXISTS
    )
    assert info.reason == "SEAT_TAKEN"
    info = await refusal(
        games.JoinGame(game_service_pb2.JoinGameRequest(game_id=game_id)), Code.FAILED_PRECONDITION
    )
    assert info.reason == "GAME_NOT_ACTIVE"  # joining a game that started
    info = await refusal(
        client.replay.GetReplay(replay_service_pb2.GetReplayRequest(game_id=game_id)),
        Code.FAILED_PRECONDITION,
    )
    assert info.reason == "GAME_NOT_ENDED"
    info = await refusal(client.submit(game_id, seat, tokens[seat], 5, option_index=0), Code.ABORTED)
    assert info.reason == "STALE_VERSION"
    info = await refusal(
        client.submit(game_id, seat, tokens[seat], 0, option_index=-1), Code.INVALID_ARGUMENT
    )
    assert info.reason == "MALFORMED"
    info = await refusal(client.submit(game_id, seat, "", 0, option_index=0), Code.UNAUTHENTICATED)
    assert info.reason == "UNAUTHENTICATED"
    info = await refusal(
        client.submit(game_id, seat, tokens[other], 0, option_index=0), Code.PERMISSION_DENIED
    )
    assert info.reason == "PERMISSION_DENIED"
    info = await refusal(
        client.channel.unary_unary("/kutnahora.v1.GameService/GetGame")(b"\xff"), Code.INVALID_ARGUMENT
    )
    assert info.reason == "MALFORMED"
    watch = play.WatchGame(play_service_pb2.WatchGameRequest(game_id="nope"))
    info = await refusal(watch.read(), Code.NOT_FOUND)
    assert info.reason == "NOT_FOUND"


async def test_limits_name_their_reason(start_server: StartServer) -> None:
    _, client = await start_server(ServerConfig.in_memory(clock=NO_CLOCK, limits=Limits(max_games=1)))
    await client.new_game(players=2, seed=3)
    request = game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=2))
    info = await refusal(client.games.CreateGame(request), Code.RESOURCE_EXHAUSTED)
    assert info.reason == "LIMIT_REACHED" and info.metadata["limit"] == "max_games"
    _, limited = await start_server(
        ServerConfig.in_memory(clock=NO_CLOCK, limits=Limits(rate_per_second=0.01, rate_burst=1))
    )
    await limited.games.ListGames(game_service_pb2.ListGamesRequest())
    info = await refusal(
        limited.games.ListGames(game_service_pb2.ListGamesRequest()), Code.RESOURCE_EXHAUSTED
    )
    assert info.reason == "RATE_LIMITED"


async def test_a_play_stream_refused_at_its_start_names_its_reason(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=2, seed=3)
    call = client.play.Play(metadata=bearer(tokens[0]))
    await call.write(play_service_pb2.PlayRequest(start=play_service_pb2.PlayStart(game_id=game_id, seat=1)))
    info = await refusal(call.read(), Code.PERMISSION_DENIED)
    assert info.reason == "PERMISSION_DENIED"


async def test_a_rejection_on_the_play_stream_has_the_same_reason(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=2, seed=3)
    seat = (await client.observe(game_id)).pending.seat
    call = client.play.Play(metadata=bearer(tokens[seat]))
    await call.write(
        play_service_pb2.PlayRequest(start=play_service_pb2.PlayStart(game_id=game_id, seat=seat))
    )
    await call.read()
    decision = play_service_pb2.PlayDecision(version=0, answer=game_pb2.Answer(option_index=999))
    await call.write(play_service_pb2.PlayRequest(decision=decision))
    rejected = (await call.read()).rejected
    assert game_pb2.RejectReason.Name(rejected.reason) == "REJECT_REASON_NOT_AN_OPTION"
    call.cancel()


def test_every_reason_the_server_code_names_is_a_known_reason() -> None:
    """A refusal raised with a reason outside errors.Reason would fail where it is raised: find any."""
    import ast
    from pathlib import Path

    makers = {"precondition", "exhausted", "conflict", "ServiceError"}
    known = {reason.value for reason in Reason}
    for path in sorted((Path(__file__).resolve().parents[2] / "server").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in makers and node.args:
                last = node.args[-1]
                if isinstance(last, ast.Constant) and isinstance(last.value, str):
                    assert last.value in known, f"{path.name}:{node.lineno} refuses for {last.value!r}"
