"""Strangers' bytes on the reflection service: a message that does not decode is INVALID_ARGUMENT with a
sentence and its ErrorInfo, on v1alpha and v1, on the game server and on the arena, and logs no traceback.
"""

from __future__ import annotations

import logging
from pathlib import Path

import grpc
import grpc.aio
import pytest
from google.rpc import error_details_pb2
from grpc_reflection.v1alpha import reflection_pb2
from grpc_status import rpc_status

from kutnahora.arena.app import ArenaConfig, create_arena
from tests.server.conftest import StartServer

METHODS = (
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
)
GARBAGE = (b"\xff\xff", b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", b"\x08")  # bad tags, a long varint


async def _refused(channel: grpc.aio.Channel, method: str, body: bytes) -> grpc.aio.AioRpcError:
    call = channel.stream_stream(method)  # raw bytes both ways
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in call(iter([body])):
            pass
    return caught.value


async def _still_answers(channel: grpc.aio.Channel, method: str) -> set[str]:
    call = channel.stream_stream(
        method,
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    responses = [r async for r in call(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))]
    return {service.name for service in responses[0].list_services_response.service}


async def _check(channel: grpc.aio.Channel, caplog: pytest.LogCaptureFixture, expected: str) -> None:
    caplog.set_level(logging.DEBUG)
    for method in METHODS:
        for body in GARBAGE:
            error = await _refused(channel, method, body)
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (method, body, error)
            assert "ServerReflectionRequest" in (error.details() or "")
            assert "cannot be decoded" in (error.details() or "")
            status = rpc_status.from_call(error)  # type: ignore[arg-type]
            assert status is not None
            info = error_details_pb2.ErrorInfo()
            assert status.details[0].Unpack(info)
            assert (info.reason, info.domain) == ("MALFORMED", "kutnahora.v1")
        assert expected in await _still_answers(channel, method)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not errors, [r.getMessage()[:200] for r in errors]


async def test_game_server_reflection_refuses_undecodable_bytes(
    start_server: StartServer, caplog: pytest.LogCaptureFixture
) -> None:
    _, client = await start_server()
    await _check(client.channel, caplog, "kutnahora.v1.GameService")


async def test_arena_reflection_refuses_undecodable_bytes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    arena, port = await create_arena("127.0.0.1:0", ArenaConfig(servers=[], db=str(tmp_path / "arena.db")))
    await arena.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            await _check(channel, caplog, "kutnahora.v1.ArenaService")
    finally:
        await arena.stop(0.5)
