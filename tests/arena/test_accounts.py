"""Accounts: registration, names, keys (rotate, revoke), and the refusals, each with its ErrorInfo reason
and nothing stored half-way."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import grpc
import pytest

from kutnahora.arena.app import Arena, create_arena
from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import ClientError
from kutnahora.plumbing import auth
from tests.arena.conftest import arena_config
from tests.clients.helpers import run_module


async def refused(call: object, code: grpc.StatusCode, reason: str) -> ClientError:
    with pytest.raises(ClientError) as caught:
        await call  # type: ignore[misc]
    assert caught.value.code == code, caught.value
    assert caught.value.reason == reason, caught.value
    return caught.value


async def test_a_bot_registers_and_its_key_works(arena: Arena, arena_client: ArenaClient) -> None:
    key = await arena_client.register_bot("alpha-1")
    assert len(key) >= 40
    account = await arena.store.account_by_name("alpha-1")
    assert account is not None and key not in account.key_hash, "the key is stored hashed"
    new_key = await arena_client.rotate_key(key)
    assert new_key != key
    await refused(arena_client.rotate_key(key), grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")
    await arena_client.revoke_key(new_key)
    error = await refused(arena_client.rotate_key(new_key), grpc.StatusCode.UNAUTHENTICATED, "KEY_REVOKED")
    assert "revoked" in str(error)
    profile = await arena_client.bot_profile("alpha-1")
    assert profile.revoked and not profile.house


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "empty"),
        ("x" * 41, "at most 40"),
        ("bad\x07bell", "control"),
        ("tab\tname", "control"),
        ("space name", "control"),
        ("-leading", "starting with"),
        ("héllo", "ASCII"),
        ("house-greedy-9", "house"),
    ],
)
async def test_bad_names_are_refused_and_nothing_is_stored(
    arena: Arena, arena_client: ArenaClient, name: str, why: str
) -> None:
    before = await arena.store.account_count()
    error = await refused(arena_client.register_bot(name), grpc.StatusCode.INVALID_ARGUMENT, "NAME_INVALID")
    assert why in str(error)
    assert await arena.store.account_count() == before


async def test_a_taken_name_is_refused(arena: Arena, arena_client: ArenaClient) -> None:
    await arena_client.register_bot("twin")
    before = await arena.store.account_count()
    await refused(arena_client.register_bot("twin"), grpc.StatusCode.ALREADY_EXISTS, "NAME_TAKEN")
    assert await arena.store.account_count() == before


async def test_a_wrong_or_missing_key_is_refused(arena_client: ArenaClient) -> None:
    await refused(arena_client.rotate_key("not-a-key"), grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")
    await refused(arena_client.rotate_key(""), grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")
    updates = arena_client.seek_updates("wrong", "2")
    await refused(updates.__anext__(), grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")


async def test_admin_registration_needs_the_admin_token(tmp_path: Path, game_server: str) -> None:
    config = arena_config(tmp_path / "a.db", game_server, registration="admin", admin_token="operator-secret")
    arena, port = await create_arena("127.0.0.1:0", config)
    await arena.start()
    try:
        async with await ArenaClient.connect(f"127.0.0.1:{port}") as client:
            await refused(client.register_bot("mine"), grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED")
            await refused(
                client.register_bot("mine", admin_token="guess"),
                grpc.StatusCode.PERMISSION_DENIED,
                "PERMISSION_DENIED",
            )
            assert await arena.store.account_count() == 0
            key = await client.register_bot("mine", admin_token="operator-secret")
            other = await client.register_bot("other", admin_token="operator-secret")
            await refused(
                client.revoke_key(key, "other"), grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED"
            )
            await client.revoke_key("operator-secret", "other")
            await refused(client.rotate_key(other), grpc.StatusCode.UNAUTHENTICATED, "KEY_REVOKED")
            assert await client.rotate_key(key)
    finally:
        await arena.stop(0)


async def test_keys_never_reach_the_log(
    arena: Arena, arena_client: ArenaClient, capsys: pytest.CaptureFixture[str]
) -> None:
    key = await arena_client.register_bot("quiet-one")
    new_key = await arena_client.rotate_key(key)
    await arena_client.revoke_key(new_key)
    captured = capsys.readouterr()
    assert "quiet-one" in captured.out + captured.err, "the lines were logged where this test looks"
    for secret in (key, new_key):
        assert secret not in captured.out + captured.err


async def test_kutnahora_bot_register_registers_and_plays_no_game(arena: Arena, tmp_path: Path) -> None:
    """``kutnahora-bot register NAME --key-file F``: the key in F (mode 0600), exit 0, no game; a file
    that exists is never overwritten (exit 2, nor by ``--register`` on a playing command), a name taken
    is refused (exit 1), an arena that is not there is said so (exit 2)."""

    address = f"127.0.0.1:{arena.port}"
    key_file = tmp_path / "reg.key"

    def register(name: str, file: Path, where: str = address) -> tuple[int, str]:
        done = run_module(
            "kutnahora.clients.bots.cli", "register", name, "--key-file", str(file), "--arena", where
        )
        return done.returncode, done.stdout + done.stderr

    code, output = await asyncio.to_thread(register, "reg-bot", key_file)
    assert code == 0, output
    assert "Registered reg-bot" in output
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    account = await arena.store.account_by_key_hash(auth.token_hash(key_file.read_text().strip()))
    assert account is not None and account.name == "reg-bot"
    assert await arena.store.active_games() == [] and arena.lobby.tickets == {}
    kept = key_file.read_text()
    code, output = await asyncio.to_thread(register, "reg-other", key_file)
    assert code == 2 and "exists" in output and key_file.read_text() == kept
    # Registering on a playing command (--register NAME) refuses the same file the same way.
    done = await asyncio.to_thread(
        run_module,
        *("kutnahora.clients.bots.cli", "random", "--arena", address, "--register", "reg-other"),
        *("--key-file", str(key_file), "--pool", "2", "--games", "1"),
    )
    said = done.stdout + done.stderr
    assert done.returncode == 2 and f"{key_file} exists (it may hold a key)" in said, said
    assert key_file.read_text() == kept and await arena.store.account_by_name("reg-other") is None
    code, output = await asyncio.to_thread(register, "reg-bot", tmp_path / "second.key")
    assert code == 1 and "exists already" in output, output
    code, output = await asyncio.to_thread(register, "reg-x", tmp_path / "third.key", "127.0.0.1:1")
    assert code == 2, output
