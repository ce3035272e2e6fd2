"""The seat gateway gives the credentials: every call a hosted bot makes reaches the server with its own
seat's token, whatever the bot sent.

A real ``kutnahora-server`` on loopback (an exempt address, where the runner and the workers stand) with a
small per-caller read rate; two seats of one game, each behind a gateway that knows its seat's token. A
bot that floods reads without a token is counted as its own seat and refused by the server past the rate,
while the other seat's reads go on; a bot that sends another seat's token (stolen, say) cannot use it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from kutnahora.clients.sdk import Client, error_info
from kutnahora.hosting.gateway import SeatGateway
from kutnahora.v1 import game_service_pb2, play_service_pb2

from ..clients.helpers import SERVER_FLAGS, start_process, stop_process

GET_GAME = "/kutnahora.v1.GameService/GetGame"
OBSERVE = "/kutnahora.v1.PlayService/GetObservation"


@pytest.fixture(scope="module")
def slow_reads_server() -> Iterator[str]:
    """A server whose callers may read 1 a second, 5 at once."""
    process, address = start_process(
        "kutnahora.server.main",
        "--host",
        "127.0.0.1",
        *SERVER_FLAGS,
        "--caller-reads",
        "1",
        "--caller-read-burst",
        "5",
    )
    try:
        yield address
    finally:
        stop_process(process)


async def test_reads_without_a_token_count_as_the_bots_seat_and_a_stolen_token_is_not_used(
    slow_reads_server: str, tmp_path: Path
) -> None:
    client = await Client.connect(slow_reads_server)
    created = await client.create_game(2, seed=5)
    game_id = created.game.game_id
    seats = [await client.join_game(game_id, seat, f"s{seat}") for seat in range(2)]
    gateways = [
        SeatGateway(tmp_path / f"seat{s.seat}.sock", slow_reads_server, [game_id], seat_token=s.token)
        for s in seats
    ]
    channels: list[grpc.aio.Channel] = []
    try:
        for gateway in gateways:
            await gateway.start()
            channels.append(grpc.aio.insecure_channel(f"unix:{gateway.socket}"))
        # Seat 0's bot offers seat 1's token to read seat 1's observation: its own token goes instead.
        stolen = play_service_pb2.GetObservationRequest(game_id=game_id, seat=1).SerializeToString()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await channels[0].unary_unary(OBSERVE)(
                stolen, metadata=(("authorization", f"Bearer {seats[1].token}"),), timeout=5
            )
        assert caught.value.code() in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED)
        # Through its own gateway, seat 1 reads its own observation with no token sent at all.
        await channels[1].unary_unary(OBSERVE)(stolen, timeout=5)
        read = game_service_pb2.GetGameRequest(game_id=game_id).SerializeToString()
        answered = 0
        refusal: grpc.aio.AioRpcError | None = None
        for _ in range(20):  # no token sent: the gateway sends seat 0's
            try:
                await channels[0].unary_unary(GET_GAME)(read, timeout=5)
                answered += 1
            except grpc.aio.AioRpcError as error:
                refusal = error
                break
        assert refusal is not None, "a tokenless read flood through the gateway was never limited"
        assert refusal.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        info = error_info(refusal)
        assert info is not None and info.reason == "RATE_LIMITED"
        assert 1 <= answered <= 6  # the burst, and what refilled meanwhile
        # The other seat is another caller: its reads are not the flooder's to spend.
        await channels[1].unary_unary(GET_GAME)(read, timeout=5)
    finally:
        for channel in channels:
            await channel.close()
        for gateway in gateways:
            await gateway.stop()
        await client.close()
