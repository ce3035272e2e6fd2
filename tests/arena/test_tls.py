"""The arena over TLS: served with a certificate and key (``--tls-cert``, ``--tls-key``), reached by the
SDK's ArenaClient, ``kutnahora-bot`` and the sandbox worker with ``--ca-cert``, the web front end with
``KUTNAHORA_WEB_ARENA_CA_CERT``; a plain client is told in a sentence to connect with TLS; the house bots
still seek, on a plain port of their own on loopback."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from kutnahora.arena.app import create_arena
from kutnahora.arena.main import build_parser, config_from_args
from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import ConnectError
from kutnahora.web import arena_pages
from kutnahora.worker import options as worker_options
from kutnahora.worker.main import UsageError, connect_arena
from tests.arena.conftest import StartArena, arena_config
from tests.certificates import make_certificate, needs_openssl
from tests.clients.helpers import ROOT

pytestmark = needs_openssl


async def bot(*args: str) -> tuple[int, str, str]:
    """Run ``kutnahora-bot ARGS`` (its TLS variables unset); its exit status, output and errors."""
    env = {k: v for k, v in os.environ.items() if k not in ("KUTNAHORA_TLS", "KUTNAHORA_CA_CERT")}
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "kutnahora.clients.bots.cli", *args),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**env, "COLUMNS": "200"},
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def tls_arena(start_arena: StartArena, tmp_path: Path, *flags: str) -> tuple[str, Path]:
    """An arena serving TLS with a self-signed certificate for localhost: its address and the certificate."""
    key, cert = make_certificate(tmp_path)
    arena = await start_arena("--tls-cert", str(cert), "--tls-key", str(key), *flags)
    return f"localhost:{arena.port}", cert


def test_a_certificate_without_its_key_is_refused() -> None:
    for flags in (["--tls-cert", "cert.pem"], ["--tls-key", "key.pem"]):
        with pytest.raises(SystemExit, match="--tls-cert and --tls-key must be given together"):
            config_from_args(build_parser().parse_args(flags))


async def test_a_certificate_or_key_that_cannot_be_read_or_used_is_named(tmp_path: Path) -> None:
    _, cert = make_certificate(tmp_path)
    config = arena_config(
        tmp_path / "arena.db", "127.0.0.1:1", tls_cert=str(cert), tls_key=str(tmp_path / "no.pem")
    )
    with pytest.raises(OSError, match=f"cannot read the TLS key {tmp_path / 'no.pem'}: No such file"):
        await create_arena("127.0.0.1:0", config)
    (tmp_path / "garbage.pem").write_text("not a key\n")
    config.tls_key = str(tmp_path / "garbage.pem")
    with pytest.raises(OSError, match=r"are .*cert\.pem and .*garbage\.pem a PEM certificate chain and its"):
        await create_arena("127.0.0.1:0", config)


async def test_an_arena_client_reaches_a_tls_arena_with_its_ca(
    start_arena: StartArena, tmp_path: Path
) -> None:
    address, cert = await tls_arena(start_arena, tmp_path)
    async with await ArenaClient.connect(address, ca_cert=str(cert)) as client:
        assert client.tls
        key = await client.register_bot("over-tls")
        assert [pool.name for pool in await client.pools()] == ["2", "3", "4"]
        assert await client.rotate_key(key) != key


async def test_a_plain_client_of_a_tls_arena_is_told_to_connect_with_tls(
    start_arena: StartArena, tmp_path: Path
) -> None:
    address, _ = await tls_arena(start_arena, tmp_path)
    with pytest.raises(ConnectError, match=rf"cannot connect to the arena at {address} .*connect with TLS"):
        await ArenaClient.connect(address, timeout=5)
    other = tmp_path / "other"
    other.mkdir()
    _, stranger = make_certificate(other)  # a CA that did not sign the arena's certificate
    with pytest.raises(ConnectError, match=rf"cannot connect to the arena at {address} over TLS .*--ca-cert"):
        await ArenaClient.connect(address, ca_cert=str(stranger), timeout=5)


async def test_kutnahora_bot_registers_over_tls_with_ca_cert(start_arena: StartArena, tmp_path: Path) -> None:
    address, cert = await tls_arena(start_arena, tmp_path)
    key_file = tmp_path / "bot.key"
    code, _, err = await bot("register", "tls-bot", "--key-file", str(key_file), "--arena", address)
    assert code == 2 and "connect with TLS" in err and not key_file.exists()
    code, out, err = await bot(
        "register", "tls-bot", "--key-file", str(key_file), "--arena", address, "--ca-cert", str(cert)
    )
    assert code == 0, err
    assert "Registered tls-bot" in out
    async with await ArenaClient.connect(address, ca_cert=str(cert)) as client:
        assert await client.rotate_key(key_file.read_text().strip())  # the key written is the bot's


async def test_kutnahora_bot_plays_a_rated_game_against_a_house_bot_of_a_tls_arena(
    start_arena: StartArena, tmp_path: Path
) -> None:
    """The bot seeks over TLS and plays on the game server the arena names (plain, as the arena reaches
    it); the house bot, beside the TLS port, seeks on a plain one of its own on loopback."""
    address, cert = await tls_arena(start_arena, tmp_path, "--pools", "2", "--house-bots", "random")
    key_file = tmp_path / "player.key"
    code, out, err = await bot(
        *("greedy", "--arena", address, "--tls", "--ca-cert", str(cert), "--register", "tls-player"),
        *("--key-file", str(key_file), "--pool", "2", "--games", "1"),
    )
    assert code == 0, err
    assert "pool 2 game 1/1" in out and "vs house-random-1" in out
    async with await ArenaClient.connect(address, ca_cert=str(cert)) as client:
        profile = await client.bot_profile("tls-player")
    assert [rating.games for rating in profile.ratings] == [1]


async def test_the_workers_tls_flags_reach_its_channels(
    start_arena: StartArena, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = tmp_path / "worker.token"
    token.write_text("worker-secret\n")
    address, cert = await tls_arena(start_arena, tmp_path, "--worker-token-file", str(token))
    parser = worker_options.build_parser()
    base = ["--arena", address, "--worker-token-file", str(token)]
    for flags in (["--ca-cert", str(cert)], ["--tls", "--ca-cert", str(cert)]):
        hosting, arena = connect_arena(parser.parse_args([*base, *flags]), "worker-secret")
        try:
            response = await hosting.lease_work("w", can_build=True, can_host=True)
            assert not response.lease_id  # asked and answered: nothing to do yet
            assert [pool.name for pool in await arena.pools()] == ["2", "3", "4"]
        finally:
            await hosting.close()
            await arena.close()
    hosting, arena = connect_arena(parser.parse_args(base), "worker-secret")  # plain: refused
    try:
        with pytest.raises(ConnectError):
            await hosting.lease_work("w", can_build=True, can_host=True)
    finally:
        await hosting.close()
        await arena.close()
    monkeypatch.setenv(worker_options.ENV_ARENA_TLS, "1")
    monkeypatch.setenv(worker_options.ENV_ARENA_CA_CERT, str(cert))
    args = worker_options.build_parser().parse_args(base)
    assert args.tls and args.ca_cert == str(cert)
    with pytest.raises(UsageError, match="cannot read the CA certificate"):
        connect_arena(parser.parse_args([*base, "--ca-cert", str(tmp_path / "missing.pem")]), "t")


async def test_the_web_reaches_a_tls_arena_its_variables_name(
    start_arena: StartArena, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    address, cert = await tls_arena(start_arena, tmp_path)
    monkeypatch.setenv(arena_pages.ENV_ARENA, address)
    monkeypatch.setenv(arena_pages.ENV_ARENA_TLS, "1")  # the system's CAs, which did not sign it
    with pytest.raises(ConnectError, match="over TLS"):
        await arena_pages.client()
    monkeypatch.setenv(arena_pages.ENV_ARENA_CA_CERT, str(cert))
    client = await arena_pages.client()
    try:
        assert client is not None and client.tls
        assert [pool.name for pool in await client.pools()] == ["2", "3", "4"]
    finally:
        arena_pages._clients.pop(address, None)
        if client is not None:
            await client.close()
