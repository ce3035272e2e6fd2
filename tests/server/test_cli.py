"""``kutnahora-server`` settings: flags, their environment variables, and which wins."""

from __future__ import annotations

import gc
import re
import socket
from collections.abc import Iterator
from ipaddress import ip_network
from pathlib import Path

import pytest

from kutnahora.native import native_available
from kutnahora.plumbing import logs
from kutnahora.server import collector
from kutnahora.server.config import ClockConfig, Limits, ServerConfig
from kutnahora.server.main import build_parser, config_from_args, main
from kutnahora.server.settings import declared, markdown_table, show_value


def test_version_names_the_package_the_rules_and_the_build(capsys: pytest.CaptureFixture[str]) -> None:
    import kutnahora
    from kutnahora import engine

    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--version"])
    assert exited.value.code == 0
    printed = capsys.readouterr().out.strip()
    assert "\n" not in printed  # one line, whatever the terminal's width
    head = f"kutnahora-server {kutnahora.__version__} (rules version {engine.RULES_VERSION}, "
    assert printed.startswith(head)
    compiled = kutnahora.compiled_modules()
    if compiled:
        assert f"compiled: {len(compiled)} of {len(kutnahora.COMPILABLE)} modules;" in printed
    else:
        assert "pure Python;" in printed
    core = "native core built, KUTNAHORA_ENGINE selects " if native_available() else "native core not built"
    assert f"; games played by the python engine, {core}" in printed and printed.endswith(")")


@pytest.mark.parametrize("asked", ["native", "python"])
def test_version_names_the_engine_kutnahora_engine_selects(
    asked: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if not native_available():
        pytest.skip("the native core is not built")
    monkeypatch.setenv("KUTNAHORA_ENGINE", asked)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--version"])
    printed = capsys.readouterr().out.strip()
    assert printed.endswith(
        f"games played by the python engine, native core built, KUTNAHORA_ENGINE selects {asked})"
    )


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
    assert build_parser().parse_args([]).gc_thresholds == (50000, 20, 100)
    monkeypatch.setenv("KUTNAHORA_GC_THRESHOLDS", "700,10,10")
    assert build_parser().parse_args([]).gc_thresholds == (700, 10, 10)
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
def test_a_bad_gc_threshold_stops_the_server_with_a_sentence(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--gc-thresholds", "fast", "--port", "0", "--db", ":memory:"])
    assert exited.value.code == 2
    assert "argument --gc-thresholds: GC thresholds must be" in capsys.readouterr().err
    monkeypatch.setenv("KUTNAHORA_GC_THRESHOLDS", "0")
    with pytest.raises(SystemExit, match="KUTNAHORA_GC_THRESHOLDS='0' is not valid: the first GC threshold"):
        build_parser()


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


SETTINGS = declared(ServerConfig)


def test_every_setting_has_a_flag_a_variable_and_help_naming_its_default() -> None:
    helps = {max(action.option_strings, key=len): str(action.help) for action in build_parser()._actions}
    assert len(SETTINGS) >= 29
    flags = [item.setting.flag for item in SETTINGS]
    variables = [item.setting.variable for item in SETTINGS]
    assert len(set(flags)) == len(flags) and len(set(variables)) == len(variables)
    for item in SETTINGS:
        text = helps[item.setting.flag]
        assert item.setting.variable.startswith("KUTNAHORA_")
        assert f"env {item.setting.variable}" in text
        assert f"(default: {item.setting.show(item.default)};" in text, text
        assert len(item.setting.help) > 10 and not item.setting.help.endswith("."), item.setting.help
    # Host, port, logging, the event loop and the collector are settings like the others.
    for flag in ("--host", "--port", "--log-format", "--log-level", "--event-loop", "--gc-thresholds"):
        assert flag in flags


def test_help_shows_every_default_and_names_values_by_what_they_are(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert text.count("(default: ") == len(SETTINGS)
    assert "--ended-games-in-memory N " in text and "ENDED_GAMES " not in text.replace("_ENDED_GAMES", "")
    assert "--clock on|off" in text and "--clock off (or KUTNAHORA_CLOCK=off) turns it off" in text
    assert "--metrics-port PORT port of the /metrics endpoint; off disables it" in text


def test_help_never_shows_the_admin_token_taken_from_its_variable(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUTNAHORA_ADMIN_TOKEN", "sekrit-value-123")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "sekrit-value-123" not in text
    assert "set by KUTNAHORA_ADMIN_TOKEN, not shown" in text
    assert config_from_args(build_parser().parse_args([])).admin_token == "sekrit-value-123"


def test_the_command_and_the_dataclass_have_one_set_of_defaults() -> None:
    """Once the database and the metrics port had one default for the command and another for the
    dataclass; now both come from the one declaration."""
    assert config_from_args(build_parser().parse_args([])) == ServerConfig()
    assert ServerConfig().db == "kutnahora.db" and ServerConfig().metrics_port == 9464
    memory = ServerConfig.in_memory(port=0)
    assert (memory.db, memory.metrics_port, memory.port) == (":memory:", None, 0)


# A value for every setting, different from its default, as text (for the flag or the variable) and as
# the field's value it must give.
OTHER_VALUES: dict[str, tuple[str, object]] = {
    "--host": ("0.0.0.0", "0.0.0.0"),
    "--port": ("6001", 6001),
    "--unix-socket": ("/tmp/kutnahora.sock", "/tmp/kutnahora.sock"),
    "--metrics-host": ("::1", "::1"),
    "--metrics-port": ("off", None),
    "--db": ("/tmp/x.db", "/tmp/x.db"),
    "--db-synchronous": ("FULL", "FULL"),
    "--log-format": ("console", "console"),
    "--log-level": ("debug", "debug"),
    "--decision-time": ("2.5", 2500),
    "--time-bank": ("30", 30_000),
    "--max-strikes": ("5", 5),
    "--clock": ("off", False),
    "--max-games": ("7", 7),
    "--max-watchers": ("8", 8),
    "--max-players": ("9", 9),
    "--max-message-bytes": ("2048", 2048),
    "--rate": ("0.5", 0.5),
    "--burst": ("11", 11),
    "--seat-rate": ("7.5", 7.5),
    "--seat-burst": ("15", 15),
    "--seat-stream-rate": ("0.25", 0.25),
    "--seat-stream-burst": ("4", 4),
    "--overload-lag-ms": ("120", 120.0),
    "--overload-cpu": ("0.5", 0.5),
    "--overload-decision-ms": ("80", 80.0),
    "--overload-for": ("3", 3.0),
    "--admin-token": ("secret", "secret"),
    "--tls-cert": ("cert.pem", "cert.pem"),
    "--tls-key": ("key.pem", "key.pem"),
    "--grace": ("3", 3.0),
    "--max-connection-age": ("600", 600.0),
    "--max-connection-age-grace": ("60", 60.0),
    "--keepalive": ("30", 30.0),
    "--keepalive-timeout": ("5", 5.0),
    "--handshake-timeout": ("4", 4.0),
    "--max-connection-idle": ("120", 120.0),
    "--gc-thresholds": ("700,10,10", (700, 10, 10)),
    "--gc-young-every": ("250", 250.0),
    "--gc-full-every": ("0", 0.0),
    "--event-loop": ("asyncio", "asyncio"),
    "--ended-games-in-memory": ("12", 12),
    "--idle-timeout": ("90", 90.0),
    "--waiting-timeout": ("45", 45.0),
    "--caller-games": ("6", 6),
    "--caller-rate": ("0.25", 0.25),
    "--caller-burst": ("4", 4),
    "--caller-reads": ("12.5", 12.5),
    "--caller-read-burst": ("30", 30),
    "--caller-streams": ("9", 9),
    "--quota-store": ("redis://127.0.0.1:6379/2", "redis://127.0.0.1:6379/2"),
    "--quota-store-prefix": ("games-eu", "games-eu"),
    "--quota-exempt": ("unix,10.0.0.0/8", ("unix", "10.0.0.0/8")),
    "--quota-token": ("quota-secret", "quota-secret"),
    "--trusted-proxies": ("10.0.0.5,fd00::/8", tuple(ip_network(n) for n in ("10.0.0.5/32", "fd00::/8"))),
    "--components": ("", ""),  # a file is read when set: test_component_sets covers it
}


def field_value(config: ServerConfig, path: tuple[str, ...]) -> object:
    value: object = config
    for name in path:
        value = getattr(value, name)
    return value


def test_a_variable_and_its_flag_give_the_same_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(OTHER_VALUES) == {item.setting.flag for item in SETTINGS}
    argv = [part for flag, (text, _) in OTHER_VALUES.items() if text for part in (flag, text)]
    from_flags = config_from_args(build_parser().parse_args(argv))
    for flag, (text, _) in OTHER_VALUES.items():
        variable = next(item.setting.variable for item in SETTINGS if item.setting.flag == flag)
        monkeypatch.setenv(variable, text)
    from_environment = config_from_args(build_parser().parse_args([]))
    assert from_flags == from_environment
    for item in SETTINGS:
        expected = OTHER_VALUES[item.setting.flag][1]
        assert field_value(from_flags, item.path) == (expected if expected != "" else item.default)
    assert from_flags.clock == ClockConfig(2500, 30_000, 5, enabled=False)
    assert from_flags.limits == Limits(7, 8, 9, 2048, 0.5, 11, 7.5, 15, 0.25, 4, 120.0, 0.5, 80.0, 3.0)
    # A flag wins over its variable.
    assert config_from_args(build_parser().parse_args(["--port", "6002"])).port == 6002


def test_the_guide_table_has_a_row_per_setting_with_its_default() -> None:
    rows = markdown_table(ServerConfig).splitlines()[2:]
    assert len(rows) == len(SETTINGS)
    for row, item in zip(rows, SETTINGS, strict=True):
        assert row.startswith(f"| `{item.setting.flag}` | `{item.setting.variable}` | ")
    assert show_value(10.0) == "10" and show_value(True) == "true" and show_value("") == "none"


@pytest.mark.usefixtures("keep_process_settings")
def test_a_port_in_use_gives_one_sentence_and_no_grpc_core_line() -> None:
    """The gRPC C core writes to the process's standard error itself, so the server runs as a process."""
    import subprocess
    import sys

    with listening_socket() as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "kutnahora.server.main",
                "--port",
                str(port),
                "--db",
                ":memory:",
                "--metrics-port",
                "off",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"kutnahora-server: cannot listen on 127.0.0.1:{port}: the port is already in use (another server "
        "may be running; choose another with --port, or 0 for a free one)"
    ]
