"""kutnahora-web's command line: help, and one sentence for each thing that stops it from starting."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kutnahora.web import cli
from kutnahora.web.limits import Limits
from tests.web.conftest import ROOT, Servers


def web(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kutnahora.web.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )


def test_help_names_every_option() -> None:
    done = web("--help")
    assert done.returncode == 0
    for option in ("--server", "--port", "--host", "--results", "--tls", "--allowed-hosts"):
        assert option in done.stdout
    for option in ("--visitor-creations", "--visitor-games", "--visitor-requests", "--visitor-streams"):
        assert option in done.stdout
    assert "--trusted-proxies" in done.stdout and "KUTNAHORA_WEB_TRUSTED_PROXIES" in done.stdout


def test_the_visitor_limits_come_from_flags_or_their_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUTNAHORA_WEB_VISITOR_GAMES", "2")
    monkeypatch.setenv("KUTNAHORA_WEB_TRUSTED_PROXIES", "10.0.0.0/8, ::1")
    args = cli.build_parser().parse_args(["--visitor-creations", "0", "--visitor-streams", "3"])
    assert cli.visitor_limits(args) == Limits(creations=0, games=2, streams=3)
    assert [str(n) for n in args.trusted_proxies] == ["10.0.0.0/8", "::1/128"]


def test_a_bad_limit_or_proxy_is_one_sentence() -> None:
    done = web("--trusted-proxies", "10.0.0.1,proxy.example")
    assert done.returncode == 2
    assert "'proxy.example' is not an IP address or a network such as 10.0.0.0/8" in done.stderr
    done = web("--visitor-games", "-1")
    assert done.returncode == 2 and "'-1' is not a whole number of 0 or more" in done.stderr


def test_a_bad_results_file_is_one_sentence(servers: Servers, tmp_path: Path) -> None:
    bad = tmp_path / "results.json"
    bad.write_text('{"format": "something else"}')
    done = web("--server", servers.grpc, "--port", "0", "--results", str(bad))
    assert done.returncode == 2
    assert done.stderr.strip() == f"kutnahora-web: {bad} is not a kutnahora-tournament/1 results file."
    missing = web("--server", servers.grpc, "--port", "0", "--results", str(tmp_path / "none.json"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_a_taken_port_is_one_sentence(servers: Servers) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        done = web("--server", servers.grpc, "--port", str(port))
    assert done.returncode == 2
    assert done.stderr.startswith(f"kutnahora-web: cannot serve on 127.0.0.1:{port}:")
