"""``kutnahora-server`` settings: flags, their environment variables, and which wins."""

from __future__ import annotations

import gc

import pytest

from server import collector
from server.main import build_parser, config_from_args, main


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


def test_a_bad_gc_threshold_stops_the_server_with_a_sentence() -> None:
    with pytest.raises(SystemExit, match="GC thresholds must be"):
        main(["--gc-thresholds", "fast", "--port", "0", "--db", ":memory:"])
