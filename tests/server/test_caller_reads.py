"""Per-caller reads and open streams, tried as an attacker would: a caller flooding reads, or holding
every stream it may, is refused RESOURCE_EXHAUSTED with a reason and a RetryInfo while another caller
reads and watches on; on the exempt loopback, where the tournament runner's gateways reach the server,
each seat's calls are counted as that seat's, so one hosted bot cannot spend what the others need.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import grpc.aio
import pytest

from kutnahora.clients import sdk
from kutnahora.plumbing import auth
from kutnahora.plumbing.callers import Caller, credited
from kutnahora.server.config import Quotas
from kutnahora.server.quotas import credential
from kutnahora.v1 import game_service_pb2, play_service_pb2
from tests.server.conftest import Client, StartServer, bearer
from tests.server.test_quotas import refused_count
from tests.status_details import refusal

QUOTA = "a-quota-token-for-services"


async def socket_client(tmp_path: Path) -> Client:
    return Client(grpc.aio.insecure_channel(f"unix:{tmp_path / 'server.sock'}"))


async def reads_refused(
    client: Client, game_id: str, count: int, token: str = "", seat: int | None = None
) -> list[str]:
    """``count`` GetGame and GetObservation calls, alternately: each one's outcome (OK or the reason)."""
    metadata = bearer(token) if token else None
    outcomes = []
    for attempt in range(count):
        try:
            if attempt % 2:
                request = play_service_pb2.GetObservationRequest(game_id=game_id)
                if seat is not None:
                    request.seat = seat
                await client.play.GetObservation(request, metadata=metadata)
            else:
                await client.games.GetGame(
                    game_service_pb2.GetGameRequest(game_id=game_id), metadata=metadata
                )
            outcomes.append("OK")
        except grpc.aio.AioRpcError as error:
            outcomes.append(refusal(error)[0].reason)
    return outcomes


async def test_a_caller_flooding_reads_is_refused_while_another_reads_on(
    start_server: StartServer, tmp_path: Path
) -> None:
    quotas = Quotas(caller_reads=1.0, caller_read_burst=5, exempt=())
    server, attacker = await start_server(quotas=quotas, unix_socket=str(tmp_path / "server.sock"))
    victim = await socket_client(tmp_path)
    try:
        game_id, _, _ = await victim.new_game()
        outcomes = await reads_refused(attacker, game_id, 30)
        assert outcomes[:5] == ["OK"] * 5 and outcomes.count("RATE_LIMITED") >= 24, outcomes
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await attacker.games.ListGames(game_service_pb2.ListGamesRequest())
        error = caught.value
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "ipv4:127.0.0.1 made more reads than its 1 per second allow" in (error.details() or "")
        info, delay = refusal(error)
        assert dict(info.metadata) == {"quota": "caller_reads", "caller": "ipv4:127.0.0.1"}
        assert delay is not None and 0 < delay <= 1.0
        assert refused_count(server, "caller_reads") == outcomes.count("RATE_LIMITED") + 1
        # the other caller reads every kind of read on
        assert await reads_refused(victim, game_id, 4) == ["OK"] * 4
        await victim.games.GetComponents(game_service_pb2.GetComponentsRequest())
    finally:
        await victim.channel.close()


async def test_loopback_reads_are_counted_by_the_seat_their_token_proves(start_server: StartServer) -> None:
    _, client = await start_server(quotas=Quotas(caller_reads=1.0, caller_read_burst=5))
    game_id, tokens, game_token = await client.new_game()
    flood = await reads_refused(client, game_id, 20, tokens[0], seat=0)
    assert flood[:5] == ["OK"] * 5 and flood.count("RATE_LIMITED") >= 14, flood
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.games.GetGame(
            game_service_pb2.GetGameRequest(game_id=game_id), metadata=bearer(tokens[0])
        )
    assert refusal(caught.value)[0].metadata["caller"] == f"seat:{game_id}/0"
    # the other seat, on the same address, has its own allowance; so has the game's token
    assert await reads_refused(client, game_id, 5, tokens[1], seat=1) == ["OK"] * 5
    assert await reads_refused(client, game_id, 5, game_token) == ["OK"] * 5
    # a call that proves nothing from the exempt loopback is the host's own (a web front end): not counted
    assert await reads_refused(client, game_id, 30) == ["OK"] * 30
    assert await reads_refused(client, game_id, 10, "not-a-token") == ["OK"] * 10


async def test_socket_reads_that_prove_nothing_share_their_game_s_allowance(
    start_server: StartServer, tmp_path: Path
) -> None:
    """Behind the Unix socket (the seat gateways' way to the server), a bot that leaves its token out
    spends only its own game's anonymous allowance, and no other game's nor any seat's."""
    quotas = Quotas(caller_reads=1.0, caller_read_burst=5)
    _, owner = await start_server(quotas=quotas, unix_socket=str(tmp_path / "server.sock"))
    bots = await socket_client(tmp_path)
    try:
        game_id, tokens, _ = await owner.new_game()
        other_game, other_tokens, _ = await owner.new_game(seed=2)
        anonymous = await reads_refused(bots, game_id, 20, "not-a-token")
        assert anonymous[:5] == ["OK"] * 5 and anonymous.count("RATE_LIMITED") >= 14, anonymous
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await bots.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))
        assert refusal(caught.value)[0].metadata["caller"] == f"anonymous:{game_id}"
        assert await reads_refused(bots, game_id, 5, tokens[0], seat=0) == ["OK"] * 5
        assert await reads_refused(bots, other_game, 5) == ["OK"] * 5
        assert await reads_refused(bots, other_game, 5, other_tokens[1], seat=1) == ["OK"] * 5
        # reads of no game (answered from bytes built once) are not counted: they prove nothing
        for _ in range(20):
            await bots.games.GetComponents(game_service_pb2.GetComponentsRequest())
    finally:
        await bots.channel.close()


async def open_watch(
    client: Client, game_id: str, seat: int | None = None, token: str = ""
) -> grpc.aio.UnaryStreamCall:  # type: ignore[type-arg]
    """A WatchGame stream that has sent its first message (so it holds its place), or the refusal."""
    request = play_service_pb2.WatchGameRequest(game_id=game_id)
    if seat is not None:
        request.seat = seat
    call = client.play.WatchGame(request, metadata=bearer(token) if token else None)
    await call.read()
    return call


async def test_a_caller_holding_its_streams_is_refused_another_while_others_watch(
    start_server: StartServer, tmp_path: Path
) -> None:
    quotas = Quotas(caller_streams=2, exempt=())
    server, attacker = await start_server(quotas=quotas, unix_socket=str(tmp_path / "server.sock"))
    victim = await socket_client(tmp_path)
    try:
        game_id, _, _ = await victim.new_game()
        held = [await open_watch(attacker, game_id) for _ in range(2)]
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await open_watch(attacker, game_id)
        error = caught.value
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "already holds 2 open Play and WatchGame streams" in (error.details() or "")
        info, delay = refusal(error)
        assert info.reason == "QUOTA_EXCEEDED"
        assert dict(info.metadata) == {"quota": "caller_streams", "limit": "2", "caller": "ipv4:127.0.0.1"}
        assert delay is not None and delay > 0
        assert refused_count(server, "caller_streams") == 1
        watching = [await open_watch(victim, game_id) for _ in range(2)]  # the other caller's own two
        held[0].cancel()
        for _ in range(100):  # the server sees the cancellation soon after
            if server.hub.quotas.streams("ipv4:127.0.0.1") < 2:  # type: ignore[attr-defined]
                break
            await asyncio.sleep(0.01)
        held.append(await open_watch(attacker, game_id))
        for call in held + watching:
            call.cancel()
    finally:
        await victim.channel.close()


async def test_loopback_streams_are_counted_by_the_seat_their_token_proves(start_server: StartServer) -> None:
    server, client = await start_server(quotas=Quotas(caller_streams=1))
    game_id, tokens, _ = await client.new_game()
    first = await open_watch(client, game_id, 0, tokens[0])
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await open_watch(client, game_id, 0, tokens[0])
    assert refusal(caught.value)[0].metadata == {
        "quota": "caller_streams",
        "limit": "1",
        "caller": f"seat:{game_id}/0",
    }
    others = [await open_watch(client, game_id, 1, tokens[1])]
    others += [await open_watch(client, game_id) for _ in range(3)]  # its address's: exempt
    assert server.hub.quotas.streams(f"seat:{game_id}/0") == 1  # type: ignore[attr-defined]
    for call in [first, *others]:
        call.cancel()


def test_only_a_caller_whose_address_tells_nobody_apart_is_credited() -> None:
    seat_hashes = [auth.token_hash("seat-0"), auth.token_hash("seat-1")]
    game_hash = auth.token_hash("game")
    assert credential("g", "seat-1", game_hash, seat_hashes) == "seat:g/1"
    assert credential("g", "game", game_hash, seat_hashes) == "game:g"
    assert credential("g", "guess", game_hash, seat_hashes) is None
    assert credential("g", None, game_hash, seat_hashes) is None
    loopback, unix = Caller("ipv4:127.0.0.1", True), Caller("unix", False)
    public, token = Caller("ipv4:203.0.113.7", False), Caller("token", True)
    assert credited(loopback, "seat:g/1") == Caller("seat:g/1", False)
    assert credited(unix, "seat:g/1") == Caller("seat:g/1", False)
    assert credited(loopback, None) == loopback
    assert credited(public, "seat:g/1") == public  # its address counts; a seat cannot buy it more
    assert credited(token, "seat:g/1") == token  # the quota token is never counted


async def test_a_service_s_quota_token_beside_a_seat_s_keeps_its_visitors_uncounted(
    start_server: StartServer,
) -> None:
    """A web front end on another host acts for many visitors: with the server's quota token (sent by the
    SDK in kutnahora-quota-token, beside a visitor's seat token) none of its reads or streams is counted;
    with a wrong one, or none, they are its address's."""
    quotas = Quotas(caller_reads=1.0, caller_read_burst=3, caller_streams=1, exempt=(), token=QUOTA)
    server, _ = await start_server(quotas=quotas)
    address = f"127.0.0.1:{server.port}"
    assert sdk.QUOTA_KEY == auth.QUOTA_KEY
    async with sdk.Client(address, quota_token=QUOTA) as web:
        created = await web.create_game(2)
        game_id = created.game.game_id
        seat = await web.join_game(game_id, 0, "visitor")
        await web.join_game(game_id, 1, "other")
        for _ in range(10):
            await web.get_game(game_id)
            await web.observe(game_id)
            await web.observe(game_id, seat)
        streams = [web.watch(game_id), web.watch(game_id, seat)]
        for stream in streams:
            await anext(stream)
        for stream in streams:
            await stream.aclose()
    async with sdk.Client(address, quota_token="not-the-token", retry_refused=False) as other:
        with pytest.raises(sdk.ClientError) as caught:
            for _ in range(10):
                await other.get_game(game_id)
        assert caught.value.reason == "RATE_LIMITED"
