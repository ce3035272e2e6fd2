"""Retry-safe requests: CreateGame, JoinGame and ResignSeat with a ``request_id`` (AIP-155).

The same request id with the same request returns the first answer (the same game, seat and tokens), also
after the server died between storing the change and replying, and across a restart; the same id with
another request is refused with REQUEST_ID_REUSED; an id that is not a UUID is INVALID_ARGUMENT. The
records keep neither the request id nor a token in the clear.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from pathlib import Path

import grpc
import grpc.aio
import pytest
from google.rpc import error_details_pb2, status_pb2

from kutnahora.server import requests
from kutnahora.server.app import GameServer
from kutnahora.v1 import game_pb2, game_service_pb2
from tests.server.conftest import Client, bearer
from tests.server.test_restart import server_process

Code = grpc.StatusCode


def create_request(rid: str, players: int = 2, seed: int = 7) -> game_service_pb2.CreateGameRequest:
    return game_service_pb2.CreateGameRequest(
        options=game_pb2.GameOptions(players=players), seed=seed, request_id=rid
    )


def reason_of(error: grpc.aio.AioRpcError) -> str:
    """The ErrorInfo reason in a refusal's status details."""
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return info.reason
    return ""


# --- the record, alone ------------------------------------------------------------------------------------


def test_a_record_opens_only_for_the_same_request_with_the_same_id() -> None:
    rid = str(uuid.uuid4())
    request = create_request(rid)
    record = requests.seal(rid, "CreateGame", request, {"game_id": "g", "game_token": "t"}, 100.0)
    assert rid not in record.key_hash and b"game_token" not in record.sealed and b'"t"' not in record.sealed
    assert requests.answer_of(rid, "CreateGame", create_request(rid), record) == {
        "game_id": "g",
        "game_token": "t",
    }
    for method, other in (("CreateGame", create_request(rid, seed=8)), ("JoinGame", create_request(rid))):
        with pytest.raises(requests.ServiceError) as caught:
            requests.answer_of(rid, method, other, record)
        assert caught.value.reason == "request_id_reused"
    stranger = str(uuid.uuid4())  # a record found under another id's hash never opens
    with pytest.raises(requests.ServiceError):
        requests.answer_of(stranger, "CreateGame", create_request(stranger), record)
    assert requests.live(record, 100.0 + requests.WINDOW - 1) is record
    assert requests.live(record, 100.0 + requests.WINDOW + 1) is None


def test_a_request_id_must_be_a_uuid_and_is_read_in_its_canonical_form() -> None:
    upper = "123E4567-E89B-42D3-A456-426614174000"
    assert requests.request_id(create_request(upper)) == upper.lower()
    assert requests.request_id(create_request("")) is None
    with pytest.raises(requests.ServiceError) as caught:
        requests.request_id(create_request("retry-1"))
    assert caught.value.code == Code.INVALID_ARGUMENT and "must be a UUID" in caught.value.message


# --- through the server -----------------------------------------------------------------------------------


async def test_create_game_retried_returns_the_same_game_and_tokens(client: Client) -> None:
    rid = str(uuid.uuid4())
    request = create_request(rid)
    request.seat_names.extend(["ann", "bob"])
    first = await client.games.CreateGame(request)
    again = await client.games.CreateGame(request)
    assert again.game.game_id == first.game.game_id
    assert again.game_token == first.game_token and list(again.seat_tokens) == list(first.seat_tokens)
    listed = await client.games.ListGames(game_service_pb2.ListGamesRequest())
    assert [game.game_id for game in listed.games] == [first.game.game_id]
    other = await client.games.CreateGame(create_request(str(uuid.uuid4())))  # a new id: a new game
    assert other.game.game_id != first.game.game_id


async def test_a_request_id_reused_for_another_request_is_refused_with_its_reason(client: Client) -> None:
    rid = str(uuid.uuid4())
    await client.games.CreateGame(create_request(rid, seed=1))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.games.CreateGame(create_request(rid, seed=2))
    assert caught.value.code() == Code.FAILED_PRECONDITION
    assert "request_id" in (caught.value.details() or "")
    assert reason_of(caught.value) == "REQUEST_ID_REUSED"
    listed = await client.games.ListGames(game_service_pb2.ListGamesRequest())
    assert len(listed.games) == 1  # nothing was created for the refused request


async def test_an_id_that_is_not_a_uuid_is_invalid_argument(client: Client) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.games.CreateGame(create_request("my-retry"))
    assert caught.value.code() == Code.INVALID_ARGUMENT


async def test_join_game_retried_after_the_game_started_returns_the_same_seat_and_token(
    client: Client,
) -> None:
    game_id, _, _ = await client.new_game(players=2, join=False)
    rids = [str(uuid.uuid4()), str(uuid.uuid4())]
    joins = [
        game_service_pb2.JoinGameRequest(game_id=game_id, name=f"p{i}", request_id=rids[i]) for i in (0, 1)
    ]
    first = [await client.games.JoinGame(join) for join in joins]
    assert {answer.seat for answer in first} == {0, 1}
    again = await client.games.JoinGame(joins[1])  # the game is active now: a plain join would be refused
    assert (again.seat, again.seat_token) == (first[1].seat, first[1].seat_token)
    assert again.game.status == game_pb2.GAME_STATUS_ACTIVE
    await client.observe(game_id, again.seat, again.seat_token)  # the token is the seat's
    with pytest.raises(grpc.aio.AioRpcError) as caught:  # the same id to join another game
        await client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id="0" * 16, request_id=rids[0]))
    assert caught.value.code() in (Code.FAILED_PRECONDITION, Code.NOT_FOUND)


async def test_the_same_join_sent_twice_at_once_takes_one_seat(served: tuple[GameServer, Client]) -> None:
    import asyncio

    server, client = served
    game_id, _, _ = await client.new_game(players=3, join=False)
    join = game_service_pb2.JoinGameRequest(game_id=game_id, request_id=str(uuid.uuid4()))
    answers = await asyncio.gather(*(client.games.JoinGame(join) for _ in range(4)))
    assert len({(answer.seat, answer.seat_token) for answer in answers}) == 1
    summary = (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
    assert sum(1 for seat in summary.seats if seat.joined) == 1
    assert len(server.service._request_locks) == 0  # the request id's lock is gone with its last user


async def test_resign_seat_retried_answers_again(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=2)
    resign = game_service_pb2.ResignSeatRequest(game_id=game_id, seat=0, request_id=str(uuid.uuid4()))
    first = await client.games.ResignSeat(resign, metadata=bearer(tokens[0]))
    again = await client.games.ResignSeat(resign, metadata=bearer(tokens[0]))
    assert first.game.game_id == again.game.game_id == game_id
    with pytest.raises(grpc.aio.AioRpcError) as caught:  # the retry still needs the seat's token
        await client.games.ResignSeat(resign, metadata=bearer(tokens[1]))
    assert caught.value.code() in (Code.UNAUTHENTICATED, Code.PERMISSION_DENIED)


# --- killed between the commit and the reply ---------------------------------------------------------------


@pytest.mark.parametrize("method", ["JoinGame", "CreateGame"])
async def test_a_server_killed_between_commit_and_reply_answers_the_retry_after_its_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    db = tmp_path / "games.db"
    with server_process(db) as (_, port):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            created = await Client(channel).games.CreateGame(create_request(""))
    game_id = created.game.game_id
    rid = str(uuid.uuid4())
    join = game_service_pb2.JoinGameRequest(game_id=game_id, seat=1, name="bob", request_id=rid)
    create = create_request(rid, players=3, seed=11)
    monkeypatch.setenv("KUTNAHORA_FAULT_EXIT_AFTER_COMMIT", method)
    with server_process(db) as (process, port):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            with pytest.raises(grpc.aio.AioRpcError) as lost:
                if method == "JoinGame":
                    await Client(channel).games.JoinGame(join, timeout=10)
                else:
                    await Client(channel).games.CreateGame(create, timeout=10)
            assert lost.value.code() == Code.UNAVAILABLE  # the reply never came
        assert process.wait(10) == 75
    monkeypatch.delenv("KUTNAHORA_FAULT_EXIT_AFTER_COMMIT")
    with sqlite3.connect(db) as stored:  # what the store keeps: no request id, no token in the clear
        rows = stored.execute("SELECT key_hash, sealed FROM requests").fetchall()
    assert len(rows) == 1 and rows[0][0] == requests.key_hash(rid) and rid.encode() not in rows[0][1]
    with server_process(db) as (_, port):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            client = Client(channel)
            if method == "JoinGame":
                retried = await client.games.JoinGame(join)
                assert retried.seat == 1 and retried.seat_token
                assert retried.seat_token.encode() not in rows[0][1]
                await client.observe(game_id, 1, retried.seat_token)  # the token it got is seat 1's
                summary = (await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
                assert [seat.joined for seat in summary.seats] == [False, True]
            else:
                retried_game = await client.games.CreateGame(create)
                listed = await client.games.ListGames(game_service_pb2.ListGamesRequest())
                assert len(listed.games) == 2  # the first game and the one the lost reply created
                assert retried_game.game.game_id in {game.game_id for game in listed.games}
                assert retried_game.game.options.players == 3
                abandon = game_service_pb2.AbandonGameRequest(game_id=retried_game.game.game_id)
                await client.games.AbandonGame(abandon, metadata=bearer(retried_game.game_token))
    assert os.environ.get("KUTNAHORA_FAULT_EXIT_AFTER_COMMIT") is None
