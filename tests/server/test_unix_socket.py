"""The server listens on a Unix socket as well as TCP (``--unix-socket PATH``; clients dial ``unix:PATH``)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from kutnahora.clients.sdk import Client
from kutnahora.server.app import create_server
from kutnahora.server.config import ServerConfig
from kutnahora.server.main import build_parser, config_from_args


def test_the_flag_and_its_variable_fill_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert config_from_args(build_parser().parse_args([])).unix_socket == ""
    config = config_from_args(build_parser().parse_args(["--unix-socket", "/run/k.sock"]))
    assert config.unix_socket == "/run/k.sock"
    monkeypatch.setenv("KUTNAHORA_UNIX_SOCKET", "/tmp/env.sock")
    assert config_from_args(build_parser().parse_args([])).unix_socket == "/tmp/env.sock"


def test_a_game_is_created_over_the_socket_and_seen_over_tcp(tmp_path: Path) -> None:
    path = tmp_path / "server.sock"

    async def scenario() -> None:
        server, port = await create_server("127.0.0.1:0", ServerConfig(unix_socket=str(path)))
        await server.start()
        try:
            assert path.is_socket()
            local = await Client.connect(f"unix:{path}")
            tcp = await Client.connect(f"127.0.0.1:{port}")
            try:
                created = await local.create_game(players=2, seed=5)
                seen = await tcp.get_game(created.game.game_id)
                assert seen.game_id == created.game.game_id
            finally:
                await local.close()
                await tcp.close()
        finally:
            await server.stop(0)

    asyncio.run(scenario())


def test_the_command_says_where_it_listens(tmp_path: Path) -> None:
    path = tmp_path / "cli.sock"
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "kutnahora.server.main", "--port", "0", "--db", ":memory:"),
            *("--metrics-port", "off", "--unix-socket", str(path)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert f"and unix:{path}" in line
        assert path.is_socket()
    finally:
        process.terminate()
        process.wait(10)
