"""Registration floods, tried as an attacker would: one caller registering bots as fast as it can is
refused RESOURCE_EXHAUSTED (RATE_LIMITED, a RetryInfo and a sentence) once its burst is spent, stores no
account for a refused call, and is counted; another caller goes on registering; the admin token is never
counted; the delay the refusal names is the one after which registering works again. The arenas here are
configured through ``kutnahora-arena``'s own parser, with ``--quota-exempt none`` so that loopback callers
count.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from kutnahora.arena.app import Arena
from kutnahora.arena.main import build_parser, config_from_args
from kutnahora.plumbing.callers import Callers, parse_exempt
from kutnahora.v1 import arena_service_pb2 as pb
from tests.arena.conftest import StartArena, stub, two_callers
from tests.status_details import refusal

ADMIN = "arena-admin-secret"


async def register(client: Any, name: str, token: str | None = None) -> pb.RegisterBotResponse:
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    response: pb.RegisterBotResponse = await client.RegisterBot(
        pb.RegisterBotRequest(name=name), metadata=metadata
    )
    return response


async def flood(client: Any, prefix: str, attempts: int, token: str | None = None) -> list[object]:
    """Register ``attempts`` bots one after another: each call's response, or its refusal."""
    results: list[object] = []
    for n in range(attempts):
        try:
            results.append(await register(client, f"{prefix}-{n}", token))
        except grpc.aio.AioRpcError as error:
            results.append(error)
    return results


def refusals(arena: Arena) -> float:
    registry = arena.metrics.registry
    return registry.get_sample_value("kutnahora_arena_refusals_total", {"reason": "caller_rate"}) or 0.0


async def test_a_flooding_caller_is_refused_and_stores_nothing_while_another_registers(
    start_arena: StartArena, tmp_path: Path
) -> None:
    arena = await start_arena("--quota-exempt", "none", "--register-rate", "2", "--register-burst", "4")
    async with two_callers(arena, tmp_path) as (attacker, other):
        results = await flood(attacker, "flood", 30)
        registered = [r for r in results if isinstance(r, pb.RegisterBotResponse)]
        refused = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
        # The burst, and at most one more if the bucket refilled (2 a minute) during the flood.
        assert 4 <= len(registered) <= 5 and results[:4] == registered[:4], results
        assert len(registered) + len(refused) == 30
        assert await arena.store.account_count() == len(registered), "a refused registration stored one"
        for name in (f"flood-{n}" for n, r in enumerate(results) if isinstance(r, grpc.aio.AioRpcError)):
            assert await arena.store.account_by_name(name) is None, name

        error = refused[-1]
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert (error.details() or "").startswith(
            "registration refused: ipv4:127.0.0.1 asked to register more bots than its 2 per minute allow; "
            "try again in "
        ), error.details()
        info, delay = refusal(error)
        assert info.reason == "RATE_LIMITED"
        assert dict(info.metadata) == {"quota": "register_rate", "caller": "ipv4:127.0.0.1"}
        assert delay is not None and 1 < delay <= 30, "the delay is the time until the bucket holds one"
        assert f"try again in {delay:.1f} s" in (error.details() or "")
        assert refusals(arena) == len(refused)

        # Another caller has its own bucket: it registers its whole burst while the attacker is refused.
        for n in range(4):
            await register(other, f"other-{n}")
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await register(other, "other-4")
        assert refusal(caught.value)[0].metadata["caller"] == "unix"
        assert await arena.store.account_count() == len(registered) + 4


async def test_the_admin_token_is_not_counted_and_a_wrong_one_is(start_arena: StartArena) -> None:
    arena = await start_arena(
        *("--quota-exempt", "none", "--register-rate", "1", "--register-burst", "2", "--admin-token", ADMIN)
    )
    async with grpc.aio.insecure_channel(f"127.0.0.1:{arena.port}") as channel:
        client = stub(channel)
        admitted = await flood(client, "operator", 12, ADMIN)
        assert all(isinstance(r, pb.RegisterBotResponse) for r in admitted), admitted
        # The admin's registrations spent nothing of the caller's bucket; a wrong token is an ordinary call.
        results = await flood(client, "guess", 4, ADMIN + "x")
        assert [isinstance(r, pb.RegisterBotResponse) for r in results] == [True, True, False, False]
        assert await arena.store.account_count() == 14
        await register(client, "operator-more", ADMIN)  # still admitted with the caller's bucket empty


async def test_registering_works_again_after_the_delay_the_refusal_names(start_arena: StartArena) -> None:
    arena = await start_arena("--quota-exempt", "none", "--register-rate", "600", "--register-burst", "1")
    async with grpc.aio.insecure_channel(f"127.0.0.1:{arena.port}") as channel:
        client = stub(channel)
        await register(client, "first")
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await register(client, "second")
        _, delay = refusal(caught.value)
        assert delay is not None and 0 < delay <= 0.1  # 600 a minute: one each 0.1 s
        await asyncio.sleep(delay + 0.02)
        await register(client, "second")
        assert await arena.store.account_count() == 2


async def test_loopback_is_exempt_by_default(start_arena: StartArena) -> None:
    arena = await start_arena("--register-burst", "1")
    async with grpc.aio.insecure_channel(f"127.0.0.1:{arena.port}") as channel:
        results = await flood(stub(channel), "local", 6)
    assert all(isinstance(r, pb.RegisterBotResponse) for r in results), results
    assert refusals(arena) == 0


async def test_no_limit_with_a_rate_of_zero(start_arena: StartArena) -> None:
    arena = await start_arena("--quota-exempt", "none", "--register-rate", "0", "--register-burst", "1")
    async with grpc.aio.insecure_channel(f"127.0.0.1:{arena.port}") as channel:
        results = await flood(stub(channel), "free", 6)
    assert all(isinstance(r, pb.RegisterBotResponse) for r in results), results


def test_the_settings_read_their_variables_and_refuse_nonsense(monkeypatch: pytest.MonkeyPatch) -> None:
    config = config_from_args(build_parser().parse_args([]))
    assert (config.register_rate, config.register_burst, config.quota_exempt) == (2.0, 10, ("loopback",))
    monkeypatch.setenv("KUTNAHORA_ARENA_REGISTER_RATE", "0.5")
    monkeypatch.setenv("KUTNAHORA_ARENA_REGISTER_BURST", "3")
    monkeypatch.setenv("KUTNAHORA_ARENA_QUOTA_EXEMPT", "unix, 192.0.2.0/24")
    config = config_from_args(build_parser().parse_args([]))
    assert (config.register_rate, config.register_burst) == (0.5, 3)
    assert config.quota_exempt == ("unix", "192.0.2.0/24")
    for flags, said in [
        (["--register-rate", "-1"], "--register-rate must not be negative"),
        (["--register-burst", "0"], "--register-burst must be at least 1"),
        (["--quota-exempt", "everyone"], "--quota-exempt: 'everyone' is not loopback, unix"),
    ]:
        with pytest.raises(SystemExit, match=said):
            config_from_args(build_parser().parse_args(flags))


def test_who_a_caller_is() -> None:
    """The identity the arena and the game server share: addresses without ports, IPv6 by /64, mapped IPv4
    as IPv4, every Unix socket caller as one, and the exemptions."""
    callers = Callers(parse_exempt("loopback,10.0.0.0/8"), ("", ADMIN))
    assert callers.caller("ipv4:203.0.113.5:5000", None).key == "ipv4:203.0.113.5"
    assert callers.caller("ipv4:203.0.113.5:5000", None) == callers.caller("ipv4:203.0.113.5:6", None)
    one = callers.caller("ipv6:%5B2001:db8:7:8:1::1%5D:443", None)
    assert one == callers.caller("ipv6:[2001:db8:7:8:ffff::2]:1", None)  # the same /64: one caller
    assert one.key == "ipv6:2001:db8:7:8::/64" and not one.exempt
    assert callers.caller("ipv6:[2001:db8:7:9::1]:1", None) != one  # the next /64: another
    assert callers.caller("ipv6:[fe80::1%25eth0]:1", None).key == "ipv6:fe80::/64"  # a zone is dropped
    mapped = callers.caller("ipv6:%5B::ffff:203.0.113.5%5D:9", None)
    assert mapped == callers.caller("ipv4:203.0.113.5:1", None)
    assert callers.caller("unix:/run/arena.sock", None).key == "unix"
    assert not callers.caller("unix:/run/arena.sock", None).exempt
    assert callers.caller("ipv4:127.0.0.1:1", None).exempt and callers.caller("ipv6:[::1]:1", None).exempt
    assert callers.caller("ipv6:%5B::ffff:127.0.0.1%5D:1", None).exempt
    assert callers.caller("ipv4:10.1.2.3:1", None).exempt
    assert callers.caller("ipv4:203.0.113.5:1", ADMIN) == callers.caller("unix:", ADMIN)
    assert callers.caller("ipv4:203.0.113.5:1", ADMIN).exempt
    assert not callers.caller("ipv4:203.0.113.5:1", "").exempt  # an empty token exempts nobody
    assert not callers.caller("ipv4:203.0.113.5:1", ADMIN[:-1]).exempt
    nobody = Callers(parse_exempt("none"), ())
    assert not nobody.caller("ipv4:127.0.0.1:1", None).exempt
    assert Callers(parse_exempt("unix"), ()).caller("unix:", None).exempt
    assert callers.caller("weird-peer", None).key == "weird-peer"  # not an address: itself, counted


async def test_behind_a_trusted_proxy_each_forwarded_caller_registers_within_its_own_rate(
    start_arena: StartArena, tmp_path: Path
) -> None:
    """A proxy on loopback forwarding two callers: each has its own registrations; one named again is
    refused by its own name (the entries left of the proxy's are not believed); a caller that is not a
    trusted proxy (the Unix socket's) cannot name itself anybody with the header."""
    arena = await start_arena(
        "--quota-exempt", "none", "--register-rate", "0.01", "--register-burst", "1", "--trusted-proxies",
        "127.0.0.1",
    )  # fmt: skip
    async with two_callers(arena, tmp_path) as (proxy, stranger):

        async def as_(client: Any, name: str, forwarded: str) -> pb.RegisterBotResponse:
            response: pb.RegisterBotResponse = await client.RegisterBot(
                pb.RegisterBotRequest(name=name), metadata=(("x-forwarded-for", forwarded),)
            )
            return response

        await as_(proxy, "seven", "198.51.100.7")
        await as_(proxy, "eight", "198.51.100.8")
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await as_(proxy, "seven-again", "192.0.2.99, 198.51.100.7")
        assert dict(refusal(caught.value)[0].metadata)["caller"] == "ipv4:198.51.100.7"
        await as_(stranger, "unix-one", "198.51.100.50")
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await as_(stranger, "unix-two", "198.51.100.51")
        assert dict(refusal(caught.value)[0].metadata)["caller"] == "unix", "its header was ignored"
    assert await arena.store.account_count() == 3
