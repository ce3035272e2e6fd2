"""kutnahora-web's command line: help, and one sentence for each thing that stops it from starting."""

from __future__ import annotations

import dataclasses
import json
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from kutnahora.web import cli
from kutnahora.web.limits import Limits
from tests.web.conftest import ROOT, Servers, start, stop


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
    # The group's help as one line, whatever the terminal's width: each option, its help, its variable.
    shown = " ".join(done.stdout.split("limits per visitor:", 1)[1].split())
    for flag, variable, words in (
        ("--visitor-creations", "VISITOR_CREATIONS", "game creations and joins a visitor may make a minute"),
        ("--visitor-creation-burst", "VISITOR_CREATION_BURST", "... and at once"),
        ("--visitor-games", "VISITOR_GAMES", "unfinished games a visitor may have created here"),
        ("--visitor-requests", "VISITOR_REQUESTS", "requests a visitor may send a second"),
        ("--visitor-request-burst", "VISITOR_REQUEST_BURST", "... and at once"),
        ("--visitor-streams", "VISITOR_STREAMS", "live games (event streams) a visitor may follow at once"),
    ):
        after = shown.split(f"{flag} N", 1)[1]
        assert after.lstrip().startswith(words), flag
        assert f"KUTNAHORA_WEB_{variable})" in after.split("--", 1)[0], flag
    assert "--trusted-proxies" in done.stdout and "KUTNAHORA_WEB_TRUSTED_PROXIES" in done.stdout


def test_the_visitor_limits_come_from_flags_or_their_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUTNAHORA_WEB_VISITOR_GAMES", "2")
    monkeypatch.setenv("KUTNAHORA_WEB_TRUSTED_PROXIES", "10.0.0.0/8, ::1")
    args = cli.build_parser().parse_args(["--visitor-creations", "0", "--visitor-streams", "3"])
    assert cli.visitor_limits(args) == Limits(creations=0, games=2, streams=3)
    assert [str(n) for n in args.trusted_proxies] == ["10.0.0.0/8", "::1/128"]


def test_every_limit_has_its_option_and_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert [option.field for option in cli.VISITOR_OPTIONS] == [f.name for f in dataclasses.fields(Limits)]
    assert cli.visitor_limits(cli.build_parser().parse_args([])) == Limits()
    values = {"CREATIONS": "1.5", "CREATION_BURST": "2", "GAMES": "3"}
    values |= {"REQUESTS": "4.5", "REQUEST_BURST": "5", "STREAMS": "6"}
    for name, value in values.items():
        monkeypatch.setenv(f"KUTNAHORA_WEB_VISITOR_{name}", value)
    assert cli.visitor_limits(cli.build_parser().parse_args([])) == Limits(1.5, 2, 3, 4.5, 5, 6)
    args = cli.build_parser().parse_args(["--visitor-request-burst", "9", "--visitor-creations", "0"])
    assert cli.visitor_limits(args) == Limits(0, 2, 3, 4.5, 9, 6)


def test_a_bad_limit_or_proxy_is_one_sentence() -> None:
    done = web("--trusted-proxies", "10.0.0.1,proxy.example")
    assert done.returncode == 2
    assert "'proxy.example' is not an IP address or a network such as 10.0.0.0/8" in done.stderr
    done = web("--visitor-games", "-1")
    assert done.returncode == 2 and "'-1' is not a whole number of 0 or more" in done.stderr


def test_the_quota_store_comes_from_its_flag_or_variable_and_its_password_is_never_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = cli.build_parser().parse_args([])
    assert (args.quota_store, args.quota_store_prefix) == ("memory", "kutnahora")
    monkeypatch.setenv("KUTNAHORA_WEB_QUOTA_STORE", "redis://web:s3cret@redis.internal:6379/2")
    monkeypatch.setenv("KUTNAHORA_WEB_QUOTA_STORE_PREFIX", "staging")
    args = cli.build_parser().parse_args([])
    assert (args.quota_store, args.quota_store_prefix) == (
        "redis://web:s3cret@redis.internal:6379/2",
        "staging",
    )
    shown = cli.build_parser().format_help()
    assert "s3cret" not in shown and "redis://web:***@redis.internal:6379/2" in shown
    assert "KUTNAHORA_WEB_QUOTA_STORE)" in " ".join(shown.split())
    args = cli.build_parser().parse_args(["--quota-store", "memory"])
    assert args.quota_store == "memory"
    done = web("--quota-store", "postgresql://localhost/test")
    assert done.returncode == 2
    assert "'postgresql://localhost/test' is neither memory nor a redis://, rediss:// or unix:// URL" in (
        done.stderr
    )


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


def test_metrics_are_off_unless_asked_for_and_never_on_the_visitors_port(
    servers: Servers, tmp_path: Path
) -> None:
    plain, url = start(
        [sys.executable, "-m", "kutnahora.web.cli", "--server", servers.grpc, "--port", "0"],
        r"serving (http://\S+ \(.*\))",
        tmp_path / "plain.log",
    )
    try:
        assert url.endswith(", metrics off)")
        assert httpx.get(f"{url.split()[0]}/metrics", timeout=20).status_code == 404
    finally:
        stop(plain)


def test_a_refusal_is_logged_as_a_json_line_and_counted_on_the_metrics_port(
    servers: Servers, tmp_path: Path
) -> None:
    log = tmp_path / "web.log"
    command = [sys.executable, "-m", "kutnahora.web.cli", "--server", servers.grpc, "--port", "0"]
    command += ["--metrics-port", "0", "--visitor-requests", "0.001", "--visitor-request-burst", "1"]
    process, found = start(command, r"serving (http://\S+ \(.*\))", log)
    try:
        site, metrics = found.split()[0], found.split()[-1].rstrip(")")
        assert metrics.startswith("http://127.0.0.1:") and metrics.endswith("/metrics")
        assert httpx.get(f"{site}/api/components", timeout=20).status_code in (200, 503)
        for _ in range(5):
            assert httpx.get(f"{site}/api/components", timeout=20).status_code == 429
        assert httpx.get(f"{site}/metrics", timeout=20).status_code == 429  # the visitors' port: never
        text = httpx.get(metrics, timeout=20).text
        assert 'kutnahora_web_refusals_total{limit="requests"} 6.0' in text
        assert 'kutnahora_web_requests_total{method="GET",route="/api/components",status="429"} 5.0' in text
        assert 'kutnahora_web_requests_total{method="GET",route="unmatched",status="429"} 1.0' in text
    finally:
        stop(process)
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    refusals = [line for line in lines if line["event"] == "visitor refused"]
    assert len(refusals) == 1
    assert refusals[0]["visitor"] == "ipv4:127.0.0.1" and refusals[0]["limit"] == "requests"
    assert refusals[0]["level"] == "info"


def test_a_bad_or_taken_metrics_port_is_one_sentence() -> None:
    done = web("--metrics-port", "http")
    assert done.returncode == 2 and "'http' is not a port from 0 to 65535, or off" in done.stderr
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        done = web("--server", "127.0.0.1:1", "--port", "0", "--metrics-port", str(port))
    assert done.returncode == 2
    assert done.stderr.startswith(f"kutnahora-web: cannot serve metrics on 127.0.0.1:{port}:")
