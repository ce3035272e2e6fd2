"""Every refusal of the protocol: its gRPC status code, its sentence, and that nothing was applied."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

import grpc
import grpc.aio
import pytest

from kutnahora.server.app import create_server
from kutnahora.server.config import Limits, ServerConfig
from kutnahora.v1 import (
    common_pb2,
    game_pb2,
    game_service_pb2,
    play_service_pb2,
    replay_service_pb2,
)
from tests.server.conftest import NO_CLOCK, Client, StartServer, bearer, play_game

Code = grpc.StatusCode


async def refused(call: Awaitable[Any], code: grpc.StatusCode, *words: str) -> str:
    """Await a call that must fail with ``code`` and a sentence holding ``words``; return the sentence."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    assert caught.value.code() == code, caught.value.details()
    details = caught.value.details() or ""
    for word in words:
        assert word in details, details
    return details


async def test_create_refuses_malformed_options(client: Client) -> None:
    games = client.games
    await refused(games.CreateGame(game_service_pb2.CreateGameRequest()), Code.INVALID_ARGUMENT, "options")
    await refused(
        games.CreateGame(game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=5))),
        Code.INVALID_ARGUMENT,
        "players",
    )
    await refused(
        games.CreateGame(
            game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=2, guild_setup_card=999))
        ),
        Code.INVALID_ARGUMENT,
        "set up",
    )
    await refused(
        games.CreateGame(
            game_service_pb2.CreateGameRequest(
                options=game_pb2.GameOptions(players=2), clock=game_pb2.ClockSettings(max_strikes=-1)
            )
        ),
        Code.INVALID_ARGUMENT,
        "max_strikes",
    )
    await refused(
        games.CreateGame(
            game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=2), seed=-4)
        ),
        Code.INVALID_ARGUMENT,
        "seed",
    )


async def test_create_refuses_seat_names_that_do_not_name_every_seat(client: Client) -> None:
    def create(*names: str) -> Awaitable[Any]:
        return client.games.CreateGame(
            game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=3), seat_names=names)
        )

    await refused(create("a", "b"), Code.INVALID_ARGUMENT, "seat_names", "3 names", "got 2")
    await refused(create("a", "b", "c", "d"), Code.INVALID_ARGUMENT, "seat_names", "got 4")
    await refused(create("a", "x" * 101, "c"), Code.INVALID_ARGUMENT, "seat_names[1]", "100 characters")
    listed = await client.games.ListGames(game_service_pb2.ListGamesRequest())
    assert len(listed.games) == 0  # nothing was created


async def test_unknown_games_are_not_found(client: Client) -> None:
    await refused(
        client.games.GetGame(game_service_pb2.GetGameRequest(game_id="nope")), Code.NOT_FOUND, "nope"
    )
    await refused(client.observe("nope"), Code.NOT_FOUND)
    await refused(client.submit("nope", 0, "x", 0, option_index=0), Code.NOT_FOUND)
    await refused(
        client.replay.GetReplay(replay_service_pb2.GetReplayRequest(game_id="nope")), Code.NOT_FOUND
    )
    await refused(client.games.GetGame(game_service_pb2.GetGameRequest()), Code.INVALID_ARGUMENT, "game_id")


async def test_tokens_are_checked(client: Client) -> None:
    game_id, tokens, game_token = await client.new_game(players=2, seed=3)
    seat = (await client.observe(game_id)).pending.seat
    other = 1 - seat
    request = play_service_pb2.SubmitDecisionRequest(
        game_id=game_id, seat=seat, version=0, answer=game_pb2.Answer(option_index=0)
    )
    await refused(client.play.SubmitDecision(request), Code.UNAUTHENTICATED, "token")
    await refused(client.play.SubmitDecision(request, metadata=bearer("forged")), Code.UNAUTHENTICATED)
    await refused(client.play.SubmitDecision(request, metadata=bearer(game_token)), Code.UNAUTHENTICATED)
    await refused(
        client.play.SubmitDecision(request, metadata=bearer(tokens[other])),
        Code.PERMISSION_DENIED,
        f"seat {other}",
    )
    await refused(client.observe(game_id, seat, tokens[other]), Code.PERMISSION_DENIED)
    await refused(client.observe(game_id, seat, ""), Code.UNAUTHENTICATED)
    await refused(client.observe(game_id, 7, tokens[seat]), Code.INVALID_ARGUMENT, "seat")
    # A seat token cannot abandon the game; the game token can.
    abandon = game_service_pb2.AbandonGameRequest(game_id=game_id, reason="test")
    await refused(client.games.AbandonGame(abandon, metadata=bearer(tokens[0])), Code.PERMISSION_DENIED)
    await refused(client.games.AbandonGame(abandon), Code.UNAUTHENTICATED)
    assert (await client.observe(game_id)).version == 0


async def test_submissions_refused_for_what_they_say(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=2, seed=5)
    observation = await client.observe(game_id)
    seat = observation.pending.seat
    other = 1 - seat
    token = tokens[seat]
    own = await client.observe(game_id, seat, token)
    count = len(own.pending.options)

    await refused(
        client.submit(game_id, other, tokens[other], 0, option_index=0),
        Code.FAILED_PRECONDITION,
        f"seat {seat} owes",
    )
    await refused(
        client.submit(game_id, seat, token, 0, option_index=count), Code.FAILED_PRECONDITION, "not listed"
    )
    await refused(client.submit(game_id, seat, token, 0, option_index=-1), Code.INVALID_ARGUMENT, "negative")
    await refused(client.submit(game_id, seat, token, 0, option_text="dance"), Code.INVALID_ARGUMENT, "dance")
    await refused(
        client.submit(game_id, seat, token, 0, option_text="square 9,9"), Code.FAILED_PRECONDITION, "legal"
    )
    await refused(
        client.submit(game_id, seat, token, 0, decision=game_pb2.Decision()), Code.INVALID_ARGUMENT, "none"
    )
    await refused(
        client.submit(
            game_id,
            seat,
            token,
            0,
            decision=game_pb2.Decision(
                arrange_guilds=game_pb2.ArrangeGuilds(guilds=[common_pb2.GUILD_MINERS])
            ),
        ),
        Code.INVALID_ARGUMENT,
        "three",
    )
    await refused(
        client.submit(
            game_id,
            seat,
            token,
            0,
            decision=game_pb2.Decision(choose_guild=game_pb2.ChooseGuild(guild=42)),  # type: ignore[arg-type]
        ),
        Code.INVALID_ARGUMENT,
        "known value",
    )
    await refused(
        client.play.SubmitDecision(
            play_service_pb2.SubmitDecisionRequest(game_id=game_id, seat=seat, version=0),
            metadata=bearer(token),
        ),
        Code.INVALID_ARGUMENT,
        "answer",
    )
    await refused(client.submit(game_id, seat, token, -1, option_index=0), Code.INVALID_ARGUMENT, "version")
    await refused(client.submit(game_id, seat, token, 5, option_index=0), Code.ABORTED, "ahead")
    assert (await client.observe(game_id)).version == 0


async def test_a_stale_version_is_aborted_and_an_exact_retry_answered_again(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=2, seed=6)
    seat = (await client.observe(game_id)).pending.seat
    token = tokens[seat]
    first = await client.submit(game_id, seat, token, 0, option_index=0)
    assert first.version == 1
    retry = await client.submit(game_id, seat, token, 0, option_index=0)
    assert retry == first
    assert retry.SerializeToString() == first.SerializeToString()
    by_text = await client.submit(game_id, seat, token, 0, option_text=first.decision.text)
    assert by_text == first
    assert (await client.observe(game_id)).version == 1
    details = await refused(client.submit(game_id, seat, token, 0, option_index=1), Code.ABORTED, "version 1")
    assert "already answered" in details
    other = 1 - seat
    await refused(client.submit(game_id, other, tokens[other], 0, option_index=0), Code.ABORTED)
    assert (await client.observe(game_id)).version == 1


async def test_waiting_finished_and_abandoned_games_accept_no_decision(client: Client) -> None:
    created = await client.games.CreateGame(
        game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=2), seed=1)
    )
    game_id = created.game.game_id
    joined = await client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=game_id, seat=0))
    await refused(
        client.submit(game_id, 0, joined.seat_token, 0, option_index=0), Code.FAILED_PRECONDITION, "waiting"
    )
    await refused(
        client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=game_id, seat=0)),
        Code.ALREADY_EXISTS,
        "taken",
    )
    await refused(
        client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=game_id, seat=3)),
        Code.INVALID_ARGUMENT,
    )
    await client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=game_id, seat=1))
    await refused(
        client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=game_id)),
        Code.FAILED_PRECONDITION,
        "active",
    )
    await refused(
        client.replay.GetReplay(replay_service_pb2.GetReplayRequest(game_id=game_id)),
        Code.FAILED_PRECONDITION,
        "seed",
    )
    abandoned = await client.games.AbandonGame(
        game_service_pb2.AbandonGameRequest(game_id=game_id, reason="no time"),
        metadata=bearer(created.game_token),
    )
    assert abandoned.game.status == game_pb2.GAME_STATUS_ABANDONED
    assert abandoned.game.abandon_reason == "no time"
    await refused(
        client.submit(game_id, 0, joined.seat_token, 0, option_index=0), Code.FAILED_PRECONDITION, "abandoned"
    )
    await refused(
        client.games.AbandonGame(
            game_service_pb2.AbandonGameRequest(game_id=game_id), metadata=bearer(created.game_token)
        ),
        Code.FAILED_PRECONDITION,
    )
    replay = await client.replay.GetReplay(replay_service_pb2.GetReplayRequest(game_id=game_id))
    assert replay.seed == 1


async def test_a_finished_game_refuses_decisions(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=2, seed=8)
    await play_game(client, game_id, tokens)
    final = await client.observe(game_id)
    await refused(
        client.submit(game_id, 0, tokens[0], final.version, option_index=0), Code.FAILED_PRECONDITION, "over"
    )


async def test_the_admin_token_may_abandon_any_game(start_server: StartServer) -> None:
    _, client = await start_server(ServerConfig.in_memory(clock=NO_CLOCK, admin_token="root-secret"))
    game_id, _, _ = await client.new_game(players=2)
    response = await client.games.AbandonGame(
        game_service_pb2.AbandonGameRequest(game_id=game_id), metadata=bearer("root-secret")
    )
    assert response.game.status == game_pb2.GAME_STATUS_ABANDONED


async def test_play_stream_refusals(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=2, seed=2)
    seat = (await client.observe(game_id)).pending.seat

    call = client.play.Play(metadata=bearer(tokens[seat]))
    await call.write(play_service_pb2.PlayRequest(decision=play_service_pb2.PlayDecision(version=0)))
    await refused(call.read(), Code.INVALID_ARGUMENT, "PlayStart")

    call = client.play.Play(metadata=bearer(tokens[1 - seat]))
    await call.write(
        play_service_pb2.PlayRequest(start=play_service_pb2.PlayStart(game_id=game_id, seat=seat))
    )
    await refused(call.read(), Code.PERMISSION_DENIED)

    call = client.play.Play()
    await call.write(
        play_service_pb2.PlayRequest(start=play_service_pb2.PlayStart(game_id=game_id, seat=seat))
    )
    await refused(call.read(), Code.UNAUTHENTICATED)

    # On an open stream, a refused decision is a message: the stream stays open and nothing is applied.
    call = client.play.Play(metadata=bearer(tokens[seat]))
    await call.write(
        play_service_pb2.PlayRequest(
            start=play_service_pb2.PlayStart(game_id=game_id, seat=seat, acknowledge=True)
        )
    )
    turn = await call.read()
    assert turn.WhichOneof("message") == "your_turn"
    count = len(turn.your_turn.observation.pending.options)
    bad = [
        (
            play_service_pb2.PlayDecision(version=0, answer=game_pb2.Answer(option_index=count)),
            "NOT_AN_OPTION",
        ),
        (play_service_pb2.PlayDecision(version=3, answer=game_pb2.Answer(option_index=0)), "STALE_VERSION"),
        (play_service_pb2.PlayDecision(version=0), "MALFORMED"),
        (play_service_pb2.PlayDecision(version=0, answer=game_pb2.Answer(option_text="??")), "MALFORMED"),
    ]
    for decision, reason in bad:
        await call.write(play_service_pb2.PlayRequest(decision=decision))
        response = await call.read()
        assert response.WhichOneof("message") == "rejected"
        assert game_pb2.RejectReason.Name(response.rejected.reason) == f"REJECT_REASON_{reason}"
        assert response.rejected.message
        assert response.rejected.version == 0
    await call.write(
        play_service_pb2.PlayRequest(start=play_service_pb2.PlayStart(game_id=game_id, seat=seat))
    )
    response = await call.read()
    assert response.rejected.reason == game_pb2.REJECT_REASON_MALFORMED
    await call.write(
        play_service_pb2.PlayRequest(
            decision=play_service_pb2.PlayDecision(version=0, answer=game_pb2.Answer(option_index=0))
        )
    )
    response = await call.read()
    assert response.WhichOneof("message") == "accepted"
    assert response.accepted.version == 0
    assert response.accepted.next_version == 1
    assert (await client.observe(game_id)).version == 1
    call.cancel()


async def test_limits_refuse_with_resource_exhausted(start_server: StartServer) -> None:
    _, client = await start_server(
        ServerConfig.in_memory(clock=NO_CLOCK, limits=Limits(max_games=2, max_watchers=1, rate_per_second=0))
    )
    await client.new_game(players=2, join=False)
    game_id, _, _ = await client.new_game(players=2, join=False)
    await refused(client.new_game(players=2), Code.RESOURCE_EXHAUSTED, "unfinished games")
    watch = client.play.WatchGame(play_service_pb2.WatchGameRequest(game_id=game_id))
    first = await watch.read()
    assert first.observation.version == 0
    second = client.play.WatchGame(play_service_pb2.WatchGameRequest(game_id=game_id))
    await refused(second.read(), Code.RESOURCE_EXHAUSTED, "watch streams")
    watch.cancel()


async def test_a_game_that_ends_frees_its_place_under_the_games_limit(start_server: StartServer) -> None:
    """max_games counts the unfinished games: one that finishes or is abandoned makes room for another,
    also once it has left memory; the count the hub keeps is always the one a look at every game gives."""
    server, client = await start_server(
        ServerConfig.in_memory(
            clock=NO_CLOCK, limits=Limits(max_games=2, rate_per_second=0), ended_games_in_memory=1
        )
    )
    hub = server.hub

    def counted() -> int:
        recount = sum(1 for game in hub.games.values() if not game.ended)
        assert hub.unfinished() == recount
        return recount

    first, first_tokens, _ = await client.new_game(players=2, seed=3)
    second, _, second_token = await client.new_game(players=2, join=False)
    assert counted() == 2
    await refused(client.new_game(players=2), Code.RESOURCE_EXHAUSTED, "unfinished games")
    await client.games.AbandonGame(
        game_service_pb2.AbandonGameRequest(game_id=second, reason="room"), metadata=bearer(second_token)
    )
    assert counted() == 1
    third, _, _ = await client.new_game(players=2, join=False)  # the abandoned game made room
    assert counted() == 2
    await play_game(client, first, first_tokens, seed=3)  # finished, then evicted by the next ended game
    assert counted() == 1
    await client.new_game(players=2, join=False)
    assert counted() == 2 and third in hub.games
    await refused(client.new_game(players=2), Code.RESOURCE_EXHAUSTED, "unfinished games")


async def test_the_rate_limit_refuses_a_flood(start_server: StartServer) -> None:
    _, client = await start_server(
        ServerConfig.in_memory(clock=NO_CLOCK, limits=Limits(rate_per_second=1, rate_burst=5))
    )
    game_id, _, _ = await client.new_game(players=2, join=False)  # two calls
    request = game_service_pb2.GetGameRequest(game_id=game_id)
    results = await asyncio.gather(
        *(client.games.GetGame(request) for _ in range(10)), return_exceptions=True
    )
    refusals = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
    assert refusals, "a burst beyond the limit must be refused"
    assert all(r.code() == Code.RESOURCE_EXHAUSTED for r in refusals)
    assert "per second" in (refusals[0].details() or "")


async def test_a_request_larger_than_the_limit_is_refused(start_server: StartServer) -> None:
    _, client = await start_server(
        ServerConfig.in_memory(clock=NO_CLOCK, limits=Limits(max_message_bytes=1024))
    )
    request = game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=2), label="x" * 4000)
    await refused(client.games.CreateGame(request), Code.RESOURCE_EXHAUSTED)


async def test_a_second_server_on_the_same_port_fails_loudly(served: Any) -> None:
    server, _ = served
    with pytest.raises((RuntimeError, OSError)):
        await create_server(f"127.0.0.1:{server.port}", ServerConfig.in_memory())
