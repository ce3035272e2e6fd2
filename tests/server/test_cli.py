"""``kutnahora-server`` settings: flags, their environment variables, and which wins."""

from __future__ import annotations

import gc
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from kutnahora.server import collector, logs
from kutnahora.server.main import build_parser, config_from_args, main


def test_version_names_the_package_the_rules_and_the_build(capsys: pytest.CaptureFixture[str]) -> None:
    import kutnahora
    from kutnahora import engine

    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--version"])
    assert exited.value.code == 0
    printed = capsys.readouterr().out.strip()
    head = f"kutnahora-server {kutnahora.__version__} (rules version {engine.RULES_VERSION}, "
    assert printed.startswith(head)
    compiled = kutnahora.compiled_modules()
    if compiled:
        assert printed.endswith(f"compiled: {len(compiled)} of {len(kutnahora.COMPILABLE)} modules)")
    else:
        assert printed.endswith("pure Python)")


def test_defaults_flags_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    args = build_parser().parse_args([])
    assert args.port == 50051
    assert args.db == "kutnahora.db"
    config = config_from_args(args)
    assert config.clock.enabled
    assert config.metrics_port == 9464

    monkeypatch.setenv("KUTNAHORA_PORT", "6000")
    monkeypatch.setenv("KUTNAHORA_DB", ":memory:")
    monkeypatch.setenv("KUTNAHORA_METRICS_PORT", "off")
    monkeypatch.setenv("KUTNAHORA_CLOCK", "false")
    monkeypatch.setenv("KUTNAHORA_DECISION_TIME", "2.5")
    monkeypatch.setenv("KUTNAHORA_MAX_GAMES", "7")
    args = build_parser().parse_args([])
    config = config_from_args(args)
    assert args.port == 6000
    assert config.db == ":memory:"
    assert config.metrics_port is None
    assert not config.clock.enabled
    assert config.clock.decision_ms == 2500
    assert config.limits.max_games == 7

    args = build_parser().parse_args(["--port", "7000", "--max-games", "9"])
    assert args.port == 7000
    assert config_from_args(args).limits.max_games == 9


def test_bad_settings_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SystemExit):
        config_from_args(build_parser().parse_args(["--tls-cert", "cert.pem"]))
    with pytest.raises(SystemExit):
        config_from_args(build_parser().parse_args(["--log-format", "xml"]))
    monkeypatch.setenv("KUTNAHORA_PORT", "many")
    with pytest.raises(SystemExit):
        build_parser()


def test_gc_thresholds_are_read_checked_and_applied(monkeypatch: pytest.MonkeyPatch) -> None:
    assert build_parser().parse_args([]).gc_thresholds == "50000,20,100"
    monkeypatch.setenv("KUTNAHORA_GC_THRESHOLDS", "700,10,10")
    assert collector.parse_thresholds(build_parser().parse_args([]).gc_thresholds) == (700, 10, 10)
    assert collector.parse_thresholds("30000") == (30000, 20, 100)
    for bad in ("", "0", "-5", "1,2,3,4", "lots"):
        with pytest.raises(ValueError, match="GC threshold"):
            collector.parse_thresholds(bad)
    before = gc.get_threshold()
    try:
        collector.configure((12345, 11, 12))
        assert gc.get_threshold() == (12345, 11, 12)
    finally:
        gc.set_threshold(*before)


@pytest.mark.usefixtures("keep_process_settings")
def test_a_bad_gc_threshold_stops_the_server_with_a_sentence() -> None:
    with pytest.raises(SystemExit, match="GC thresholds must be"):
        main(["--gc-thresholds", "fast", "--port", "0", "--db", ":memory:"])


@pytest.mark.usefixtures("keep_process_settings")
def test_an_unknown_event_loop_stops_the_server_with_a_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SystemExit, match="kutnahora-server: the event loop must be one of auto, uvloop"):
        main(["--event-loop", "trio", "--port", "0", "--db", ":memory:", "--metrics-port", "off"])
    monkeypatch.setenv("KUTNAHORA_EVENT_LOOP", "asyncio")
    assert build_parser().parse_args([]).event_loop == "asyncio"


@pytest.fixture
def keep_process_settings() -> Iterator[None]:
    """``main`` sets the collector's thresholds and the logging of the whole process: put them back."""
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)
    logs.reset()


def listening_socket(reuse_port: bool = False) -> socket.socket:
    """A TCP socket listening on a free port of 127.0.0.1."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


@pytest.mark.usefixtures("keep_process_settings")
def test_a_taken_port_stops_the_server_even_where_its_owner_shares_ports() -> None:
    """A listener that allows port sharing (as a gRPC server does by default) still makes the second
    server fail loudly: the server turns ``grpc.so_reuseport`` off."""
    with listening_socket(reuse_port=True) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit, match=f"cannot listen on 127.0.0.1:{port}"):
            main(["--port", str(port), "--db", ":memory:", "--metrics-port", "off"])


@pytest.mark.usefixtures("keep_process_settings")
def test_a_taken_metrics_port_stops_the_server_with_a_sentence() -> None:
    with listening_socket() as taken:
        port = taken.getsockname()[1]
        with pytest.raises(
            SystemExit, match=f"cannot serve metrics on 127.0.0.1:{port}: Address already in use"
        ):
            main(["--port", "0", "--db", ":memory:", "--metrics-port", str(port)])


@pytest.mark.usefixtures("keep_process_settings")
def test_a_store_that_cannot_be_opened_stops_the_server_with_a_sentence(tmp_path: Path) -> None:
    missing = tmp_path / "no such folder" / "games.db"
    with pytest.raises(
        SystemExit, match=re.escape(f"cannot open the SQLite store {missing}: unable to open database file")
    ):
        main(["--port", "0", "--db", str(missing), "--metrics-port", "off"])
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database, " * 64)
    with pytest.raises(
        SystemExit, match=re.escape(f"cannot open the SQLite store {garbage}: file is not a database")
    ):
        main(["--port", "0", "--db", str(garbage), "--metrics-port", "off"])
    assert garbage.read_bytes() == b"not a database, " * 64, "the file was changed"
