"""kutnahora-web's command line: help, and one sentence for each thing that stops it from starting."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

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
