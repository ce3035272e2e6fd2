"""Per-caller quotas, tried as an attacker would: one caller that fills its quota of unfinished games and
hammers CreateGame and JoinGame leaves another caller able to create and play a whole game; refusals are
RESOURCE_EXHAUSTED with a reason and a parsable RetryInfo, store nothing, and are counted; a game nobody
joins frees its creator's place after the waiting timeout; the tables stay bounded whoever calls.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import grpc.aio
import pytest
from prometheus_client import CollectorRegistry, Counter

from kutnahora.plumbing.callers import RateLimiter, parse_exempt, parse_networks, peer_address
from kutnahora.server.config import Quotas, ServerConfig
from kutnahora.server.main import build_parser, config_from_args
from kutnahora.server.quotas import CallerQuotas
from kutnahora.v1 import game_pb2, game_service_pb2
from tests.server.conftest import Client, StartServer, bearer, play_game
from tests.status_details import refusal

ADMIN = "admin-secret-token"
QUOTA_TOKEN = "arena-quota-token"


def create_request(players: int = 2) -> game_service_pb2.CreateGameRequest:
    return game_service_pb2.CreateGameRequest(options=game_pb2.GameOptions(players=players))


async def stored_games(client: Client) -> int:
    listed = await client.games.ListGames(game_service_pb2.ListGamesRequest(page_size=500))
    return len(listed.games)


def refused_count(server: object, limit: str) -> float:
    registry = server.metrics.registry  # type: ignore[attr-defined]
    return registry.get_sample_value("kutnahora_limit_refusals_total", {"limit": limit}) or 0.0


async def attacker_on_socket(
    start_server: StartServer, tmp_path: Path, quotas: Quotas, **changes: object
) -> tuple[object, Client, Client]:
    """A server whose Unix socket serves the attacker and whose TCP port serves another caller."""
    socket = tmp_path / "server.sock"
    server, victim = await start_server(quotas=quotas, unix_socket=str(socket), **changes)
    channel = grpc.aio.insecure_channel(f"unix:{socket}")
    return server, Client(channel), victim


async def test_a_caller_filling_its_quota_leaves_another_able_to_create_and_play(
    start_server: StartServer, tmp_path: Path
) -> None:
    quotas = Quotas(caller_games=3, caller_rate=0.001, caller_burst=12, exempt=())
    server, attacker, victim = await attacker_on_socket(start_server, tmp_path, quotas)
    try:
        for _ in range(3):
            await attacker.games.CreateGame(create_request())
        before = await stored_games(victim)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await attacker.games.CreateGame(create_request())
        error = caught.value
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "unix already holds 3 unfinished games" in (error.details() or "")
        info, delay = refusal(error)
        assert info.reason == "QUOTA_EXCEEDED"
        assert dict(info.metadata) == {"quota": "caller_games", "limit": "3", "caller": "unix"}
        assert delay is not None and 1 <= delay <= 60
        assert await stored_games(victim) == before, "a refused CreateGame stored a game"
        assert server.hub.quotas.held("unix") == 3  # type: ignore[attr-defined]
        assert refused_count(server, "caller_games") == 1

        # Hammering: seat_names games, joins of its own games; all refused once the bucket is empty.
        waiting = (await attacker.games.ListGames(game_service_pb2.ListGamesRequest())).games[0].game_id
        codes = []
        for attempt in range(40):
            try:
                if attempt % 2:
                    await attacker.games.JoinGame(game_service_pb2.JoinGameRequest(game_id=waiting, name="x"))
                else:
                    await attacker.games.CreateGame(create_request())
                codes.append("OK")
            except grpc.aio.AioRpcError as failed:
                codes.append(refusal(failed)[0].reason)
                last = failed
        assert codes.count("RATE_LIMITED") >= 40 - 12 + 2, codes  # 12 in the burst, 4 taken before
        info, delay = refusal(last)
        assert info.reason == "RATE_LIMITED" and info.metadata["quota"] == "caller_rate"
        assert delay is not None and delay > 1, "the delay is the time until the bucket holds a call"
        assert refused_count(server, "caller_rate") == codes.count("RATE_LIMITED")
        assert await stored_games(victim) == before

        # The other caller creates a game, joins its seats and plays it to the end.
        game_id, tokens, _ = await victim.new_game(players=3, seed=7)
        ended = await play_game(victim, game_id, tokens, seed=7)
        assert len(ended) == 3
        summary = (await victim.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id))).game
        assert summary.status == game_pb2.GAME_STATUS_FINISHED
        assert server.hub.quotas.held("ipv4:127.0.0.1") == 0  # type: ignore[attr-defined]  # its game ended
    finally:
        await attacker.channel.close()


async def test_a_game_nobody_joins_frees_its_creators_place(
    start_server: StartServer, tmp_path: Path
) -> None:
    quotas = Quotas(caller_games=1, exempt=())
    server, attacker, _ = await attacker_on_socket(
        start_server, tmp_path, quotas, waiting_timeout_seconds=0.2, idle_timeout_seconds=0
    )
    try:
        created = await attacker.games.CreateGame(create_request())
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await attacker.games.CreateGame(create_request())
        assert refusal(caught.value)[0].reason == "QUOTA_EXCEEDED"
        await asyncio.sleep(0.25)  # past the waiting timeout
        await server.hub.sweep_idle()  # type: ignore[attr-defined]  # or the background sweep was first
        request = game_service_pb2.GetGameRequest(game_id=created.game.game_id)
        game = (await attacker.games.GetGame(request)).game
        assert game.status == game_pb2.GAME_STATUS_ABANDONED
        assert "players to join" in game.abandon_reason
        assert server.hub.quotas.held("unix") == 0  # type: ignore[attr-defined]
        await attacker.games.CreateGame(create_request())  # its place is free again
    finally:
        await attacker.channel.close()


async def test_a_game_that_ends_frees_its_creators_place(start_server: StartServer, tmp_path: Path) -> None:
    quotas = Quotas(caller_games=1, exempt=())
    server, attacker, _ = await attacker_on_socket(start_server, tmp_path, quotas)
    try:
        created = await attacker.games.CreateGame(create_request())
        await attacker.games.AbandonGame(
            game_service_pb2.AbandonGameRequest(game_id=created.game.game_id),
            metadata=bearer(created.game_token),
        )
        assert server.hub.quotas.held("unix") == 0  # type: ignore[attr-defined]
        second = await attacker.games.CreateGame(create_request())
        tokens = {}
        for seat in range(2):
            joined = await attacker.games.JoinGame(
                game_service_pb2.JoinGameRequest(game_id=second.game.game_id, seat=seat)
            )
            tokens[seat] = joined.seat_token
        await play_game(attacker, second.game.game_id, tokens, seed=3)
        assert server.hub.quotas.held("unix") == 0  # type: ignore[attr-defined]
    finally:
        await attacker.channel.close()


async def test_the_admin_token_and_the_quota_token_are_not_counted(
    start_server: StartServer, tmp_path: Path
) -> None:
    quotas = Quotas(caller_games=1, caller_rate=0.001, caller_burst=2, exempt=(), token=QUOTA_TOKEN)
    server, attacker, _ = await attacker_on_socket(start_server, tmp_path, quotas, admin_token=ADMIN)
    try:
        for token in (ADMIN, QUOTA_TOKEN):
            for _ in range(4):
                await attacker.games.CreateGame(create_request(), metadata=bearer(token))
        await attacker.games.CreateGame(create_request())  # counted: its one place
        for wrong in ("not-the-token", QUOTA_TOKEN + "x"):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await attacker.games.CreateGame(create_request(), metadata=bearer(wrong))
            assert refusal(caught.value)[0].reason in ("QUOTA_EXCEEDED", "RATE_LIMITED")
        assert server.hub.quotas.callers()[0] == 1  # type: ignore[attr-defined]
    finally:
        await attacker.channel.close()


async def test_loopback_is_exempt_by_default_and_counted_when_not(start_server: StartServer) -> None:
    _, exempt = await start_server(quotas=Quotas(caller_games=1))
    for _ in range(3):
        await exempt.games.CreateGame(create_request())
    server, counted = await start_server(quotas=Quotas(caller_games=1, exempt=("unix",)))
    await counted.games.CreateGame(create_request())
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await counted.games.CreateGame(create_request())
    assert refusal(caught.value)[0].metadata["caller"] == "ipv4:127.0.0.1"
    assert refused_count(server, "caller_games") == 1


def test_callers_are_addresses_without_ports_and_ipv6_by_64() -> None:
    quotas = CallerQuotas(5, 1.0, 5, parse_exempt("loopback,10.0.0.0/8"), ("t",), refused_counter())
    assert quotas.caller("ipv4:203.0.113.7:5000", None).key == "ipv4:203.0.113.7"
    assert quotas.caller("ipv4:203.0.113.7:5001", None) == quotas.caller("ipv4:203.0.113.7:9", None)
    one = quotas.caller("ipv6:%5B2001:db8:1:2:aaaa::1%5D:443", None)
    other = quotas.caller("ipv6:[2001:db8:1:2:bbbb::9]:80", None)
    assert one == other and one.key == "ipv6:2001:db8:1:2::/64" and not one.exempt
    assert quotas.caller("ipv6:[2001:db8:1:3::1]:80", None) != one
    assert quotas.caller("ipv6:%5B::ffff:198.51.100.4%5D:1", None).key == "ipv4:198.51.100.4"
    assert quotas.caller("unix:", None).key == "unix" and not quotas.caller("unix:", None).exempt
    assert quotas.caller("ipv4:127.0.0.1:1", None).exempt
    assert quotas.caller("ipv6:%5B::1%5D:1", None).exempt
    assert quotas.caller("ipv4:10.9.8.7:1", None).exempt
    assert quotas.caller("ipv4:203.0.113.7:1", "t").exempt
    assert not quotas.caller("ipv4:203.0.113.7:1", "u").exempt
    assert peer_address("unix:/tmp/x") is None and peer_address("garbage") is None


def refused_counter() -> Counter:
    return Counter("refused_total", "refusals", ["limit"], registry=CollectorRegistry())


async def test_a_crowd_of_callers_cannot_grow_the_tables() -> None:
    counter = refused_counter()
    quotas = CallerQuotas(2, 1.0, 3, (), (), counter, max_callers=1000)
    for n in range(20_000):
        caller = quotas.caller(f"ipv4:10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}:1", None)
        await quotas.check_rate(caller, "CreateGame")
        # refused later (say the store failed): nothing is held
        quotas.unreserve(await quotas.reserve(caller))
    assert quotas.callers() == (0, 1000)
    # A caller holding games is remembered while it holds them, and forgotten once they end.
    caller = quotas.caller("ipv4:192.0.2.1:1", None)
    quotas.bind(await quotas.reserve(caller), "g1")
    quotas.bind(await quotas.reserve(caller), "g2")
    with pytest.raises(Exception, match="already holds 2"):
        await quotas.reserve(caller)
    quotas.release("g1")
    quotas.release("g1")  # twice: nothing more is given back
    assert quotas.held(caller.key) == 1
    quotas.release("g2")
    assert quotas.callers()[0] == 0


def test_the_rate_says_when_to_ask_again() -> None:
    now = [100.0]
    limiter = RateLimiter(2.0, 3, clock=lambda: now[0], max_keys=10)
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a") == pytest.approx(0.5)
    now[0] += 0.5
    assert limiter.take("a") == 0.0
    assert limiter.take("b") == 0.0  # another key has its own bucket


def test_the_settings_read_their_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUTNAHORA_CALLER_GAMES", "7")
    monkeypatch.setenv("KUTNAHORA_CALLER_RATE", "0.5")
    monkeypatch.setenv("KUTNAHORA_QUOTA_EXEMPT", "unix, 192.0.2.0/24")
    monkeypatch.setenv("KUTNAHORA_WAITING_TIMEOUT", "120")
    config: ServerConfig = config_from_args(build_parser().parse_args([]))
    assert (config.quotas.caller_games, config.quotas.caller_rate) == (7, 0.5)
    assert config.quotas.exempt == ("unix", "192.0.2.0/24")
    assert config.quotas.trusted_proxies == ()
    monkeypatch.setenv("KUTNAHORA_TRUSTED_PROXIES", "10.0.0.0/8, 2001:db8::1")
    config = config_from_args(build_parser().parse_args([]))
    assert [str(n) for n in config.quotas.trusted_proxies] == ["10.0.0.0/8", "2001:db8::1/128"]
    assert config.waiting_timeout_seconds == 120
    assert parse_exempt("none") == ()
    with pytest.raises(ValueError, match="not loopback, unix"):
        parse_exempt("loopback,everyone")


def test_a_trusted_proxy_s_forwarded_address_is_the_caller_and_nobody_else_s() -> None:
    """Behind a reverse proxy every call has the proxy's address: from a --trusted-proxies address, the
    caller is the right-most x-forwarded-for entry that is no trusted proxy; from anyone else the header is
    a stranger's own words and ignored."""
    quotas = CallerQuotas(
        5,
        1.0,
        5,
        parse_exempt("loopback"),
        (),
        refused_counter(),
        trusted_proxies=parse_networks("10.0.0.0/8"),
    )
    proxy, stranger = "ipv4:10.1.2.3:40000", "ipv4:203.0.113.7:5000"
    assert quotas.caller(proxy, None, ["198.51.100.4"]).key == "ipv4:198.51.100.4"
    # A caller writing its own header before the proxy appends the address it saw: the left is not believed.
    assert quotas.caller(proxy, None, ["127.0.0.1, 192.0.2.66"]).key == "ipv4:192.0.2.66"
    assert quotas.caller(proxy, None, ["127.0.0.1", "192.0.2.66"]).key == "ipv4:192.0.2.66"
    assert not quotas.caller(proxy, None, ["127.0.0.1, 192.0.2.66"]).exempt, "a spoofed loopback exempts not"
    # A chain of trusted proxies: the first untrusted hop from the right.
    assert quotas.caller(proxy, None, ["192.0.2.66, 10.4.4.4, 10.5.5.5"]).key == "ipv4:192.0.2.66"
    assert quotas.caller(proxy, None, ["[2001:db8:7:7::1]"]).key == "ipv6:2001:db8:7:7::/64"
    # No header, or garbage before the caller's entry: the call is the proxy's own.
    assert quotas.caller(proxy, None).key == "ipv4:10.1.2.3"
    assert quotas.caller(proxy, None, ["192.0.2.66, proxy.internal"]).key == "ipv4:10.1.2.3"
    # Not from a trusted proxy: the header changes nothing.
    assert quotas.caller(stranger, None, ["198.51.100.4"]).key == "ipv4:203.0.113.7"
    assert quotas.caller("ipv4:127.0.0.1:9", None, ["198.51.100.4"]).exempt, (
        "loopback, not trusted, as itself"
    )
    untrusting = CallerQuotas(5, 1.0, 5, (), (), refused_counter())
    assert untrusting.caller(proxy, None, ["198.51.100.4"]).key == "ipv4:10.1.2.3", "none trusted by default"
    # A header of thousands of entries is read from the right, at most FORWARDED_MOST of them.
    long = ", ".join(["10.9.9.9"] * 5000 + ["192.0.2.1"])
    assert quotas.caller(proxy, None, [long]).key == "ipv4:192.0.2.1"
    assert quotas.caller(proxy, None, ["192.0.2.1, " + ", ".join(["10.9.9.9"] * 5000)]).key == "ipv4:10.9.9.9"


async def test_behind_a_trusted_proxy_each_forwarded_caller_has_its_own_quota(
    start_server: StartServer,
) -> None:
    """On the live server: a proxy on loopback forwards two callers, each with its one place; a caller
    named again is refused by its own name; without --trusted-proxies the same calls are all loopback's."""
    quotas = Quotas(caller_games=1, exempt=(), trusted_proxies=parse_networks("127.0.0.1"))
    server, proxy = await start_server(quotas=quotas)

    def forwarded(*entries: str) -> tuple[tuple[str, str], ...]:
        return tuple(("x-forwarded-for", entry) for entry in entries)

    await proxy.games.CreateGame(create_request(), metadata=forwarded("198.51.100.7"))
    await proxy.games.CreateGame(create_request(), metadata=forwarded("198.51.100.8"))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await proxy.games.CreateGame(create_request(), metadata=forwarded("203.0.113.1, 198.51.100.7"))
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert refusal(caught.value)[0].metadata["caller"] == "ipv4:198.51.100.7"
    assert "ipv4:198.51.100.7" in (caught.value.details() or "")
    assert server.hub.quotas.callers()[0] == 2  # type: ignore[attr-defined]

    server, direct = await start_server(quotas=Quotas(caller_games=1, exempt=()))
    await direct.games.CreateGame(create_request(), metadata=forwarded("198.51.100.7"))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await direct.games.CreateGame(create_request(), metadata=forwarded("198.51.100.8"))
    assert refusal(caught.value)[0].metadata["caller"] == "ipv4:127.0.0.1", "a stranger's header is ignored"
