"""Floods of the arena's other calls, tried as an attacker would: one caller calling any ``ArenaService``
RPC as fast as it can (reading leaderboards and profiles, guessing keys, opening Seek and StreamEvents
streams) is refused RESOURCE_EXHAUSTED (RATE_LIMITED, a RetryInfo, the quota and the caller) once its
burst is spent, while another caller is served; the admin token and exempt callers are never counted;
a caller holding its cap of open streams cannot open another, even all at once, until it closes one;
every refusal is counted, and logged once per caller and limit a minute. A few well-behaved bots on one
address play under the default limits without a refusal. The arenas here are configured through
``kutnahora-arena``'s own parser, with ``--quota-exempt none`` so that loopback callers count; the other
caller is the Unix socket's, ``unix``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from rich.console import Console

from kutnahora.arena.app import Arena
from kutnahora.arena.main import build_parser, config_from_args
from kutnahora.arena.quotas import LOG_INTERVAL, ArenaQuotas
from kutnahora.clients.bots.arena import play_rated
from kutnahora.clients.bots.random_bot import RandomBot
from kutnahora.plumbing.callers import parse_exempt
from kutnahora.plumbing.errors import ServiceError
from kutnahora.v1 import arena_service_pb2 as pb
from tests.arena.conftest import StartArena, stub, two_callers
from tests.frozen_client import FROZEN_ARENA_WATCHER, frozen
from tests.silent_connection import OPENED, PREFACE_BEGUN, closed_after
from tests.status_details import refusal

ADMIN = "arena-admin-secret"
ATTACKER = "ipv4:127.0.0.1"
WRONG_KEY = (("authorization", "Bearer not-a-key-the-arena-knows"),)


def bearer(key: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {key}"),)


CALLS: dict[str, Callable[[Any, tuple[tuple[str, str], ...]], Any]] = {
    "ListPools": lambda client, auth: client.ListPools(pb.ListPoolsRequest(), metadata=auth),
    "GetLeaderboard": lambda client, auth: client.GetLeaderboard(
        pb.GetLeaderboardRequest(pool="2", page=10**6), metadata=auth
    ),
    "GetBotProfile": lambda client, auth: client.GetBotProfile(
        pb.GetBotProfileRequest(name="nobody"), metadata=auth
    ),
    "RotateKey": lambda client, auth: client.RotateKey(pb.RotateKeyRequest(), metadata=auth),
    "RevokeKey": lambda client, auth: client.RevokeKey(pb.RevokeKeyRequest(), metadata=auth),
    "Seek": lambda client, auth: client.Seek(pb.SeekRequest(pool="2"), metadata=auth),
    "StreamEvents": lambda client, auth: client.StreamEvents(pb.StreamEventsRequest(), metadata=auth),
}
"""One call of each RPC as the attacker makes it: reading what anyone may, or acting with a key it
guessed (answered UNAUTHENTICATED until the rate refuses it)."""


async def finish(call: Any) -> None:
    """Read a call to its end (at most ten seconds: a stream let in would stay open)."""

    async def read() -> None:
        if isinstance(call, grpc.aio.UnaryStreamCall):
            async for _ in call:
                pass
        else:
            await call

    try:
        await asyncio.wait_for(read(), 10)
    except TimeoutError:
        call.cancel()
        raise AssertionError("the call was let in and stayed open") from None


async def attempt(client: Any, rpc: str, auth: tuple[tuple[str, str], ...] = WRONG_KEY) -> grpc.StatusCode:
    """Make one call of ``rpc`` to its end; the status code it ends with."""
    try:
        await finish(CALLS[rpc](client, auth))
    except grpc.aio.AioRpcError as error:
        return error.code()
    return grpc.StatusCode.OK


async def refused(
    client: Any, rpc: str, auth: tuple[tuple[str, str], ...] = WRONG_KEY
) -> grpc.aio.AioRpcError:
    """Make one call of ``rpc`` that the arena refuses RESOURCE_EXHAUSTED; the refusal."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await finish(CALLS[rpc](client, auth))
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, caught.value
    return caught.value


def refusals(arena: Arena, reason: str) -> float:
    registry = arena.metrics.registry
    return registry.get_sample_value("kutnahora_arena_refusals_total", {"reason": reason}) or 0.0


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait (at most ten seconds) until the arena's state says ``condition``."""
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never: {what}")


@pytest.mark.parametrize("rpc", list(CALLS))
async def test_a_flood_of_one_rpc_is_refused_while_another_caller_is_served(
    start_arena: StartArena, tmp_path: Path, rpc: str
) -> None:
    # 0.01 a second: no call comes back into the bucket during the flood.
    arena = await start_arena("--quota-exempt", "none", "--caller-rate", "0.01", "--caller-burst", "5")
    async with two_callers(arena, tmp_path) as (attacker, other):
        codes = [await attempt(attacker, rpc) for _ in range(5)]
        assert grpc.StatusCode.RESOURCE_EXHAUSTED not in codes, codes  # the burst: answered as usual
        for _ in range(12):
            error = await refused(attacker, rpc)
        assert (error.details() or "").startswith(
            f"{rpc} refused: {ATTACKER} made more calls to the arena than its 0.01 per second allow; "
            "try again in "
        ), error.details()
        info, delay = refusal(error)
        assert info.reason == "RATE_LIMITED"
        assert dict(info.metadata) == {"quota": "caller_rate", "caller": ATTACKER}
        assert delay is not None and 90 < delay <= 100, "the delay is the time until the bucket holds a call"
        assert f"try again in {delay:.2f} s" in (error.details() or "")
        assert refusals(arena, "caller_rate") == 12
        assert not arena.lobby.tickets and not arena.lobby._watchers, "a refused stream holds nothing"
        assert arena.servicer.quotas.streams(ATTACKER) == 0

        # Another caller has its own bucket: its whole burst is answered while the attacker is refused.
        assert grpc.StatusCode.RESOURCE_EXHAUSTED not in [await attempt(other, rpc) for _ in range(5)]
        await refused(attacker, rpc)
        assert refusal(await refused(other, rpc))[0].metadata["caller"] == "unix"
        assert refusals(arena, "caller_rate") == 14


async def test_the_calls_of_every_rpc_share_one_bucket(start_arena: StartArena) -> None:
    arena = await start_arena("--quota-exempt", "none", "--caller-rate", "0.01", "--caller-burst", "7")
    async with grpc.aio.insecure_channel(f"127.0.0.1:{arena.port}") as channel:
        attacker = stub(channel)
        for rpc in CALLS:  # one call of each of the seven RPCs spends the burst
            assert await attempt(attacker, rpc) != grpc.StatusCode.RESOURCE_EXHAUSTED, rpc
        for rpc in CALLS:
            await refused(attacker, rpc)
        # RegisterBot has a bucket of its own, not spent by the others.
        await attacker.RegisterBot(pb.RegisterBotRequest(name="still-registers"))


async def test_exempt_callers_and_the_admin_token_are_not_counted(
    start_arena: StartArena, tmp_path: Path
) -> None:
    arena = await start_arena(
        *("--quota-exempt", "unix", "--caller-rate", "0.01", "--caller-burst", "2", "--caller-streams", "1"),
        *("--admin-token", ADMIN),
    )
    async with two_callers(arena, tmp_path) as (tcp, exempt):
        for rpc in CALLS:
            codes = [await attempt(exempt, rpc) for _ in range(4)]
            assert grpc.StatusCode.RESOURCE_EXHAUSTED not in codes, (rpc, codes)
        # The admin token is never counted, from any address; a wrong one is an ordinary call.
        for _ in range(10):
            await tcp.ListPools(pb.ListPoolsRequest(), metadata=bearer(ADMIN))
        codes = [await attempt(tcp, "ListPools", bearer(ADMIN + "x")) for _ in range(4)]
        assert codes == [grpc.StatusCode.OK] * 2 + [grpc.StatusCode.RESOURCE_EXHAUSTED] * 2
        await tcp.ListPools(pb.ListPoolsRequest(), metadata=bearer(ADMIN))  # still, with the bucket empty

        # An exempt caller holds any number of streams; it is not in the table of open streams.
        key = (await exempt.RegisterBot(pb.RegisterBotRequest(name="exempt-bot"))).api_key
        streams = [exempt.StreamEvents(pb.StreamEventsRequest(), metadata=bearer(key)) for _ in range(5)]
        for call in streams:
            await call.initial_metadata()
        await until(lambda: len(arena.lobby._watchers.get(1, ())) == 5, "five event streams open")
        assert arena.servicer.quotas.streams("unix") == 0
        for call in streams:
            call.cancel()
    assert refusals(arena, "caller_rate") == 2 and refusals(arena, "caller_streams") == 0


async def test_a_caller_holding_its_cap_of_streams_opens_another_only_after_closing_one(
    start_arena: StartArena, tmp_path: Path
) -> None:
    arena = await start_arena("--quota-exempt", "none", "--caller-streams", "2", "--pools", "2,3")
    quotas = arena.servicer.quotas
    async with two_callers(arena, tmp_path) as (attacker, other):
        key = (await attacker.RegisterBot(pb.RegisterBotRequest(name="holder"))).api_key
        first = attacker.StreamEvents(pb.StreamEventsRequest(), metadata=bearer(key))
        await first.initial_metadata()
        seek = attacker.Seek(pb.SeekRequest(pool="2"), metadata=bearer(key))
        assert (await seek.read()).HasField("waiting")
        assert quotas.streams(ATTACKER) == 2

        # At its cap, the caller opens nothing more: no event stream, no Seek in another pool.
        for rpc in ("StreamEvents", "Seek"):
            error = await refused(attacker, rpc, bearer(key))
            assert error.details() == (
                f"{rpc} refused: {ATTACKER} already holds 2 open Seek and StreamEvents streams, as many as "
                "one caller may; close one, then try again"
            )
            info, delay = refusal(error)
            assert info.reason == "QUOTA_EXCEEDED" and delay == 10
            assert dict(info.metadata) == {"quota": "caller_streams", "limit": "2", "caller": ATTACKER}
        assert refusals(arena, "caller_streams") == 2
        assert len(arena.lobby.tickets) == 1 and len(arena.lobby._watchers[1]) == 1, "refusals hold nothing"

        # Another caller opens streams, even for the same bot: the cap is the caller's.
        elsewhere = other.StreamEvents(pb.StreamEventsRequest(), metadata=bearer(key))
        await elsewhere.initial_metadata()
        await until(lambda: quotas.streams("unix") == 1, "the other caller's stream counted")

        # Closing one gives its place back.
        first.cancel()
        await until(lambda: quotas.streams(ATTACKER) == 1, "the closed stream given back")
        again = attacker.Seek(pb.SeekRequest(pool="3"), metadata=bearer(key))
        assert (await again.read()).HasField("waiting")
        await refused(attacker, "StreamEvents", bearer(key))
        for call in (seek, again, elsewhere):
            call.cancel()
        await until(
            lambda: quotas.streams(ATTACKER) == quotas.streams("unix") == 0, "every stream given back"
        )
        assert not arena.servicer.quotas._streams, "the table holds only callers with open streams"


async def test_opening_many_streams_at_once_gets_only_the_cap(start_arena: StartArena) -> None:
    arena = await start_arena("--quota-exempt", "none", "--caller-streams", "3")
    async with grpc.aio.insecure_channel(f"127.0.0.1:{arena.port}") as channel:
        attacker = stub(channel)
        key = (await attacker.RegisterBot(pb.RegisterBotRequest(name="crowd-of-one"))).api_key
        calls = [attacker.StreamEvents(pb.StreamEventsRequest(), metadata=bearer(key)) for _ in range(30)]
        ended = {asyncio.ensure_future(call.code()): call for call in calls}
        done: set[asyncio.Future[Any]] = set()
        pending = set(ended)
        while len(done) < 27:  # the refusals end their calls; the three let in stay open
            finished, pending = await asyncio.wait(pending, timeout=30, return_when=asyncio.FIRST_COMPLETED)
            assert finished, f"only {len(done)} of the 27 calls past the cap ended"
            done |= finished
        assert {task.result() for task in done} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
        assert len(done) == 27 and arena.servicer.quotas.streams(ATTACKER) == 3
        await until(lambda: len(arena.lobby._watchers[1]) == 3, "the three let in watching the lobby")
        assert refusals(arena, "caller_streams") == 27
        for call in calls:
            call.cancel()
        for task in pending:
            task.cancel()


async def test_a_frozen_bot_gives_back_its_streams_when_it_misses_a_ping(start_arena: StartArena) -> None:
    """A bot whose process stops with its StreamEvents open (SIGSTOP: its kernel still answers for the
    socket) holds its caller's only stream; the arena's pings find it gone, close its connection, and
    the caller may open a stream again."""
    arena = await start_arena(
        "--quota-exempt", "none", "--caller-streams", "1", "--keepalive", "1", "--keepalive-timeout", "1"
    )
    quotas = arena.servicer.quotas
    async with grpc.aio.insecure_channel(f"127.0.0.1:{arena.port}") as channel:
        client = stub(channel)
        key = (await client.RegisterBot(pb.RegisterBotRequest(name="frozen"))).api_key
        async with frozen(FROZEN_ARENA_WATCHER, f"127.0.0.1:{arena.port}", key):
            assert quotas.streams(ATTACKER) == 1
            held = client.StreamEvents(pb.StreamEventsRequest(), metadata=bearer(key))
            assert await held.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, "the frozen bot holds the cap"
            await until(lambda: quotas.streams(ATTACKER) == 0, "the frozen bot's stream given back")
            again = client.StreamEvents(pb.StreamEventsRequest(), metadata=bearer(key))
            await asyncio.wait_for(again.initial_metadata(), 10)  # live: the arena let it in
            assert quotas.streams(ATTACKER) == 1
            again.cancel()


@pytest.mark.parametrize("sent", [b"", PREFACE_BEGUN], ids=["silent", "preface-begun"])
async def test_a_connection_that_never_completes_its_opening_is_closed(
    start_arena: StartArena, sent: bytes
) -> None:
    """With --handshake-timeout 1 the arena closes a connection that says nothing, or begins HTTP/2's
    preface and stops, after about a second, and still serves a client that speaks."""
    arena = await start_arena("--handshake-timeout", "1")
    took = await closed_after(arena.port, sent, 5)
    assert took is not None and 0.8 <= took < 4
    async with grpc.aio.insecure_channel(f"127.0.0.1:{arena.port}") as channel:
        assert (await stub(channel).ListPools(pb.ListPoolsRequest())).pools


async def test_a_connection_that_holds_no_call_is_closed(start_arena: StartArena) -> None:
    """With --max-connection-idle 1 the arena closes a connection opened without a call after about a
    second (with the default, 300 s, it is open two seconds in); a bot's channel whose connection was
    closed so is served on a new one."""
    arena = await start_arena("--max-connection-idle", "1")
    took = await closed_after(arena.port, OPENED, 5)
    assert took is not None and 0.8 <= took < 4
    async with grpc.aio.insecure_channel(f"127.0.0.1:{arena.port}") as channel:
        assert (await stub(channel).ListPools(pb.ListPoolsRequest())).pools
        for _ in range(50):
            await asyncio.sleep(0.1)
            if channel.get_state() != grpc.ChannelConnectivity.READY:
                break
        assert channel.get_state() == grpc.ChannelConnectivity.IDLE, "closed while it held no call"
        assert (await stub(channel).ListPools(pb.ListPoolsRequest())).pools
    patient = await start_arena()
    assert await closed_after(patient.port, OPENED, 2) is None


async def games_played(arena: Arena, name: str, bots: int, games: int) -> list[int]:
    """Register ``bots`` bots from one address and have each play ``games`` rated games in pool 2 with
    ``kutnahora-bot --arena``'s loop: how many each played."""
    address = f"127.0.0.1:{arena.port}"
    async with grpc.aio.insecure_channel(address) as channel:
        keys = [
            (await stub(channel).RegisterBot(pb.RegisterBotRequest(name=f"{name}-{n}"))).api_key
            for n in range(bots)
        ]
    console = Console(quiet=True)
    played = await asyncio.gather(
        *(play_rated(address, key, ["2"], games, RandomBot, console, quiet=True) for key in keys)
    )
    return [len(outcomes) for outcomes in played]


async def test_a_few_bots_on_one_address_play_under_the_default_limits(start_arena: StartArena) -> None:
    arena = await start_arena("--quota-exempt", "none", "--pools", "2", "--max-wait", "0.5")
    assert await games_played(arena, "polite", 4, 3) == [3] * 4
    assert refusals(arena, "caller_rate") == refusals(arena, "caller_streams") == 0


def logged_quotas(caller_burst: int) -> tuple[ArenaQuotas, list[dict[str, Any]], list[float]]:
    """Quotas of one call a second (``caller_burst`` at once) and one stream per caller, nobody exempt,
    on a clock the test moves (``now[0]``), logging into the list returned."""
    lines: list[dict[str, Any]] = []

    class Log:
        def info(self, event: str, **fields: Any) -> None:
            lines.append({"event": event, **fields})

    now = [0.0]
    quotas = ArenaQuotas(
        register_rate=60,
        register_burst=1,
        caller_rate=1,
        caller_burst=caller_burst,
        caller_streams=1,
        exempt=parse_exempt("none"),
        tokens=(ADMIN,),
        log=Log(),
        clock=lambda: now[0],
    )
    return quotas, lines, now


async def test_each_caller_is_logged_once_a_minute_per_limit() -> None:
    """A flood of refusals makes one log line per caller and limit a minute, which says how many it left
    out; the key is never in it."""
    quotas, lines, now = logged_quotas(caller_burst=2)
    one, two = quotas.caller("ipv4:203.0.113.5:1", "a-bot-key"), quotas.caller("ipv6:[2001:db8::1]:1", None)

    async def flood(action: Callable[[], Awaitable[object]], times: int) -> int:
        refused = 0
        for _ in range(times):
            try:
                await action()
            except ServiceError:
                refused += 1
        return refused

    seeking = await quotas.open_stream(one, "Seek")
    assert await flood(lambda: quotas.open_stream(one, "StreamEvents"), 1) == 1  # past the streams
    assert await flood(lambda: quotas.count_call(one, "GetBotProfile"), 50) == 50  # the calls were spent
    assert await flood(lambda: quotas.count_call(two, "ListPools"), 3) == 1
    assert await flood(lambda: quotas.count_registration(one), 5) == 4
    assert [(line["caller"], line["quota"], line["rpc"]) for line in lines] == [
        ("ipv4:203.0.113.5", "caller_streams", "StreamEvents"),
        ("ipv4:203.0.113.5", "caller_rate", "GetBotProfile"),
        ("ipv6:2001:db8::/64", "caller_rate", "ListPools"),
        ("ipv4:203.0.113.5", "register_rate", "RegisterBot"),
    ]
    assert all(line["event"] == "caller refused" and "left_out" not in line for line in lines)
    assert lines[1]["detail"] == (
        "GetBotProfile refused: ipv4:203.0.113.5 made more calls to the arena than its 1 per second allow; "
        "try again in 1.00 s"
    )
    now[0] += LOG_INTERVAL  # the bucket is full again (two calls), and a line may be written
    assert await flood(lambda: quotas.count_call(one, "RotateKey"), 3) == 1
    assert (lines[-1]["caller"], lines[-1]["rpc"], lines[-1]["left_out"]) == (
        "ipv4:203.0.113.5",
        "RotateKey",
        49,
    )
    assert len(lines) == 5 and not any("a-bot-key" in str(line) for line in lines)
    assert quotas.streams("ipv4:203.0.113.5") == 1
    quotas.close_stream(seeking)
    assert quotas.streams("ipv4:203.0.113.5") == 0


def test_the_settings_read_their_variables_and_refuse_nonsense(monkeypatch: pytest.MonkeyPatch) -> None:
    config = config_from_args(build_parser().parse_args([]))
    assert (config.caller_rate, config.caller_burst, config.caller_streams) == (20.0, 200, 100)
    monkeypatch.setenv("KUTNAHORA_ARENA_CALLER_RATE", "2.5")
    monkeypatch.setenv("KUTNAHORA_ARENA_CALLER_BURST", "30")
    monkeypatch.setenv("KUTNAHORA_ARENA_CALLER_STREAMS", "0")
    config = config_from_args(build_parser().parse_args([]))
    assert (config.caller_rate, config.caller_burst, config.caller_streams) == (2.5, 30, 0)
    assert config.trusted_proxies == ()
    monkeypatch.setenv("KUTNAHORA_ARENA_TRUSTED_PROXIES", "10.0.0.0/8,::1")
    assert [str(n) for n in config_from_args(build_parser().parse_args([])).trusted_proxies] == [
        "10.0.0.0/8",
        "::1/128",
    ]
    config = config_from_args(build_parser().parse_args(["--caller-streams", "7"]))
    assert config.caller_streams == 7, "a flag wins over its variable"
    for flags, said in [
        (["--caller-rate", "-1"], "--caller-rate and --caller-streams must not be negative"),
        (["--caller-streams", "-1"], "--caller-rate and --caller-streams must not be negative"),
        (["--caller-burst", "0"], "--caller-burst must be at least 1"),
        (["--max-connection-idle", "-1"], r"--max-connection-idle must be 0 \(never\) or more seconds"),
        (["--handshake-timeout", "0"], "--handshake-timeout must be more than 0, not 0"),
        (["--keepalive", "-5"], r"--keepalive must be 0 \(no pings\) or more seconds .*, not -5 and 20"),
        (["--keepalive-timeout", "0"], "--keepalive-timeout more than 0, not .* and 0"),
        (
            ["--trusted-proxies", "10.0.0.1,proxy.internal"],
            "--trusted-proxies: 'proxy.internal' is not an IP",
        ),
    ]:
        with pytest.raises(SystemExit, match=said):
            config_from_args(build_parser().parse_args(flags))
    help_text = build_parser().format_help()
    for variable in (
        "KUTNAHORA_ARENA_CALLER_RATE",
        "KUTNAHORA_ARENA_CALLER_BURST",
        "KUTNAHORA_ARENA_CALLER_STREAMS",
    ):
        assert variable in help_text


async def test_a_bot_refused_by_the_callers_rate_waits_its_delay_and_plays_on(
    start_arena: StartArena,
) -> None:
    # A rate so tight that seeking, the event stream and the games' reconnections are refused between
    # games: the bot waits each refusal's RetryInfo out and still plays every game it was asked for.
    arena = await start_arena(
        "--quota-exempt",
        "none",
        "--pools",
        "2",
        "--max-wait",
        "0.5",
        "--caller-rate",
        "2",
        "--caller-burst",
        "3",
    )
    assert await games_played(arena, "eager", 2, 3) == [3, 3]
    assert refusals(arena, "caller_rate") > 0  # they were refused, and played on


async def test_a_crowd_of_callers_refused_at_once_writes_a_bounded_number_of_lines() -> None:
    """Refusals from 500 addresses in one minute (a botnet, or a crowd behind many /64s) write at most 100
    lines; the first line of the next minute says how many lines were left out."""
    quotas, lines, now = logged_quotas(caller_burst=1)
    refused = 0
    for n in range(500):
        caller = quotas.caller(f"ipv4:198.51.{n // 256}.{n % 256}:1", None)
        for _ in range(3):
            try:
                await quotas.count_call(caller, "GetLeaderboard")
            except ServiceError:
                refused += 1
    assert refused == 1000  # every caller's second and third call
    assert len(lines) == 100 and len({line["caller"] for line in lines}) == 100
    now[0] += LOG_INTERVAL
    with pytest.raises(ServiceError):
        for _ in range(2):
            await quotas.count_call(quotas.caller("ipv4:203.0.113.9:1", None), "GetLeaderboard")
    assert len(lines) == 101 and lines[-1]["lines_left_out"] == 400  # the other 400 callers' first lines
