"""TLS when given a certificate and key; the per-connection rate limit on the Play stream."""

from __future__ import annotations

from pathlib import Path

import grpc
import grpc.aio
import pytest

from kutnahora.server.config import Limits, ServerConfig
from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2
from tests.certificates import make_certificate, needs_openssl
from tests.server.conftest import NO_CLOCK, Client, StartServer, bearer


@needs_openssl
async def test_the_server_speaks_tls_with_a_certificate_and_key(
    start_server: StartServer, tmp_path: Path
) -> None:
    key, cert = make_certificate(tmp_path)
    server, _ = await start_server(
        ServerConfig.in_memory(clock=NO_CLOCK, tls_cert=str(cert), tls_key=str(key))
    )
    credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
    async with grpc.aio.secure_channel(f"localhost:{server.port}", credentials) as channel:
        client = Client(channel)
        created = await client.games.CreateGame(
            game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=2))
        )
        assert created.game.game_id
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as plain:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await Client(plain).games.GetComponents(game_service_pb2.GetComponentsRequest(), timeout=2)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_the_rate_limit_refuses_stream_messages_without_closing_the_stream(
    start_server: StartServer,
) -> None:
    _, client = await start_server(
        ServerConfig.in_memory(clock=NO_CLOCK, limits=Limits(rate_per_second=0.5, rate_burst=8))
    )
    game_id, tokens, _ = await client.new_game(players=2, seed=3)  # three calls of the burst
    seat = (await client.observe(game_id)).pending.seat  # four
    call = client.play.Play(metadata=bearer(tokens[seat]))
    await call.write(
        play_service_pb2.PlayRequest(start=play_service_pb2.PlayStart(game_id=game_id, seat=seat))
    )
    turn = await call.read()  # the stream itself is one call
    version = turn.your_turn.observation.version
    reasons = []
    for _ in range(5):
        await call.write(
            play_service_pb2.PlayRequest(
                decision=play_service_pb2.PlayDecision(
                    version=version, answer=game_pb2.Answer(option_index=99)
                )
            )
        )
        reasons.append((await call.read()).rejected.reason)
    assert reasons[-1] == game_pb2.REJECT_REASON_RATE_LIMITED
    assert game_pb2.REJECT_REASON_NOT_AN_OPTION in reasons
    call.cancel()
