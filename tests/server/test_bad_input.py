"""Input the server cannot be hurt by: request bodies that do not decode, Play messages that do not decode,
values far too long to repeat, and a flood of the same refusal.

Each test here is a regression test: before the server decoded requests itself, an undecodable body
answered UNKNOWN with a traceback in the log, an undecodable Play message answered INTERNAL (first) or
ended the stream with OK (later), and refusals repeated the client's input at full length.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import grpc
import grpc.aio
import pytest

from kutnahora.plumbing import logs
from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2
from tests.server.conftest import Client, bearer

Code = grpc.StatusCode
EOF: Any = grpc.aio.EOF  # type: ignore[attr-defined]

GARBAGE = b"\xff\xff\xff\xff"  # a field key with an impossible wire type: no message decodes from it

UNARY = [
    "/kutnahora.v1.GameService/CreateGame",
    "/kutnahora.v1.GameService/JoinGame",
    "/kutnahora.v1.GameService/ListGames",
    "/kutnahora.v1.GameService/GetGame",
    "/kutnahora.v1.GameService/GetComponents",
    "/kutnahora.v1.GameService/ResignSeat",
    "/kutnahora.v1.GameService/AbandonGame",
    "/kutnahora.v1.PlayService/GetObservation",
    "/kutnahora.v1.PlayService/SubmitDecision",
    "/kutnahora.v1.ReplayService/GetReplay",
    "/kutnahora.v1.AdminService/GetServerInfo",
]
SERVER_STREAMING = ["/kutnahora.v1.PlayService/WatchGame"]


@pytest.fixture
def captured_logs() -> Iterator[io.StringIO]:
    """The server's log lines, as JSON, for one test."""
    stream = io.StringIO()
    logs.configure("json", "info", stream=stream)
    yield stream
    logs.reset()


def log_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    """Every JSON line logged so far."""
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_the_wire_methods_listed_here_are_every_method() -> None:
    from kutnahora.server.service import KutnaHoraService

    methods = set()
    for service in KutnaHoraService.services():
        for method in service.methods:
            methods.add(f"/{service.full_name}/{method.name}")
    assert methods == {*UNARY, *SERVER_STREAMING, "/kutnahora.v1.PlayService/Play"}


@pytest.mark.parametrize("method", UNARY)
async def test_an_undecodable_unary_request_is_invalid_argument(
    client: Client, captured_logs: io.StringIO, method: str
) -> None:
    call = client.channel.unary_unary(method)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call(GARBAGE)
    assert caught.value.code() == Code.INVALID_ARGUMENT
    message = method.rsplit("/", 1)[1] + "Request"
    assert f"is not a kutnahora.v1.{message}" in (caught.value.details() or "")
    lines = log_lines(captured_logs)
    assert len(lines) <= 1 and all("exception" not in line for line in lines), lines
    assert all(len(json.dumps(line)) < 600 for line in lines)


@pytest.mark.parametrize("method", SERVER_STREAMING)
async def test_an_undecodable_server_streaming_request_is_invalid_argument(
    client: Client, captured_logs: io.StringIO, method: str
) -> None:
    call = client.channel.unary_stream(method)(GARBAGE)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call.read()
    assert caught.value.code() == Code.INVALID_ARGUMENT
    assert "is not a kutnahora.v1.WatchGameRequest" in (caught.value.details() or "")
    lines = log_lines(captured_logs)
    assert len(lines) <= 1 and all("exception" not in line for line in lines), lines


@pytest.mark.parametrize("method", ["/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"])
async def test_an_undecodable_health_request_is_invalid_argument_like_every_other(
    client: Client, method: str
) -> None:
    """The health service's library decoded its requests itself and answered such a body UNKNOWN."""
    if method.endswith("Check"):
        call: Any = client.channel.unary_unary(method)(GARBAGE)
    else:
        call = client.channel.unary_stream(method)(GARBAGE)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await (call if method.endswith("Check") else call.read())
    assert caught.value.code() == Code.INVALID_ARGUMENT
    assert "is not a grpc.health.v1.HealthCheckRequest" in (caught.value.details() or "")


def raw_play(client: Client, token: str) -> Any:
    """A Play stream whose messages are written as raw bytes."""
    stream = client.channel.stream_stream(
        "/kutnahora.v1.PlayService/Play", response_deserializer=play_service_pb2.PlayResponse.FromString
    )
    return stream(metadata=bearer(token))


async def test_an_undecodable_first_play_message_is_invalid_argument(
    client: Client, captured_logs: io.StringIO
) -> None:
    _, tokens, _ = await client.new_game(players=2, seed=3)
    call = raw_play(client, tokens[0])
    await call.write(GARBAGE)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call.read()
    assert caught.value.code() == Code.INVALID_ARGUMENT
    assert "is not a kutnahora.v1.PlayRequest" in (caught.value.details() or "")
    assert all("exception" not in line for line in log_lines(captured_logs))


async def test_an_undecodable_later_play_message_is_rejected_and_the_stream_goes_on(
    client: Client, captured_logs: io.StringIO
) -> None:
    game_id, tokens, _ = await client.new_game(players=2, seed=3)
    seat = (await client.observe(game_id)).pending.seat
    call = raw_play(client, tokens[seat])
    start = play_service_pb2.PlayRequest(start=play_service_pb2.PlayStart(game_id=game_id, seat=seat))
    await call.write(start.SerializeToString())
    turn = await call.read()
    assert turn.WhichOneof("message") == "your_turn"
    await call.write(GARBAGE)
    rejected = await call.read()
    assert rejected.WhichOneof("message") == "rejected"
    assert rejected.rejected.reason == game_pb2.REJECT_REASON_MALFORMED
    assert rejected.rejected.code == Code.INVALID_ARGUMENT.value[0]
    assert "is not a kutnahora.v1.PlayRequest" in rejected.rejected.message
    version = turn.your_turn.observation.version
    decision = play_service_pb2.PlayDecision(version=version, answer=game_pb2.Answer(option_index=0))
    await call.write(play_service_pb2.PlayRequest(decision=decision).SerializeToString())
    assert (await client.observe(game_id)).version in (version, version + 1)
    await call.done_writing()
    while (await call.read()) is not EOF:
        pass
    assert (await client.observe(game_id)).version == version + 1  # the stream went on: applied
    assert all("exception" not in line for line in log_lines(captured_logs))


HUGE = "x" * 100_000


async def test_refusals_do_not_repeat_long_input(client: Client, captured_logs: io.StringIO) -> None:
    """An echoed value is cut to about 100 characters, in the reply and in the log."""
    game_id, tokens, _ = await client.new_game(players=2, seed=3)
    seat = (await client.observe(game_id)).pending.seat
    calls: list[Any] = [
        client.submit(game_id, seat, tokens[seat], 0, option_text=HUGE),
        client.submit(game_id, seat, tokens[seat], 0, option_text="square 1," + HUGE),
        client.games.ListGames(game_service_pb2.ListGamesRequest(page_token=HUGE)),
        client.games.GetGame(game_service_pb2.GetGameRequest(game_id=HUGE)),
        client.submit(HUGE, 0, "t", 0, option_index=0),
        client.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=game_id, name=HUGE)),
    ]
    for call in calls:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call
        assert caught.value.code() in (Code.INVALID_ARGUMENT, Code.NOT_FOUND, Code.FAILED_PRECONDITION)
        details = caught.value.details() or ""
        assert 0 < len(details) < 400, details[:500]
    for line in log_lines(captured_logs):
        assert len(json.dumps(line)) < 1000, json.dumps(line)[:300]


async def test_a_play_refusal_does_not_repeat_long_input(client: Client) -> None:
    game_id, tokens, _ = await client.new_game(players=2, seed=3)
    seat = (await client.observe(game_id)).pending.seat
    call = client.play.Play(metadata=bearer(tokens[seat]))
    start = play_service_pb2.PlayStart(game_id=game_id, seat=seat)
    await call.write(play_service_pb2.PlayRequest(start=start))
    turn = await call.read()
    version = turn.your_turn.observation.version
    decision = play_service_pb2.PlayDecision(version=version, answer=game_pb2.Answer(option_text=HUGE))
    await call.write(play_service_pb2.PlayRequest(decision=decision))
    rejected = await call.read()
    assert rejected.WhichOneof("message") == "rejected"
    assert 0 < len(rejected.rejected.message) < 400
    call.cancel()


async def test_repeated_refusals_are_rate_limited_in_the_log(
    client: Client, captured_logs: io.StringIO
) -> None:
    for _ in range(200):
        with pytest.raises(grpc.aio.AioRpcError):
            await client.games.GetGame(game_service_pb2.GetGameRequest(game_id="no-such-game"))
    lines = [line for line in log_lines(captured_logs) if line.get("event") == "request refused"]
    assert 1 <= len(lines) <= 20, len(lines)
    with pytest.raises(grpc.aio.AioRpcError):
        await client.games.GetGame(game_service_pb2.GetGameRequest(game_id=""))  # another reason: logged
    lines = [line for line in log_lines(captured_logs) if line.get("event") == "request refused"]
    assert any(line.get("reason") == "malformed" for line in lines)


def test_the_line_budget_says_how_many_lines_it_left_out() -> None:
    now = [0.0]
    budget = logs.LineBudget(burst=2, interval=10.0, clock=lambda: now[0])
    assert [budget.take("refused") for _ in range(5)] == [0, 0, None, None, None]
    assert budget.take("another kind") == 0  # kinds are counted apart
    now[0] = 10.0
    assert budget.take("refused") == 3  # the first line of a new interval says three were left out
    assert budget.take("refused") == 0


def test_each_service_names_itself_in_its_lines(captured_logs: io.StringIO) -> None:
    """The game server's lines and the arena's say whose they are, as a library's lines name its logger."""
    logs.get_logger("kutnahora.arena").info("pool opened")
    logs.get_logger("kutnahora.server").info("seat joined")
    named = [(line["event"], line["logger"]) for line in log_lines(captured_logs)]
    assert named == [("pool opened", "kutnahora.arena"), ("seat joined", "kutnahora.server")]


def test_log_lines_cut_long_values(captured_logs: io.StringIO) -> None:
    logs.get_logger("kutnahora.server").info("seat joined", name=HUGE)
    (line,) = log_lines(captured_logs)
    assert line["name"].startswith("xxx") and len(line["name"]) < logs.FIELD_LIMIT + 40
    assert "100000 characters" in line["name"]
